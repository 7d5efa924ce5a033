import sys, collections, statistics
rows=[l.split() for l in open(sys.argv[1]) if len(l.split())==4]
for st,sel in (("near",lambda f:f<0.1),("far",lambda f:f>=0.12)):
    d=collections.defaultdict(list); order=[]
    for n,s,v,f in rows:
        if not sel(float(f)): continue
        d[(n,int(s))].append(float(v)); 
        if n not in order: order.append(n)
    if not d: continue
    sizes=sorted({k[1] for k in d}); print("==",st, "rounds", len(d[(order[0],sizes[0])]))
    print("size "+" ".join(f"{n:>8}" for n in order))
    for s in sizes: print(f"{s:5} "+" ".join(f"{statistics.median(d[(n,s)]):8.3f}" for n in order))
