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
 *  10  MPI_Send of the first half of `d` (8 KiB), then of its second half (4 KiB each, first
 *      sends: not flagged), then of the whole of `d`: clean (every byte sent since written, as
 *      an Alltoall's blocks that earlier collectives sent one by one)
 *  11  MPI_Send of `e` (8 KiB) twice (the second clean), MPI_Recv into its first half, then
 *      MPI_Send of its first half: not flagged (received into); of the whole: clean (the first
 *      half sent since, the second unchanged since the whole was); a write into the second
 *      half, then MPI_Send of the whole: not flagged
 * So rank 0's flagged records: MPI_Send (2), MPI_Isend (4), MPI_Sendrecv (7), MPI_Isend (8),
 * MPI_Send (10: tag 15), MPI_Send (11: tags 17, 20); rank 1 receives into one buffer and sends
 * from it: none. A change to a value between the words the fingerprint samples (8 a quarter of
 * a buffer) would go unseen. 2 ranks. */
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
    static int a[N], b[N], c[N], d[2 * N], e[2 * N], in[2 * N];
    for (int i = 0; i < N; i++) a[i] = i, b[i] = 2 * i, c[i] = 3 * i;
    for (int i = 0; i < 2 * N; i++) d[i] = 4 * i, e[i] = 5 * i;
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
        C(MPI_Send)(d, N, MPI_INT, 1, 13, W);
        C(MPI_Send)(d + N, N, MPI_INT, 1, 14, W);
        C(MPI_Send)(d, 2 * N, MPI_INT, 1, 15, W);
        for (int t = 16; t <= 17; t++) C(MPI_Send)(e, 2 * N, MPI_INT, 1, t, W);
        C(MPI_Recv)(e, N, MPI_INT, 1, 18, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(e, N, MPI_INT, 1, 19, W);
        C(MPI_Send)(e, 2 * N, MPI_INT, 1, 20, W);
        for (int i = N; i < 2 * N; i++) e[i] += 1;
        C(MPI_Send)(e, 2 * N, MPI_INT, 1, 21, W);
    } else {
        for (int t = 1; t <= 4; t++) C(MPI_Recv)(in, N, MPI_INT, 0, t, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(in, N, MPI_INT, 0, 5, W); /* rank 0's `a` as it was: the same values */
        C(MPI_Recv)(in, N, MPI_INT, 0, 6, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(in, 128, MPI_INT, 0, 7, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(in, 128, MPI_INT, 0, 8, W, MPI_STATUS_IGNORE);
        C(MPI_Sendrecv)(b, N, MPI_INT, 0, 10, in, N, MPI_INT, 0, 9, W, MPI_STATUS_IGNORE);
        for (int k = 0; k < 2; k++) C(MPI_Recv)(in, N, MPI_INT, 0, 11, W, MPI_STATUS_IGNORE);
        for (int k = 0; k < 2; k++) C(MPI_Recv)(in, N / 2, MPI_INT, 0, 12, W, MPI_STATUS_IGNORE);
        for (int t = 13; t <= 14; t++) C(MPI_Recv)(in, N, MPI_INT, 0, t, W, MPI_STATUS_IGNORE);
        for (int t = 15; t <= 17; t++) C(MPI_Recv)(in, 2 * N, MPI_INT, 0, t, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(in, N, MPI_INT, 0, 18, W);
        C(MPI_Recv)(in, N, MPI_INT, 0, 19, W, MPI_STATUS_IGNORE);
        for (int t = 20; t <= 21; t++) C(MPI_Recv)(in, 2 * N, MPI_INT, 0, t, W, MPI_STATUS_IGNORE);
    }
    return finish();
}
