#!/bin/bash
# OSU 7.4 one-sided over tcp, 2 ranks on 2 nodes: xmsg across 2 --netns nodes (veth bridge) and
# across 2 virtual nodes on loopback, MPICH 4.0.2 (ch4:ucx) with UCX_TLS=tcp,self on loopback;
# interleaved, ROUNDS rounds (default 2). OSU is built outside the tree (/tmp/ext/osu-*,
# configure CC=<each MPI's compiler>; make -C c/util; make -C c/mpi/one-sided), never committed.
# Output: prog win sync lib round size value.
B=/work/main/build/bin
CASES="osu_put_latency:allocate:flush osu_put_latency:allocate:lock osu_put_latency:allocate:fence
osu_put_latency:allocate:pscw osu_get_latency:allocate:flush osu_get_latency:allocate:lock
osu_get_latency:allocate:fence osu_get_latency:allocate:pscw osu_acc_latency:allocate:flush
osu_fop_latency:allocate:flush osu_cas_latency:allocate:flush osu_get_acc_latency:allocate:flush
osu_put_bw:allocate:flush osu_get_bw:allocate:flush osu_put_bw:allocate:fence osu_put_bibw:allocate:pscw
osu_put_latency:create:flush osu_put_latency:dynamic:flush"
for round in $(seq 1 ${ROUNDS:-2}); do
  for c in $CASES; do
    IFS=: read -r prog win sync <<< "$c"
    for lib in xmsg-netns xmsg-lo mpich-tcp; do
      case $lib in
        xmsg-netns) d=/tmp/ext/osu-xmsg; run="$B/xmsgrun -n 2 --nodes 2 --netns";;
        xmsg-lo) d=/tmp/ext/osu-xmsg; run="$B/xmsgrun -n 2 --nodes 2";;
        mpich-tcp) d=/tmp/ext/osu-mpich; run="env UCX_TLS=tcp,self mpiexec.mpich -n 2";;
      esac
      out=$(timeout 120 $run $d/c/mpi/one-sided/$prog -w $win -s $sync -m 1:${MAX:-65536} 2>&1); rc=$?
      echo "$out" | grep -v '^#' |
        awk -v p=$prog -v w=$win -v s=$sync -v l=$lib -v r=$round 'NF>=2 && $1 ~ /^[0-9]+$/ {print p, w, s, l, r, $1, $2}'
      echo "exit $prog $win $sync $lib $round $rc"
    done
  done
done
