/* Collective microbenchmark for the predictor's collective models (issue 6): every collective
 * the schedules model, ITERS times at each size, separated by barriers so that each call starts
 * together. Arguments: `[--timed] [--each] [--grouped] [BYTES...]` (all below). Trace it and compare the per-kind
 * time `loggps-predict --coll modeled` predicts with the traced one
 * (tracer/bench/collectives.sh does both). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "line.h"

/* Rounds at each size. The first call of each kind costs far more than the next ones (2–14 µs
 * at 8 bytes on Open MPI 4.1, shared memory: the library sets the operation up), and at 50
 * rounds that alone made the mean of an 8-byte Scatter three times its median; at 500 an 8-byte
 * Reduce's first call (13.5 µs) still added 27 ns to its mean call of about 100: enough rounds
 * make the mean the steady cost that a model predicts (the first call's share under 3%). */
enum { ITERS = 5000, KINDS = 9 };

/* `n` doubles, zeroed, page-aligned. Two calloc'd blocks lie 16 bytes past a multiple of 4096
 * apart, and on CPUs that slow a copy so (4 KiB aliasing; `loggps-predict calibrate` reports
 * it) the collectives' local copy of a rank's own block from x to y took longer than their
 * messages (16 KiB: 14 µs per Gather against 5.5 µs page-aligned). */
static double *block(int n) {
    size_t bytes = ((size_t)n * sizeof(double) + 4095) / 4096 * 4096;
    double *b = aligned_alloc(4096, bytes);
    memset(b, 0, bytes);
    return b;
}

