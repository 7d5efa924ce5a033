#!/bin/bash
# Large non-blocking collectives after the schedule scratch cache and the recursive-doubling
# iallreduce (README.md). OSU 7.4 is built outside the tree (/tmp/ext/osu-{xmsg,ompi,mpich}:
# ./configure CC=<each MPI's compiler>; make -C c/mpi/collective/non_blocking), never committed.
# xmsg-nocache: XMSG_COLL_SCRATCH_CACHE=0 (every schedule allocates and frees its scratch, as
# before). 2 ranks bound to the 2 cores; runs interleaved, ROUNDS rounds (default 3).
# Output lines: nbc <prog> <lib> <round> <size> <overall> <compute> <pure comm> <overlap %>
#               floor <round> <cacheline_pingpong line, us>
B=/work/main/build/bin E=/tmp/ext
run_of() {
  case $1 in
    xmsg) echo "$B/xmsgrun -n 2 --bind-to core";;
    xmsg-nocache) echo "env XMSG_COLL_SCRATCH_CACHE=0 $B/xmsgrun -n 2 --bind-to core";;
    ompi) echo "mpirun.openmpi --allow-run-as-root -n 2 --bind-to core";;
    mpich) echo "mpiexec.mpich -n 2 -bind-to core";;
  esac
}
for round in $(seq 1 ${ROUNDS:-3}); do
  echo "floor $round $($B/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
  for prog in ${PROGS:-osu_iallreduce osu_ireduce osu_iallgather osu_ialltoall}; do
    for lib in xmsg xmsg-nocache ompi mpich; do
      d=$E/osu-${lib%-*}
      timeout 300 $(run_of $lib) $d/c/mpi/collective/non_blocking/$prog -m ${MIN:-65536}:${MAX:-4194304} 2>/dev/null |
        awk -v p=$prog -v l=$lib -v r=$round '$1 ~ /^[0-9]+$/ && NF >= 5 {print "nbc", p, l, r, $1, $2, $3, $4, $5}'
    done
  done
done
