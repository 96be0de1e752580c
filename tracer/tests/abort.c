/* A job that dies mid-way: the ranks exchange messages, then the last rank calls MPI_Abort
 * while the others wait in MPI_Recv. The trace must stay loadable (header, J, R and the E
 * chunks written so far, no index). Run with a small LOGGPS_TRACE_BUFFER so that chunks
 * are spilled before the abort. */
#include "counts.h"

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size, x[16] = { 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int k = 0; k < 2000; k++)
        C(MPI_Sendrecv)(x, 8, MPI_INT, right, k, x + 8, 8, MPI_INT, left, k, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
    C(MPI_Barrier)(MPI_COMM_WORLD);
    if (rank == size - 1) {
        fprintf(stderr, "abort.c: rank %d aborts on purpose\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    C(MPI_Recv)(x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never comes */
    return finish();
}
