#!/bin/sh
# ranks_die_together.sh XMSGRUN JOB_ACTIONS ROUNDS [wrapped]
# Issue 19: two ranks of a fence die at the same moment, one that had not called in (rank 0) and
# one that had (rank 1), while their node server cannot watch (it is stopped): when it goes on,
# OpenPMIx 4.2 sees both connections close in one pass of its event loop and completes the
# fence twice, freeing it twice (heap corruption: "the node server crashed (signal 6)"), unless the node server holds the ranks' ends of their connections and lets
# the library see each close only once it has reaped that rank. Each of ROUNDS jobs must end
# with status 137, one verdict naming rank 0 or 1, and no crash. `wrapped`: every rank is a shell
# that runs JOB_ACTIONS as its child, so the PMIx clients are the ranks' children (the node
# server must find and hold their connections there); the verdict is then the shell's exit 137.
set -u
[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: ranks_die_together.sh XMSGRUN JOB_ACTIONS ROUNDS [wrapped]" >&2; exit 2; }
xmsgrun=$1 actions=$2 rounds=$3 wrapped=${4:-}
if [ "$wrapped" = wrapped ]; then
  # shellcheck disable=SC2016 # expanded by the rank's shell
  set -- sh -c '"$0" kill-pair; exit $?' "$actions"
  verdict="exited with status 137 without finalizing"
else
  set -- "$actions" kill-pair
  verdict="killed by signal 9 (Killed)"
fi
work=$(mktemp -d)
xpid="" ns=""
cleanup() {
  [ -n "$ns" ] && kill -CONT "$ns" 2>/dev/null
  [ -n "$xpid" ] && kill "$xpid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED (round $round): $*"
  sed "s/^/  | /" "$work/out"
  exit 1
}
state_of() { sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null; }
round=1
while [ "$round" -le "$rounds" ]; do
  rm -f "$work/out"  # the background job's redirection truncates it only when it gets to run
  "$xmsgrun" --timeout 60 -n 8 "$@" > "$work/out" 2>&1 &
  xpid=$!
  tries=0
  until grep -qs "^job_actions: rank 0 ready to kill rank 1 (pid [0-9]*)$" "$work/out"; do
    tries=$((tries + 1))
    [ "$tries" -le 1500 ] || fail "rank 0 was not ready within 30 s"
    kill -0 "$xpid" 2>/dev/null || fail "the job ended before rank 0 was ready"
    sleep 0.02
  done
  r0=$(sed -n 's/^job_actions: rank 0 pid \([0-9]*\) .*/\1/p' "$work/out")
  r1=$(sed -n 's/^job_actions: rank 0 ready to kill rank 1 (pid \([0-9]*\))$/\1/p' "$work/out")
  # What the node server reaps: the ranks themselves, or in wrapped mode their shells.
  z0=$r0 z1=$r1
  if [ "$wrapped" = wrapped ]; then
    z0=$(ps -o ppid= -p "$r0" | tr -d " ")
    z1=$(ps -o ppid= -p "$r1" | tr -d " ")
  fi
  ns=$(ps -o ppid= -p "$z0" | tr -d " ")
  [ -n "$r0" ] && [ -n "$r1" ] && [ -n "$ns" ] || fail "cannot find rank 0, rank 1 or their node server"
  sleep 0.1  # the other ranks are in the fence by now
  kill -STOP "$ns"
  # Rank 0 first: its close, reached first, completes the fence (all the others had called in);
  # rank 1's, in the same pass, completed it again.
  kill -KILL "$r0"
  sleep 0.05
  kill -KILL "$r1"
  tries=0
  until [ "$(state_of "$z0")" = Z ] && [ "$(state_of "$z1")" = Z ]; do
    tries=$((tries + 1))
    [ "$tries" -le 500 ] || fail "ranks 0 and 1 did not both die within 10 s (states '$(state_of "$z0")' '$(state_of "$z1")')"
    sleep 0.02
  done
  kill -CONT "$ns"
  ns=""
  wait "$xpid"
  status=$?
  xpid=""
  grep -q "crashed\|corrupted" "$work/out" && fail "the node server crashed"
  [ "$status" -eq 137 ] || fail "exit status $status, expected 137"
  [ "$(grep -c "^xmsgrun: rank [01] (pid [0-9]*) $verdict$" "$work/out")" -eq 1 ] ||
    fail "not exactly one verdict naming rank 0 or 1"
  round=$((round + 1))
done
echo "ok: $rounds jobs whose ranks 0 and 1 died together in a fence each ended once, with status 137"
