/* MPI-side helpers shared by the OSU-style benchmarks.
 *
 * The programs are written once against the MPI API and compiled three ways (xmsg, Open MPI,
 * MPICH), so this file may use only the MPI subset xmsg's mpi.h provides. */
#ifndef XMSG_BENCH_OSU_COMMON_H
#define XMSG_BENCH_OSU_COMMON_H

#include "osu_options.h"

/* osu_alloc_touched, or abort the job with a message naming the buffer. */
void *osu_alloc(size_t bytes, int rank, const char *what);

/* Collectives: reduces each rank's average latency (us) to min/avg/max on rank 0 and prints
 * the row. Every rank must call it. */
void osu_report_collective(const struct osu_options *o, size_t size, double my_latency_us,
                           int iterations, int rank, int nprocs);

/* Finalizes MPI and returns the exit status. */
int osu_finish(int status);

#endif
