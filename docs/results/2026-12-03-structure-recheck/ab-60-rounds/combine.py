#!/usr/bin/env python3
"""Medians over the five runs' rounds, split by the floor state compare gave each run."""
import csv, glob, os, statistics as st
from collections import defaultdict
here = os.path.dirname(os.path.abspath(__file__))
d = defaultdict(list)
for f in sorted(glob.glob(os.path.join(here, 'run*/runs.csv'))):
    for r in csv.DictReader(open(f)):
        if r['status'] == 'ok':
            d[(r['bench'], int(r['size']), r['floor_state'], r['lib'])].append(float(r['value']))
print('bench size state runs(after/before) after_us before_us after/before')
for key in sorted({k[:3] for k in d}):
    a, b = d.get(key + ('xmsg',)), d.get(key + ('xmsg-base',))
    if a and b:
        print(*key, f'{len(a)}/{len(b)}', f'{st.median(a):.3f}', f'{st.median(b):.3f}', f'{st.median(a) / st.median(b):.3f}')
