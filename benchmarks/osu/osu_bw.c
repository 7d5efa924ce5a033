/* Unidirectional bandwidth: rank 0 keeps a window of sends in flight, rank 1 acknowledges each
 * window, as OSU's osu_bw. */
#include "osu_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 reports as a write into a
 * zero-sized region; the library never writes through it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    static const struct osu_defaults defaults = {
        OSU_PT2PT_BANDWIDTH, "Bandwidth Test", "osu_bw", 1, (size_t)1 << 22, 100, 20, 10, 2, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: osu_bw needs exactly 2 processes, got %d\n", nprocs);
        return osu_finish(1);
    }

    /* The 4-byte acknowledgement shares the buffers, so they hold at least 4 bytes. */
    size_t bytes = o.max_size < 4 ? 4 : o.max_size;
    char *sbuf = osu_alloc(bytes, rank, "send buffer");
    char *rbuf = osu_alloc(bytes, rank, "receive buffer");
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (reqs == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate %d requests\n", rank, o.window);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        int count = (int)size;
        double t_start = 0, t_end = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < iters + skip; ++i) {
                if (i == skip)
                    t_start = MPI_Wtime();
                for (int j = 0; j < o.window; ++j)
                    MPI_Isend(sbuf, count, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[j]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            t_end = MPI_Wtime();
            double mb = (double)size / 1e6 * iters * o.window;
            osu_print_value(size, mb / (t_end - t_start));
        } else {
            for (int i = 0; i < iters + skip; ++i) {
                for (int j = 0; j < o.window; ++j)
                    MPI_Irecv(rbuf, count, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[j]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
        }
        if (size == o.max_size)
            break;
    }
    free(reqs);
    osu_free(sbuf);
    osu_free(rbuf);
    return osu_finish(0);
}
