#!/bin/bash
# OSU 7.4 one-sided, 2 ranks pinned, xmsg / Open MPI / MPICH interleaved, ROUNDS rounds (default 3).
# OSU is built outside the tree (/tmp/ext/osu-*, configure CC=<each MPI's compiler>; make -C
# c/util; make -C c/mpi/one-sided), never committed. Output: prog win sync lib round size value.
B=/work/main/build/bin
CASES="osu_put_latency:allocate:flush osu_put_latency:allocate:lock osu_put_latency:allocate:fence
osu_put_latency:allocate:pscw osu_get_latency:allocate:flush osu_get_latency:allocate:lock
osu_get_latency:allocate:fence osu_get_latency:allocate:pscw osu_acc_latency:allocate:flush
osu_fop_latency:allocate:flush osu_cas_latency:allocate:flush osu_get_acc_latency:allocate:flush
osu_put_bw:allocate:flush osu_get_bw:allocate:flush osu_put_bw:allocate:fence
osu_put_latency:create:lock osu_put_latency:create:flush osu_get_latency:create:flush"
for round in $(seq 1 ${ROUNDS:-3}); do
  for c in $CASES; do
    IFS=: read -r prog win sync <<< "$c"
    for lib in xmsg ompi mpich; do
      case $lib in
        xmsg) d=/tmp/ext/osu-xmsg; run="$B/xmsgrun -n 2 --bind-to core";;
        ompi) d=/tmp/ext/osu-ompi; run="mpirun.openmpi --allow-run-as-root -n 2 --bind-to core";;
        mpich) d=/tmp/ext/osu-mpich; run="mpiexec.mpich -n 2 -bind-to core";;
      esac
      timeout 120 $run $d/c/mpi/one-sided/$prog -w $win -s $sync -m 1:${MAX:-65536} 2>/dev/null | grep -v '^#' |
        awk -v p=$prog -v w=$win -v s=$sync -v l=$lib -v r=$round 'NF>=2 && $1 ~ /^[0-9]+$/ {print p, w, s, l, r, $1, $2}'
    done
  done
  echo "floor $($B/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
