/* MPI_THREAD_MULTIPLE: the tracer refuses it (message on stderr, no trace file) and the job
 * runs normally. */
#include "counts.h"

int main(int argc, char **argv)
{
    int provided, rank, x = 1;
    C(MPI_Init_thread)(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    C(MPI_Allreduce)(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("PROVIDED %s\n", provided == MPI_THREAD_MULTIPLE ? "multiple" : "less");
    return finish();
}
