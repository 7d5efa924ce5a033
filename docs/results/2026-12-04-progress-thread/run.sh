#!/bin/bash
# The progress thread's measurements (README.md). OSU 7.4 is built outside the tree
# (/tmp/ext/osu-{xmsg,ompi,mpich}: ./configure CC=<each MPI's compiler>; make -C
# c/mpi/collective/non_blocking), never committed; passive_target.c is built with each MPI's
# wrapper into /tmp/ext/pt-{xmsg,ompi,mpich}. xmsg-off: XMSG_PROGRESS_THREAD=off; xmsg-20us:
# XMSG_PROGRESS_INTERVAL=20. Runs are interleaved, ROUNDS rounds (default 3).
# Output lines: overlap <prog> <lib> <round> <size> <overall> <compute> <pure comm> <overlap %>
#               passive <lib> <round> <phase> <epochs> <median us> <p90 us> <max us>
#               floor <round> <cacheline_pingpong line, us>
B=/work/main/build/bin E=/tmp/ext
run_of() {
  case $1 in
    xmsg) echo "$B/xmsgrun -n $2 --bind-to core";;
    xmsg-off) echo "env XMSG_PROGRESS_THREAD=off $B/xmsgrun -n $2 --bind-to core";;
    xmsg-20us) echo "env XMSG_PROGRESS_INTERVAL=20 $B/xmsgrun -n $2 --bind-to core";;
    ompi) echo "mpirun.openmpi --allow-run-as-root -n $2 --bind-to core";;
    mpich) echo "mpiexec.mpich -n $2 -bind-to core";;
  esac
}
# PARTS (default "overlap passive") picks the parts to run.
PARTS=${PARTS:-overlap passive}
for round in $(seq 1 ${ROUNDS:-3}); do
  [[ $PARTS == *overlap* ]] && for prog in osu_iallreduce osu_ialltoall; do
    for lib in xmsg xmsg-20us xmsg-off ompi mpich; do
      d=$E/osu-${lib%-*}
      timeout 300 $(run_of $lib 2) $d/c/mpi/collective/non_blocking/$prog -m 4:${MAX:-1048576} 2>/dev/null |
        awk -v p=$prog -v l=$lib -v r=$round '$1 ~ /^[0-9]+$/ && NF >= 5 {print "overlap", p, l, r, $1, $2, $3, $4, $5}'
    done
  done
  # xmsg across two virtual nodes (tcp: the target serves lock and unlock as messages), and on
  # one node (single copy: no target progress needed); Open MPI and MPICH on one host with
  # their defaults (Open MPI 4.1.4 has no one-sided component over its tcp BTL: MPI_Win_create
  # fails with MPI_ERR_WIN under --mca btl self,tcp).
  [[ $PARTS == *passive* ]] && for lib in xmsg xmsg-off xmsg-1node ompi mpich; do
    case $lib in
      xmsg) run="$B/xmsgrun -n 2 --nodes 2";;
      xmsg-off) run="env XMSG_PROGRESS_THREAD=off $B/xmsgrun -n 2 --nodes 2";;
      xmsg-1node) run="$B/xmsgrun -n 2";;
      ompi) run="mpirun.openmpi --allow-run-as-root -n 2";;
      mpich) run="mpiexec.mpich -n 2";;
    esac
    timeout 120 $run $E/pt-${lib%-*} ${COMPUTE_S:-2} 2>/dev/null |
      awk -v l=$lib -v r=$round '{print "passive", l, r, $1, $3, $5, $8, $11}'
  done
  echo "floor $round $($B/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
