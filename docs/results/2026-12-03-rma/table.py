#!/usr/bin/env python3
"""Medians of osu_one_sided.sh output per case and size; xmsg over the better peer (latency:
lower is better; *_bw: higher)."""
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1] if len(sys.argv) > 1 else 'osu-one-sided.txt'):
    p = line.split()
    if len(p) == 7 and p[0].startswith('osu'):
        d[(p[0], p[1], p[2], p[3], int(p[5]))].append(float(p[6]))
cases = sorted({k[:3] for k in d}, key=lambda c: (c[1], c[0], c[2]))
want = (1, 8, 64, 1024, 8192, 65536)
for c in cases:
    bw = c[0].endswith('_bw')
    print(f'{c[0]} -w {c[1]} -s {c[2]}: xmsg / ompi / mpich, xmsg/better peer')
    for s in want:
        v = {lib: statistics.median(d[c + (lib, s)]) for lib in ('xmsg', 'ompi', 'mpich') if d.get(c + (lib, s))}
        if len(v) < 3:
            continue
        best = max(v['ompi'], v['mpich']) if bw else min(v['ompi'], v['mpich'])
        ratio = v['xmsg'] / best if best else float('nan')
        print(f'{s:>8} {v["xmsg"]:.2f} / {v["ompi"]:.2f} / {v["mpich"]:.2f}  {ratio:.2f}')
