/* Error handling for the benchmarks on xmsg's C API: a failed call ends the job with the
 * library's message, so a broken run never prints numbers. */
#ifndef XMSG_BENCH_CHECK_H
#define XMSG_BENCH_CHECK_H

#include <xmsg/xmsg.h>

#include <stdio.h>
#include <stdlib.h>

#define XMSG_BENCH_CHECK(call)                                                                  \
    do {                                                                                        \
        int xmsg_bench_rc_ = (call);                                                            \
        if (xmsg_bench_rc_ != XMSG_SUCCESS) {                                                   \
            fprintf(stderr, "error: %s failed: %s (%s)\n", #call,                               \
                    xmsg_error_string(xmsg_bench_rc_), xmsg_last_error_message());              \
            xmsg_abort(XMSG_COMM_WORLD, 1, "benchmark aborted after a failed xmsg call");       \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

#endif
