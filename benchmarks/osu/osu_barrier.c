/* Barrier latency averaged over ranks, as OSU's osu_barrier. The row's size column is 0 so
 * every benchmark in the suite prints the same two columns. */
#include "osu_common.h"

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    static const struct osu_defaults defaults = {
        OSU_COLLECTIVE, "Barrier Latency Test", "osu_barrier", 0, 0, 1000, 1000, 200, 200, 0, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    double timer = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < o.iterations + o.skip; ++i) {
        double t_start = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t_stop = MPI_Wtime();
        if (i >= o.skip)
            timer += t_stop - t_start;
    }
    osu_report_collective(&o, 0, timer * 1e6 / o.iterations, o.iterations, rank, nprocs);
    return osu_finish(0);
}
