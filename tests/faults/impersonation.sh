#!/bin/sh
# impersonation.sh XMSGRUN IMPERSONATION_JOB IMPERSONATOR IMPOSTOR_RANK UID_SHIM
# Issue 19, deliverable 2: while a real 2-rank tcp job runs (two virtual nodes), an attacker runs
# as another local user (nobody) with what any local user can learn: the job directory's name
# in $TMPDIR (the nspace; its owner is the job's user), node 1's PMIx server (its pid from ps,
# its loopback port from ss) and rank 1's listener (ss).
#  1. IMPERSONATOR (its own PMIx client) must fail to read the job secret (EACCES), must be
#     refused by the PMIx server when it joins as rank 1 claiming the job user's uid (OpenPMIx 4
#     believes the claim; xmsgrun checks the socket's owner), and its call to rank 1 as rank 0,
#     with the best secret it has (a guess), must be refused: rank 1 logs the rejection and
#     delivers nothing of it. It then exits, closing its connections: a client accepted as
#     rank 1 that goes would be taken for rank 1 lost and the job's next fence never complete.
#  2. IMPOSTOR_RANK, an unchanged MPI program, started as nobody with rank 1's PMIx variables
#     and UID_SHIM preloaded (the original attack's LD_PRELOAD shim), must fail in MPI_Init
#     (a non-zero exit), refused by the PMIx server in the same way.
# The job must then end normally. The ps/ss lookups run as root here only to be sure which
# socket is whose. Exit 77 (skip) without root, setpriv or a user "nobody".
set -u
[ $# -eq 5 ] || { echo "usage: impersonation.sh XMSGRUN IMPERSONATION_JOB IMPERSONATOR IMPOSTOR_RANK UID_SHIM" >&2; exit 2; }
xmsgrun=$1 job=$2 impersonator=$3 impostor=$4 shim=$5
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id -u nobody >/dev/null 2>&1; then
  echo "SKIP: running the attacker as another user needs root, setpriv(1) and a user nobody"
  exit 77
fi
work=$(mktemp -d)
xpid=""
attacker=""
cleanup() {
  [ -n "$attacker" ] && kill "$attacker" 2>/dev/null
  [ -n "$xpid" ] && kill "$xpid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
# The attacker (unprivileged) only needs to execute the programs.
chmod 755 "$work"
report() {
  [ -f "$work/attacker.log" ] && { echo "attacker output:"; sed "s/^/  | /" "$work/attacker.log"; }
  echo "job output:"; sed "s/^/  | /" "$work/job.log"
}
fail() {
  echo "FAILED: $*"
  report
  exit 1
}

"$xmsgrun" --timeout 120 -n 2 --nodes 2 "$job" "$work/go" > "$work/job.log" 2>&1 &
xpid=$!
tries=0
until grep -qs "^impersonation_job: rank 1 pid [0-9]* listening on " "$work/job.log"; do
  tries=$((tries + 1))
  [ "$tries" -le 600 ] || fail "rank 1 did not say where it listens within 60 s"
  kill -0 "$xpid" 2>/dev/null || fail "the job ended before rank 1 listened"
  sleep 0.1
done
rank1_pid=$(sed -n "s/^impersonation_job: rank 1 pid \([0-9]*\) listening on .*/\1/p" "$work/job.log")
server_pid=$(ps -o ppid= -p "$rank1_pid" | tr -d " ")
# ss -ltnpH: "LISTEN 0 4096 127.0.0.1:38199 0.0.0.0:* users:(("xmsgrun",pid=15193,fd=15))"
listener_of() {
  ss -ltnpH | grep "pid=$1," | sed -n "s/^[^ ]* *[0-9]* *[0-9]* *\([0-9.]*:[0-9]*\) .*/\1/p" | head -n 1
}
server_port=$(listener_of "$server_pid" | sed "s/.*://")
rank1_address=$(listener_of "$rank1_pid")
job_dir=""
for d in "${TMPDIR:-/tmp}"/xmsg."$xpid".*; do [ -d "$d" ] && job_dir=$d; done
[ -n "$server_port" ] && [ -n "$rank1_address" ] && [ -n "$job_dir" ] ||
  fail "cannot find the PMIx server ($server_pid: '$server_port'), rank 1's listener ('$rank1_address') or the job directory"

uri="pmix-server.$server_pid;tcp4://127.0.0.1:$server_port"
claim_uid=$(stat -c %u "$job_dir") claim_gid=$(stat -c %g "$job_dir")
nspace=$(basename "$job_dir")
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env -i "$@"; }

as_nobody "$impersonator" "$job_dir" "$uri" "$rank1_address" > "$work/attacker.log" 2>&1 &
attacker=$!
tries=0
while kill -0 "$attacker" 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -le 600 ] || fail "the attacker did not finish within 60 s"
  sleep 0.1
