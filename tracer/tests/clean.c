/* Sends from a buffer unchanged since the rank's last send from it (tracer/FORMAT.md, send
 * flag 16, `clean`). Rank 0, each send of 4 KiB to rank 1 unless said:
 *   1  MPI_Send of `a` (written at the start): its first send, not flagged
 *   2  MPI_Send of `a` again: clean
 *   3  MPI_Send of `a` after it was written anew (every value changed): not flagged
 *   4  MPI_Isend of `a`: clean
 *   5  MPI_Send of `a` after MPI_Recv into it of the very values it held: not flagged
 *   6  MPI_Send of 512 B of `b` twice: small, never flagged
 *   7  MPI_Sendrecv sending `a`: clean; its receive into `b` bounced (b was sent to rank 1)
 *   8  a persistent send of `c` started twice: the second clean
 *   9  MPI_Send of every other int of `c` (a vector type: not contiguous, never read) twice:
 *      not flagged
 * So rank 0's flagged records: MPI_Send (2), MPI_Isend (4), MPI_Sendrecv (7), MPI_Isend (8);
 * rank 1 receives into one buffer and sends from it once: none. A change to a value between
 * the words the fingerprint samples (32 of them) would go unseen. 2 ranks. */
#include "counts.h"

enum { N = 1024 }; /* ints: 4 KiB */

static void start(MPI_Request *r)
{
    bump("MPI_Isend");
    MPI_Start(r);
}

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    static int a[N], b[N], c[N], in[N];
    for (int i = 0; i < N; i++) a[i] = i, b[i] = 2 * i, c[i] = 3 * i;
    const MPI_Comm W = MPI_COMM_WORLD;
    if (rank == 0) {
        MPI_Request r;
        C(MPI_Send)(a, N, MPI_INT, 1, 1, W);
        C(MPI_Send)(a, N, MPI_INT, 1, 2, W);
        for (int i = 0; i < N; i++) a[i] += 1;
        C(MPI_Send)(a, N, MPI_INT, 1, 3, W);
        C(MPI_Isend)(a, N, MPI_INT, 1, 4, W, &r);
        C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
        C(MPI_Recv)(a, N, MPI_INT, 1, 5, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(a, N, MPI_INT, 1, 6, W);
        C(MPI_Send)(b, 128, MPI_INT, 1, 7, W);
        C(MPI_Send)(b, 128, MPI_INT, 1, 8, W);
        C(MPI_Sendrecv)(a, N, MPI_INT, 1, 9, b, N, MPI_INT, 1, 10, W, MPI_STATUS_IGNORE);
        MPI_Send_init(c, N, MPI_INT, 1, 11, W, &r);
        for (int k = 0; k < 2; k++) {
            start(&r);
            C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
        MPI_Datatype every_other;
        MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        for (int k = 0; k < 2; k++) C(MPI_Send)(c, 1, every_other, 1, 12, W);
        MPI_Type_free(&every_other);
    } else {
        for (int t = 1; t <= 4; t++) C(MPI_Recv)(in, N, MPI_INT, 0, t, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(in, N, MPI_INT, 0, 5, W); /* rank 0's `a` as it was: the same values */
        C(MPI_Recv)(in, N, MPI_INT, 0, 6, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(in, 128, MPI_INT, 0, 7, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(in, 128, MPI_INT, 0, 8, W, MPI_STATUS_IGNORE);
        C(MPI_Sendrecv)(b, N, MPI_INT, 0, 10, in, N, MPI_INT, 0, 9, W, MPI_STATUS_IGNORE);
        for (int k = 0; k < 2; k++) C(MPI_Recv)(in, N, MPI_INT, 0, 11, W, MPI_STATUS_IGNORE);
        for (int k = 0; k < 2; k++) C(MPI_Recv)(in, N / 2, MPI_INT, 0, 12, W, MPI_STATUS_IGNORE);
    }
    return finish();
}
