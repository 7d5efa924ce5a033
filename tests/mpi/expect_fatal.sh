#!/bin/bash
# Runs a job that must end through MPI_ERRORS_ARE_FATAL: non-zero exit, the expected message,
# and nothing printed after the bad call.
# usage: expect_fatal.sh "<expected message>" launcher args...
expected="$1"
shift
output=$("$@" 2>&1)
status=$?
echo "$output"
if [ "$status" -eq 0 ]; then echo "FAIL: the job exited 0"; exit 1; fi
if ! grep -qF -- "$expected" <<<"$output"; then echo "FAIL: no \"$expected\" in the output"; exit 1; fi
if grep -q "still running after a fatal error" <<<"$output"; then echo "FAIL: the program went on"; exit 1; fi
echo "PASS: job ended with status $status and the message"
