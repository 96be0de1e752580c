/* Where a message's buffers start in their 4 KiB pages (tracer/FORMAT.md, flags 32 and 64: the
 * receive buffer's and the send buffer's offsets). Each rank's buffer `p` starts a page; each
 * message of 4 KiB unless said:
 *   tag 1  rank 0 MPI_Send from p + 0       rank 1 MPI_Recv into p + 16
 *   tag 2  rank 0 MPI_Isend from p + 8      rank 1 MPI_Irecv into p + 100
 *   tag 3  rank 0 MPI_Sendrecv from p + 24 into p + 40, rank 1 the same from p + 200 into p + 300
 *   tag 4  512 B from p + 0 into p + 0: small, no offsets
 *   tag 5  every other int of p (a vector type: not contiguous, no offset) into p + 500 (2 KiB)
 * So rank 0's records: MPI_Send 1 send 0, MPI_Isend 2 send 8, MPI_Sendrecv 3 recv 40 send 24;
 * rank 1's: MPI_Recv 1 recv 16, MPI_Irecv 2 recv 100, MPI_Sendrecv 3 recv 300 send 200,
 * MPI_Recv 5 recv 500. 2 ranks. */
#include "counts.h"
#include <stdlib.h>

enum { N = 1024 }; /* ints: 4 KiB */

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    char *p = NULL;
    CHECK(posix_memalign((void **)&p, 4096, 4 * 4096) == 0);
    memset(p, 1, 4 * 4096);
    const MPI_Comm W = MPI_COMM_WORLD;
    MPI_Request r;
    if (rank == 0) {
        C(MPI_Send)(p, N, MPI_INT, 1, 1, W);
        C(MPI_Isend)(p + 8, N, MPI_INT, 1, 2, W, &r);
        C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
        C(MPI_Sendrecv)(p + 24, N, MPI_INT, 1, 3, p + 40, N, MPI_INT, 1, 3, W,
                        MPI_STATUS_IGNORE);
        C(MPI_Send)(p, 128, MPI_INT, 1, 4, W);
        MPI_Datatype every_other;
        MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        C(MPI_Send)(p, 1, every_other, 1, 5, W);
        MPI_Type_free(&every_other);
    } else {
        C(MPI_Recv)(p + 16, N, MPI_INT, 0, 1, W, MPI_STATUS_IGNORE);
        C(MPI_Irecv)(p + 100, N, MPI_INT, 0, 2, W, &r);
        C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
        C(MPI_Sendrecv)(p + 200, N, MPI_INT, 0, 3, p + 300, N, MPI_INT, 0, 3, W,
                        MPI_STATUS_IGNORE);
        C(MPI_Recv)(p, 128, MPI_INT, 0, 4, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(p + 500, N / 2, MPI_INT, 0, 5, W, MPI_STATUS_IGNORE);
    }
    free(p);
    return finish();
}
