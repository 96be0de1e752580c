/* Collectives' send buffers unchanged since the rank's last send from them (tracer/FORMAT.md,
 * a `coll` record's flag 16, `clean`). 2 ranks, 4 KiB a block; calls in this order:
 *   1  MPI_Bcast of `a` from rank 0, twice: rank 0's second flagged; rank 1's (receives) never
 *   2  MPI_Allgather of `b` into `g`, twice: the second flagged at both ranks
 *   3  MPI_Allreduce in place on `g`, twice: never (its data lie in the buffer it writes); the
 *      second `reduced` at both ranks (it receives into the first's result)
 *   4  MPI_Reduce of `b` to rank 0: flagged at both (b was sent by the Allgathers)
 *   5  rank 1 MPI_Send of `c` twice (the second flagged), then MPI_Bcast from rank 0 into `c`
 *      of the very values it held, then MPI_Send of `c`: not flagged (a collective wrote it)
 *   6  MPI_Gather of `d`, twice, with a write of every value of `d` between: never
 *   7  MPI_Bcast of `e` from rank 0, an MPI_Allgather of 32 KiB blocks (96 KiB moved at each
 *      rank), MPI_Bcast of `e` again: not flagged where the job's LOGGPS_TRACE_CACHE is 64 KiB
 *      (the buffer has left the cache); once more at once: flagged
 *   8  MPI_Alltoall of `u` into `w`, then of `w` into `u`: the second receives into lines it
 *      sent from, `bounced` at both ranks; then the 32 KiB MPI_Allgather again and MPI_Alltoall
 *      of `w` into `u` once more: not bounced (more than 64 KiB moved since `u` was sent)
 *   9  MPI_Alltoall of `p` (two 4 KiB blocks) into `q`: its first send, not flagged; MPI_Bcast
 *      from rank 0 of `p`'s first block: flagged at rank 0 (every byte of it sent by the
 *      Alltoall, unchanged), `bounced` at rank 1 (into lines it sent); MPI_Reduce of that block
 *      to rank 0: flagged at rank 0, not at rank 1 (the Bcast wrote it there); MPI_Alltoall of
 *      `p` again: flagged at both, at rank 1 its first block sent by the Reduce since the
 *      Bcast wrote it, its second unchanged since the first Alltoall sent it
 *  10  MPI_Allreduce of `s` into `y`, then MPI_Scatter of `z` from rank 0 into `y`: `reduced`
 *      at both (its blocks land in the Allreduce's result); MPI_Allreduce into `y` again
 *      (not: the Scatter wrote it at both), rank 1 MPI_Recv into `y` of rank 0's `v`,
 *      MPI_Scatter again: at rank 0 alone (the receive wrote rank 1's); MPI_Allreduce into
 *      `gg`'s second block, MPI_Gather of `s` into `gg` at rank 0: `reduced` there (rank 1's
 *      block lands in that result); MPI_Allreduce into `gg`'s first block (not: the Gather
 *      wrote `gg`), MPI_Gather again: `reduced` at rank 0 (its own block lands there). `s`
 *      is `clean` from the second Allreduce on, `z` at the second Scatter
 *  11  MPI_Scan of `s` into `y`, then MPI_Scatter of `z` into `y`: `reduced` at rank 0 (it
 *      sends its result on to rank 1), not at rank 1 (the last rank's result is read by no
 *      one); `s` and `z` `clean`
 * So the flagged `clean` records, by rank, routine and the routine's call number at that rank:
 * 0 MPI_Bcast 2, 0 MPI_Allgather 2, 0 MPI_Reduce 1, 0 MPI_Bcast 6, 0 MPI_Bcast 7,
 * 0 MPI_Reduce 2, 0 MPI_Alltoall 5, 1 MPI_Allgather 2, 1 MPI_Reduce 1, 1 MPI_Send 2,
 * 1 MPI_Alltoall 5 (with a cache of 64 KiB; with none, 0 MPI_Bcast 5 too), and case 10's
 * 0 MPI_Allreduce 4, 0 MPI_Scatter 2, 0 MPI_Allreduce 5, 0 MPI_Gather 3, 0 MPI_Allreduce 6,
 * 0 MPI_Gather 4, 1 MPI_Allreduce 4, 1 MPI_Allreduce 5, 1 MPI_Gather 3, 1 MPI_Allreduce 6,
 * 1 MPI_Gather 4, and case 11's 0 MPI_Scan 1, 0 MPI_Scatter 3, 1 MPI_Scan 1; the `bounced` ones: 0 MPI_Alltoall 2, 1 MPI_Bcast 3 (case 5's, into `c` it
 * sent from), 1 MPI_Alltoall 2, 1 MPI_Bcast 7; the `reduced` ones: 0 MPI_Allreduce 2,
 * 0 MPI_Scatter 1, 0 MPI_Scatter 2, 0 MPI_Gather 3, 0 MPI_Gather 4, 0 MPI_Scatter 3,
 * 1 MPI_Allreduce 2, 1 MPI_Scatter 1. */
