#!/usr/bin/env bash
# A one-host Slurm cluster for the engine tests: `slurm_cluster.sh start DIR` writes DIR/slurm.conf
# (auth/none, cred/none: no munge), starts slurmctld and slurmd and waits until the node is idle;
# `slurm_cluster.sh stop DIR` stops both daemons (by their pid files) and removes DIR.
# Clients use SLURM_CONF=DIR/slurm.conf. Ports are chosen per DIR so parallel builds don't meet.
set -u
cmd=${1:?usage: slurm_cluster.sh start|stop DIR}
dir=${2:?usage: slurm_cluster.sh start|stop DIR}

stop() {
  for d in slurmd slurmctld; do
    pidfile="$dir/$d.pid"
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null)
    [ -n "$pid" ] || continue
    # Only our daemon: the pid must still run that program with our config.
    if grep -qs "$dir/slurm.conf" "/proc/$pid/cmdline"; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
    fi
  done
  rm -rf "$dir"
}

case $cmd in
  stop)
    stop
    exit 0
    ;;
  start)
    for prog in slurmctld slurmd sinfo srun; do
      command -v "$prog" >/dev/null || { echo "slurm_cluster: $prog not installed (scripts/deps/tcp.txt)"; exit 1; }
    done
    stop  # a previous run that died midway
    mkdir -p "$dir/state" "$dir/spool"
    host=$(hostname -s)
    # Two ports from the directory name's hash, in a range Linux does not hand out as ephemeral.
    h=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
    ctld_port=$((10000 + h % 10000 * 2))
    slurmd_port=$((ctld_port + 1))
    cat > "$dir/slurm.conf" <<CONF
ClusterName=xmsgtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=xmsg Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$dir/slurm.conf" -i || { cat "$dir/slurmctld.log" 2>/dev/null; stop; exit 1; }
    slurmd -f "$dir/slurm.conf" || { cat "$dir/slurmd.log" 2>/dev/null; stop; exit 1; }
    for _ in $(seq 200); do
      state=$(sinfo -h -o %t 2>/dev/null | head -1)
      case $state in idle*|mix*|alloc*) echo "slurm_cluster: up in $dir ($host, ports $ctld_port/$slurmd_port)"; exit 0 ;; esac
      sleep 0.1
    done
    echo "slurm_cluster: node never became idle (state '${state:-none}')"
    tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null
    stop
    exit 1
    ;;
  *)
    echo "usage: slurm_cluster.sh start|stop DIR"
    exit 2
    ;;
esac
