/* Passive-target latency while the target computes outside MPI (issue 22, "a target blocked in
 * compute still serves lock/unlock within a bounded time").
 *
 * Two ranks; rank 1 exposes 4 KiB through MPI_Win_create. Phase "idle": rank 1 waits inside
 * MPI_Recv while rank 0 times lock(exclusive) / put 8 B / unlock epochs. Phase "compute": rank 1
 * spins for COMPUTE_S seconds without any MPI call while rank 0 times the same epochs until the
 * spin is over. Prints, per phase, the epoch count and the median, 90th percentile and maximum
 * epoch time in microseconds. Built with each MPI's own wrapper; nothing here is xmsg-specific.
 *
 * usage: passive_target [COMPUTE_S (default 2)] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxEpochs = 200000 };

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *phase, double *t, int n)
{
    if (n == 0) {
        printf("%-8s epochs 0\n", phase);
        return;
    }
    qsort(t, (size_t)n, sizeof *t, compare_doubles);
    printf("%-8s epochs %6d  median %10.2f us  p90 %10.2f us  max %10.2f us\n", phase, n,
           t[n / 2] * 1e6, t[(n * 9) / 10] * 1e6, t[n - 1] * 1e6);
}

/* Rank 0: epochs until `until` (MPI_Wtime) or kMaxEpochs; returns the count. */
static int epochs(MPI_Win win, double until, double *t)
{
    long value = 42;
    int n = 0;
    while (n < kMaxEpochs && MPI_Wtime() < until) {
        double t0 = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&value, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(1, win);
        t[n++] = MPI_Wtime() - t0;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double compute_s = argc > 1 ? atof(argv[1]) : 2.0;
    if (size != 2 || compute_s <= 0) {
        if (rank == 0) fprintf(stderr, "passive_target: needs 2 ranks and COMPUTE_S > 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *base = calloc(4096, 1);
    double *t = malloc(sizeof(double) * kMaxEpochs);
    MPI_Win win;
    MPI_Win_create(base, 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* idle: the target waits inside MPI */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int n = epochs(win, MPI_Wtime() + 0.5, t);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        report("idle", t, n);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    /* compute: the target spins without calling MPI; the origin stops 0.1 s before it ends */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int n = epochs(win, MPI_Wtime() + compute_s - 0.1, t);
        report("compute", t, n);
    } else {
        volatile double sink = 0;
        double until = MPI_Wtime() + compute_s; /* MPI_Wtime needs no progress */
        while (MPI_Wtime() < until)
            for (int i = 0; i < 1000; i++)
                sink += i * 0.5;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(t);
    free(base);
    MPI_Finalize();
    return 0;
}
