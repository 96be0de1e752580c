/* Whether a blocking eager send waits for a receiver that computes (MODEL.md §13, "Sends held by
 * a computing receiver"), 2 ranks: each repetition, after a barrier, rank 1 computes D ns and
 * then receives two K-byte messages; rank 0 sends the first with MPI_Send and the second with
 * MPI_Isend (then waits for it). Then, as many repetitions again, rank 1 computes D ns after a
 * barrier and joins an MPI_Bcast of K bytes from rank 0 (a collective's own send). Rank 0
 * prints, per size and D, the cache line's round trip between the two ranks' cores (cores.h:
 * where they ran) and the medians of its calls:
 *
 *     held LINE_NS K D_NS SEND_NS ISEND_NS BCAST_NS
 *
 * A library that returns a send once its message has left shows SEND_NS near ISEND_NS at any
 * D; one that gives the send its buffer back only once the receiver has taken the message
 * shows SEND_NS about D where D is long.
 *
 *   mpirun -np 2 held [K,K,... [D,D,...]]   (256, 257, 1024, 4000 B; 0 and 20,000 ns) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cores.h"
#include "timing.h"

enum { REPS = 301, WARMUP = 20, MAX_LIST = 16 };

static int parse(const char *s, long long *v)
{
    int n = 0;
    for (char *end; *s && n < MAX_LIST; s = *end ? end + 1 : end) {
        v[n] = strtoll(s, &end, 10);
        if (end == s || v[n] < 0) return -1;
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long long sizes[MAX_LIST] = {256, 257, 1024, 4000}, spins[MAX_LIST] = {0, 20000};
    int ns = 4, nd = 2;
    if (argc > 1) ns = parse(argv[1], sizes);
    if (argc > 2) nd = parse(argv[2], spins);
    if (p != 2 || ns <= 0 || nd <= 0) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np 2 %s [K,K,... [D_NS,D_NS,...]]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long long most = 1;
    for (int s = 0; s < ns; s++) most = sizes[s] > most ? sizes[s] : most;
    char *buf = calloc(1, (size_t)most);
    int64_t send[REPS], isend[REPS], bcast[REPS];
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    for (int s = 0; s < ns; s++)
        for (int d = 0; d < nd; d++) {
            int k = (int)sizes[s];
            for (int r = -WARMUP; r < REPS; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                if (me == 0) {
                    int64_t t0 = now_ns();
                    MPI_Send(buf, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    int64_t t1 = now_ns();
                    MPI_Request q;
                    MPI_Isend(buf, k, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &q);
                    int64_t t2 = now_ns();
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                    if (r >= 0) send[r] = t1 - t0, isend[r] = t2 - t1;
                } else {
                    int64_t t0 = now_ns();
                    while (now_ns() - t0 < spins[d]) {
                    }
                    MPI_Recv(buf, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Recv(buf, k, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            for (int r = -WARMUP; r < REPS; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                int64_t t0 = now_ns();
                if (me == 1)
                    while (now_ns() - t0 < spins[d]) {
                    }
                t0 = now_ns();
                MPI_Bcast(buf, k, MPI_BYTE, 0, MPI_COMM_WORLD);
                if (r >= 0) bcast[r] = now_ns() - t0;
            }
            double line = cores_round_trip(node, 0, 1, 20000, now_ns);
            if (me == 0) {
                qsort(send, REPS, sizeof *send, cmp);
                qsort(isend, REPS, sizeof *isend, cmp);
                qsort(bcast, REPS, sizeof *bcast, cmp);
                printf("held %.0f %d %lld %lld %lld %lld\n", line, k, spins[d],
                       (long long)send[REPS / 2], (long long)isend[REPS / 2],
                       (long long)bcast[REPS / 2]);
                fflush(stdout);
            }
        }
    free(buf);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
