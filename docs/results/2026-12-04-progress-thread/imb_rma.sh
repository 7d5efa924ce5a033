#!/bin/bash
# IMB-RMA (intel/mpi-benchmarks 46e8757, built outside the tree with
# `make CC=build/bin/xmsgcc CXX=build/bin/xmsgcxx CPPFLAGS=-DCHECK IMB-RMA` in /tmp/ext/imb-check,
# never committed): every benchmark, data checked, per job shape. Prints per shape the exit
# status, seconds, benchmarks run, and how many table rows had a non-zero defects column.
B=/work/main/build/bin
cd /tmp/ext/imb-check || exit 1
for cfg in "n2:-n 2" "n4:-n 4" "n2_nodes2:-n 2 --nodes 2" "n4_nodes2:-n 4 --nodes 2" \
           "n2_nodes2_netns:-n 2 --nodes 2 --netns" "n4_nodes2_netns:-n 4 --nodes 2 --netns"; do
  name=${cfg%%:*} opts=${cfg#*:} s=$(date +%s)
  timeout 600 $B/xmsgrun --timeout 580 $opts ./IMB-RMA -msglog 0:14 -iter 50 -time 5 > $name.log 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - s ))s benchmarks=$(grep '^# Benchmarking' $name.log | sort -u | wc -l)" \
       "finalize=$(grep -c 'All processes entering MPI_Finalize' $name.log)" \
       "$(awk '/defects/ {d=1; next} /^$/ || /^#/ {d=0} d && $1 ~ /^[0-9]+$/ {rows++; if ($NF+0 != 0) bad++} END {print "rows", rows+0, "nonzero", bad+0}' $name.log)"
done
