#!/bin/sh
# xrc-jobs.sh XMSGRUN VERBS_JOB
# Run inside the XRC soft-RoCE guest (softroce-run.sh --xrc): xmsg's XRC mode end to end. Jobs of
# 3 ranks per node on 2 and on 3 virtual nodes (so every TGT is shared by the node's ranks, most
# owned by another local rank, and one INI per remote node reaches all of its ranks), the incast,
# a peer lost mid-READ and a silent one, a rank SIGKILLed. Checks, besides each job's own checks:
# every rank reports 2(N-1) QPs in XRC mode, the ranks of a node name one XRC domain file and
# different nodes different ones, and no domain file is left once a job ends, killed or not.
# The launcher SIGKILLed mid-job must leave neither domain files nor job directories nor ranks.
# Prints one "ok:" line per case (with each rank's wire-up time); exits 1 at the first failure.
set -u
[ $# -eq 2 ] || { echo "usage: xrc-jobs.sh XMSGRUN VERBS_JOB" >&2; exit 2; }
xmsgrun=$1 job=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() {
  echo "FAILED: $case_name: $*; output was:"
  sed 's/^/  | /' "$out"
  exit 1
}

leftovers() {
  find /tmp /run /dev/shm -name 'xrcd-*' 2>/dev/null
}

# job NAME RANKS NODES EXPECTED_STATUS [ARGS...]; XMSG_VERBS_CONNECT=$connect (default lazy)
job() {
  case_name=$1 ranks=$2 nodes=$3 want=$4
  shift 4
  start=$(date +%s)
  "$xmsgrun" --timeout 150 -n "$ranks" --nodes "$nodes" -x XMSG_VERBS_MODE=xrc -x XMSG_VERBOSE=1 \
    -x XMSG_WAIT_POLICY=yield -x XMSG_VERBS_CONNECT="${connect:-lazy}" "$job" "$@" > "$out" 2>&1
  status=$?
  took=$(( $(date +%s) - start ))
  [ "$status" -eq "$want" ] || fail "exit status $status, expected $want"
  [ -z "$(leftovers)" ] || fail "XRC domain files left behind: $(leftovers | tr '\n' ' ')"
}

# check_qps RANKS NODES: every rank wired up in XRC mode with no QP (lazy wire-up) and, after
# talking to every remote rank, created NODES-1 INI QPs, while the node's ranks hold one TGT per
# remote sender between them (2(NODES-1) QPs per rank on average); one domain file per node,
# shared by its ranks.
check_qps() {
  ranks=$1 nodes=$2
  lines=$(grep -c "xmsg: verbs: rank [0-9]* on .*, xrc mode, lazy wire-up, 0 QPs" "$out")
  [ "$lines" -eq "$ranks" ] || fail "$lines of $ranks ranks report xrc mode, lazy wire-up with 0 QPs at start"
  want_ini=$((nodes - 1))
  want_tgt=$((ranks * want_ini))
  inis=$(grep -c "xmsg: verbs: rank [0-9]* created [0-9]* QPs on demand .$want_ini INI," "$out")
  [ "$inis" -eq "$ranks" ] || fail "$inis of $ranks ranks created $want_ini INI QPs"
  tgts=$(sed -n 's/.*QPs on demand ([0-9]* INI, \([0-9]*\) TGT.*/\1/p' "$out" | awk '{ s += $1 } END { print s + 0 }')
  [ "$tgts" -eq "$want_tgt" ] || fail "$tgts TGT QPs in the job, expected $want_tgt"
  domains=$(sed -n 's/.*XRC domain \([^,]*\),.*/\1/p' "$out" | sort -u | wc -l)
  [ "$domains" -eq "$nodes" ] || fail "$domains distinct XRC domain files for $nodes nodes"
  times=$(sed -n 's/.*rank \([0-9]*\) on .*wired up in \([0-9.]*\) ms/\2/p' "$out" | sort -n | tr '\n' ' ')
  echo "  wire-up times (ms, all ranks): $times"
}

job "exchange, 6 ranks on 2 nodes" 6 2 0
check_qps 6 2
echo "ok: $case_name ($took s)"
job "exchange, 9 ranks on 3 nodes" 9 3 0
check_qps 9 3
echo "ok: $case_name ($took s)"
connect=eager
job "eager wire-up, 9 ranks on 3 nodes" 9 3 0 exchange
connect=lazy
lines=$(grep -c "xmsg: verbs: rank [0-9]* on .*, xrc mode, eager wire-up, 4 QPs" "$out")
[ "$lines" -eq 9 ] || fail "$lines of 9 ranks report xrc mode, eager wire-up with 2(3-1) QPs"
echo "ok: $case_name ($took s)"
job "each rank talks to two peers, 9 ranks on 3 nodes" 9 3 0 pairs
grep -q "pairs OK (xrc mode, lazy wire-up, 9 ranks on 3 nodes, 2 QPs per rank)" "$out" || fail "no pairs report"
echo "ok: $case_name ($took s)"
connect=eager
job "each rank talks to two peers, eager wire-up" 9 3 0 pairs
connect=lazy
grep -q "pairs OK (xrc mode, eager wire-up, 9 ranks on 3 nodes" "$out" || fail "no pairs report"
echo "ok: $case_name ($took s)"
job "incast, 6 ranks on 2 nodes" 6 2 0 incast
grep -q "incast" "$out" || fail "no incast report"
echo "ok: $case_name ($took s)"
job "a peer's QPs vanish mid-READ" 2 2 0 peerloss
echo "ok: $case_name ($took s)"
job "a peer goes silent" 2 2 0 silentloss
echo "ok: $case_name ($took s)"
job "a rank SIGKILLed mid-transfer, 6 ranks on 2 nodes" 6 2 137 killed
grep -Eq 'xmsgrun: rank [0-9]+ \(pid [0-9]+\) killed by signal 9' "$out" || fail "the killed rank is not named"
echo "ok: $case_name ($took s)"

case_name="the launcher SIGKILLed mid-job, 2 ranks on 2 nodes"
# silentloss runs ~10 s: long enough to be killed in the middle.
"$xmsgrun" --timeout 150 -n 2 --nodes 2 -x XMSG_VERBS_MODE=xrc -x XMSG_WAIT_POLICY=yield "$job" silentloss > "$out" 2>&1 &
launcher=$!
sleep 4
pgrep -x xmsg_verbs_job >/dev/null || fail "no rank running 4 s into the job"
kill -9 "$launcher" || fail "the launcher had already exited"
wait "$launcher" 2>/dev/null
gone=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
  if ! pgrep -x xmsg_verbs_job >/dev/null && [ -z "$(leftovers)" ] && [ -z "$(ls -d /tmp/xmsg.* 2>/dev/null)" ]; then
    gone=1; break
  fi
  sleep 1
done
[ $gone -eq 1 ] || fail "left behind after 10 s: ranks [$(pgrep -x xmsg_verbs_job | tr '\n' ' ')] files [$(leftovers | tr '\n' ' ')] dirs [$(ls -d /tmp/xmsg.* 2>/dev/null | tr '\n' ' ')]"
echo "ok: $case_name"
