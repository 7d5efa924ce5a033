#!/bin/bash
# Staged (4a76180^, in /tmp/xmsg-before) against this tree's library: osu_bw and osu_latency
# -D vect:8:4 at 64 B-1 KiB, 20000 iterations, the two alternating, N rounds (default 6), the
# cache-line floor after each round. small-before-fix.txt: 30 rounds at 7f38bb8;
# small-after-fix.txt: 20 rounds with the request free list and TypePin.
O=/tmp/ext/osu-xmsg/c/mpi/pt2pt/standard
N=${1:-6}
for round in $(seq 1 $N); do
  for v in before after; do
    for bench in osu_bw osu_latency; do
      if [ $v = before ]; then env=LD_LIBRARY_PATH=/tmp/xmsg-before/build/lib; run=/tmp/xmsg-before/build/bin/xmsgrun
      else env=XMSG_UNUSED=1; run=/work/main/build/bin/xmsgrun; fi
      env $env timeout 120 $run -n 2 --bind-to core $O/$bench -D vect:8:4 -m 64:1024 -i 20000 2>/dev/null | grep -v '^#' | awk -v l=$v -v b=$bench -v r=$round 'NF>=2 {print b, l, r, $1, $2}'
    done
  done
  echo "floor $(/work/main/build/bin/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
