#!/bin/sh
# IMB-RMA (intel/mpi-benchmarks 46e8757, -DCHECK, built outside the tree) in the soft-RoCE guest:
# per job shape the exit status, seconds, benchmarks run and table rows with non-zero defects.
# Extra arguments go to xmsgrun (-x XMSG_VERBS_MODE=xrc).
B=/work/main/build/bin
I=/work/main/build/probe/imb/IMB-RMA
cd /tmp || exit 1
for cfg in "n2_nodes2:-n 2 --nodes 2" "n4_nodes2:-n 4 --nodes 2" "n4_nodes2_all_verbs:-n 4 --nodes 2 -x XMSG_TRANSPORTS=verbs"; do
  name=${cfg%%:*} opts=${cfg#*:} s=$(date +%s)
  $B/xmsgrun --timeout 280 $opts "$@" $I -msglog 0:12 -iter 20 -time 2 > $name.log 2>&1
  rc=$?
  echo "$name $* rc=$rc $(( $(date +%s) - s ))s benchmarks=$(grep '^# Benchmarking' $name.log | sort -u | wc -l)" \
       "finalize=$(grep -c 'All processes entering MPI_Finalize' $name.log)" \
       "$(awk '/defects/ {d=1; next} /^$/ || /^#/ {d=0} d && $1 ~ /^[0-9]+$/ {rows++; if ($NF+0 != 0) bad++} END {print "rows", rows+0, "nonzero", bad+0}' $name.log)"
done
for f in /tmp/n*.log; do echo "== $f"; grep -A12 -E "Benchmarking (Fetch_and_op|Compare_and_swap)" $f | head -40; done
