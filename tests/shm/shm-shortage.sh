#!/bin/sh
# shm-shortage.sh XMSGRUN PROGRAM
# In a private mount namespace whose /dev/shm is a 2 MiB tmpfs (Docker's 64 MiB default, scaled
# down), a job whose named shared-memory rings (XMSG_SHM_NAMELESS=off) do not fit must end
# within seconds, non-zero, with the reservation error (the segment, bytes needed, bytes free,
# what to do) instead of a rank killed by SIGBUS, and leave nothing in /dev/shm. With the
# default (memfds, which /dev/shm's size does not bound) the same job runs. Exit 77 (skip)
# without root or unshare.
set -u
[ $# -eq 2 ] || { echo "usage: shm-shortage.sh XMSGRUN PROGRAM" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1; then
  echo "SKIP: a private /dev/shm needs root and unshare(1)"
  exit 77
fi
exec unshare --mount --propagation private sh -c '
  xmsgrun=$1 program=$2
  mount -t tmpfs -o size=2m xmsg-shm-test /dev/shm || { echo "SKIP: cannot mount a tmpfs on /dev/shm"; exit 77; }
  start=$(date +%s)
  out=$(timeout 60 "$xmsgrun" -n 8 -x XMSG_SHM_NAMELESS=off "$program" -i 5 2>&1)
  status=$?
  took=$(( $(date +%s) - start ))
  fail() { echo "FAILED: $*"; echo "$out" | sed "s/^/  | /"; exit 1; }
  [ "$status" -ne 0 ] || fail "the job succeeded although its rings cannot fit in 2 MiB"
  [ "$status" -ne 124 ] || fail "the job hung"
  echo "$out" | grep -q "signal 7\|Bus error" && fail "a rank died of SIGBUS"
  echo "$out" | grep -q "cannot reserve [0-9]* bytes for /dev/shm/xmsg-" || fail "no reservation error naming the segment"
  echo "$out" | grep -q "/dev/shm has [0-9]* of [0-9]* bytes free" || fail "the error does not say what /dev/shm has free"
  echo "$out" | grep -q "shm-size" || fail "the error does not say what to do"
  left=$(ls -A /dev/shm)
  [ -z "$left" ] || fail "left in /dev/shm: $left"
  [ "$took" -le 20 ] || fail "took ${took} s to end"
  echo "ok: names: exit $status after ${took} s: $(echo "$out" | grep -m1 "cannot reserve")"
  out=$(timeout 60 "$xmsgrun" -n 8 "$program" -i 5 2>&1)
  status=$?
  [ "$status" -eq 0 ] || fail "with memfds (the default) the job failed, status $status"
  left=$(ls -A /dev/shm)
  [ -z "$left" ] || fail "left in /dev/shm: $left"
  echo "ok: memfds: the same job ran in the 2 MiB /dev/shm"
' sh "$1" "$2"
