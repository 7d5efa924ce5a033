#!/bin/sh
# OSU 7.4 osu_latency / osu_bw over verbs, contiguous (-D cont) and vector (-D vect:8:4: blocks
# of 4 elements every 8) data, 2 ranks on 2 nodes; extra arguments go to xmsgrun.
d=/work/main/build/probe/osu-pt2pt
x=/work/main/build/bin/xmsgrun
for rep in 1 2 3; do
  for b in latency bw; do
    for t in cont vect:8:4; do
      echo "== rep $rep osu_$b -D $t $*"
      $x --timeout 120 -x XMSG_TRANSPORTS=verbs "$@" -n 2 --nodes 2 $d/osu_$b -D $t -m 8:1048576 -i 100 -x 10 2>&1 | grep -E "^[0-9]"
    done
  done
done
