/*
 * Call sites (`loggps-predict callsites`): rank 1 computes for about 20 ms before each of its
 * sends, so rank 0's receive on the line marked SLOW RECEIVE waits that long each time, and the
 * prediction keeps the computation: that line must come first, by receiver synchronization.
 * The other calls are quick. Run on 2 ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* computation the compiler cannot drop */
static double spin(double s)
{
    volatile double x = 0;
    for (double t0 = seconds(); seconds() - t0 < s;) x += 1;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 0;
    for (int i = 0; i < 5; i++) {
        if (rank == 1) {
            x = spin(0.02);
            MPI_Send(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SLOW RECEIVE */
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) printf("done %g\n", x);
    MPI_Finalize();
    return 0;
}
