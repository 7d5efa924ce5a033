/* Ping-pong latency on xmsg's C API: the twin of osu/osu_latency.c, same options and output, so
 * the cost of the MPI layer on top of the C API can be read off side by side. */
#include "osu_options.h"
#include "xmsg_bench_check.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    XMSG_BENCH_CHECK(xmsg_init(&argc, &argv));
    XMSG_BENCH_CHECK(xmsg_comm_rank(XMSG_COMM_WORLD, &rank));
    XMSG_BENCH_CHECK(xmsg_comm_size(XMSG_COMM_WORLD, &nprocs));

    static const struct osu_defaults defaults = {
        OSU_PT2PT_LATENCY, "Latency Test", "xmsg_latency", 0, (size_t)1 << 22, 10000, 1000, 100, 10, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed == 0 && nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: xmsg_latency needs exactly 2 processes, got %d\n", nprocs);
        parsed = -1;
    }
    if (parsed != 0) {
        xmsg_finalize();
        return parsed < 0 ? 1 : 0;
    }

    char *sbuf = osu_alloc_touched(o.max_size, 'a' + rank);
    char *rbuf = osu_alloc_touched(o.max_size, 'b' + rank);
    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate 2 x %zu bytes\n", rank, o.max_size);
        xmsg_abort(XMSG_COMM_WORLD, 1, "out of memory");
        return 1;
    }
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        int64_t count = (int64_t)size;
        double t_start = 0, t_end = 0;
        XMSG_BENCH_CHECK(xmsg_barrier(XMSG_COMM_WORLD));
        if (rank == 0) {
            for (int i = 0; i < iters + skip; ++i) {
                if (i == skip)
                    t_start = xmsg_wtime();
                XMSG_BENCH_CHECK(xmsg_send(sbuf, count, XMSG_CHAR, 1, 1, XMSG_COMM_WORLD));
                XMSG_BENCH_CHECK(
                    xmsg_recv(rbuf, count, XMSG_CHAR, 1, 1, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
            }
            t_end = xmsg_wtime();
            osu_print_value(size, (t_end - t_start) * 1e6 / (2.0 * iters));
        } else {
            for (int i = 0; i < iters + skip; ++i) {
                XMSG_BENCH_CHECK(
                    xmsg_recv(rbuf, count, XMSG_CHAR, 0, 1, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
                XMSG_BENCH_CHECK(xmsg_send(sbuf, count, XMSG_CHAR, 0, 1, XMSG_COMM_WORLD));
            }
        }
        if (size == o.max_size)
            break;
    }
    osu_free(sbuf);
    osu_free(rbuf);
    XMSG_BENCH_CHECK(xmsg_finalize());
    return 0;
}
