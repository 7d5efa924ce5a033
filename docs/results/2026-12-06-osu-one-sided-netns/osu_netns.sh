#!/bin/sh
# OSU 7.4 one-sided across --netns nodes (tcp): every benchmark, window option and sync option,
# 2 ranks on 2 network-namespace nodes (run with --netns); prints "case rc" lines and the 8-byte row.
d=/work/main/build/probe/osu
x=/work/main/build/bin/xmsgrun
for b in put_latency get_latency put_bw get_bw put_bibw acc_latency cas_latency fop_latency get_acc_latency; do
  for w in create allocate dynamic; do
    for s in pscw fence lock flush flush_local lock_all; do
      out=$($x --timeout 60 "$@" -n 2 --nodes 2 $d/osu_$b -w $w -s $s -m 1:16384 -i 20 -x 5 2>&1); rc=$?
      row=$(echo "$out" | awk '$1 == 8 {print $2}')
      err=$(echo "$out" | grep -iE "error|invalid|not supported|abort" | head -1 | cut -c1-100)
      echo "osu_$b $w $s rc=$rc 8B=$row $err"
    done
  done
done
