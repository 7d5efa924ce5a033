#!/bin/sh
# expect_job_end.sh STATUS [PATTERN | !PATTERN]... -- COMMAND...
# Runs a job (COMMAND, normally xmsgrun with --timeout) and passes when all of these hold:
# it exits with exactly STATUS and its output (stdout and stderr together) matches every
# PATTERN (grep -E, each on some line) and no !PATTERN. A hang (the --timeout's 124, or
# ctest's TIMEOUT) therefore fails, as does a job that ends the right way for the wrong reason.
# How long the job took is printed, never judged (speed belongs to the benchmarks). Prints the
# output, then one verdict line.
set -u
[ $# -ge 3 ] || { echo "usage: expect_job_end.sh STATUS [PATTERN | !PATTERN]... -- COMMAND..." >&2; exit 2; }
want=$1
shift
patterns=$(mktemp)
output=$(mktemp)
trap 'rm -f "$patterns" "$output"' EXIT
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  printf '%s\n' "$1" >> "$patterns"
  shift
done
[ $# -ge 2 ] || { echo "expect_job_end: no -- COMMAND" >&2; exit 2; }
shift
start=$(date +%s)
"$@" > "$output" 2>&1
status=$?
took=$(( $(date +%s) - start ))
cat "$output"
bad=""
[ "$status" -eq "$want" ] || bad="exit status $status, expected $want"
if [ -z "$bad" ]; then
  while IFS= read -r p; do
    case $p in
      !*) if grep -Eq -- "${p#!}" "$output"; then bad="output matches the forbidden /${p#!}/"; break; fi ;;
      *) if ! grep -Eq -- "$p" "$output"; then bad="output lacks /$p/"; break; fi ;;
    esac
  done < "$patterns"
fi
if [ -n "$bad" ]; then
  echo "expect_job_end: FAILED: $bad"
  exit 1
fi
echo "expect_job_end: ok: exit status $status after $took s"
