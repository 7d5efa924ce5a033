#!/bin/bash
# final.sh OUT: hello footprint and time to end at 64/128/512 ranks, xmsg before / after / Open MPI
out=$1; mkdir -p $out; cd /tmp/s4b
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
one() { # name n cmd...
  local name=$1 n=$2; shift 2
  local s=$(date +%s.%N)
  timeout -s KILL 1000 "$@" > $out/$name-$n.out 2>&1; local rc=$?
  local e=$(date +%s.%N)
  echo "$name n=$n rc=$rc wall=$(echo "$e - $s" | bc) load=$(cut -d' ' -f1-3 /proc/loadavg) $(grep footprint: $out/$name-$n.out)" | tee -a $out/summary.txt
  ls /dev/shm >> $out/shm-left.txt
}
for n in 64 128 512; do
  order="before after ompi"; [ $n = 512 ] && order="after ompi before"
  for lib in $order; do
    case $lib in
      before) one before $n /tmp/s4b/build-before/bin/xmsgrun --timeout 950 -n $n ./fp_before ;;
      after) one after $n /tmp/s4b/build-after/bin/xmsgrun --timeout 950 -n $n ./fp_after ;;
      ompi) one ompi $n mpirun.openmpi --oversubscribe -n $n ./fp_ompi ;;
    esac
  done
done
