/* cores.h: a cache line's round trip between two ranks' cores, timed with a clock that jumps by
 * 1.5 ms once (a rank the OS or a hypervisor took off its CPU), is still the round trip of the
 * batches the jump missed: under 3 us, where the mean of the 320 round trips would be over
 * 4.6 us (1.5 ms / 320) above it. Rank 0 prints "ok ..." or "FAIL ..."; exits 1 on a failure. */
#include "../cores.h"

#include <stdio.h>
#include <time.h>

enum { ROUNDS = 320, JUMP_NS = 1500000 };

static int reads;

static int64_t real_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The real clock, 1.5 ms ahead from its fourth reading on (the end of the second batch where
 * no rank yields). */
static int64_t jumping_ns(void)
{
    return real_ns() + (reads++ >= 3 ? JUMP_NS : 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double plain = cores_round_trip(node, 0, 1, ROUNDS, real_ns);
    double jumped = cores_round_trip(node, 0, 1, ROUNDS, jumping_ns);
    int ok = 1;
    if (rank == 0) {
        ok = plain > 0 && jumped > 0 && jumped < 3000;
        printf("%s round trip %.1f ns, %.1f ns with the clock jumping %d ns once\n",
               ok ? "ok" : "FAIL", plain, jumped, JUMP_NS);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return !ok;
}
