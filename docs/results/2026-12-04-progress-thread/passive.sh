#!/bin/bash
# passive part of run.sh, ROUNDS rounds
B=/work/main/build/bin E=/tmp/ext
for round in $(seq 1 ${ROUNDS:-3}); do
  for lib in xmsg xmsg-off xmsg-1node ompi mpich; do
    case $lib in
      xmsg) run="$B/xmsgrun -n 2 --nodes 2";;
      xmsg-off) run="env XMSG_PROGRESS_THREAD=off $B/xmsgrun -n 2 --nodes 2";;
      xmsg-1node) run="$B/xmsgrun -n 2";;
      ompi) run="mpirun.openmpi --allow-run-as-root -n 2";;
      mpich) run="mpiexec.mpich -n 2";;
    esac
    timeout 120 $run $E/pt-${lib%-*} 2 2>/dev/null | awk -v l=$lib -v r=$round '{print "passive", l, r, $1, $3, $5, $8, $11}'
  done
  echo "floor $round $($B/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
