/* Time stamps: rank 0 reads CLOCK_MONOTONIC around each of 200 barriers, with pauses of
 * 0..3 ms between them (so that the tracer's TSC clock re-anchors often), and prints
 * "STAMP i before after"; run.sh checks that the trace's call and return times of the i-th
 * MPI_Barrier lie between them. */
#include "counts.h"
#include <time.h>
#include <unistd.h>

static long long mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 200; i++) {
        long long before = mono();
        C(MPI_Barrier)(MPI_COMM_WORLD);
        long long after = mono();
        if (rank == 0) printf("STAMP %d %lld %lld\n", i, before, after);
        usleep((useconds_t)((i * 7919) % 3000));
    }
    return finish();
}
