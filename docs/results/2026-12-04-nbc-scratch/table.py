#!/usr/bin/python3
"""Tables of run.sh's output: per program and size, the median over rounds of OSU's pure
communication time (us) for each library, and xmsg against the faster of Open MPI and MPICH.
Usage: table.py run-output.txt"""
import statistics
import sys
from collections import defaultdict

pure = defaultdict(list)
floors = []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "floor":
        floors.append(f"round {f[1]}: {f[2]} us")
    elif f[0] == "nbc":
        prog, lib, size, comm = f[1], f[2], int(f[4]), float(f[7])
        pure[(prog, size, lib)].append(comm)
print("cache-line hand-off per round (`cacheline_pingpong`):", "; ".join(floors))
libs = ["xmsg", "xmsg-nocache", "ompi", "mpich"]
for prog in sorted({k[0] for k in pure}):
    print(f"\n### {prog}: pure communication, median us (rounds: {len(floors)})\n")
    print("| size | " + " | ".join(libs) + " | xmsg / faster peer | xmsg / no cache |")
    print("|---|" + "---|" * (len(libs) + 2))
    for size in sorted({k[1] for k in pure if k[0] == prog}):
        med = {l: statistics.median(pure[(prog, size, l)]) for l in libs if pure.get((prog, size, l))}
        peer = min(med.get("ompi", float("inf")), med.get("mpich", float("inf")))
        cells = [f"{med[l]:.1f}" if l in med else "-" for l in libs]
        print(f"| {size} | " + " | ".join(cells) + f" | {med['xmsg'] / peer:.2f} | {med['xmsg'] / med['xmsg-nocache']:.2f} |")
