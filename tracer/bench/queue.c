/* Receives in a queue (MODEL.md §14): both ranks exchange `n` messages of `k` bytes each way at
 * once (n Irecvs, n Isends, a Waitall), n = 1, 2, 4, 6, at 8, 1,024 and 4,000 bytes (eager), 2,001
 * times each after 20 untimed; with a first argument `NS`, both ranks spin NS nanoseconds between
 * their Isends and their Waitall, so that the messages arrive while they compute. Rank 0 prints
 * `queue K N NS` per size and count, the median exchange (its first Irecv to its Waitall's
 * return, the clock's interval included), and at the end `cores BEFORE AFTER`, a cache line's
 * round trip between the two ranks' cores (the run's placement). Each message beyond the first
 * costs what its receive pays behind the one before it; tests/bench/RESULTS.md compares it with
 * the replay of the same program traced. Usage: mpirun -np 2 queue [NS] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "line.h"

enum { REPS = 2001, WARM = 20, MOST = 6, STRIDE = 4096 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    int64_t work = argc > 1 ? atoll(argv[1]) : 0;
    double before = line_ns();
    const int sizes[] = {8, 1024, 4000}, counts[] = {1, 2, 4, MOST};
    char *out = malloc(MOST * STRIDE), *in = malloc(MOST * STRIDE);
    memset(out, 1, MOST * STRIDE);
    memset(in, 0, MOST * STRIDE);
    int64_t *t = malloc(sizeof(int64_t) * REPS);
    for (int s = 0; s < 3; s++)
        for (int j = 0; j < 4; j++) {
            int k = sizes[s], n = counts[j];
            MPI_Request rq[2 * MOST];
            MPI_Barrier(MPI_COMM_WORLD);
            for (int r = -WARM; r < REPS; r++) {
                int64_t t0 = now_ns();
                for (int i = 0; i < n; i++)
                    MPI_Irecv(in + i * STRIDE, k, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[i]);
                for (int i = 0; i < n; i++)
                    MPI_Isend(out + i * STRIDE, k, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[n + i]);
                if (work)
                    for (int64_t u = now_ns(); now_ns() - u < work;) {
                    }
                MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
                if (r >= 0) t[r] = now_ns() - t0;
            }
            qsort(t, REPS, sizeof t[0], cmp);
            if (me == 0) printf("queue %d %d %lld\n", k, n, (long long)t[REPS / 2]);
        }
    double after = line_ns();
    if (me == 0) printf("cores %.0f %.0f\n", before, after);
    free(out), free(in), free(t);
    MPI_Finalize();
    return 0;
}
