/* Options, sizes and output of the OSU-style benchmarks, free of any messaging API so the
 * programs on the MPI API (osu_*.c) and on xmsg's C API (xmsg_api/) print identically.
 *
 * The methodology follows the OSU Micro-Benchmarks: warm-up iterations that are not timed, fewer
 * iterations above OSU_LARGE_MESSAGE_SIZE, sizes doubling from min to max, '#' header lines,
 * then one row per size. */
#ifndef XMSG_BENCH_OSU_OPTIONS_H
#define XMSG_BENCH_OSU_OPTIONS_H

#include <stddef.h>

#define OSU_LARGE_MESSAGE_SIZE 8192
#define OSU_FIELD_WIDTH 18
/* OSU prints two decimals; sub-microsecond latencies need three to tell libraries apart. */
#define OSU_FLOAT_PRECISION 3

enum osu_kind { OSU_PT2PT_LATENCY, OSU_PT2PT_BANDWIDTH, OSU_COLLECTIVE };

struct osu_defaults {
    enum osu_kind kind;
    const char *title;     /* e.g. "Latency Test" */
    const char *usage;     /* program name for -h */
    size_t min_size;
    size_t max_size;
    int iterations, iterations_large;
    int skip, skip_large;
    int has_size;          /* 0 for barrier: the size column is printed as 0 */
    int has_threads;       /* latency_mt: takes -t THREADS */
};

struct osu_options {
    size_t min_size;
    size_t max_size;
    int iterations, iterations_large;
    int skip, skip_large;
    int window;            /* bw/bibw only (-W) */
    int full;              /* collectives: -f adds min/max/iterations columns */
    size_t buffer_offset;  /* -O / --buffer-offset: bytes past a page boundary (default 0) */
    int use_malloc;        /* --malloc: buffers from plain malloc(), no alignment control */
    int threads;           /* -t: threads per rank (latency_mt; default 2) */
    int start_jitter_ms;   /* --start-jitter: each rank spins a random 0..this ms first */
};

/* Returns 0 to run, 1 when the program should exit successfully (-h), -1 on a bad argument
 * (rank 0 has printed why). Every rank parses the same argv, so all ranks agree without
 * communicating. With --start-jitter it spins its random time before returning 0: this is the
 * one call every program makes before its first size. */
int osu_parse_options(int argc, char **argv, int rank, const struct osu_defaults *d,
                      struct osu_options *o);

/* Sizes double from min; a 0 B start continues at 1 B, as OSU does. */
size_t osu_next_size(size_t size);

int osu_iterations(const struct osu_options *o, size_t size);
int osu_skip(const struct osu_options *o, size_t size);

void osu_print_header(const struct osu_defaults *d, const struct osu_options *o, int nprocs);
void osu_print_value(size_t size, double value);

/* A buffer with every byte touched so first-use page faults are not timed; NULL when memory is
 * short. Placed as the last osu_parse_options asked: page-aligned (the default), buffer_offset
 * bytes past a page boundary (-O), or wherever plain malloc() puts it (--malloc). */
void *osu_alloc_touched(size_t bytes, int fill);

/* Frees a buffer from osu_alloc_touched (an offset buffer is not malloc's own pointer, so
 * free() must not be called on it). NULL is ignored. */
void osu_free(void *p);

#endif
