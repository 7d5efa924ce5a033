#define _POSIX_C_SOURCE 200809L
#include "osu_options.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Largest size accepted by -m: counts are passed to MPI as int. */
#define OSU_MAX_SIZE ((size_t)1 << 30)

/* Where osu_alloc_touched puts buffers: set by osu_parse_options, so the programs on xmsg's C
 * API get the same placement without passing the options around. */
static struct {
    size_t offset;
    int use_malloc;
    int have_first;
    size_t first_offset; /* page offset of the first buffer allocated (shown for --malloc) */
} buffers;

static size_t page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}

static int parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    errno = 0;
    if (text == NULL || *text == '\0' || *text == '-')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v > OSU_MAX_SIZE)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_positive_int(const char *text, int allow_zero, int *out)
{
    char *end = NULL;
    errno = 0;
    if (text == NULL || *text == '\0')
        return -1;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v > INT_MAX || v < (allow_zero ? 0 : 1))
        return -1;
    *out = (int)v;
    return 0;
}

static void print_usage(const struct osu_defaults *d)
{
    printf("Usage: %s [options]\n", d->usage);
    if (d->has_size)
        printf("  -m [MIN:]MAX   message sizes from MIN to MAX bytes (default %zu:%zu)\n",
               d->min_size, d->max_size);
    printf("  -i ITER        timed iterations per size (default %d, %d above %d B)\n",
           d->iterations, d->iterations_large, OSU_LARGE_MESSAGE_SIZE);
    printf("  -x WARMUP      untimed warm-up iterations per size (default %d, %d above %d B)\n",
           d->skip, d->skip_large, OSU_LARGE_MESSAGE_SIZE);
    if (d->kind == OSU_PT2PT_BANDWIDTH)
        printf("  -W WINDOW      messages in flight per iteration (default 64)\n");
    if (d->kind == OSU_COLLECTIVE)
        printf("  -f             also print min/max latency over ranks and the iteration count\n");
    if (d->has_threads)
        printf("  -t THREADS     threads per rank, each in a ping-pong of its own (1..64, default 2)\n");
    if (d->has_size) {
        printf("  -O, --buffer-offset OFFSET\n"
               "                 place every buffer OFFSET bytes past a page boundary\n"
               "                 (0..%zu; default 0: page-aligned)\n",
               page_size() - 1);
        printf("  --malloc       buffers from plain malloc(), no alignment control (what an\n"
               "                 ordinary program gets); not with -O\n");
    }
    printf("  --start-jitter MS\n"
           "                 before the first size, each rank spins a random 0..MS ms (0..60000;\n"
           "                 default 0): with other load on the node, a rank is preempted at\n"
           "                 about the same time into every run, so without it the same size\n"
           "                 loses a scheduler slice round after round\n");
    printf("  -h, --help     this help\n");
}

/* Busy, not asleep: the point is to move where this rank's scheduler slices fall relative to
 * the sizes, and a sleeping rank gives its slice away instead of using it up. */
static void spin_random_ms(int max_ms)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned seed = (unsigned)now.tv_nsec ^ ((unsigned)getpid() << 16);
    const double ms = max_ms * ((double)rand_r(&seed) / RAND_MAX);
    const double end = now.tv_sec * 1e3 + now.tv_nsec / 1e6 + ms;
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while (now.tv_sec * 1e3 + now.tv_nsec / 1e6 < end);
}

/* Whether `long_name` (an argument past its "--") names option `name`, alone or as "name=value". */
static int is_long_option(const char *long_name, size_t len, const char *name)
{
    return len == strlen(name) && strncmp(long_name, name, len) == 0;
}

/* The value of the long option `long_name` names: after its '=', else the next argument
 * (consumed); NULL when there is none. */
