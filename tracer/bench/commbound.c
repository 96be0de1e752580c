/* Communication-bound programs for the predictor's accuracy (tests/apps/run.sh traces each on 2
 * ranks and predicts it): most of their time is MPI, so a wrong parameter shows.
 *
 *   commbound pingpong [K]  blocking ping-pong, 8 B to 512 KiB (every 4th power of two; or K B)
 *   commbound halo [K [N]]  Isend/Irecv to both neighbours, computation overlapping, Waitall
 *                           (1 KiB and 16 KiB; or K B, one of them; N exchanges, 4000 unless
 *                           given: more ranks than cores take turns at each), sending from
 *                           buffers written once at the start
 *   commbound halo-packed [K [N]]  the same, each rank computing its boundary into the send
 *                           buffers from what it received before every exchange, as a stencil
 *                           does
 *   commbound collectives   Bcast, Allreduce, Allgather, Alltoall, Reduce in a loop, no barriers
 *   commbound cg            a CG-like loop: halo exchange, a sparse product's computation, two
 *                           8-byte Allreduces (the dot products), an update's computation
 *
 * Each phase runs for about 0.1 s: long enough that its first calls' set-up costs weigh little. The computation is a fixed number of passes
 * over a small array, so it takes the same time traced or not.
 *
 * With COMMBOUND_TIMES=1 each rank prints, after MPI_Finalize, `commbound span RANK BEGIN END`:
 * CLOCK_MONOTONIC seconds at MPI_Init's return and at MPI_Finalize's call, the span a trace
 * measures (tests/apps/run.sh compares a prediction with the untraced runs' span); and rank 0
 * `commbound cores NS`: a cache line's round trip between the node's first two ranks' cores,
 * timed right after MPI_Init as the tracer times it (cores.h), so that a run's placement is
 * known untraced too (-1: not two ranks on one node). The span begins after it. The ping-pong's
 * rank 0 then prints `commbound pingpong K NS` per size: its mean round trip but the first 10. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "line.h"

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}


static double sink;

/* A buffer with its pages touched: an untouched one maps the kernel's zero page, which a
 * single-copy transfer reads from cache. */
static void *buffer(size_t bytes) {
    void *b = malloc(bytes);
    memset(b, 1, bytes);
    return b;
}

/* About `n` multiply-adds over a 4 KiB array (in cache): computation the replay keeps. */
static void compute(long n) {
    static double a[512];
    double s = sink;
    for (long i = 0; i < n; i++) {
        double *x = &a[i & 511];
        *x = *x * 0.999 + 1e-3;
        s += *x;
    }
    sink = s;
}

/* Every size, or only `only` where it is not 0. */
/* Per size of the ping-pong, rank 0's mean round trip (ns) over its repetitions but the
 * first 10 (printed with COMMBOUND_TIMES=1: what one size costs untraced, without the set-up
 * its first messages pay). */
static int pp_sizes;
static long pp_k[16];
static double pp_ns[16];

static void pingpong(int me, int only) {
    const int iters = 1000;
    char *buf = buffer(1 << 19);
    for (int k = only ? only : 8; k <= (only ? only : 1 << 19); k *= 4) {
        int n = iters / (k > 65536 ? 4 : 1);
        int64_t from = 0;
        for (int i = 0; i < n; i++) {
            if (i == 10) from = now_ns();
            if (me == 0) {
                MPI_Send(buf, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        if (pp_sizes < 16) pp_k[pp_sizes] = k, pp_ns[pp_sizes++] = (double)(now_ns() - from) / (n - 10);
    }
    free(buf);
}

/* One exchange with both neighbours of a ring (on 2 ranks both are the other rank: the tags
 * tell left from right), `work` multiply-adds overlapping it; `packed`: the boundary computed
 * into `out` from `in` first. */
static void exchange(int me, int p, int bytes, char *out, char *in, long work, int packed) {
    int left = (me + p - 1) % p, right = (me + 1) % p;
    MPI_Request r[4];
    if (packed)
        for (int i = 0; i < 2 * bytes; i++) out[i] = (char)(in[i] + 1);
    MPI_Irecv(in, bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(in + bytes, bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(out, bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(out + bytes, bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &r[3]);
    compute(work);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

/* 1 KiB (eager) and 16 KiB (rendezvous) messages, or only `only` bytes where it is not 0. */
static void halo(int me, int p, int only, int n, int packed) {
    const int sizes[] = {1024, 16384};
    char *out = buffer(2 * 16384), *in = buffer(2 * 16384);
    for (int s = 0; s < 2; s++)
        if (!only || sizes[s] == only)
            for (int i = 0; i < n; i++) exchange(me, p, sizes[s], out, in, 2000, packed);
    free(out), free(in);
}

static void collectives(int me, int p) {
    const int n = 128; /* doubles: 1 KiB per rank block */
    double *x = buffer(sizeof(double) * n * p), *y = buffer(sizeof(double) * n * p);
    for (int i = 0; i < 5000; i++) {
        MPI_Bcast(x, n, MPI_DOUBLE, i % p, MPI_COMM_WORLD);
        MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allgather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoall(x, n / p, MPI_DOUBLE, y, n / p, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    (void)me;
    free(x), free(y);
}

static void cg(int me, int p) {
    char *out = buffer(2 * 4096), *in = buffer(2 * 4096);
    double dot = 1.0, r = 0.0;
    for (int i = 0; i < 5000; i++) {
        exchange(me, p, 4096, out, in, 0, 0);
        compute(6000); /* the sparse product */
        MPI_Allreduce(&dot, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        compute(1500); /* x and r updated */
        MPI_Allreduce(&dot, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    free(out), free(in);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *times = getenv("COMMBOUND_TIMES");
    int timed = times && !strcmp(times, "1");
    double cores = timed ? line_ns() : -1;
    double begin = monotonic();
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *phase = argc > 1 ? argv[1] : "";
    if (p != 2 && !strcmp(phase, "pingpong")) phase = "needs 2 ranks";
    if (!strcmp(phase, "pingpong")) pingpong(me, argc > 2 ? atoi(argv[2]) : 0);
    else if (!strcmp(phase, "halo") || !strcmp(phase, "halo-packed"))
        halo(me, p, argc > 2 ? atoi(argv[2]) : 0, argc > 3 ? atoi(argv[3]) : 4000,
             !strcmp(phase, "halo-packed"));
    else if (!strcmp(phase, "collectives")) collectives(me, p);
    else if (!strcmp(phase, "cg")) cg(me, p);
    else {
        if (me == 0) fprintf(stderr, "usage: %s pingpong|halo|halo-packed|collectives|cg (%s)\n", argv[0], phase);
        MPI_Finalize();
        return 2;
    }
    double end = monotonic();
    MPI_Finalize();
    if (timed) printf("commbound span %d %.9f %.9f\n", me, begin, end);
    if (timed && me == 0) printf("commbound cores %.1f\n", cores);
    for (int i = 0; timed && me == 0 && i < pp_sizes; i++)
        printf("commbound pingpong %ld %.1f\n", pp_k[i], pp_ns[i]);
    return 0;
}
