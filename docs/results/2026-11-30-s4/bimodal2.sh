#!/bin/bash
# rounds; variants as name:ENV=V ; each run gets its own floor probe just before
B=/work/main/build/bin
n=$1; shift
for i in $(seq $n); do
  for v in "$@" mpich; do
    f=$($B/cacheline_pingpong -r 1 -i 5000 | tail -1)
    if [ $v = mpich ]; then
      r=$(timeout 60 chrt -f 10 mpiexec.mpich -n 2 -bind-to core $B/mpich_osu_bw -m 4096:8192 2>&1 | grep -v '^#' | awk '{printf "%.0f ", $2}')
    else
      nm=${v%%:*}; E=${v#*:}; xs=""; [ -n "$E" ] && xs="-x $E"
      r=$(timeout 60 chrt -f 10 $B/xmsgrun -n 2 --bind-to core $xs $B/xmsg_osu_bw -m 4096:8192 2>&1 | grep -v '^#' | awk '{printf "%.0f ", $2}')
      v=$nm
    fi
    echo "$i $v $f $r"
  done
done
