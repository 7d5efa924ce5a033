#!/usr/bin/env python3
"""Median per (program, size) of remote and messages rows of remote_vs_messages_guest.sh output,
and their ratio (latency: remote / messages, lower is better; bandwidth: remote / messages,
higher is better)."""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 6 or not f[4].isdigit():
        continue
    mode, prog, path, _, size, value = f
    rows[(mode, prog, int(size), path)].append(float(value))
keys = sorted({(m, p, s) for (m, p, s, _) in rows})
print(f"{'mode':4} {'program':16} {'size':>6} {'remote':>10} {'messages':>10} {'ratio':>6}")
for m, p, s in keys:
    r, q = rows.get((m, p, s, "remote")), rows.get((m, p, s, "messages"))
    if not r or not q:
        continue
    a, b = statistics.median(r), statistics.median(q)
    print(f"{m:4} {p:16} {s:>6} {a:>10.2f} {b:>10.2f} {a / b:>6.2f}")
