#!/usr/bin/python3
"""Tables from run.sh's output: per benchmark and size, the median over rounds of the overall
time (us) and of OSU's overlap (%) per library, one table per cache-line hand-off state (the
round's floor below or above 0.087 us); per library and phase, the median over all rounds of
the passive-target epoch counts, medians, p90s and maxima.

usage: table.py RUN_OUTPUT"""
import collections
import statistics
import sys

overlap = collections.defaultdict(list)  # (prog, size, lib) -> [(overall, overlap)]
passive = collections.defaultdict(list)  # (lib, phase) -> [(epochs, median, p90, max)]
floors = []
libs_seen = []
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
state = {f[1]: ("near" if float(f[2]) < 0.087 else "far") for f in lines if f[0] == "floor"}
for f in lines:
    if f[0] == "overlap":
        prog, lib, size = f"{f[1]} ({state.get(f[3], '?')} hand-offs)", f[2], int(f[4])
        overlap[(prog, size, lib)].append((float(f[5]), float(f[8])))
        if lib not in libs_seen:
            libs_seen.append(lib)
    elif f[0] == "passive":
        passive[(f[1], f[3])].append(tuple(float(x) for x in f[4:8]))
    elif f[0] == "floor":
        floors.append(f"round {f[1]}: floor {f[2]} us ({state[f[1]]})")

med = statistics.median
for prog in sorted({k[0] for k in overlap}):
    n = len({r for r in state if f"({state[r]} " in prog})
    print(f"\n## {prog}, 2 ranks, {n} rounds: overall us / overlap % (medians)\n")
    print("| size | " + " | ".join(libs_seen) + " |")
    print("|---:|" + "---:|" * len(libs_seen))
    for size in sorted({k[1] for k in overlap if k[0] == prog}):
        cells = []
        for lib in libs_seen:
            v = overlap.get((prog, size, lib))
            cells.append(f"{med(x[0] for x in v):.1f} / {med(x[1] for x in v):.0f}" if v else "-")
        print(f"| {size} | " + " | ".join(cells) + " |")
print("\n## passive target, lock/put 8 B/unlock epochs (median of rounds)\n")
print("| library | phase | epochs | median us | p90 us | max us |")
print("|---|---|---:|---:|---:|---:|")
for (lib, phase), v in sorted(passive.items()):
    print(f"| {lib} | {phase} | {med(x[0] for x in v):.0f} | {med(x[1] for x in v):.1f} | "
          f"{med(x[2] for x in v):.1f} | {med(x[3] for x in v):.1f} |")
print("\n" + "\n".join(floors))