static const char *long_option_value(const char *long_name, size_t len, int argc, char **argv, int *i)
{
    if (long_name[len] == '=')
        return long_name + len + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static int bad_argument(int rank, const char *flag, const char *value, const char *expected)
{
    if (rank == 0)
        fprintf(stderr, "error: option %s: invalid value '%s' (expected %s)\n", flag,
                value ? value : "", expected);
    return -1;
}

int osu_parse_options(int argc, char **argv, int rank, const struct osu_defaults *d,
                      struct osu_options *o)
{
    o->min_size = d->min_size;
    o->max_size = d->max_size;
    o->iterations = d->iterations;
    o->iterations_large = d->iterations_large;
    o->skip = d->skip;
    o->skip_large = d->skip_large;
    o->window = 64;
    o->threads = 2;
    o->full = 0;
    o->buffer_offset = 0;
    o->use_malloc = 0;
    o->start_jitter_ms = 0;
    int offset_given = 0;
    char offset_expected[64];
    snprintf(offset_expected, sizeof offset_expected, "bytes in 0..%zu", page_size() - 1);

    /* Hand-rolled rather than getopt so that every error names the flag and its value and
     * rank 0 alone prints it; the accepted syntax is OSU's ("-i 10" or "-i10"). */
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (arg[0] == '-' && arg[1] == '-') {
            /* Long options: --help, --malloc, --buffer-offset N or --buffer-offset=N. */
            const char *long_name = arg + 2;
            size_t len = strcspn(long_name, "=");
            if (strcmp(long_name, "help") == 0) {
                if (rank == 0)
                    print_usage(d);
                return 1;
            }
            if (d->has_size && strcmp(long_name, "malloc") == 0) {
                o->use_malloc = 1;
                continue;
            }
            if (d->has_size && is_long_option(long_name, len, "buffer-offset")) {
                const char *value = long_option_value(long_name, len, argc, argv, &i);
                size_t offset;
                if (value == NULL)
                    return bad_argument(rank, "--buffer-offset", "", offset_expected);
                if (parse_size(value, &offset) != 0 || offset >= page_size())
                    return bad_argument(rank, "--buffer-offset", value, offset_expected);
                o->buffer_offset = offset;
                offset_given = 1;
                continue;
            }
            if (is_long_option(long_name, len, "start-jitter")) {
                const char *value = long_option_value(long_name, len, argc, argv, &i);
                if (value == NULL)
                    return bad_argument(rank, "--start-jitter", "", "milliseconds in 0..60000");
                if (parse_positive_int(value, 1, &o->start_jitter_ms) != 0 || o->start_jitter_ms > 60000)
                    return bad_argument(rank, "--start-jitter", value, "milliseconds in 0..60000");
                continue;
            }
            if (rank == 0)
                fprintf(stderr, "error: unknown option '%s' for %s (try -h)\n", arg, d->usage);
            return -1;
        }
        if (arg[0] != '-' || arg[1] == '\0' ||
            (arg[2] != '\0' && strchr("mixWOt", arg[1]) == NULL)) {
            if (rank == 0)
                fprintf(stderr, "error: unknown argument '%s' (try -h)\n", arg);
            return -1;
        }
        char flag = arg[1];
        if (flag == 'h') {
            if (rank == 0)
                print_usage(d);
            return 1;
        }
        if (flag == 'f' && d->kind == OSU_COLLECTIVE) {
            o->full = 1;
            continue;
        }
        if (strchr("mixWOt", flag) == NULL || (flag == 'W' && d->kind != OSU_PT2PT_BANDWIDTH) ||
            (flag == 't' && !d->has_threads) ||
            ((flag == 'm' || flag == 'O') && !d->has_size)) {
            if (rank == 0)
                fprintf(stderr, "error: unknown option '%s' for %s (try -h)\n", arg, d->usage);
            return -1;
        }
        const char *value = arg[2] != '\0' ? arg + 2 : (i + 1 < argc ? argv[++i] : NULL);
        char name[3] = {'-', flag, '\0'};
        if (value == NULL)
            return bad_argument(rank, name, "", "a value");
        switch (flag) {
        case 'm': {
            char buf[64];
            if (strlen(value) >= sizeof buf)
                return bad_argument(rank, name, value, "[MIN:]MAX in bytes");
            strcpy(buf, value);
            char *colon = strchr(buf, ':');
            size_t lo = d->min_size, hi = 0;
            if (colon != NULL) {
                *colon = '\0';
                if (parse_size(buf, &lo) != 0 || parse_size(colon + 1, &hi) != 0)
                    return bad_argument(rank, name, value, "[MIN:]MAX in bytes, MAX <= 1 GiB");
            } else if (parse_size(buf, &hi) != 0) {
                return bad_argument(rank, name, value, "[MIN:]MAX in bytes, MAX <= 1 GiB");
            }
            if (lo < d->min_size)
                lo = d->min_size; /* e.g. allreduce cannot reduce less than one element */
            if (hi < lo)
                return bad_argument(rank, name, value, "MIN <= MAX");
            o->min_size = lo;
            o->max_size = hi;
            break;
        }
        case 'i': {
            int n;
            if (parse_positive_int(value, 0, &n) != 0)
                return bad_argument(rank, name, value, "a positive integer");
            /* As in OSU: -i sets the count for small and large messages alike. */
            o->iterations = o->iterations_large = n;
            break;
        }
        case 'x': {
            int n;
            if (parse_positive_int(value, 1, &n) != 0)
                return bad_argument(rank, name, value, "a non-negative integer");
            o->skip = o->skip_large = n;
            break;
        }
        case 't': {
            int n;
            if (parse_positive_int(value, 0, &n) != 0 || n > 64)
                return bad_argument(rank, name, value, "an integer in 1..64");
            o->threads = n;
            break;
        }
        case 'W': {
            int n;
            if (parse_positive_int(value, 0, &n) != 0 || n > 65536)
                return bad_argument(rank, name, value, "an integer in 1..65536");
            o->window = n;
            break;
        }
        case 'O': {
            size_t offset;
            if (parse_size(value, &offset) != 0 || offset >= page_size())
                return bad_argument(rank, name, value, offset_expected);
            o->buffer_offset = offset;
            offset_given = 1;
            break;
        }
        }
    }
    if (o->use_malloc && offset_given) {
        if (rank == 0)
            fprintf(stderr, "error: options --malloc and -O/--buffer-offset exclude each other "
                            "(malloc() decides where its buffers start)\n");
        return -1;
    }
    buffers.offset = o->buffer_offset;
    buffers.use_malloc = o->use_malloc;
    if (o->start_jitter_ms > 0)
        spin_random_ms(o->start_jitter_ms);
    return 0;
}

