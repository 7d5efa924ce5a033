#!/bin/bash
# All OSU runs against xmsg. Logs: /tmp/ext/osu-xmsg/runs/main/
cd /tmp/ext/osu-xmsg
R=/tmp/ext/scripts/runone.sh; L=runs/main
rm -rf $L; mkdir -p $L
P=c/mpi/pt2pt
# point-to-point, 2 ranks
for p in standard/osu_latency standard/osu_bw standard/osu_bibw standard/osu_latency_mp standard/osu_latency_mt \
         standard/osu_multi_lat standard/osu_mbw_mr persistent/osu_latency_persistent persistent/osu_bw_persistent \
         persistent/osu_bibw_persistent; do
  n=$(basename $p)
  $R $L ${n}_n2 2 $P/$p -m 1:65536
  $R $L ${n}_n2_c 2 $P/$p -m 1:65536 -c
done
# congestion (need >1 node)
for n in osu_bw_fan_in osu_bw_fan_out; do
  $R $L ${n}_n2 2 $P/congestion/$n -m 1:65536
done
# collectives
for d in blocking non_blocking neighborhood; do
  for p in $(grep "collective/$d/" exes.txt); do
    n=$(basename $p)
    for np in 2 4 8; do
      $R $L ${n}_n${np} $np $p -m 1:65536 -i 100 -x 10
      if grep -q -- '-c, --validation' runs/help/$n.txt; then
        $R $L ${n}_n${np}_c $np $p -m 1:65536 -i 100 -x 10 -c
      fi
    done
  done
done
# one-sided, 2 ranks
for p in $(grep "one-sided/" exes.txt); do
  n=$(basename $p)
  $R $L ${n}_n2 2 $p -m 1:65536
done
# startup
for np in 2 4 8; do
  $R $L osu_hello_n$np $np c/mpi/startup/osu_hello
  $R $L osu_init_n$np $np c/mpi/startup/osu_init
done
