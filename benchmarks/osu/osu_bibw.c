/* Bidirectional bandwidth: both ranks keep a window of receives and sends in flight at once,
 * as OSU's osu_bibw; the rate counts the bytes of both directions. */
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
        OSU_PT2PT_BANDWIDTH, "Bi-Directional Bandwidth Test", "osu_bibw", 1, (size_t)1 << 22,
        100, 20, 10, 2, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: osu_bibw needs exactly 2 processes, got %d\n", nprocs);
        return osu_finish(1);
    }

    char *sbuf = osu_alloc(o.max_size, rank, "send buffer");
    char *rbuf = osu_alloc(o.max_size, rank, "receive buffer");
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)o.window);
    if (reqs == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate %d requests\n", rank, 2 * o.window);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    int peer = 1 - rank;
    /* Distinct tags per direction keep the two streams apart even if a library reorders. */
    int send_tag = rank == 0 ? 100 : 10, recv_tag = rank == 0 ? 10 : 100;
    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        int count = (int)size;
        double t_start = 0, t_end = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; ++i) {
            if (i == skip)
                t_start = MPI_Wtime();
            for (int j = 0; j < o.window; ++j)
                MPI_Irecv(rbuf, count, MPI_CHAR, peer, recv_tag, MPI_COMM_WORLD, &reqs[j]);
            for (int j = 0; j < o.window; ++j)
                MPI_Isend(sbuf, count, MPI_CHAR, peer, send_tag, MPI_COMM_WORLD,
                          &reqs[o.window + j]);
            MPI_Waitall(2 * o.window, reqs, MPI_STATUSES_IGNORE);
        }
        t_end = MPI_Wtime();
        if (rank == 0) {
            double mb = (double)size / 1e6 * iters * o.window * 2;
            osu_print_value(size, mb / (t_end - t_start));
        }
        if (size == o.max_size)
            break;
    }
    free(reqs);
    osu_free(sbuf);
    osu_free(rbuf);
    return osu_finish(0);
}
