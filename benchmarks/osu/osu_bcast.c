/* Broadcast latency from root 0 averaged over ranks, as OSU's osu_bcast: each call is timed
 * alone and a barrier separates calls so a fast root cannot pipeline ahead. */
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
        OSU_COLLECTIVE, "Broadcast Latency Test", "osu_bcast", 1, (size_t)1 << 20, 1000, 100,
        200, 10, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);

    char *buf = osu_alloc(o.max_size, rank, "broadcast buffer");
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        double timer = 0;
        for (int i = 0; i < iters + skip; ++i) {
            double t_start = MPI_Wtime();
            MPI_Bcast(buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
            double t_stop = MPI_Wtime();
            if (i >= skip)
                timer += t_stop - t_start;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        osu_report_collective(&o, size, timer * 1e6 / iters, iters, rank, nprocs);
        if (size == o.max_size)
            break;
    }
    osu_free(buf);
    return osu_finish(0);
}
