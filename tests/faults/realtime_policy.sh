#!/bin/sh
# realtime_policy.sh XMSGRUN MPI_HELLO
# Issue 19 (chrt -f starvation): a job started under a real-time policy (chrt -f, as benchmark
# users do) inherits it in the launcher, every rank and every rank's PMIx thread. A rank that
# spins without ever yielding keeps its PMIx thread (bound to the same core, same priority) off
# the CPU, so MPI_Finalize's fence never completed and the job hung until killed. Each case
# must end with status 0 and every rank's line. Exit 77 (skip) where this user may not use
# SCHED_FIFO (no root, RLIMIT_RTPRIO 0, or a container without CAP_SYS_NICE).
set -u
[ $# -eq 2 ] || { echo "usage: realtime_policy.sh XMSGRUN MPI_HELLO" >&2; exit 2; }
xmsgrun=$1 hello=$2
if ! command -v chrt >/dev/null 2>&1 || ! chrt -f 1 true 2>/dev/null; then
  echo "SKIP: this user may not run a program under SCHED_FIFO (chrt -f 1 true failed)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0
run_case() {  # NAME EXPECTED_LINES XMSGRUN_ARGS...
  name=$1 lines=$2
  shift 2
  # The outer timeout is not real-time, so it fires even if the job starves its own launcher.
  timeout -k 10 90 chrt -f 1 "$xmsgrun" --timeout 60 "$@" "$hello" > "$out" 2>&1
  status=$?
  got=$(grep -c "^mpi_hello: rank [0-9]* of $lines, sum " "$out")
  if [ "$status" -eq 0 ] && [ "$got" -eq "$lines" ]; then
    echo "ok: $name (status 0, $got lines)"
  else
    echo "FAILED: $name: status $status, $got of $lines ranks' lines (124: hung until --timeout)"
    sed "s/^/  | /" "$out"
    failed=1
  fi
}
run_case "2 ranks, one node" 2 -n 2
run_case "2 ranks, one node, XMSG_WAIT_POLICY=spin" 2 -n 2 -x XMSG_WAIT_POLICY=spin
run_case "2 ranks on 2 nodes (tcp)" 2 -n 2 --nodes 2
run_case "4 ranks on 2 nodes" 4 -n 4 --nodes 2
exit $failed
