#!/usr/bin/env bash
# Runs a job that must succeed and print every one of the given extended regexes (in any order:
# stdout and stderr of different ranks interleave). Usage: expect_job_output.sh REGEX... -- command...
regexes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  regexes+=("$1")
  shift
done
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "expect_job_output: the job exited $rc, expected 0" >&2
  exit 1
fi
for regex in "${regexes[@]}"; do
  if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
    echo "expect_job_output: output does not match /$regex/" >&2
    exit 1
  fi
done
echo "expect_job_output: every expected line is there"
