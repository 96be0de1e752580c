/* Receives into a buffer the rank last sent from to the same peer (tracer/FORMAT.md, receive
 * flag 8, `bounced`): rank 0 sends `a` to rank 1 and receives it back into `a` (MPI_Recv), then
 * receives into `b`, never sent from (not bounced), into `a` again with MPI_ANY_SOURCE
 * (MPI_Irecv: any peer's send counts), and last sends `b` and receives into it in an
 * MPI_Sendrecv whose send buffer is `a`. Rank 1 receives into one buffer and sends from
 * another, so nothing of its is bounced. Rank 0's receives flagged: 3 (MPI_Recv, MPI_Irecv,
 * MPI_Sendrecv); rank 1's: none. 2 ranks. */
#include "counts.h"

enum { N = 100 };

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    static int a[N], b[N], in[N], out[N];
    const MPI_Comm W = MPI_COMM_WORLD;
    if (rank == 0) {
        MPI_Request r;
        C(MPI_Send)(a, N, MPI_INT, 1, 1, W);
        C(MPI_Recv)(a, N, MPI_INT, 1, 2, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(b, N, MPI_INT, 1, 3, W, MPI_STATUS_IGNORE);
        C(MPI_Irecv)(a, N, MPI_INT, MPI_ANY_SOURCE, 4, W, &r);
        C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
        C(MPI_Send)(b, N, MPI_INT, 1, 5, W);
        C(MPI_Sendrecv)(a, N, MPI_INT, 1, 6, b, N, MPI_INT, 1, 7, W, MPI_STATUS_IGNORE);
    } else {
        C(MPI_Recv)(in, N, MPI_INT, 0, 1, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(out, N, MPI_INT, 0, 2, W);
        C(MPI_Send)(out, N, MPI_INT, 0, 3, W);
        C(MPI_Send)(out, N, MPI_INT, 0, 4, W);
        C(MPI_Recv)(in, N, MPI_INT, 0, 5, W, MPI_STATUS_IGNORE);
        C(MPI_Sendrecv)(out, N, MPI_INT, 0, 7, in, N, MPI_INT, 0, 6, W, MPI_STATUS_IGNORE);
    }
    return finish();
}
