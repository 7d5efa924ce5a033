#!/bin/bash
# ab_floor.sh ROUNDS OUT: per round the hand-off floor, then bw 1 B-8 KiB before / after
R=$1; out=$2; mkdir -p $out
B=/tmp/s4b/build-before/bin; A=/tmp/s4b/build-after/bin
for r in $(seq 1 $R); do
  nice -n -20 /work/build-shm/bin/cacheline_pingpong -i 50000 -r 3 | tail -1 > $out/floor-$r.txt
  $B/xmsgrun -n 2 --bind-to core nice -n -20 $B/xmsg_osu_bw -m 1:8192 > $out/before-bw-$r.txt 2>&1
  $A/xmsgrun -n 2 --bind-to core nice -n -20 $A/xmsg_osu_bw -m 1:8192 > $out/after-bw-$r.txt 2>&1
  $B/xmsgrun -n 2 --bind-to core nice -n -20 $B/xmsg_osu_latency -m 0:8192 > $out/before-latency-$r.txt 2>&1
  $A/xmsgrun -n 2 --bind-to core nice -n -20 $A/xmsg_osu_latency -m 0:8192 > $out/after-latency-$r.txt 2>&1
done
