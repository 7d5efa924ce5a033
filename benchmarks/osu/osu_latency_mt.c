/* Multi-threaded ping-pong latency between ranks 0 and 1, after OSU's osu_latency_mt: each rank
 * runs -t THREADS threads at once (MPI_THREAD_MULTIPLE), thread k of rank 0 in a ping-pong with
 * thread k of rank 1 on tag k. The value is the mean over the threads of each one's half
 * round-trip time, so one thread (-t 1) measures what osu_latency does under the thread level's
 * locking, and more threads what they cost each other. */
#include "osu_common.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct pingpong {
    int rank, tag, count, iters, skip;
    char *sbuf, *rbuf;
    double half_round_trip_us;
};

static void *run_pingpong(void *arg)
{
    struct pingpong *p = arg;
    const int other = 1 - p->rank;
    double t_start = 0;
    for (int i = 0; i < p->iters + p->skip; ++i) {
        if (i == p->skip)
            t_start = MPI_Wtime();
        if (p->rank == 0) {
            MPI_Send(p->sbuf, p->count, MPI_CHAR, other, p->tag, MPI_COMM_WORLD);
            MPI_Recv(p->rbuf, p->count, MPI_CHAR, other, p->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p->rbuf, p->count, MPI_CHAR, other, p->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(p->sbuf, p->count, MPI_CHAR, other, p->tag, MPI_COMM_WORLD);
        }
    }
    p->half_round_trip_us = (MPI_Wtime() - t_start) * 1e6 / (2.0 * p->iters);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, nprocs, provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    static const struct osu_defaults defaults = {
        OSU_PT2PT_LATENCY, "Multi-threaded Latency Test", "osu_latency_mt", 0, (size_t)1 << 22, 10000, 1000, 100, 10,
        1, 1};
    struct osu_options o;
    int parsed = osu_parse_options(argc, argv, rank, &defaults, &o);
    if (parsed != 0)
        return osu_finish(parsed < 0 ? 1 : 0);
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "error: osu_latency_mt needs exactly 2 processes, got %d\n", nprocs);
        return osu_finish(1);
    }
    if (provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "error: osu_latency_mt needs MPI_THREAD_MULTIPLE, the library provided %d\n", provided);
        return osu_finish(1);
    }

    struct pingpong *pairs = calloc((size_t)o.threads, sizeof *pairs);
    pthread_t *threads = calloc((size_t)o.threads, sizeof *threads);
    for (int t = 0; t < o.threads; ++t) {
        pairs[t].sbuf = osu_alloc(o.max_size, rank, "send buffer");
        pairs[t].rbuf = osu_alloc(o.max_size, rank, "receive buffer");
    }
    if (rank == 0) {
        osu_print_header(&defaults, &o, nprocs);
        printf("# %d thread%s per rank, each in its own ping-pong; mean of their latencies\n", o.threads,
               o.threads == 1 ? "" : "s");
    }

    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int t = 0; t < o.threads; ++t) {
            pairs[t].rank = rank;
            pairs[t].tag = t;
            pairs[t].count = (int)size;
            pairs[t].iters = osu_iterations(&o, size);
            pairs[t].skip = osu_skip(&o, size);
            pthread_create(&threads[t], NULL, run_pingpong, &pairs[t]);
        }
        double sum = 0;
        for (int t = 0; t < o.threads; ++t) {
            pthread_join(threads[t], NULL);
            sum += pairs[t].half_round_trip_us;
        }
        if (rank == 0)
            osu_print_value(size, sum / o.threads);
        if (size == o.max_size)
            break; /* avoids overflow when max is the largest size_t power of two */
    }
    for (int t = 0; t < o.threads; ++t) {
        osu_free(pairs[t].sbuf);
        osu_free(pairs[t].rbuf);
    }
    free(pairs);
    free(threads);
    return osu_finish(0);
}
