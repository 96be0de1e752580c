/* Every recorded point-to-point and completion routine, on 2 or 4 (any even number of) ranks
 * in a ring: blocking sends of every mode, nonblocking ones, wildcard receives with
 * MPI_STATUS(ES)_IGNORE, probes, matched probes (also on a communicator in reverse rank order
 * and on MPI_PROC_NULL), a cancelled receive, a freed request, MPI_PROC_NULL and a derived
 * datatype. */
#include "counts.h"

int main(int argc, char **argv)
{
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0);
    const MPI_Comm W = MPI_COMM_WORLD;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size, even = rank % 2 == 0;
    int a[64], b[64], flag, index, outcount, indices[4];
    MPI_Request r[4];
    MPI_Status st, sts[4];
    for (int i = 0; i < 64; i++) a[i] = rank * 100 + i;

    /* blocking modes, even ranks send first */
    for (int k = 0; k < 3; k++) {
        if (even) {
            C(MPI_Send)(a, 4, MPI_INT, right, 1, W);
            C(MPI_Recv)(b, 4, MPI_INT, left, 1, W, MPI_STATUS_IGNORE);
            C(MPI_Ssend)(a, 8, MPI_INT, right, 2, W);
            C(MPI_Recv)(b, 8, MPI_INT, left, 2, W, &st);
        } else {
            C(MPI_Recv)(b, 4, MPI_INT, left, 1, W, MPI_STATUS_IGNORE);
            C(MPI_Send)(a, 4, MPI_INT, right, 1, W);
            C(MPI_Recv)(b, 8, MPI_INT, left, 2, W, &st);
            C(MPI_Ssend)(a, 8, MPI_INT, right, 2, W);
        }
    }

    /* buffered sends */
    int bufsize = 4 * (64 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bsendbuf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bsendbuf, bufsize);
    C(MPI_Bsend)(a, 16, MPI_INT, right, 3, W);
    C(MPI_Recv)(b, 16, MPI_INT, MPI_ANY_SOURCE, 3, W, MPI_STATUS_IGNORE); /* wildcard source */
    C(MPI_Ibsend)(a, 5, MPI_INT, right, 3, W, &r[0]);
    C(MPI_Irecv)(b, 5, MPI_INT, left, MPI_ANY_TAG, W, &r[1]);
    C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
    MPI_Buffer_detach(&bsendbuf, &bufsize);
    free(bsendbuf);

    /* derived datatype: 4 blocks of 2 ints = 32 bytes */
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    C(MPI_Isend)(a, 1, vec, right, 4, W, &r[0]);
    C(MPI_Recv)(b, 8, MPI_INT, left, 4, W, &st);
    int got;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(got == 8);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    MPI_Type_free(&vec);

    /* ready sends: the receive is posted before the barrier */
    C(MPI_Irecv)(b, 3, MPI_INT, left, 5, W, &r[0]);
    C(MPI_Barrier)(W);
    C(MPI_Rsend)(a, 3, MPI_INT, right, 5, W);
    C(MPI_Wait)(&r[0], &st);
    C(MPI_Irecv)(b, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &r[0]);
    C(MPI_Barrier)(W);
    C(MPI_Irsend)(a, 3, MPI_INT, right, 6, W, &r[1]);
    do C(MPI_Testall)(2, r, &flag, MPI_STATUSES_IGNORE); while (!flag);

    /* Isend / Issend with wildcard Irecv, completed by Waitany, Waitsome, Test, Testany, Testsome */
    C(MPI_Irecv)(b, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &r[0]);
    C(MPI_Isend)(a, 2, MPI_INT, right, 7, W, &r[1]);
    for (int done = 0; done < 2; done++) {
        C(MPI_Waitany)(2, r, &index, MPI_STATUS_IGNORE);
        CHECK(index == 0 || index == 1);
    }
    C(MPI_Waitany)(2, r, &index, MPI_STATUS_IGNORE); /* all null: completes nothing */
    CHECK(index == MPI_UNDEFINED);

    C(MPI_Irecv)(b, 2, MPI_INT, left, 8, W, &r[0]);
    C(MPI_Issend)(a, 2, MPI_INT, right, 8, W, &r[1]);
    for (int done = 0; done < 2; done += outcount) {
        C(MPI_Waitsome)(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(outcount >= 1);
    }

    C(MPI_Irecv)(b, 2, MPI_INT, MPI_ANY_SOURCE, 9, W, &r[0]);
    C(MPI_Isend)(a, 2, MPI_INT, right, 9, W, &r[1]);
    do C(MPI_Test)(&r[1], &flag, MPI_STATUS_IGNORE); while (!flag);
    do C(MPI_Test)(&r[0], &flag, &st); while (!flag);
    CHECK(st.MPI_SOURCE == left);

    C(MPI_Irecv)(b, 2, MPI_INT, left, 10, W, &r[0]);
    C(MPI_Isend)(a, 2, MPI_INT, right, 10, W, &r[1]);
    for (int done = 0; done < 2;) {
        C(MPI_Testany)(2, r, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) done++;
    }

    C(MPI_Irecv)(b, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &r[0]);
    C(MPI_Isend)(a, 2, MPI_INT, right, 11, W, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    for (int done = 0; done < 2;) {
        C(MPI_Testsome)(3, r, &outcount, indices, sts);
        if (outcount != MPI_UNDEFINED) done += outcount;
    }

    /* sendrecv, plain and wildcard; sendrecv_replace */
    C(MPI_Sendrecv)(a, 6, MPI_INT, right, 12, b, 6, MPI_INT, left, 12, W, MPI_STATUS_IGNORE);
    C(MPI_Sendrecv)(a, 7, MPI_INT, right, 13, b, 7, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 13);
    C(MPI_Sendrecv_replace)(b, 9, MPI_INT, right, 14, MPI_ANY_SOURCE, 14, W, MPI_STATUS_IGNORE);

    /* probes */
    if (even) {
        C(MPI_Send)(a, 10, MPI_INT, right, 15, W);
        C(MPI_Probe)(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
        C(MPI_Recv)(b, 64, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, W, MPI_STATUS_IGNORE);
    } else {
        C(MPI_Probe)(MPI_ANY_SOURCE, MPI_ANY_TAG, W, MPI_STATUS_IGNORE);
        C(MPI_Recv)(b, 64, MPI_INT, left, 15, W, MPI_STATUS_IGNORE);
        C(MPI_Send)(a, 10, MPI_INT, right, 15, W);
    }
    C(MPI_Isend)(a, 11, MPI_INT, right, 16, W, &r[0]);
    do C(MPI_Iprobe)(MPI_ANY_SOURCE, 16, W, &flag, MPI_STATUS_IGNORE); while (!flag);
    C(MPI_Recv)(b, 11, MPI_INT, MPI_ANY_SOURCE, 16, W, MPI_STATUS_IGNORE);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);

    /* matched probes: Mprobe + Mrecv on the world; Improbe (polling) + Imrecv + Wait on a
     * communicator in reverse rank order, whose ranks are not world ranks; both on
     * MPI_PROC_NULL (MPI_MESSAGE_NO_PROC) */
    MPI_Message msg;
    C(MPI_Isend)(a, 13, MPI_INT, right, 20, W, &r[0]);
    C(MPI_Mprobe)(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &msg, &st);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 20);
    C(MPI_Mrecv)(b, 64, MPI_INT, &msg, MPI_STATUS_IGNORE);
    CHECK(msg == MPI_MESSAGE_NULL && b[0] == left * 100);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);

    MPI_Comm rev;
    C(MPI_Comm_split)(W, 0, size - rank, &rev); /* rank size-1-rank there */
    C(MPI_Isend)(a, 14, MPI_INT, (size - rank) % size, 21, rev, &r[0]); /* to world rank left */
    do C(MPI_Improbe)(MPI_ANY_SOURCE, 21, rev, &flag, &msg, MPI_STATUS_IGNORE); while (!flag);
    C(MPI_Imrecv)(b, 64, MPI_INT, &msg, &r[1]);
    C(MPI_Wait)(&r[1], &st);
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(st.MPI_SOURCE == size - 1 - right && st.MPI_TAG == 21 && got == 14);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Comm_free)(&rev);

    C(MPI_Mprobe)(MPI_PROC_NULL, 22, W, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    C(MPI_Mrecv)(b, 1, MPI_INT, &msg, &st);
    C(MPI_Improbe)(MPI_PROC_NULL, 22, W, &flag, &msg, MPI_STATUS_IGNORE);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC);
    C(MPI_Imrecv)(b, 1, MPI_INT, &msg, &r[0]);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);

    /* a receive that is never matched, cancelled */
    C(MPI_Irecv)(b, 1, MPI_INT, left, 999, W, &r[0]);
    C(MPI_Cancel)(&r[0]);
    C(MPI_Wait)(&r[0], &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag);

    /* a send request freed while active: the message still arrives */
    C(MPI_Isend)(a, 12, MPI_INT, right, 19, W, &r[0]);
    C(MPI_Request_free)(&r[0]);
    C(MPI_Recv)(b, 12, MPI_INT, left, 19, W, MPI_STATUS_IGNORE);

    /* MPI_PROC_NULL peers */
    C(MPI_Send)(a, 1, MPI_INT, MPI_PROC_NULL, 17, W);
    C(MPI_Recv)(b, 1, MPI_INT, MPI_PROC_NULL, 17, W, MPI_STATUS_IGNORE);

    /* wildcard fan-in to rank 0, statuses ignored */
    if (rank == 0)
        for (int i = 1; i < size; i++)
            C(MPI_Recv)(b, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, MPI_STATUS_IGNORE);
    else
        C(MPI_Send)(a, rank, MPI_INT, 0, 100 + rank, W);

    /* a Waitall with a null request and a wildcard receive, statuses ignored */
    r[0] = MPI_REQUEST_NULL;
    C(MPI_Irecv)(b, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &r[1]);
    C(MPI_Isend)(a, 4, MPI_INT, right, 18, W, &r[2]);
    C(MPI_Waitall)(3, r, MPI_STATUSES_IGNORE);

    return finish();
}
