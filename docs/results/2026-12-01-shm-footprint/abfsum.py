import glob,re,collections,statistics,sys
out=sys.argv[1]
floor={int(f.split('-')[-1][:-4]):float(open(f).read().split()[-1]) for f in glob.glob(f"{out}/floor-*.txt")}
for state,sel in (("near (floor < 0.1 us)",lambda x:x<0.1),("far (floor >= 0.1 us)",lambda x:x>=0.1)):
    rounds=[r for r in floor if sel(floor[r])]
    if not rounds: continue
    print(f"== {state}: {len(rounds)} rounds")
    for bench in ("latency","bw"):
        d={}
        for lib in ("before","after"):
            d[lib]=collections.defaultdict(dict)
            for r in rounds:
                for l in open(f"{out}/{lib}-{bench}-{r}.txt"):
                    m=re.match(r"^\s*(\d+)\s+([\d.]+)\s*$",l)
                    if m: d[lib][int(m.group(1))][r]=float(m.group(2))
        print(f"{bench}: size | median before | median after | median of per-round after/before")
        for s in sorted(d["after"]):
            rs=[r for r in rounds if r in d["before"][s] and r in d["after"][s]]
            print(f"{s:>6} | {statistics.median(d['before'][s][r] for r in rs):.3f} | {statistics.median(d['after'][s][r] for r in rs):.3f} | {statistics.median(d['after'][s][r]/d['before'][s][r] for r in rs):.2f}")
