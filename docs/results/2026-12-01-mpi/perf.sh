#!/bin/bash
# Headline numbers: 3 repetitions, interleaved over benchmarks and implementations.
L=/tmp/ext/perf; rm -rf $L; mkdir -p $L
declare -A RUN DIR
RUN[xmsg]="/work/main/build/bin/xmsgrun --timeout 300 -n"; DIR[xmsg]=/tmp/ext/osu-xmsg
RUN[ompi]="mpirun.openmpi --allow-run-as-root --oversubscribe -n"; DIR[ompi]=/tmp/ext/osu
RUN[mpich]="mpiexec.mpich -n"; DIR[mpich]=/tmp/ext/osu-mpich
BENCH=("latency 2 pt2pt/standard/osu_latency -m 1:65536"
       "bw 2 pt2pt/standard/osu_bw -m 1:65536"
       "allreduce 4 collective/blocking/osu_allreduce -m 1:65536 -i 100 -x 10"
       "alltoall 4 collective/blocking/osu_alltoall -m 1:65536 -i 100 -x 10"
       "iallreduce 4 collective/non_blocking/osu_iallreduce -m 1:65536 -i 100 -x 10")
md5sum /work/main/build/lib/libxmsg_mpi.so /work/main/build/lib/libxmsg.so.0.1.0 > $L/lib_md5_before.txt
for rep in 1 2 3; do
  for b in "${BENCH[@]}"; do
    set -- $b; name=$1; np=$2; prog=$3; shift 3
    for impl in xmsg ompi mpich; do
      log=$L/${name}_${impl}_r$rep.log
      echo "# cmd: ${RUN[$impl]} $np ${DIR[$impl]}/c/mpi/$prog $*" > $log
      echo "# loadavg before: $(cat /proc/loadavg)" >> $log
      s=$(date +%s.%N)
      timeout 330 ${RUN[$impl]} $np ${DIR[$impl]}/c/mpi/$prog "$@" >> $log 2>&1; rc=$?
      echo "$name $impl r$rep rc=$rc $(printf '%.1f' $(echo "$(date +%s.%N) - $s" | bc))s load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
md5sum /work/main/build/lib/libxmsg_mpi.so /work/main/build/lib/libxmsg.so.0.1.0 > $L/lib_md5_after.txt
