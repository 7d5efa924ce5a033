/* The LD_PRELOAD shim of tests/faults/impersonation.sh: a process of another user, started with
 * it, reports the uid and gid in XMSG_TEST_CLAIM_UID / XMSG_TEST_CLAIM_GID to whoever asks (the
 * PMIx client library puts them in its handshake: OpenPMIx 4's `native` security over TCP
 * believes them). What an attacker would write; nothing else of the process changes. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static long claimed(const char* var, long real_call) {
  const char* v = getenv(var);
  return v && *v ? strtol(v, NULL, 10) : syscall(real_call);
}

uid_t getuid(void) { return (uid_t)claimed("XMSG_TEST_CLAIM_UID", SYS_getuid); }
uid_t geteuid(void) { return (uid_t)claimed("XMSG_TEST_CLAIM_UID", SYS_geteuid); }
gid_t getgid(void) { return (gid_t)claimed("XMSG_TEST_CLAIM_GID", SYS_getgid); }
gid_t getegid(void) { return (gid_t)claimed("XMSG_TEST_CLAIM_GID", SYS_getegid); }
