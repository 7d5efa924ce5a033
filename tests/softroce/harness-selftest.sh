#!/usr/bin/env bash
# Checks the guest harness itself: the guest has rxe0, the host's environment variables passed
# with --env arrive, the working directory is kept, and the command's exit status comes back.
set -u
run="$1"; shift
out=$("$run" "$@" --env XMSG_SELFTEST=yes -- sh -c 'ibv_devices; echo "env=$XMSG_SELFTEST pwd=$(pwd)"; exit 7' 2>&1)
rc=$?
echo "$out"
fail=0
[ $rc -eq 7 ] || { echo "FAIL: exit status $rc, expected 7"; fail=1; }
grep -q 'rxe0' <<<"$out" || { echo "FAIL: no rxe0 device in the guest"; fail=1; }
grep -q "env=yes pwd=$(pwd)" <<<"$out" || { echo "FAIL: environment or working directory not carried over"; fail=1; }
exit $fail
