/* What a round trip costs by how its buffers were used before (MODEL.md §13, "What a trace
 * cannot tell"), 2 ranks: rank 0 sends K bytes and receives them back, rank 1 receives and
 * sends back, three ways:
 *
 *   bounce   one buffer on each rank, received into, then sent from (a ping-pong sending back
 *            what it received)
 *   written  a send buffer and a receive buffer, the send buffer written before each send (a
 *            program computing into what it sends; loggps-rtt's, so calibrate's, way)
 *   clean    a send buffer and a receive buffer, the send buffer written once at the start
 *
 * Rank 0 prints, per round of the three at each size, the cache line's round trip between the
 * two ranks' cores (cores.h: where they ran) and the median round trip of each way:
 *
 *     buffers LINE_NS K BOUNCE_NS WRITTEN_NS CLEAN_NS
 *
 *   mpirun -np 2 buffers [ROUNDS [K,K,...]]   (3 rounds of 1 KiB, 16 KiB and 256 KiB) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cores.h"
#include "timing.h"

enum { REPS = 400, WARMUP = 20, MAX_SIZES = 16 };

/* The median round trip of K bytes, rank 0 sending `out` and receiving into `in` (rank 1 the
 * same), `out` written before each send where `write` is set. */
static int64_t round_trip(int rank, char *out, char *in, int k, int write, int64_t *t)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = -WARMUP; r < REPS; r++) {
        if (rank == 0) {
            if (write) memset(out, r & 0x7f, (size_t)k);
            int64_t t0 = now_ns();
            MPI_Send(out, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(in, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r >= 0) t[r] = now_ns() - t0;
        } else {
            MPI_Recv(in, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            if (write) memset(out, r & 0x7f, (size_t)k);
        }
    }
    qsort(t, REPS, sizeof *t, cmp);
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 3, n = 0;
    long sizes[MAX_SIZES] = {1024, 16384, 262144};
    if (argc > 2)
        for (char *s = strtok(argv[2], ","); s && n < MAX_SIZES; s = strtok(NULL, ",")) sizes[n++] = atol(s);
    else
        n = 3;
    long kmax = 1;
    for (int i = 0; i < n; i++) kmax = sizes[i] > kmax ? sizes[i] : kmax;
    if (size != 2 || rounds < 1 || kmax > 1 << 30) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 %s [ROUNDS [K,K,...]] (K at most 1 GiB)\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    size_t span = ((size_t)kmax + 4095) / 4096 * 4096;
    char *a = aligned_alloc(4096, span), *b = aligned_alloc(4096, span);
    memset(a, 1, span);
    memset(b, 2, span);
    int64_t *t = malloc(sizeof *t * REPS);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n; i++) {
            double line = cores_round_trip(node, 0, 1, 20000, now_ns);
            int k = (int)sizes[i];
            int64_t bounce = round_trip(rank, a, a, k, 0, t);
            int64_t written = round_trip(rank, b, a, k, 1, t);
            int64_t clean = round_trip(rank, b, a, k, 0, t);
            if (rank == 0)
                printf("buffers %.0f %d %lld %lld %lld\n", line, k, (long long)bounce, (long long)written,
                       (long long)clean);
        }
    }
    free(t);
    free(a);
    free(b);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