done
wait "$attacker"
attacker=""
grep -qs "^impersonator: done" "$work/attacker.log" || fail "the attacker could not try"

# ASAN_OPTIONS: a sanitized program refuses to start with a library preloaded before its runtime.
as_nobody LD_PRELOAD="$shim" XMSG_TEST_CLAIM_UID="$claim_uid" XMSG_TEST_CLAIM_GID="$claim_gid" \
  ASAN_OPTIONS=verify_asan_link_order=0 PATH=/usr/bin:/bin PMIX_NAMESPACE="$nspace" PMIX_RANK=1 \
  PMIX_SERVER_URI4="$uri" PMIX_SERVER_URI41="$uri" PMIX_SERVER_URI3="$uri" PMIX_SERVER_URI2="$uri" \
  PMIX_SERVER_URI21="$uri" PMIX_SECURITY_MODE=native PMIX_MCA_gds=hash PMIX_GDS_MODULE=hash \
  PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_NON_DESC timeout 5 "$impostor" > "$work/impostor.log" 2>&1
impostor_status=$?

touch "$work/go"  # rank 0 sends its own message now
wait "$xpid"
status=$?
xpid=""

a=$work/attacker.log j=$work/job.log i=$work/impostor.log
grep -q "^impersonator: running as: uid [1-9]" "$a" || fail "the attacker did not run as another user"
grep -q "^impersonator: join the PMIx server as uid $claim_uid: refused" "$a" || fail "the PMIx server let the attacker join as rank 1"
refusal="^xmsgrun: PMIx server on [^ ]* refused a client claiming rank 1 of $nspace: its socket ([0-9.:]*) belongs to uid [1-9][0-9]*, not to the job's user (uid $claim_uid)\$"
[ "$(grep -c "$refusal" "$j")" -eq 2 ] || fail "the PMIx server did not log both refusals (the attacker's client, the impostor rank)"
grep -q "JOINED THE JOB" "$i" && fail "the impostor rank got through MPI_Init"
# Refused after OpenPMIx's handshake answer, its client library fails PMIx_Init, or now and then
# waits forever for an answer to its first request (timeout's 124): either way it is not in.
[ "$impostor_status" -ne 0 ] || fail "the impostor rank exited 0"
[ "$(grep -c "^impersonator: read .*/job/secret: Permission denied$" "$a")" -eq 2 ] ||
  fail "reading the secret files did not fail with EACCES on both nodes"
grep -q "READ THE JOB SECRET\|FOUND THE JOB SECRET" "$a" && fail "the attacker got the job secret"
grep -q "^impersonator: rank 1's answer: closed the connection$" "$a" || fail "rank 1 did not close the impostor's connection"
grep -q "^xmsg: tcp: rank 1 rejected a connection from [0-9.:]*: caller claiming rank 0 failed to prove the job secret" "$j" ||
  fail "rank 1 did not log the refusal of the impostor"
grep -q "^impersonation_job: rank 1 delivered 1 message(s), all rank 0's own$" "$j" || fail "rank 1 delivered more than rank 0's own message"
[ "$status" -eq 0 ] && grep -q "^impersonation_job: OK$" "$j" || fail "the job did not end normally (exit status $status)"
report
echo "impostor rank output (exit status $impostor_status):"; sed "s/^/  | /" "$i"
echo "ok: the attacker could not read the secret nor join the PMIx server (its own client, an MPI program with a uid shim), and rank 1 refused its call; the job ended normally"
