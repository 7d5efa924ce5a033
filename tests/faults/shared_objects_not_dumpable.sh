#!/bin/sh
# shared_objects_not_dumpable.sh DEV_SHM_WATCH XMSGRUN SHARED_OBJECTS
# The ranks' node objects stay nameless where no rank may take another's descriptor by ptrace
# rules (Yama ptrace_scope 1, Ubuntu's default; setuid wrappers): the job runs as an
# unprivileged user with non-dumpable ranks, which pidfd_getfd(2) refuses just as Yama would
# (this kernel may have no Yama to set, and root would pass it anyway). dev_shm_watch must see
# no /dev/shm name at all. Exit 77 (skip) without root, setpriv or a user "nobody".
set -eu
watch=$1 xmsgrun=$2 program=$3
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id -u nobody >/dev/null 2>&1; then
  echo "SKIP: running the job as an unprivileged user needs root, setpriv(1) and a user nobody"
  exit 77
fi
# A clean environment, but a sanitized build's options (leak suppressions) go along.
exec "$watch" none -shm- -coll- -rma- -- setpriv --reuid=nobody --regid=nogroup --clear-groups \
  env -i PATH=/usr/bin:/bin ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${LSAN_OPTIONS:+LSAN_OPTIONS=$LSAN_OPTIONS} \
  ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} ${TSAN_OPTIONS:+TSAN_OPTIONS=$TSAN_OPTIONS} \
  "$xmsgrun" --timeout 60 -n 4 "$program" --not-dumpable
