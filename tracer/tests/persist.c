/* Persistent point-to-point requests on 2 or 4 (any even number of) ranks in a ring: every
 * *_init routine; MPI_Start and MPI_Startall, each start counted as the nonblocking routine
 * the tracer records it as (the *_init calls are not recorded); started requests completed by
 * every kind of completion call, also again and again on one handle; a wildcard receive;
 * MPI_PROC_NULL; an active request freed; handles freed and made again with other arguments;
 * a communicator of MPI_Comm_create_group (a subset, and the world in reverse order). */
#include "counts.h"

/* start persistent request r, counted as the routine its start is recorded as */
static void start(MPI_Request *r, const char *as)
{
    bump(as);
    MPI_Start(r);
}

static void startall(int n, MPI_Request r[], const char *const as[])
{
    for (int i = 0; i < n; i++) bump(as[i]);
    MPI_Startall(n, r);
}

enum { BIG = 20000 }; /* ints: beyond every eager limit */
static int big_a[BIG], big_b[BIG];

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0);
    const MPI_Comm W = MPI_COMM_WORLD;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const char *const recv_send[] = { "MPI_Irecv", "MPI_Isend" };
    int a[64], b[64], flag, index, outcount, indices[2];
    MPI_Request r[2];
    MPI_Status st, sts[2];
    for (int i = 0; i < 64; i++) a[i] = rank * 100 + i;

    /* one pair of handles started 5 times with MPI_Start, then 3 times with MPI_Startall */
    MPI_Send_init(a, 8, MPI_INT, right, 1, W, &r[1]);
    MPI_Recv_init(b, 8, MPI_INT, left, 1, W, &r[0]);
    for (int k = 0; k < 5; k++) {
        start(&r[0], "MPI_Irecv");
        start(&r[1], "MPI_Isend");
        C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
        CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL && b[0] == left * 100);
    }
    for (int k = 0; k < 3; k++) {
        startall(2, r, recv_send);
        if (k == 0) {
            C(MPI_Wait)(&r[1], MPI_STATUS_IGNORE);
            C(MPI_Wait)(&r[0], &st);
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 1);
        } else if (k == 1) {
            for (int done = 0; done < 2; done++) C(MPI_Waitany)(2, r, &index, MPI_STATUS_IGNORE);
        } else {
            do C(MPI_Testsome)(2, r, &outcount, indices, sts); while (outcount == 0);
            if (outcount == 1) C(MPI_Waitsome)(2, r, &outcount, indices, sts);
        }
    }
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE); /* inactive: completes nothing */
    MPI_Request_free(&r[0]);               /* inactive: not recorded */
    MPI_Request_free(&r[1]);

    /* synchronous sends of a large message into a wildcard receive, polled with MPI_Test */
    MPI_Ssend_init(big_a, BIG, MPI_INT, right, 2, W, &r[1]);
    MPI_Recv_init(big_b, BIG, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &r[0]);
    for (int k = 0; k < 3; k++) {
        start(&r[0], "MPI_Irecv");
        start(&r[1], "MPI_Issend");
        do C(MPI_Test)(&r[0], &flag, &st); while (!flag);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 2);
        C(MPI_Wait)(&r[1], MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    /* buffered sends, started together with their receives */
    int bufsize = 4 * (64 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bsendbuf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bsendbuf, bufsize);
    MPI_Bsend_init(a, 16, MPI_INT, right, 3, W, &r[1]);
    MPI_Recv_init(b, 16, MPI_INT, left, 3, W, &r[0]);
    const char *const recv_bsend[] = { "MPI_Irecv", "MPI_Ibsend" };
    for (int k = 0; k < 2; k++) {
        startall(2, r, recv_bsend);
        do C(MPI_Testall)(2, r, &flag, MPI_STATUSES_IGNORE); while (!flag);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Buffer_detach(&bsendbuf, &bufsize);
    free(bsendbuf);

    /* ready sends: the receive is started before the barrier */
    MPI_Recv_init(b, 3, MPI_INT, left, 5, W, &r[0]);
    MPI_Rsend_init(a, 3, MPI_INT, right, 5, W, &r[1]);
    for (int k = 0; k < 2; k++) {
        start(&r[0], "MPI_Irecv");
        C(MPI_Barrier)(W);
        start(&r[1], "MPI_Irsend");
        /* until it says that no request is active any more */
        do C(MPI_Testany)(2, r, &index, &flag, MPI_STATUS_IGNORE);
        while (!flag || index != MPI_UNDEFINED);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    /* MPI_PROC_NULL */
    MPI_Send_init(a, 4, MPI_INT, MPI_PROC_NULL, 6, W, &r[1]);
    MPI_Recv_init(b, 4, MPI_INT, MPI_PROC_NULL, 6, W, &r[0]);
    startall(2, r, recv_send);
    C(MPI_Waitall)(2, r, sts); /* (MPICH 4.0 leaves the receive's status at source 0) */
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    /* an active send freed (recorded as MPI_Request_free of the started send) */
    MPI_Send_init(a, 2, MPI_INT, right, 7, W, &r[1]);
    start(&r[1], "MPI_Isend");
    C(MPI_Request_free)(&r[1]);
    C(MPI_Recv)(b, 2, MPI_INT, left, 7, W, MPI_STATUS_IGNORE);

    /* handles freed and made again (the library may give the same values back) with other
     * sizes and tags: each start must carry its own handle's arguments */
    for (int k = 0; k < 4; k++) {
        MPI_Send_init(a, 1 + k, MPI_INT, right, 10 + k, W, &r[1]);
        MPI_Recv_init(b, 1 + k, MPI_INT, left, 10 + k, W, &r[0]);
        startall(2, r, recv_send);
        C(MPI_Waitall)(2, r, sts);
        int got;
        MPI_Get_count(&sts[0], MPI_INT, &got);
        CHECK(got == 1 + k && sts[0].MPI_TAG == 10 + k);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }

    /* MPI_Comm_create_group (not recorded, but its communicators are known): the world in
     * reverse order, a ring on it; then the even ranks alone, each sending to the next */
    MPI_Group world, group;
    MPI_Comm_group(W, &world);
    int *ranks = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) ranks[i] = size - 1 - i;
    MPI_Group_incl(world, size, ranks, &group);
    MPI_Comm rev;
    MPI_Comm_create_group(W, group, 77, &rev);
    MPI_Group_free(&group);
    int rr;
    MPI_Comm_rank(rev, &rr);
    CHECK(rr == size - 1 - rank);
    MPI_Send_init(a, 6, MPI_INT, (rr + 1) % size, 8, rev, &r[1]);
    MPI_Recv_init(b, 6, MPI_INT, (rr + size - 1) % size, 8, rev, &r[0]);
    for (int k = 0; k < 2; k++) {
        startall(2, r, recv_send);
        C(MPI_Waitall)(2, r, sts);
        CHECK(sts[0].MPI_SOURCE == (rr + size - 1) % size && b[0] == (rank + 1) % size * 100);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    C(MPI_Barrier)(rev);
    C(MPI_Comm_free)(&rev);

    if (rank % 2 == 0) {
        int n = 0;
        for (int i = 0; i < size; i += 2) ranks[n++] = i;
        MPI_Group_incl(world, n, ranks, &group);
        MPI_Comm evens;
        MPI_Comm_create_group(W, group, 78, &evens);
        MPI_Group_free(&group);
        int er;
        MPI_Comm_rank(evens, &er);
        MPI_Send_init(a, 5, MPI_INT, (er + 1) % n, 9, evens, &r[1]);
        MPI_Recv_init(b, 5, MPI_INT, MPI_ANY_SOURCE, 9, evens, &r[0]);
        startall(2, r, recv_send);
        C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        C(MPI_Comm_free)(&evens);
    }
    MPI_Group_free(&world);
    free(ranks);
    return finish();
}
