#!/bin/bash
# ppab.sh rounds "sizes" variant...   (variant: name:ENV=V or name: ; 'ompi' and 'mpich' are peers)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
B=/work/main/build/bin; cd /tmp/bwrep
n=$1 S=$2; shift 2
for r in $(seq $n); do
  f=$($B/cacheline_pingpong -r 1 -i 5000 | tail -1)
  for v in "$@"; do
    nm=${v%%:*}; E=${v#*:}
    case $nm in
      ompi) out=$(timeout 60 chrt -f 10 mpirun.openmpi -n 2 --bind-to core ./pp_o $S 2>/dev/null);;
      mpich) out=$(timeout 60 chrt -f 10 mpiexec.mpich -n 2 -bind-to core ./pp_m $S 2>/dev/null);;
      *) xs=""; if [ -n "$E" ]; then IFS=, read -ra kv <<< "$E"; for k in "${kv[@]}"; do xs="$xs -x $k"; done; fi; out=$(timeout 60 chrt -f 10 $B/xmsgrun -n 2 --bind-to core $xs ./pp_x $S 2>/dev/null);;
    esac
    echo "$out" | awk -v n=$nm -v f=$f '{print n, $1, $2, f}'
  done
done
