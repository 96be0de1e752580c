/* Request identity: patterns in which Open MPI and MPICH return one shared handle value for
 * several live requests (small sends that complete at once, operations on MPI_PROC_NULL), a
 * freed request, and one never completed. Every request must keep its own id, so the trace
 * loads with every request completed once. REQUESTS=NAME runs one pattern (waitall, self,
 * procnull, free, testany, unwaited); unset, all but unwaited. Any even number of ranks: even
 * ranks pair with the next odd one. */
#include "counts.h"

static int rank, partner;
static const MPI_Comm W = MPI_COMM_WORLD;

/* two small Isends completed by one Waitall */
static void waitall(void)
{
    int a[2] = { rank, rank }, b[2];
    MPI_Request r[2];
    C(MPI_Isend)(&a[0], 1, MPI_INT, partner, 1, W, &r[0]);
    C(MPI_Isend)(&a[1], 1, MPI_INT, partner, 2, W, &r[1]);
    C(MPI_Recv)(&b[0], 1, MPI_INT, partner, 1, W, MPI_STATUS_IGNORE);
    C(MPI_Recv)(&b[1], 1, MPI_INT, partner, 2, W, MPI_STATUS_IGNORE);
    C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
    CHECK(b[0] == partner && b[1] == partner);
}

/* two Isends to self with matching Irecvs: receives posted first, then sends first */
static void self(void)
{
    int a[2] = { 10, 11 }, b[2] = { 0, 0 };
    MPI_Request r[4];
    C(MPI_Irecv)(&b[0], 1, MPI_INT, rank, 3, W, &r[0]);
    C(MPI_Irecv)(&b[1], 1, MPI_INT, rank, 4, W, &r[1]);
    C(MPI_Isend)(&a[0], 1, MPI_INT, rank, 3, W, &r[2]);
    C(MPI_Isend)(&a[1], 1, MPI_INT, rank, 4, W, &r[3]);
    C(MPI_Waitall)(4, r, MPI_STATUSES_IGNORE);
    CHECK(b[0] == 10 && b[1] == 11);
    C(MPI_Isend)(&a[0], 1, MPI_INT, rank, 5, W, &r[0]);
    C(MPI_Isend)(&a[1], 1, MPI_INT, rank, 6, W, &r[1]);
    C(MPI_Irecv)(&b[1], 1, MPI_INT, rank, 6, W, &r[2]);
    C(MPI_Irecv)(&b[0], 1, MPI_INT, rank, 5, W, &r[3]);
    C(MPI_Waitall)(4, r, MPI_STATUSES_IGNORE);
}

/* an Isend and an Irecv on MPI_PROC_NULL: waited one by one in the reverse order, then
 * together; a small real Isend between them */
static void procnull(void)
{
    int a = rank, b = -1, c = -1;
    MPI_Request r[3];
    MPI_Status st;
    C(MPI_Isend)(&a, 1, MPI_INT, MPI_PROC_NULL, 7, W, &r[0]);
    C(MPI_Irecv)(&b, 1, MPI_INT, MPI_PROC_NULL, 7, W, &r[1]);
    C(MPI_Wait)(&r[1], &st);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Irecv)(&b, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, W, &r[0]);
    C(MPI_Isend)(&a, 1, MPI_INT, partner, 8, W, &r[1]);
    C(MPI_Isend)(&a, 1, MPI_INT, MPI_PROC_NULL, 8, W, &r[2]);
    C(MPI_Recv)(&c, 1, MPI_INT, partner, 8, W, MPI_STATUS_IGNORE);
    C(MPI_Waitall)(3, r, MPI_STATUSES_IGNORE);
    CHECK(c == partner && b == -1);
}

/* active Isends freed with MPI_Request_free: a large one (pending until the partner receives
 * it) and a small one; the partner receives both */
static void free_requests(void)
{
    enum { BIG = 1 << 18 };
    int *big = calloc(BIG, sizeof(int)), small = rank;
    MPI_Request r;
    CHECK(big != NULL);
    if (rank % 2 == 0) {
        big[BIG - 1] = 42;
        C(MPI_Isend)(big, BIG, MPI_INT, partner, 9, W, &r);
        C(MPI_Request_free)(&r);
        CHECK(r == MPI_REQUEST_NULL);
        C(MPI_Isend)(&small, 1, MPI_INT, partner, 10, W, &r);
        C(MPI_Request_free)(&r);
    } else {
        C(MPI_Recv)(big, BIG, MPI_INT, partner, 9, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(&small, 1, MPI_INT, partner, 10, W, MPI_STATUS_IGNORE);
        CHECK(big[BIG - 1] == 42 && small == partner);
    }
    C(MPI_Barrier)(W); /* the sender may reuse its buffers once the partner has them */
    free(big);
}

/* a loop of small Isends, polled with MPI_Testany after every other one (a Testany completes
 * one at most, so live requests pile up) and then to the end */
static void testany(void)
{
    enum { N = 16 };
    int a[N], b, index, flag, done = 0;
    MPI_Request r[N];
    for (int k = 0; k < N; k++) {
        a[k] = k;
        C(MPI_Isend)(&a[k], 1, MPI_INT, partner, 11, W, &r[k]);
        if (k % 2 == 0) continue;
        C(MPI_Testany)(k + 1, r, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) done++;
    }
    for (int k = 0; k < N; k++) {
        C(MPI_Recv)(&b, 1, MPI_INT, partner, 11, W, MPI_STATUS_IGNORE);
        CHECK(b == k);
    }
    while (done < N) {
        C(MPI_Testany)(N, r, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) done++;
    }
    C(MPI_Testany)(N, r, &index, &flag, MPI_STATUS_IGNORE); /* all null now */
    CHECK(flag && index == MPI_UNDEFINED);
}

/* an Isend nobody waits for before MPI_Finalize (legal once the message is received) */
static void unwaited(void)
{
    int a = rank, b;
    MPI_Request r;
    C(MPI_Isend)(&a, 1, MPI_INT, partner, 12, W, &r);
    C(MPI_Recv)(&b, 1, MPI_INT, partner, 12, W, MPI_STATUS_IGNORE);
    C(MPI_Barrier)(W);
}

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int size;
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &size);
    CHECK(size % 2 == 0);
    partner = rank ^ 1;
    static const struct { const char *name; void (*run)(void); int in_all; } patterns[] = {
        { "waitall", waitall, 1 }, { "self", self, 1 }, { "procnull", procnull, 1 },
        { "free", free_requests, 1 }, { "testany", testany, 1 }, { "unwaited", unwaited, 0 },
    };
    const char *which = getenv("REQUESTS");
    int ran = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (which && *which ? strcmp(which, patterns[i].name) == 0 : patterns[i].in_all) {
            patterns[i].run();
            ran++;
        }
    CHECK(ran > 0);
    return finish();
}
