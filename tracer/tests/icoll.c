/* Nonblocking collectives, MPI_Alltoallw and MPI_Comm_idup. Every nonblocking collective on
 * MPI_COMM_WORLD and on a split communicator whose rank order differs from the world's, all
 * outstanding at once and completed by one MPI_Waitall, then with MPI_IN_PLACE; an
 * MPI_Ibarrier overlapped with computation; an MPI_Iallreduce completed by an MPI_Test loop;
 * Ibarriers on MPI_COMM_SELF outstanding together; MPI_Alltoallw and MPI_Ialltoallw with a
 * datatype per peer (a derived one among them), MPI_Alltoallw with MPI_IN_PLACE; MPI_Comm_idup
 * of the world, of the split communicator and of an idup'd one, completed by MPI_Wait,
 * MPI_Waitall (with other requests) and an MPI_Test loop, whose communicators are then used:
 * their calls must be recorded on them, and their point-to-point messages match; an idup of a
 * communicator the tracer does not know (MPI_Dist_graph_create's): not recorded, nor the calls
 * on its communicator. 2 or more ranks, at most 16. */
#include "counts.h"

enum { N = 4 }; /* elements per rank */

/* Every nonblocking collective on c, outstanding together, completed by one Waitall; then the
 * ones with MPI_IN_PLACE, completed one by one. */
static void all_nonblocking(MPI_Comm c)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    double x[16 * N], b[N], y[15][16 * N];
    int counts[16], displs[16], rcounts[16], rdispls[16];
    for (int i = 0; i < 16 * N; i++) x[i] = me + i;
    for (int i = 0; i < N; i++) b[i] = me;
    for (int i = 0; i < n; i++) {
        counts[i] = 1 + (i % N);      /* varying per-rank counts */
        displs[i] = i * N;
        rcounts[i] = 1 + (me % N);    /* alltoallv: what i sends me is counts_i[me] */
        rdispls[i] = i * N;
    }
    int root = n - 1, k = 0;
    MPI_Request r[16];
    C(MPI_Ibarrier)(c, &r[k++]);
    C(MPI_Ibcast)(b, N, MPI_DOUBLE, root, c, &r[k++]);
    C(MPI_Ireduce)(x, y[0], N, MPI_DOUBLE, MPI_SUM, 0, c, &r[k++]);
    C(MPI_Iallreduce)(x, y[1], N, MPI_DOUBLE, MPI_MAX, c, &r[k++]);
    C(MPI_Igather)(x, N, MPI_DOUBLE, y[2], N, MPI_DOUBLE, root, c, &r[k++]);
    C(MPI_Igatherv)(x, counts[me], MPI_DOUBLE, y[3], counts, displs, MPI_DOUBLE, 0, c, &r[k++]);
    C(MPI_Iscatter)(x, N, MPI_DOUBLE, y[4], N, MPI_DOUBLE, root, c, &r[k++]);
    C(MPI_Iscatterv)(x, counts, displs, MPI_DOUBLE, y[5], counts[me], MPI_DOUBLE, 0, c, &r[k++]);
    C(MPI_Iallgather)(x, N, MPI_DOUBLE, y[6], N, MPI_DOUBLE, c, &r[k++]);
    C(MPI_Iallgatherv)(x, counts[me], MPI_DOUBLE, y[7], counts, displs, MPI_DOUBLE, c, &r[k++]);
    C(MPI_Ialltoall)(x, N, MPI_DOUBLE, y[8], N, MPI_DOUBLE, c, &r[k++]);
    C(MPI_Ialltoallv)(x, counts, displs, MPI_DOUBLE, y[9], rcounts, rdispls, MPI_DOUBLE, c,
                      &r[k++]);
    C(MPI_Ireduce_scatter)(x, y[10], counts, MPI_DOUBLE, MPI_SUM, c, &r[k++]);
    C(MPI_Ireduce_scatter_block)(x, y[11], 2, MPI_DOUBLE, MPI_SUM, c, &r[k++]);
    C(MPI_Iscan)(x, y[12], N, MPI_DOUBLE, MPI_SUM, c, &r[k++]);
    C(MPI_Iexscan)(x, y[13], N, MPI_DOUBLE, MPI_SUM, c, &r[k++]);
    C(MPI_Waitall)(k, r, MPI_STATUSES_IGNORE);
    CHECK(b[0] == root && y[1][0] == n - 1 && y[12][0] == me * (me + 1) / 2);
    CHECK(y[6][N * (n - 1)] == n - 1 && y[8][N * (n - 1)] == n - 1 + N * me);

    C(MPI_Iallreduce)(MPI_IN_PLACE, y[1], N, MPI_DOUBLE, MPI_MIN, c, &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Igather)(me == 0 ? MPI_IN_PLACE : (void *)x, N, MPI_DOUBLE, y[2], N, MPI_DOUBLE, 0, c,
                   &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Iallgatherv)(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y[7], counts, displs, MPI_DOUBLE, c,
                       &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    CHECK(y[1][0] == n - 1);
}

/* An Ibarrier overlapped with computation, then an Iallreduce completed by a Test loop. */
static void overlap(MPI_Comm c)
{
    MPI_Request r;
    volatile double s = 0;
    C(MPI_Ibarrier)(c, &r);
    for (int i = 0; i < 2000000; i++) s += i * 0.5;
    C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    int v = 1, sum = 0, flag = 0, n;
    MPI_Comm_size(c, &n);
    C(MPI_Iallreduce)(&v, &sum, 1, MPI_INT, MPI_SUM, c, &r);
    do C(MPI_Test)(&r, &flag, MPI_STATUS_IGNORE); while (!flag);
    CHECK(sum == n && s > 0);
}

