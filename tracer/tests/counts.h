/* Test helper: each test program counts its own MPI calls, C(MPI_Send)(...), and rank 0
 * prints the job-wide totals as one JSON line "COUNTS {...}" (summed with PMPI_Reduce, which
 * the tracer does not see). finish() counts MPI_Finalize, prints and finalizes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *counted_names[] = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize",
    "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend",
    "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend",
    "MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace",
    "MPI_Probe", "MPI_Iprobe", "MPI_Cancel", "MPI_Request_free",
    "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv",
    "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
    "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome",
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
    "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
    "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
    "MPI_Comm_dup", "MPI_Comm_split", "MPI_Comm_create", "MPI_Comm_free",
    "MPI_Alltoallw", "MPI_Comm_idup",
    "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce",
    "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv",
    "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw",
    "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan",
    /* end of the routines the Fortran tests call (run.sh's Fortran coverage list ends here) */
    "MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared", "MPI_Win_create_dynamic",
    "MPI_Win_free", "MPI_Win_fence", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all",
    "MPI_Win_unlock_all", "MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_flush_local",
    "MPI_Win_sync", "MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait",
    "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
    "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall",
    "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw",
};
#define N_COUNTED ((int)(sizeof counted_names / sizeof counted_names[0]))
static long counted[N_COUNTED];

static void bump(const char *name)
{
    for (int i = 0; i < N_COUNTED; i++)
        if (strcmp(counted_names[i], name) == 0) {
            counted[i]++;
            return;
        }
    fprintf(stderr, "counts.h: unknown routine %s\n", name);
    exit(2);
}

/* C(MPI_Send)(buf, ...) counts one MPI_Send and calls it */
#define C(fn) (bump(#fn), fn)

/* AS("MPI_Isend", MPI_Start)(&req) counts the call under the routine it is recorded as (a
 * persistent request's start as the nonblocking operation it begins) and calls it */
#define AS(name, fn) (bump(name), fn)

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            PMPI_Abort(MPI_COMM_WORLD, 3);                                         \
        }                                                                          \
    } while (0)

static void print_counts(void)
{
    long total[N_COUNTED];
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(counted, total, N_COUNTED, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    printf("COUNTS {");
    const char *sep = "";
    for (int i = 0; i < N_COUNTED; i++)
        if (total[i]) {
            printf("%s\"%s\": %ld", sep, counted_names[i], total[i]);
            sep = ", ";
        }
    printf("}\n");
    fflush(stdout);
}

static int finish(void)
{
    bump("MPI_Finalize");
    print_counts();
    MPI_Finalize();
    return 0;
}
