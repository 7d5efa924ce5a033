#!/bin/bash
# usage: abe.sh rounds sizes iters "name:LIB:ENV=V" ... ; interleaved with ompi, floor probe per round
B=/work/main/build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
rounds=$1 sizes=$2 iters=$3; shift 3
got=0; end=$((SECONDS+${BUDGET:-900}))
while [ $got -lt $rounds ] && [ $SECONDS -lt $end ]; do
  f=$($B/cacheline_pingpong -r 1 -i 20000 | tail -1)
  if [ -n "$NEAR_ONLY" ] && ! awk -v f=$f 'BEGIN{exit !(f<0.1)}'; then sleep 3; continue; fi
  got=$((got+1))
  for v in "$@"; do
    IFS=: read n L E <<< "$v"
    xs="-x LD_LIBRARY_PATH=$L"; [ -n "$E" ] && xs="$xs -x $E"
    LD_LIBRARY_PATH=$L timeout 60 chrt -f 10 $B/xmsgrun -n 2 --bind-to core $xs $B/xmsg_osu_latency -m $sizes -i $iters 2>&1 | grep -v '^#' | awk -v n=$n -v f=$f '{print n, $1, $2, f}'
  done
  timeout 60 chrt -f 10 mpirun.openmpi -n 2 --bind-to core $B/ompi_osu_latency -m $sizes -i $iters 2>&1 | grep -v '^#' | awk -v f=$f '{print "ompi", $1, $2, f}'
done > /tmp/abl_raw.txt
python3 - <<'PY'
import statistics, collections
rows=[l.split() for l in open('/tmp/abl_raw.txt') if len(l.split())==4]
for state,cond in (("near",lambda f: f<0.12),("far",lambda f: f>=0.12)):
    d=collections.defaultdict(list); order=[]
    for n,s,v,f in rows:
        try: f=float(f); v=float(v); s=int(s)
        except: continue
        if not cond(f): continue
        d[(n,s)].append(v)
        if n not in order: order.append(n)
    if not d: continue
    sizes=sorted({k[1] for k in d})
    print(f"[{state}] size " + " ".join(f"{n:>8}" for n in order) + "   ratios vs ompi (n=%d)"%len(d[(order[0],sizes[0])]))
    for s in sizes:
        med={n: statistics.median(d[(n,s)]) for n in order if (n,s) in d}
        print(f"{s:>7} " + " ".join(f"{med.get(n,0):8.3f}" for n in order) + "   " + " ".join(f"{n}={med[n]/med['ompi']:.2f}" for n in order if n!='ompi' and n in med and med.get('ompi')))
PY