size_t osu_next_size(size_t size) { return size == 0 ? 1 : size * 2; }

int osu_iterations(const struct osu_options *o, size_t size)
{
    return size > OSU_LARGE_MESSAGE_SIZE ? o->iterations_large : o->iterations;
}

int osu_skip(const struct osu_options *o, size_t size)
{
    return size > OSU_LARGE_MESSAGE_SIZE ? o->skip_large : o->skip;
}

void osu_print_header(const struct osu_defaults *d, const struct osu_options *o, int nprocs)
{
    printf("# OSU-style MPI %s (xmsg benchmarks, %d processes)\n", d->title, nprocs);
    if (d->has_size) {
        if (o->use_malloc && buffers.have_first)
            printf("# Buffers: malloc(), touched before timing (rank 0's first at page offset "
                   "%zu B)\n", buffers.first_offset);
        else if (o->use_malloc)
            printf("# Buffers: malloc(), touched before timing\n");
        else if (o->buffer_offset != 0)
            printf("# Buffers: page boundary + %zu B (-O %zu), touched before timing\n",
                   o->buffer_offset, o->buffer_offset);
        else
            printf("# Buffers: page-aligned, touched before timing\n");
    }
    if (o->start_jitter_ms > 0)
        printf("# Start: every rank spun a random 0-%d ms first (--start-jitter)\n", o->start_jitter_ms);
    switch (d->kind) {
    case OSU_PT2PT_LATENCY:
        printf("%-10s%*s\n", "# Size", OSU_FIELD_WIDTH, "Latency (us)");
        break;
    case OSU_PT2PT_BANDWIDTH:
        printf("%-10s%*s\n", "# Size", OSU_FIELD_WIDTH, "Bandwidth (MB/s)");
        break;
    case OSU_COLLECTIVE:
        if (o->full)
            printf("%-10s%*s%*s%*s%*s\n", "# Size", OSU_FIELD_WIDTH, "Avg Latency(us)",
                   OSU_FIELD_WIDTH, "Min Latency(us)", OSU_FIELD_WIDTH, "Max Latency(us)", 12,
                   "Iterations");
        else
            printf("%-10s%*s\n", "# Size", OSU_FIELD_WIDTH, "Avg Latency(us)");
        break;
    }
    fflush(stdout);
}

void osu_print_value(size_t size, double value)
{
    printf("%-10zu%*.*f\n", size, OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION, value);
    fflush(stdout);
}

void *osu_alloc_touched(size_t bytes, int fill)
{
    size_t page = page_size();
    char *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (buffers.use_malloc) {
        p = malloc(bytes);
    } else if (buffers.offset == 0) {
        void *base = NULL;
        if (posix_memalign(&base, page, bytes) == 0)
            p = base;
    } else {
        /* One page more than needed: the buffer starts `offset` bytes into the second page, and
         * the last word of the first page remembers the pointer to free. */
        void *base = NULL;
        if (bytes <= SIZE_MAX - 2 * page &&
            posix_memalign(&base, page, page + buffers.offset + bytes) == 0) {
            p = (char *)base + page + buffers.offset;
            memcpy((char *)base + page - sizeof base, &base, sizeof base);
        }
    }
    if (p == NULL)
        return NULL;
    memset(p, fill, bytes);
    if (!buffers.have_first) {
        buffers.have_first = 1;
        buffers.first_offset = (size_t)((uintptr_t)p % page);
    }
    return p;
}

void osu_free(void *p)
{
    if (p == NULL)
        return;
    if (buffers.use_malloc || buffers.offset == 0) {
        free(p);
        return;
    }
    void *base;
    memcpy(&base, (char *)p - buffers.offset - sizeof base, sizeof base);
    free(base);
}
