/* 4 KiB aliasing in a message's single copy: on 2 ranks, an exchange (an Irecv, a blocking Send,
 * a Wait: as Open MPI's collectives exchange) of K bytes each way, the send buffer at a page's
 * start and the receive buffer D bytes past one, for K in 4, 16, 64 and 256 KiB and D in 0, 8,
 * 16, 24, 32, 64, 2048 and 4080. Some CPUs take a load to depend on a store 4 KiB away (the low 12
 * bits of the addresses alike), and a copy whose destination lies a few bytes past its source
 * modulo 4096 then runs several times slower (`loggps-predict calibrate` warns of it for
 * memcpy). Where a rendezvous message is copied once by the receiver (Open MPI's shared memory:
 * the kernel's process_vm_readv), the receive buffer's and the send buffer's offsets within
 * their pages decide it, which no trace records and no model parameter carries: malloc places
 * blocks 16 bytes or another small multiple past a page's start, so a library's temporary and a
 * user's page-aligned buffer can fall so. Rank 0 prints, per size, the median exchange (ns) at
 * each offset and the run's placement (a cache line's round trip, ns, as the tracer times it):
 *
 *     aliasing cores NS
 *     aliasing K D0_NS D8_NS D16_NS D24_NS D32_NS D64_NS D2048_NS D4080_NS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "line.h"

enum { REPS = 200, SIZES = 4, OFFSETS = 8 };

static const int SIZE[SIZES] = {4096, 16384, 65536, 262144};
static const int OFFSET[OFFSETS] = {0, 8, 16, 24, 32, 64, 2048, 4080};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p != 2) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np 2 %s\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    double cores = line_ns();
    int peer = 1 - me;
    char *s = aligned_alloc(4096, 262144), *r = aligned_alloc(4096, 262144 + 4096);
    memset(s, 1, 262144), memset(r, 0, 262144 + 4096);
    static int64_t took[REPS];
    if (me == 0) printf("aliasing cores %.1f\n", cores);
    for (int k = 0; k < SIZES; k++) {
        if (me == 0) printf("aliasing %d", SIZE[k]);
        for (int d = 0; d < OFFSETS; d++) {
            for (int i = 0; i < REPS; i++) {
                MPI_Barrier(MPI_COMM_WORLD);
                int64_t t0 = now_ns();
                MPI_Request q;
                MPI_Irecv(r + OFFSET[d], SIZE[k], MPI_BYTE, peer, 7, MPI_COMM_WORLD, &q);
                MPI_Send(s, SIZE[k], MPI_BYTE, peer, 7, MPI_COMM_WORLD);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                took[i] = now_ns() - t0;
            }
            qsort(took, REPS, sizeof took[0], cmp);
            if (me == 0) printf(" %lld", (long long)took[REPS / 2]);
        }
        if (me == 0) printf("\n");
    }
    free(s), free(r);
    MPI_Finalize();
    return 0;
}