/* Collective `k` of the nine, on `x` and `y` of `n` doubles a block. */
static void call(int k, double *x, double *y, int n, int *counts) {
    switch (k) {
    case 0: MPI_Bcast(x, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case 1: MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case 2: MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case 3: MPI_Gather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case 4: MPI_Scatter(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case 5: MPI_Allgather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case 6: MPI_Alltoall(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case 7: MPI_Reduce_scatter(x, y, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    default: MPI_Scan(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    }
}


/* The clock's own interval: the median of 1,001 back-to-back reads of now_ns, ns. */
static double clock_ns(void) {
    enum { N = 1001 };
    int64_t d[N];
    for (int i = 0; i < N; i++) {
        int64_t t0 = now_ns();
        d[i] = now_ns() - t0;
    }
    qsort(d, N, sizeof d[0], cmp);
    return (double)d[N / 2];
}

static const char *NAMES[KINDS];

/* The median of `n` values (sorted in place). */
static int64_t median(int64_t *v, int n) {
    qsort(v, n, sizeof v[0], cmp);
    return v[n / 2];
}

/* Rank 0 prints, of each kind, each rank's median call less the clock's interval and, against
 * rank 0's same call, its median entry and exit, ns: `rank BYTES NAME RANK CALL ENTER LEAVE`.
 * `in` holds each call's entry and exit, kind by kind (KINDS × ITERS pairs). */
static void per_rank(int64_t *in, int bytes, int me, int p, double clock) {
    int64_t *all = me == 0 ? malloc(sizeof(int64_t) * KINDS * ITERS * 2 * p) : NULL;
    MPI_Gather(in, KINDS * ITERS * 2, MPI_INT64_T, all, KINDS * ITERS * 2, MPI_INT64_T, 0,
               MPI_COMM_WORLD);
    if (me != 0) return;
    int64_t call[ITERS], enter[ITERS], leave[ITERS];
    for (int k = 0; k < KINDS; k++)
        for (int r = 0; r < p; r++) {
            const int64_t *mine = all + ((size_t)r * KINDS + k) * ITERS * 2, *first = all + (size_t)k * ITERS * 2;
            for (int i = 0; i < ITERS; i++) {
                call[i] = mine[2 * i + 1] - mine[2 * i];
                enter[i] = mine[2 * i] - first[2 * i];
                leave[i] = mine[2 * i + 1] - first[2 * i + 1];
            }
            printf("rank %d %s %d %.1f %lld %lld\n", bytes, NAMES[k], r, (double)median(call, ITERS) - clock,
                   (long long)median(enter, ITERS), (long long)median(leave, ITERS));
        }
    free(all);
}

static const char *NAMES[KINDS] = {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather",
                                   "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall",
                                   "MPI_Reduce_scatter", "MPI_Scan"};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* --timed (first): the program times each call itself and, after each size, rank 0 prints
     * each kind's mean call over the ranks and calls, ns (`kind BYTES NAME NS`): run untraced,
     * what the calls take without the tracer, which slows them beyond its own time (MODEL.md
     * §8, `oc`; collectives.sh UNTRACED=1); and at the end `cores BEFORE AFTER`, a cache line's
     * round trip between the first two ranks' cores before the first size and after the last,
     * ns, as a trace records them: the run's placement, which a comparison must match. */
    int timed = argc > 1 && !strcmp(argv[1], "--timed");
    argc -= timed, argv += timed;
    double before = timed ? line_ns() : -1;
    /* Each timed call's interval holds one of the clock's own (26 ns here, a fifth of an 8-byte
     * Bcast): the median of back-to-back reads, taken out of every call's time. */
    double clock = timed ? clock_ns() : 0;
    /* --each: every kind its own pair of buffers, written once, so that no call receives into
     * lines its peer read in the call before (a buffer received into after it was sent from
     * costs more above the eager limit: MODEL.md §13, `bounce`); by default all kinds share x
     * and y, as a program's loop over its arrays does. */
    int each = argc > 1 && !strcmp(argv[1], "--each");
    argc -= each, argv += each;
    /* --grouped: each kind's ITERS calls in a loop of their own (one barrier before each), kind
     * after kind, as OSU's and IMB's collective benchmarks time them: a kind's buffers stay in
     * its cores' caches, where the interleaved loop's nine kinds with --each touch 36 blocks a
     * round (576 KiB a rank at 16 KiB, more than a core's second-level cache here). Each kind
     * its own buffers, as --each. */
    int grouped = argc > 1 && !strcmp(argv[1], "--grouped");
    argc -= grouped, argv += grouped;
    each |= grouped;
    /* bytes per rank block: the arguments, else 8, 1024 and 16384 */
    int sizes[16] = {8, 1024, 16384}, nsizes = 3;
    if (argc > 1)
        for (nsizes = 0; nsizes < argc - 1 && nsizes < 16; nsizes++) sizes[nsizes] = atoi(argv[nsizes + 1]);
    for (int s = 0; s < nsizes; s++) {
        int n = sizes[s] / (int)sizeof(double);
        double *xs[KINDS], *ys[KINDS];
        for (int k = 0; k < KINDS; k++) {
            xs[k] = k == 0 || each ? block(n * p) : xs[0];
            ys[k] = k == 0 || each ? block(n * p) : ys[0];
        }
        int *counts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p);
        for (int i = 0; i < p; i++) counts[i] = n, displs[i] = i * n;
        /* Interleaved: round after round of every kind; grouped: kind after kind. */
        double took[KINDS] = {0}, all[KINDS];
        /* Each call's entry and exit (--timed): each rank's median call and, against rank 0's
         * same call, its median entry and exit (one node's clock), printed as `rank` lines. */
        int64_t *in = timed ? malloc(sizeof(int64_t) * KINDS * ITERS * 2) : NULL;
        for (int round = 0; round < (grouped ? KINDS : 1); round++)
            for (int it = 0; it < ITERS; it++)
                for (int k = grouped ? round : 0; k < (grouped ? round + 1 : KINDS); k++) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    int64_t t0 = timed ? now_ns() : 0;
                    call(k, xs[k], ys[k], n, counts);
                    if (timed) {
                        int64_t t1 = now_ns();
                        took[k] += (double)(t1 - t0) - clock;
                        in[(k * ITERS + it) * 2] = t0, in[(k * ITERS + it) * 2 + 1] = t1;
                    }
                }
        if (timed) {
            MPI_Reduce(took, all, KINDS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            for (int k = 0; k < KINDS && me == 0; k++)
                printf("kind %d %s %.1f\n", sizes[s], NAMES[k], all[k] / (p * ITERS));
            per_rank(in, sizes[s], me, p, clock);
            free(in);
        }
        for (int k = 0; k < KINDS; k++)
            if (k == 0 || each) free(xs[k]), free(ys[k]);
        free(counts), free(displs);
    }
    double after = timed ? line_ns() : -1;
    if (timed && me == 0) printf("cores %.1f %.1f\n", before, after);
    MPI_Finalize();
    return 0;
}
