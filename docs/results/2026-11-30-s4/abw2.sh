#!/bin/bash
# usage: abw2.sh rounds sizes "name:ENV=V[,ENV2=V2]" ... ; OSU bw interleaved with mpich; per-state tables
B=/work/main/build/bin
rounds=$1 sizes=$2; shift 2
out=${OUT:-/tmp/abw2_raw.txt}; : > $out
for r in $(seq $rounds); do
  f=$($B/cacheline_pingpong -r 1 -i 20000 | tail -1)
  for v in "$@"; do
    n=${v%%:*}; E=${v#*:}; xs=""
    if [ -n "$E" ]; then IFS=, read -ra kv <<< "$E"; for x in "${kv[@]}"; do xs="$xs -x $x"; done; fi
    timeout 60 chrt -f 10 $B/xmsgrun -n 2 --bind-to core $xs $B/xmsg_osu_bw -m $sizes 2>&1 | grep -v '^#' | awk -v n=$n -v f=$f '{print n, $1, $2, f}'
  done
  timeout 60 chrt -f 10 mpiexec.mpich -n 2 -bind-to core $B/mpich_osu_bw -m $sizes 2>&1 | grep -v '^#' | awk -v f=$f '{print "mpich", $1, $2, f}'
done >> $out
python3 - $out <<'PY'
import statistics, collections, sys
rows=[l.split() for l in open(sys.argv[1]) if len(l.split())==4]
for state,sel in (("near",lambda f:f<0.1),("far",lambda f:f>=0.1)):
    d=collections.defaultdict(list); order=[]
    for p in rows:
        try: f=float(p[3]); v=float(p[2]); s=int(p[1])
        except: continue
        if not sel(f): continue
        d[(p[0],s)].append(v)
        if p[0] not in order: order.append(p[0])
    if not d: continue
    sizes=sorted({k[1] for k in d})
    print(f"== {state}: rounds={len(d[(order[0],sizes[0])])}")
    print("size " + " ".join(f"{n:>9}" for n in order) + "   ratios vs mpich")
    for s in sizes:
        med={n: statistics.median(d[(n,s)]) for n in order if (n,s) in d}
        print(f"{s:>6} " + " ".join(f"{med.get(n,0):9.0f}" for n in order) + "   " + " ".join(f"{n}={med[n]/med['mpich']:.2f}" for n in order if n!='mpich' and n in med and 'mpich' in med))
PY