#include "counts.h"

enum { N = 1024, BIG = 8 * N }; /* ints: 4 KiB, 32 KiB */

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    static int a[N], b[N], c[N], d[N], e[N], g[2 * N], r[2 * N], h[BIG], hh[2 * BIG], u[N], w[N];
    static int p[2 * N], q[2 * N], s[N], v[N], y[N], z[2 * N], gg[2 * N];
    for (int i = 0; i < N; i++) a[i] = i, b[i] = 2 * i + rank, c[i] = 3 * i, d[i] = 4 * i;
    const MPI_Comm W = MPI_COMM_WORLD;
    for (int k = 0; k < 2; k++) C(MPI_Bcast)(a, N, MPI_INT, 0, W);
    for (int k = 0; k < 2; k++) C(MPI_Allgather)(b, N, MPI_INT, g, N, MPI_INT, W);
    for (int k = 0; k < 2; k++) C(MPI_Allreduce)(MPI_IN_PLACE, g, 2 * N, MPI_INT, MPI_SUM, W);
    C(MPI_Reduce)(b, r, N, MPI_INT, MPI_SUM, 0, W);
    if (rank == 1) {
        for (int t = 1; t <= 2; t++) C(MPI_Send)(c, N, MPI_INT, 0, t, W);
        C(MPI_Bcast)(c, N, MPI_INT, 0, W);
        C(MPI_Send)(c, N, MPI_INT, 0, 3, W);
    } else {
        for (int t = 1; t <= 2; t++) C(MPI_Recv)(r, N, MPI_INT, 1, t, W, MPI_STATUS_IGNORE);
        C(MPI_Bcast)(c, N, MPI_INT, 0, W); /* rank 1's `c` as it was: the same values */
        C(MPI_Recv)(r, N, MPI_INT, 1, 3, W, MPI_STATUS_IGNORE);
    }
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < N; i++) d[i] += 1;
        C(MPI_Gather)(d, N, MPI_INT, r, N, MPI_INT, 0, W);
    }
    for (int i = 0; i < N; i++) e[i] = 5 * i;
    for (int i = 0; i < BIG; i++) h[i] = i + rank;
    C(MPI_Bcast)(e, N, MPI_INT, 0, W);
    C(MPI_Allgather)(h, BIG, MPI_INT, hh, BIG, MPI_INT, W);
    for (int k = 0; k < 2; k++) C(MPI_Bcast)(e, N, MPI_INT, 0, W);
    for (int i = 0; i < N; i++) u[i] = 6 * i + rank;
    C(MPI_Alltoall)(u, N / 2, MPI_INT, w, N / 2, MPI_INT, W);
    C(MPI_Alltoall)(w, N / 2, MPI_INT, u, N / 2, MPI_INT, W);
    C(MPI_Allgather)(h, BIG, MPI_INT, hh, BIG, MPI_INT, W);
    C(MPI_Alltoall)(w, N / 2, MPI_INT, u, N / 2, MPI_INT, W);
    for (int i = 0; i < 2 * N; i++) p[i] = 7 * i + rank;
    C(MPI_Alltoall)(p, N, MPI_INT, q, N, MPI_INT, W);
    C(MPI_Bcast)(p, N, MPI_INT, 0, W);
    C(MPI_Reduce)(p, r, N, MPI_INT, MPI_SUM, 0, W);
    C(MPI_Alltoall)(p, N, MPI_INT, q, N, MPI_INT, W);
    for (int i = 0; i < N; i++) s[i] = 8 * i + rank, v[i] = 9 * i, z[i] = z[N + i] = i;
    C(MPI_Allreduce)(s, y, N, MPI_INT, MPI_SUM, W);
    C(MPI_Scatter)(z, N, MPI_INT, y, N, MPI_INT, 0, W);
    C(MPI_Allreduce)(s, y, N, MPI_INT, MPI_SUM, W);
    if (rank == 0)
        C(MPI_Send)(v, N, MPI_INT, 1, 10, W);
    else
        C(MPI_Recv)(y, N, MPI_INT, 0, 10, W, MPI_STATUS_IGNORE);
    C(MPI_Scatter)(z, N, MPI_INT, y, N, MPI_INT, 0, W);
    C(MPI_Allreduce)(s, gg + N, N, MPI_INT, MPI_SUM, W);
    C(MPI_Gather)(s, N, MPI_INT, gg, N, MPI_INT, 0, W);
    C(MPI_Allreduce)(s, gg, N, MPI_INT, MPI_SUM, W);
    C(MPI_Gather)(s, N, MPI_INT, gg, N, MPI_INT, 0, W);
    C(MPI_Scan)(s, y, N, MPI_INT, MPI_SUM, W);
    C(MPI_Scatter)(z, N, MPI_INT, y, N, MPI_INT, 0, W);
    return finish();
}
