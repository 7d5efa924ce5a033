/* All-to-all-v latency averaged over ranks, as OSU's osu_alltoallv: every rank sends `size`
 * bytes to every rank through MPI_Alltoallv, with counts and displacements arrays (count size,
 * displacement rank * size on both sides), so the difference to osu_alltoall is the cost of the
 * v-interface and of the library's alltoallv algorithm. */
#include "osu_common.h"

#include <limits.h>
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
        OSU_COLLECTIVE, "All-to-Allv Personalized Exchange Latency Test", "osu_alltoallv", 1,
        (size_t)1 << 20, 1000, 100, 200, 10, 1, 0};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    /* Displacements are ints: the last block must start below INT_MAX. */
    if (nprocs > 1 && o.max_size > (size_t)INT_MAX / (size_t)(nprocs - 1)) {
        if (rank == 0)
            fprintf(stderr, "error: osu_alltoallv: -m MAX %zu B times %d ranks overflows the int "
                            "displacements\n", o.max_size, nprocs);
        return osu_finish(1);
    }

    char *sbuf = osu_alloc(o.max_size * (size_t)nprocs, rank, "send buffer");
    char *rbuf = osu_alloc(o.max_size * (size_t)nprocs, rank, "receive buffer");
    int *counts = malloc(sizeof(int) * (size_t)nprocs);
    int *displs = malloc(sizeof(int) * (size_t)nprocs);
    if (counts == NULL || displs == NULL) {
        fprintf(stderr, "error: rank %d: cannot allocate counts for %d ranks\n", rank, nprocs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        osu_print_header(&defaults, &o, nprocs);

    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        int iters = osu_iterations(&o, size), skip = osu_skip(&o, size);
        for (int r = 0; r < nprocs; ++r) {
            counts[r] = (int)size;
            displs[r] = (int)(size * (size_t)r);
        }
        double timer = 0;
        for (int i = 0; i < iters + skip; ++i) {
            double t_start = MPI_Wtime();
            MPI_Alltoallv(sbuf, counts, displs, MPI_CHAR, rbuf, counts, displs, MPI_CHAR,
                          MPI_COMM_WORLD);
            double t_stop = MPI_Wtime();
            if (i >= skip)
                timer += t_stop - t_start;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        osu_report_collective(&o, size, timer * 1e6 / iters, iters, rank, nprocs);
        if (size == o.max_size)
            break;
    }
    free(counts);
    free(displs);
    osu_free(sbuf);
    osu_free(rbuf);
    return osu_finish(0);
}
