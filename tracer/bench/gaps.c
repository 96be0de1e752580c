/* Collectives with computation between (MODEL.md §11, `oc`): loops of 2,000 rounds of Bcast (the
 * root alternating), Allreduce, Allgather, Alltoall and Reduce (the root alternating) of 8 and
 * 1,024 bytes a rank (Alltoall's blocks 8 and 512 bytes), each call followed by GAP ns spun on the clock, GAP = 0, 50 and 200 (the
 * clock read of a spin takes tens of ns more), a Barrier before each loop. Rank 0 prints `gaps K
 * GAP NS` per size and gap, a round (its five calls and their gaps) in ns, the slower rank's
 * mean, and at the end `cores BEFORE AFTER`, a cache line's round trip between the two ranks'
 * cores (the run's placement). tracer/bench/gaps.sh compares it untraced with the replay of the
 * same program traced: `oc` is a call's cost beyond its messages, and one fitted to a loop
 * back to back must hold where programs compute between their collectives. Usage: mpirun -np
 * 2 gaps */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "line.h"

enum { ROUNDS = 2000 };

static void spin(int64_t ns) {
    if (ns <= 0) return;
    int64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    double before = line_ns();
    const int sizes[] = {8, 1024}, gaps[] = {0, 50, 200};
    double *x = malloc(1024 * (size_t)p), *y = malloc(1024 * (size_t)p);
    memset(x, 1, 1024 * (size_t)p);
    memset(y, 0, 1024 * (size_t)p);
    for (int s = 0; s < 2; s++) {
        int n = sizes[s] / 8, each = n / p > 0 ? n / p : 1;
        for (int g = 0; g < 3; g++) {
            MPI_Barrier(MPI_COMM_WORLD);
            int64_t start = now_ns();
            for (int i = 0; i < ROUNDS; i++) {
                int root = i % p;
                MPI_Bcast(x, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
                spin(gaps[g]);
                MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                spin(gaps[g]);
                MPI_Allgather(x, n, MPI_DOUBLE, y, n, MPI_DOUBLE, MPI_COMM_WORLD);
                spin(gaps[g]);
                MPI_Alltoall(x, each, MPI_DOUBLE, y, each, MPI_DOUBLE, MPI_COMM_WORLD);
                spin(gaps[g]);
                MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
                spin(gaps[g]);
            }
            double round = (double)(now_ns() - start) / ROUNDS, slower;
            MPI_Reduce(&round, &slower, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (me == 0) printf("gaps %d %d %.0f\n", sizes[s], gaps[g], slower);
        }
    }
    double after = line_ns();
    if (me == 0) printf("cores %.0f %.0f\n", before, after);
    free(x), free(y);
    MPI_Finalize();
    return 0;
}
