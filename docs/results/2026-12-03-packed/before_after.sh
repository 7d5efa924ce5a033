#!/bin/bash
# Same-run before (4a76180^: derived types staged whole) / after (packed messages) of
# osu_bw and osu_latency -D vect:8:4, the OSU binary built once with xmsgcc; the before
# library is picked with LD_LIBRARY_PATH (it overrides the binary's RUNPATH). 2 rounds.
O=/tmp/ext/osu-xmsg/c/mpi/pt2pt/standard
for round in 1 2; do
  for v in before after; do
    for bench in osu_latency osu_bw; do
      if [ $v = before ]; then env=LD_LIBRARY_PATH=/tmp/xmsg-before/build/lib; run=/tmp/xmsg-before/build/bin/xmsgrun
      else env=XMSG_UNUSED=1; run=/work/main/build/bin/xmsgrun; fi
      env $env timeout 120 $run -n 2 --bind-to core $O/$bench -D vect:8:4 -m 64:4194304 2>/dev/null | grep -v '^#' | awk -v l=$v -v b=$bench -v r=$round 'NF>=2 {print b, l, r, $1, $2}'
    done
  done
  echo "floor $(/work/main/build/bin/cacheline_pingpong -i 20000 -r 3 2>&1 | tail -1)"
done
