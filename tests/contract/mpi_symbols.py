#!/usr/bin/python3
"""The MPI library defines every function mpi.h declares, as real MPIs do for the profiling
interface: PMPI_X is the implementation (a global text symbol) and MPI_X a weak alias of it, so a
tool can define MPI_X itself and call PMPI_X. Also checks nothing beyond the header is exported
as MPI_ (a stray stub would switch on code paths in programs' configure scripts).

Usage: mpi_symbols.py MPI_H LIBXMSG_MPI_SO
"""
import re
import subprocess
import sys

header, library = sys.argv[1], sys.argv[2]
text = open(header).read()
declared = [n for n in re.findall(r"^XMSG_MPI_API\(\s*[\w ]+?\s*,\s*(\w+)\s*,", text, re.M)]
nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True).stdout
kind = {}
for line in nm.splitlines():
    parts = line.split()
    if len(parts) == 3:
        kind[parts[2]] = parts[1]
bad = []
for name in declared:
    if kind.get("PMPI_" + name) != "T":
        bad.append(f"PMPI_{name}: {kind.get('PMPI_' + name, 'not defined')} (want T)")
    if kind.get("MPI_" + name) != "W":
        bad.append(f"MPI_{name}: {kind.get('MPI_' + name, 'not defined')} (want W, a weak alias)")
exported = {s[4:] for s in kind if s.startswith("MPI_")}
for extra in sorted(exported - set(declared)):
    bad.append(f"MPI_{extra}: exported but not declared in mpi.h")
for b in bad:
    print("BAD " + b)
print(f"{len(declared)} MPI functions declared, {len(declared) * 2 - len(bad)} of {len(declared) * 2} symbols right")
sys.exit(1 if bad else 0)
