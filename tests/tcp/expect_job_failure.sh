#!/usr/bin/env bash
# Runs a job that must fail: passes when the command exits non-zero within the ctest timeout
# and its output matches the extended regex. Usage: expect_job_failure.sh REGEX command...
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
  echo "expect_job_failure: the job exited 0, expected a failure" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  echo "expect_job_failure: output does not match /$regex/" >&2
  exit 1
fi
echo "expect_job_failure: failed as expected (exit $rc)"
