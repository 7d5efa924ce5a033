#include "osu_common.h"

#include <mpi.h>

#include <stdio.h>

void *osu_alloc(size_t bytes, int rank, const char *what)
{
    void *p = osu_alloc_touched(bytes, 'a' + rank % 26);
    if (p == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate %zu bytes for %s\n", rank, bytes, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void osu_report_collective(const struct osu_options *o, size_t size, double my_latency_us,
                           int iterations, int rank, int nprocs)
{
    double min_us = 0, max_us = 0, sum_us = 0;
    MPI_Reduce(&my_latency_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_latency_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_latency_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    double avg_us = sum_us / nprocs;
    if (o->full)
        printf("%-10zu%*.*f%*.*f%*.*f%*d\n", size, OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION, avg_us,
               OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION, min_us, OSU_FIELD_WIDTH,
               OSU_FLOAT_PRECISION, max_us, 12, iterations);
    else
        osu_print_value(size, avg_us);
    fflush(stdout);
}

int osu_finish(int status)
{
    MPI_Finalize();
    return status;
}
