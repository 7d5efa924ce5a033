#!/usr/bin/env python3
"""Medians per (benchmark, library, size) of ddt.sh output; ratio of xmsg to the better peer."""
import collections, statistics, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1] if len(sys.argv) > 1 else 'ddt-vect.txt'):
    p = l.split()
    if len(p) == 5 and p[0].startswith('osu'):
        try:
            d[(p[0], p[1], int(p[3]))].append(float(p[4]))
        except ValueError:
            pass
libs = sorted({k[1] for k in d}, key=lambda x: ['xmsg', 'xmsg-staged', 'ompi', 'mpich'].index(x))
sizes = sorted({k[2] for k in d})
for b in ['osu_latency', 'osu_bw']:
    print(f'{b}: ' + ' / '.join(libs) + ', xmsg/better peer')
    for s in sizes:
        v = {lib: statistics.median(d[(b, lib, s)]) for lib in libs if d[(b, lib, s)]}
        if 'ompi' not in v or 'mpich' not in v or 'xmsg' not in v:
            continue
        best = min(v['ompi'], v['mpich']) if b == 'osu_latency' else max(v['ompi'], v['mpich'])
        print(f'{s:>8} ' + ' / '.join(f'{v[l]:.2f}' for l in libs if l in v) + f'  {v["xmsg"] / best:.2f}')
