/* Allreduce (sum of floats) latency averaged over ranks, as OSU's osu_allreduce: sizes are in
 * bytes and start at one float. */
#include "osu_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    static const struct osu_defaults defaults = {
        OSU_COLLECTIVE, "Allreduce Latency Test", "osu_allreduce", sizeof(float),
        (size_t)1 << 20, 1000, 100, 200, 10, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);

    /* char pointers: with -O the floats need not be 4-byte aligned, so they are written with
     * memcpy rather than through a float pointer. */
    char *sbuf = osu_alloc(o.max_size, rank, "send buffer");
    char *rbuf = osu_alloc(o.max_size, rank, "receive buffer");
    const float one = 1.0f; /* real numbers: a NaN-filled buffer could take a slow FP path */
    for (size_t i = 0; i + sizeof one <= o.max_size; i += sizeof one)
        memcpy(sbuf + i, &one, sizeof one);
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        int count = (int)(size / sizeof(float));
        double timer = 0;
        for (int i = 0; i < iters + skip; ++i) {
            double t_start = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t_stop = MPI_Wtime();
            if (i >= skip)
                timer += t_stop - t_start;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        osu_report_collective(&o, size, timer * 1e6 / iters, iters, rank, nprocs);
        if (size == o.max_size)
            break;
    }
    osu_free(sbuf);
    osu_free(rbuf);
    return osu_finish(0);
}