/* Alltoallw and Ialltoallw: what ranks i and j exchange has the datatype (i + j) % 3 of
 * MPI_INT, MPI_DOUBLE and a pair of ints (derived), 1 + (i + j) % 2 of them; then Alltoallw
 * with MPI_IN_PLACE. */
static void alltoallw(MPI_Comm c)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    MPI_Datatype pair, types[3] = { MPI_INT, MPI_DOUBLE, MPI_DATATYPE_NULL };
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    types[2] = pair;
    enum { SLOT = 32 }; /* bytes per peer in the buffers */
    double sbuf[16 * SLOT / 8], rbuf[16 * SLOT / 8];
    int counts[16], displs[16];
    MPI_Datatype t[16];
    for (int j = 0; j < n; j++) {
        t[j] = types[(me + j) % 3];
        counts[j] = 1 + (me + j) % 2;
        displs[j] = j * SLOT;
        int *p = (int *)((char *)sbuf + j * SLOT);
        if (t[j] == MPI_DOUBLE) ((double *)p)[0] = ((double *)p)[1] = 100 * me + j;
        else for (int e = 0; e < 4; e++) p[e] = 100 * me + j;
    }
    C(MPI_Alltoallw)(sbuf, counts, displs, t, rbuf, counts, displs, t, c);
    for (int j = 0; j < n; j++) {
        const int *p = (const int *)((const char *)rbuf + j * SLOT);
        CHECK(t[j] == MPI_DOUBLE ? ((const double *)p)[0] == 100 * j + me : p[0] == 100 * j + me);
    }
    MPI_Request r;
    C(MPI_Ialltoallw)(sbuf, counts, displs, t, rbuf, counts, displs, t, c, &r);
    C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    C(MPI_Alltoallw)(MPI_IN_PLACE, counts, displs, t, rbuf, counts, displs, t, c);
    MPI_Type_free(&pair);
}

/* MPI_Comm_idup of the world, waited for alone, then used; of `half` and of the first idup's
 * communicator at once, with an Iallreduce, completed by one Waitall, then used (a ring of
 * point-to-point on the half's duplicate, ranked as the half); of the half's duplicate,
 * completed by a Test loop. */
static void idups(MPI_Comm half)
{
    MPI_Comm a, b, d, e;
    MPI_Request r[3];
    int v = 1, n, w, flag = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    C(MPI_Comm_idup)(MPI_COMM_WORLD, &a, &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Bcast)(&v, 1, MPI_INT, n - 1, a);
    C(MPI_Allreduce)(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, a);
    CHECK(v == n);

    C(MPI_Comm_idup)(half, &b, &r[0]);
    C(MPI_Iallreduce)(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    C(MPI_Comm_idup)(a, &d, &r[2]);
    C(MPI_Waitall)(3, r, MPI_STATUSES_IGNORE);
    CHECK(v == n * n);
    int hme, hn;
    MPI_Comm_rank(b, &hme);
    MPI_Comm_size(b, &hn);
    C(MPI_Bcast)(&v, 1, MPI_INT, hn - 1, b);
    C(MPI_Allreduce)(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, b);
    C(MPI_Sendrecv)(&hme, 1, MPI_INT, (hme + 1) % hn, 3, &w, 1, MPI_INT, MPI_ANY_SOURCE, 3, b,
                    MPI_STATUS_IGNORE);
    CHECK(w == (hme + hn - 1) % hn);
    C(MPI_Barrier)(d);

    C(MPI_Comm_idup)(b, &e, &r[0]);
    do C(MPI_Test)(&r[0], &flag, MPI_STATUS_IGNORE); while (!flag);
    C(MPI_Ibarrier)(e, &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Comm_free)(&e);
    C(MPI_Comm_free)(&d);
    C(MPI_Comm_free)(&b);
    C(MPI_Comm_free)(&a);
}

/* An idup of a communicator the tracer does not know: neither it nor the calls on its
 * communicator are recorded (the Wait that completes it is, naming no request). */
static void idup_unknown(void)
{
    int me = 0, n, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int node = me, degree = 1, dest = (me + 1) % n, weight = 1;
    MPI_Comm graph, g2;
    MPI_Request r;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &node, &degree, &dest, &weight, MPI_INFO_NULL, 0,
                          &graph);
    MPI_Comm_idup(graph, &g2, &r);
    C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, g2);
    CHECK(one == n);
    MPI_Comm_free(&g2);
    MPI_Comm_free(&graph);
}

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 16);
    const MPI_Comm W = MPI_COMM_WORLD;

    all_nonblocking(W);
    overlap(W);
    alltoallw(W);

    /* split in two halves, ranked in reverse world order */
    MPI_Comm half;
    C(MPI_Comm_split)(W, rank % 2, -rank, &half);
    all_nonblocking(half);
    alltoallw(half);

    /* MPI_COMM_SELF: two Ibarriers outstanding together */
    MPI_Request r[2];
    C(MPI_Ibarrier)(MPI_COMM_SELF, &r[0]);
    C(MPI_Ibarrier)(MPI_COMM_SELF, &r[1]);
    C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);

    idups(half);
    idup_unknown();

    C(MPI_Comm_free)(&half);
    return finish();
}
