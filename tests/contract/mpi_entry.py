#!/usr/bin/python3
"""Every MPI entry point starts with XMSG_MPI_ENTRY: while the progress thread is engaged, that is
what keeps it out of the library while the program is inside it (runtime/mpi/progress_thread.cpp).
A PMPI_ definition without it would let the helper and the caller run the runtime at once. The
one thing allowed before it is a fast path taken only while `progress_thread_idle()` (the
helper not engaged), as MPI_Send, _Recv, _Isend and _Irecv have. The exempt calls touch no
shared state, and MPI allows them before MPI_Init and after MPI_Finalize.

Usage: mpi_entry.py RUNTIME_MPI_DIR
"""
import pathlib
import re
import sys

EXEMPT = {"Wtime", "Wtick", "Initialized", "Finalized", "Query_thread", "Is_thread_main"}
definition = re.compile(r"^(?:extern \"C\" )?[A-Za-z_][\w \*]*?\bPMPI_(\w+)\s*\(", re.M)
comment = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
bad, seen, fast_paths = [], 0, 0
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.cpp")):
    text = path.read_text(encoding="utf-8")
    for m in definition.finditer(text):
        depth, i = 0, m.end() - 1
        while True:  # the closing parenthesis of the parameter list
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        rest = text[i + 1:]
        if not rest.lstrip().startswith("{"):
            continue  # a declaration or a call, not a definition
        seen += 1
        body = comment.sub("", rest.lstrip()[1:]).lstrip()
        fast = re.match(r"if \(.*?progress_thread_idle\(\)\) \[\[likely\]\]\s+return [^;]*;\s*", body, re.S)
        if fast:
            body = body[fast.end():]
            fast_paths += 1
        first = body.split(";", 1)[0].strip()
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) in EXEMPT:
            if first == "XMSG_MPI_ENTRY":
                bad.append(f"{path}:{line}: PMPI_{m.group(1)} is exempt but takes the entry guard")
        elif first != "XMSG_MPI_ENTRY":
            bad.append(f"{path}:{line}: PMPI_{m.group(1)} does not start with XMSG_MPI_ENTRY")
for b in bad:
    print("BAD " + b)
print(f"{seen} PMPI_ definitions ({fast_paths} with a fast path while the helper is idle), {len(bad)} wrong")
sys.exit(1 if bad or seen < 100 else 0)
