#!/bin/sh
# expect_trace.sh PATTERN-FILE -- COMMAND...: COMMAND must exit 0 and its output must match every
# line of PATTERN-FILE (grep -E), each at least once, except lines starting with '!', whose
# pattern must match no line; what it printed is shown when it fails.
patterns=$1
shift
[ "$1" = "--" ] && shift
out=$("$@" 2>&1)
rc=$?
status=0
if [ $rc -ne 0 ]; then
  echo "expect_trace: the command exited with $rc"
  status=1
fi
while IFS= read -r pattern; do
  [ -z "$pattern" ] && continue
  case $pattern in
    !*)
      if printf '%s\n' "$out" | grep -Eq -- "${pattern#!}"; then
        echo "expect_trace: matched, but must not: ${pattern#!}"
        status=1
      fi ;;
    *)
      if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
        echo "expect_trace: nothing matched: $pattern"
        status=1
      fi ;;
  esac
done < "$patterns"
[ $status -ne 0 ] && printf '%s\n' "$out" | tail -40
[ $status -eq 0 ] && echo "expect_trace: OK"
exit $status
