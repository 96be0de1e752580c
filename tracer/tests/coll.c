/* Every recorded collective, on MPI_COMM_WORLD, on a split communicator whose rank order
 * differs from the world's, on a duplicate, on a communicator from MPI_Comm_create and on
 * MPI_COMM_SELF; point-to-point with wildcards on the split communicator; a Cartesian
 * communicator (not recorded itself, but the calls on it are). 2 or more ranks, at most 16. */
#include "counts.h"

enum { N = 4 }; /* elements per rank */

static void all_collectives(MPI_Comm c)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    double x[16 * N], y[16 * N];
    int counts[16], displs[16], rcounts[16], rdispls[16];
    for (int i = 0; i < 16 * N; i++) x[i] = me + i;
    for (int i = 0; i < n; i++) {
        counts[i] = 1 + (i % N);      /* varying per-rank counts */
        displs[i] = i * N;
        rcounts[i] = 1 + (me % N);    /* alltoallv: what i sends me is counts_i[me] */
        rdispls[i] = i * N;
    }
    int root = n - 1;
    C(MPI_Barrier)(c);
    C(MPI_Bcast)(x, N, MPI_DOUBLE, root, c);
    C(MPI_Reduce)(x, y, N, MPI_DOUBLE, MPI_SUM, 0, c);
    C(MPI_Allreduce)(x, y, N, MPI_DOUBLE, MPI_MAX, c);
    C(MPI_Allreduce)(MPI_IN_PLACE, y, N, MPI_DOUBLE, MPI_MAX, c);
    C(MPI_Gather)(x, N, MPI_DOUBLE, y, N, MPI_DOUBLE, root, c);
    C(MPI_Gather)(me == 0 ? MPI_IN_PLACE : (void *)x, N, MPI_DOUBLE, y, N, MPI_DOUBLE, 0, c);
    C(MPI_Gatherv)(x, counts[me], MPI_DOUBLE, y, counts, displs, MPI_DOUBLE, 0, c);
    C(MPI_Scatter)(x, N, MPI_DOUBLE, y, N, MPI_DOUBLE, root, c);
    C(MPI_Scatterv)(x, counts, displs, MPI_DOUBLE, y, counts[me], MPI_DOUBLE, 0, c);
    C(MPI_Allgather)(x, N, MPI_DOUBLE, y, N, MPI_DOUBLE, c);
    C(MPI_Allgatherv)(x, counts[me], MPI_DOUBLE, y, counts, displs, MPI_DOUBLE, c);
    C(MPI_Alltoall)(x, N, MPI_DOUBLE, y, N, MPI_DOUBLE, c);
    C(MPI_Alltoallv)(x, counts, displs, MPI_DOUBLE, y, rcounts, rdispls, MPI_DOUBLE, c);
    C(MPI_Reduce_scatter)(x, y, counts, MPI_DOUBLE, MPI_SUM, c);
    C(MPI_Reduce_scatter_block)(x, y, 2, MPI_DOUBLE, MPI_SUM, c);
    C(MPI_Scan)(x, y, N, MPI_DOUBLE, MPI_SUM, c);
    C(MPI_Exscan)(x, y, N, MPI_DOUBLE, MPI_SUM, c);
}

int main(int argc, char **argv)
{
    int provided;
    C(MPI_Init_thread)(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 16);
    const MPI_Comm W = MPI_COMM_WORLD;

    all_collectives(W);

    /* split in two halves, ranked in reverse world order */
    MPI_Comm half;
    C(MPI_Comm_split)(W, rank % 2, -rank, &half);
    all_collectives(half);
    int hme, hn, v = rank;
    MPI_Comm_rank(half, &hme);
    MPI_Comm_size(half, &hn);
    if (hme == 0) {
        MPI_Status st;
        for (int i = 1; i < hn; i++) {
            C(MPI_Recv)(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, half, &st);
            CHECK(st.MPI_TAG == v);
        }
    } else {
        C(MPI_Send)(&v, 1, MPI_INT, 0, rank, half);
    }

    /* a duplicate of the half, used and freed */
    MPI_Comm dup;
    C(MPI_Comm_dup)(half, &dup);
    C(MPI_Allreduce)(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, dup);
    MPI_Request rq[2];
    int peer = (hme + 1) % hn, from = (hme + hn - 1) % hn, w = 0;
    C(MPI_Irecv)(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, dup, &rq[0]);
    C(MPI_Isend)(&v, 1, MPI_INT, peer, 5, dup, &rq[1]);
    MPI_Status sts[2];
    C(MPI_Waitall)(2, rq, sts);
    CHECK(sts[0].MPI_SOURCE == from);
    C(MPI_Comm_free)(&dup);

    /* MPI_Comm_create over the first half of the world; the others get MPI_COMM_NULL */
    MPI_Group wg, g;
    MPI_Comm_group(W, &wg);
    int range[1][3] = { { 0, (size - 1) / 2, 1 } };
    MPI_Group_range_incl(wg, 1, range, &g);
    MPI_Comm first;
    C(MPI_Comm_create)(W, g, &first);
    if (first != MPI_COMM_NULL) {
        C(MPI_Bcast)(&v, 1, MPI_INT, 0, first);
        C(MPI_Comm_free)(&first);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    /* a split where rank 0 takes no part */
    MPI_Comm rest;
    C(MPI_Comm_split)(W, rank == 0 ? MPI_UNDEFINED : 1, 0, &rest);
    CHECK((rank == 0) == (rest == MPI_COMM_NULL));
    if (rest != MPI_COMM_NULL) {
        C(MPI_Barrier)(rest);
        C(MPI_Comm_free)(&rest);
    }

    /* MPI_COMM_SELF and a duplicate of it */
    C(MPI_Barrier)(MPI_COMM_SELF);
    MPI_Comm self2;
    C(MPI_Comm_dup)(MPI_COMM_SELF, &self2);
    C(MPI_Allreduce)(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, self2);
    C(MPI_Comm_free)(&self2);

    /* a Cartesian ring, reordered: its creation is not recorded, its traffic is */
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 }, src, dst;
    MPI_Cart_create(W, 1, dims, periods, 1, &ring);
    MPI_Cart_shift(ring, 0, 1, &src, &dst);
    C(MPI_Sendrecv)(&v, 1, MPI_INT, dst, 9, &w, 1, MPI_INT, src, 9, ring, MPI_STATUS_IGNORE);
    C(MPI_Comm_free)(&ring);

    C(MPI_Comm_free)(&half);
    return finish();
}
