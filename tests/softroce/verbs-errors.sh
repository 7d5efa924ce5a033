#!/bin/sh
# verbs-errors.sh XMSGRUN RUNTIME_PROGRAM VERBS_JOB DEAD_PEER_PROGRAM
# Run inside the soft-RoCE guest (softroce-run.sh): every way the verbs transport can fail must
# end the job promptly with a message naming the device and, where there is one, the peer —
# never a hang (xmsgrun --timeout turns a hang into status 124, which fails the case).
# RUNTIME_PROGRAM is any program whose init wires up the runtime (an MPI one: its init errors
# abort the job). Prints one "ok:" line per case; exits 1 after the first case that fails.
# (QP creation running out is xmsg_verbs_test's QueuePair.RunningOutOfQpsNamesTheDeviceAndThePeer;
# a peer whose QPs vanish mid-READ is xmsg_verbs_job peerloss.)
set -u
[ $# -eq 4 ] || { echo "usage: verbs-errors.sh XMSGRUN RUNTIME_PROGRAM VERBS_JOB DEAD_PEER_PROGRAM" >&2; exit 2; }
xmsgrun=$1 program=$2 job=$3 dead_peer=$4
output=$(mktemp)
trap 'rm -f "$output"' EXIT

# expect NAME STATUS PATTERN... -- COMMAND...: COMMAND exits with STATUS ("nonzero": anything but
# 0 and 124) and its output matches every PATTERN (grep -E).
expect() {
  name=$1 want=$2
  shift 2
  patterns=""
  while [ "$1" != "--" ]; do patterns="$patterns
$1"; shift; done
  shift
  start=$(date +%s)
  "$@" > "$output" 2>&1
  status=$?
  took=$(( $(date +%s) - start ))
  bad=""
  if [ "$want" = nonzero ]; then
    { [ "$status" -ne 0 ] && [ "$status" -ne 124 ]; } || bad="exit status $status, expected a failure (not 0, not 124 = hang)"
  elif [ "$status" -ne "$want" ]; then
    bad="exit status $status, expected $want"
  fi
  if [ -z "$bad" ]; then
    echo "$patterns" | while IFS= read -r p; do
      [ -z "$p" ] && continue
      grep -Eq -- "$p" "$output" || echo "$p"
    done > "$output.missing"
    [ -s "$output.missing" ] && bad="output lacks: $(tr '\n' '|' < "$output.missing")"
    rm -f "$output.missing"
  fi
  if [ -n "$bad" ]; then
    echo "FAILED: $name: $bad; output was:"
    sed 's/^/  | /' "$output"
    exit 1
  fi
  echo "ok: $name ($took s): $(grep -E -m1 -- "$(echo "$patterns" | sed -n 2p)" "$output")"
}

run() { "$xmsgrun" --timeout 90 -n 2 --nodes 2 "$@"; }

expect "XRC asked of a device without it" nonzero 'no XRC-capable device' 'rxe0:1 lacks IBV_DEVICE_XRC' \
  -- run -x XMSG_VERBS_MODE=xrc "$program"
expect "XMSG_IB_DEVICE names a missing device" nonzero "RDMA device 'mlx5_9' not found \(available: rxe0\)" \
  -- run -x XMSG_IB_DEVICE=mlx5_9 "$program"
expect "XMSG_IB_DEVICE names a missing port" nonzero 'RDMA device rxe0 has no port 3' \
  -- run -x XMSG_IB_DEVICE=rxe0:3 "$program"
# (pmix-finalized: rank 1 leaves PMIx cleanly, so xmsgrun sees no failure and only the runtime
# can tell rank 0; a rank leaving without any finalize makes xmsgrun end the job at once, exit 1,
# which p2p.dead_peer and tcp_p2p_dead_peer_nodes2_* check.)
expect "a rank that leaves without a word is reported by its peer" 0 \
  'DEAD_PEER_DETECTED: .*rank 1 \(node 1\) unreachable from rank 0 on rxe0:1: liveness probe failed' \
  'ANY_SOURCE_AFTER_FAILURE_OK' -- run "$dead_peer" pmix-finalized
expect "a rank SIGKILLed mid-transfer ends the job" 137 'xmsgrun: rank 1 \(pid [0-9]+\) killed by signal 9' \
  -- "$xmsgrun" --timeout 90 -n 3 --nodes 2 -x XMSG_TRANSPORTS=verbs "$job" killed
# Last: the port stays down until the guest powers off.
/sbin/ip link set eth0 down
expect "port down (port named)" nonzero 'port 1 of RDMA device rxe0 is (down|DOWN|PORT_DOWN), not ACTIVE' \
  -- run -x XMSG_IB_DEVICE=rxe0:1 "$program"
expect "port down (device chosen by default)" nonzero 'no usable RDMA device: RDMA device rxe0 has no ACTIVE port \(port 1: (down|DOWN|PORT_DOWN)\)' \
  -- run "$program"
