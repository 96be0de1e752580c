/* One-sided communication and neighborhood collectives, which the tracer records with their
 * times only (codes 70-104), on 2 or more ranks in a ring: every window constructor, fence,
 * passive target (lock, lock_all, flushes, sync), post/start/complete/wait, every RMA
 * operation; every neighborhood collective on a periodic Cartesian ring; and a message
 * exchange around them, which must still match. */
#include "counts.h"

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Comm W = MPI_COMM_WORLD;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[8], b[8], one = 1, old = 0, cmp = 0;
    for (int i = 0; i < 8; i++) a[i] = rank * 100 + i;

    /* active target with fences on a window of the program's memory */
    int mem[16] = { 0 };
    MPI_Win win;
    C(MPI_Win_create)(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, W, &win);
    C(MPI_Win_fence)(0, win);
    C(MPI_Put)(a, 4, MPI_INT, right, 0, 4, MPI_INT, win);
    C(MPI_Win_fence)(0, win);
    CHECK(mem[0] == left * 100);
    C(MPI_Get)(b, 4, MPI_INT, right, 0, 4, MPI_INT, win);
    C(MPI_Win_fence)(0, win);
    CHECK(b[0] == rank * 100);
    C(MPI_Accumulate)(&one, 1, MPI_INT, right, 8, 1, MPI_INT, MPI_SUM, win);
    C(MPI_Win_fence)(0, win);
    CHECK(mem[8] == 1);

    /* post/start/complete/wait: my left neighbour puts into my window, I into my right's */
    MPI_Group world, from, to;
    MPI_Comm_group(W, &world);
    MPI_Group_incl(world, 1, &left, &from);
    MPI_Group_incl(world, 1, &right, &to);
    C(MPI_Win_post)(from, 0, win);
    C(MPI_Win_start)(to, 0, win);
    C(MPI_Put)(a + 4, 2, MPI_INT, right, 10, 2, MPI_INT, win);
    C(MPI_Win_complete)(win);
    C(MPI_Win_wait)(win);
    CHECK(mem[10] == left * 100 + 4);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    C(MPI_Win_free)(&win);

    /* passive target on a window the library allocates */
    int *base;
    C(MPI_Win_allocate)(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, W, &base, &win);
    for (int i = 0; i < 16; i++) base[i] = 0;
    C(MPI_Barrier)(W);
    C(MPI_Win_lock)(MPI_LOCK_SHARED, right, 0, win);
    C(MPI_Put)(a, 2, MPI_INT, right, 4, 2, MPI_INT, win);
    C(MPI_Win_flush)(right, win);
    C(MPI_Get)(b, 1, MPI_INT, right, 12, 1, MPI_INT, win);
    C(MPI_Win_flush_local)(right, win);
    C(MPI_Win_unlock)(right, win);
    C(MPI_Barrier)(W);
    C(MPI_Win_lock_all)(0, win);
    C(MPI_Fetch_and_op)(&one, &old, MPI_INT, right, 0, MPI_SUM, win);
    C(MPI_Win_flush_all)(win);
    C(MPI_Compare_and_swap)(&one, &cmp, &old, MPI_INT, right, 1, win);
    C(MPI_Get_accumulate)(&one, 1, MPI_INT, &old, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win);
    C(MPI_Win_flush_all)(win);
    C(MPI_Win_sync)(win);
    C(MPI_Win_unlock_all)(win);
    C(MPI_Barrier)(W);
    CHECK(base[0] == 1 && base[1] == 1 && base[2] == 1 && base[4] == left * 100);
    C(MPI_Win_free)(&win);

    /* a shared-memory window among the ranks of one node, a dynamic window */
    MPI_Comm node;
    MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    C(MPI_Win_allocate_shared)(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win);
    C(MPI_Win_fence)(0, win);
    C(MPI_Win_free)(&win);
    C(MPI_Comm_free)(&node);
    C(MPI_Win_create_dynamic)(MPI_INFO_NULL, W, &win);
    C(MPI_Win_free)(&win);

    /* neighborhood collectives on a periodic ring: neighbours left and right */
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 };
    MPI_Cart_create(W, 1, dims, periods, 0, &ring);
    int counts[2] = { 1, 1 }, displs[2] = { 0, 1 }, got[4];
    MPI_Aint bdispls[2] = { 0, sizeof(int) };
    MPI_Datatype types[2] = { MPI_INT, MPI_INT };
    C(MPI_Neighbor_allgather)(a, 1, MPI_INT, got, 1, MPI_INT, ring);
    CHECK(got[0] == left * 100 && got[1] == right * 100);
    C(MPI_Neighbor_allgatherv)(a, 1, MPI_INT, got, counts, displs, MPI_INT, ring);
    C(MPI_Neighbor_alltoall)(a, 1, MPI_INT, got, 1, MPI_INT, ring);
    C(MPI_Neighbor_alltoallv)(a, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring);
    C(MPI_Neighbor_alltoallw)(a, counts, bdispls, types, got, counts, bdispls, types, ring);
    C(MPI_Barrier)(ring);
    C(MPI_Comm_free)(&ring);

    /* messages around them still match */
    C(MPI_Sendrecv)(a, 2, MPI_INT, right, 1, b, 2, MPI_INT, left, 1, W, MPI_STATUS_IGNORE);
    return finish();
}
