/* Ping-pong latency between ranks 0 and 1: half the round-trip time, as OSU's osu_latency. */
#include "osu_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    static const struct osu_defaults defaults = {
        OSU_PT2PT_LATENCY, "Latency Test", "osu_latency", 0, (size_t)1 << 22, 10000, 1000, 100, 10, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: osu_latency needs exactly 2 processes, got %d\n", nprocs);
        return osu_finish(1);
    }

    char *sbuf = osu_alloc(o.max_size, rank, "send buffer");
    char *rbuf = osu_alloc(o.max_size, rank, "receive buffer");
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
                MPI_Send(sbuf, count, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, count, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            t_end = MPI_Wtime();
            osu_print_value(size, (t_end - t_start) * 1e6 / (2.0 * iters));
        } else {
            for (int i = 0; i < iters + skip; ++i) {
                MPI_Recv(rbuf, count, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, count, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        if (size == o.max_size)
            break; /* avoids overflow when max is the largest size_t power of two */
    }
    osu_free(sbuf);
    osu_free(rbuf);
    return osu_finish(0);
}
