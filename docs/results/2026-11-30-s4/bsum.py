import sys, collections, statistics
d=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)<5: continue
    st='near' if float(p[2])<0.1 else 'far'
    d[st][p[1]].append((int(p[3]),int(p[4])))
for st in d:
    print("==",st)
    for v,xs in d[st].items():
        a=sorted(x[0] for x in xs); b=sorted(x[1] for x in xs)
        q=lambda s,f: s[int(f*(len(s)-1))]
        print(f"{v:8} n={len(xs):3} 4K p10/med/p90 {q(a,.1):6} {statistics.median(a):8.0f} {q(a,.9):6}   8K {q(b,.1):6} {statistics.median(b):8.0f} {q(b,.9):6}")
