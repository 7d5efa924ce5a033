/* Unidirectional bandwidth (window of 64) on xmsg's C API: the twin of osu/osu_bw.c. */
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
        OSU_PT2PT_BANDWIDTH, "Bandwidth Test", "xmsg_bw", 1, (size_t)1 << 22, 100, 20, 10, 2, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed == 0 && nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: xmsg_bw needs exactly 2 processes, got %d\n", nprocs);
        parsed = -1;
    }
    if (parsed != 0) {
        xmsg_finalize();
        return parsed < 0 ? 1 : 0;
    }

    /* The 4-byte acknowledgement shares the buffers, so they hold at least 4 bytes. */
    size_t bytes = o.max_size < 4 ? 4 : o.max_size;
    char *sbuf = osu_alloc_touched(bytes, 'a' + rank);
    char *rbuf = osu_alloc_touched(bytes, 'b' + rank);
    xmsg_request_t *reqs = calloc((size_t)o.window, sizeof(xmsg_request_t));
    if (sbuf == NULL || rbuf == NULL || reqs == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate buffers of %zu bytes\n", rank, bytes);
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
                for (int j = 0; j < o.window; ++j)
                    XMSG_BENCH_CHECK(
                        xmsg_isend(sbuf, count, XMSG_CHAR, 1, 100, XMSG_COMM_WORLD, &reqs[j]));
                XMSG_BENCH_CHECK(xmsg_waitall(o.window, reqs, XMSG_STATUSES_IGNORE));
                XMSG_BENCH_CHECK(
                    xmsg_recv(rbuf, 4, XMSG_CHAR, 1, 101, XMSG_COMM_WORLD, XMSG_STATUS_IGNORE));
            }
            t_end = xmsg_wtime();
            double mb = (double)size / 1e6 * iters * o.window;
            osu_print_value(size, mb / (t_end - t_start));
        } else {
            for (int i = 0; i < iters + skip; ++i) {
                for (int j = 0; j < o.window; ++j)
                    XMSG_BENCH_CHECK(
                        xmsg_irecv(rbuf, count, XMSG_CHAR, 0, 100, XMSG_COMM_WORLD, &reqs[j]));
                XMSG_BENCH_CHECK(xmsg_waitall(o.window, reqs, XMSG_STATUSES_IGNORE));
                XMSG_BENCH_CHECK(xmsg_send(sbuf, 4, XMSG_CHAR, 0, 101, XMSG_COMM_WORLD));
            }
        }
        if (size == o.max_size)
            break;
    }
    free(reqs);
    osu_free(sbuf);
    osu_free(rbuf);
    XMSG_BENCH_CHECK(xmsg_finalize());
    return 0;
}
