/* Overhead benchmark, 2 ranks: a ping-pong of 8-byte messages, and MPI_Send to MPI_PROC_NULL
 * (a traced call that communicates nothing).
 *
 * A shared machine's timings drift from run to run far more than the tracer costs, so the
 * comparison is made inside one run: blocks of iterations alternate between the PMPI_ entry
 * points (never traced) and the MPI_ ones (traced when the tracer is preloaded), and the
 * median over blocks of (MPI_ block - PMPI_ block) is the added time. Without the tracer the
 * two are the same routine and the difference is noise. Rank 0 prints ns per round trip, ns
 * per MPI_PROC_NULL send, their paired differences and the largest resident set size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { BLOCKS = 40 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per round trip of n iterations, through MPI_ (traced) or PMPI_ (plain) */
static double pingpong(int rank, long n, int traced)
{
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = traced ? MPI_Send : PMPI_Send;
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = traced ? MPI_Recv : PMPI_Recv;
    char buf[8] = { 0 };
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (now() - t0) / n;
}

static double procnull(long n, int traced)
{
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = traced ? MPI_Send : PMPI_Send;
    char buf[8] = { 0 };
    double t0 = now();
    for (long i = 0; i < n; i++) send(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    return (now() - t0) / n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    long iters = argc > 1 ? atol(argv[1]) : 400000, n = iters / BLOCKS;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "pingpong: run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pingpong(rank, n, 0); /* warm up */
    pingpong(rank, n, 1);
    double rt[2][BLOCKS], pn[2][BLOCKS], drt[BLOCKS], dpn[BLOCKS];
    for (int b = 0; b < BLOCKS; b++) {
        int first = b % 2; /* alternate which of the pair runs first */
        rt[first][b] = pingpong(rank, n, first);
        rt[!first][b] = pingpong(rank, n, !first);
        pn[first][b] = procnull(n, first);
        pn[!first][b] = procnull(n, !first);
        drt[b] = rt[1][b] - rt[0][b];
        dpn[b] = pn[1][b] - pn[0][b];
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long rss = ru.ru_maxrss, maxrss;
    PMPI_Reduce(&rss, &maxrss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("roundtrip_plain_ns %.1f roundtrip_traced_ns %.1f roundtrip_added_ns %.1f "
               "procnull_plain_ns %.1f procnull_traced_ns %.1f procnull_added_ns %.1f "
               "maxrss_kib %ld iters %ld\n",
               median(rt[0], BLOCKS), median(rt[1], BLOCKS), median(drt, BLOCKS),
               median(pn[0], BLOCKS), median(pn[1], BLOCKS), median(dpn, BLOCKS), maxrss, iters);
    MPI_Finalize();
    return 0;
}
