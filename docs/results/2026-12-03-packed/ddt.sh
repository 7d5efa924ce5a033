#!/bin/bash
# Same-run non-contiguous latency/bandwidth: OSU 7.4 -D vect:STRIDE:BLOCK, interleaved rounds (OSU built outside the tree in /tmp/ext, as in docs/results/2026-12-01-mpi).
# ROUNDS (default 2) and SIZES (default 64:4194304) from the environment.
B=/work/main/build/bin
for round in $(seq 1 ${ROUNDS:-2}); do
  for lib in xmsg ompi mpich; do
    for bench in osu_latency osu_bw; do
      case $lib in
        xmsg) d=/tmp/ext/osu-xmsg; run="$B/xmsgrun -n 2 --bind-to core";;
        ompi) d=/tmp/ext/osu-ompi; run="mpirun.openmpi --allow-run-as-root -n 2 --bind-to core";;
        mpich) d=/tmp/ext/osu-mpich; run="mpiexec.mpich -n 2 -bind-to core";;
      esac
      timeout 120 $run $d/c/mpi/pt2pt/standard/$bench -D vect:8:4 -m ${SIZES:-64:4194304} 2>/dev/null | grep -v '^#' | awk -v l=$lib -v b=$bench -v r=$round '{print b, l, r, $1, $2}'
    done
  done
  echo "floor $($B/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
