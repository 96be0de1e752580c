/* MPI_THREAD_MULTIPLE. THREADS=serial (the default): MPI is called from two threads, one at
 * a time (a request made by one thread is completed by the other), and from an attribute's
 * delete function inside MPI_Comm_free (a call inside a call of the same thread, which the
 * tracer passes through unrecorded, so it is not counted here): all traced, the trace loads.
 * THREADS=concurrent: on rank 0 a second thread sends while the first one is blocked in
 * MPI_Recv: rank 0 stops recording with a message; the trace loads as an unfinished one.
 * Two ranks. */
#include "counts.h"

#include <pthread.h>
#include <unistd.h>

static int rank, other, a[4], b[4];
static MPI_Request r[2];
static MPI_Comm inner;
static volatile int receiving;

static void *complete_requests(void *arg)
{
    (void)arg;
    C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
    C(MPI_Barrier)(MPI_COMM_WORLD);
    return NULL;
}

static int free_inner(MPI_Comm comm, int key, void *value, void *state)
{
    (void)comm, (void)key, (void)value, (void)state;
    return MPI_Comm_free(&inner); /* not counted: inside the MPI_Comm_free of its owner */
}

static void *receive(void *arg)
{
    (void)arg;
    receiving = 1;
    C(MPI_Recv)(b, 1, MPI_INT, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size, x = 1;
    pthread_t t;
    C(MPI_Init_thread)(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    other = 1 - rank;
    const char *mode = getenv("THREADS");
    if (!mode || strcmp(mode, "concurrent") != 0) {
        C(MPI_Allreduce)(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        C(MPI_Irecv)(b, 4, MPI_INT, other, 0, MPI_COMM_WORLD, &r[0]);
        C(MPI_Isend)(a, 4, MPI_INT, other, 0, MPI_COMM_WORLD, &r[1]);
        pthread_create(&t, NULL, complete_requests, NULL);
        pthread_join(t, NULL);
        MPI_Comm outer;
        int key;
        C(MPI_Comm_dup)(MPI_COMM_WORLD, &outer);
        C(MPI_Comm_dup)(MPI_COMM_WORLD, &inner);
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_inner, &key, NULL);
        MPI_Comm_set_attr(outer, key, NULL);
        C(MPI_Comm_free)(&outer);
        CHECK(inner == MPI_COMM_NULL);
        MPI_Comm_free_keyval(&key);
        C(MPI_Allreduce)(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else {
        C(MPI_Barrier)(MPI_COMM_WORLD);
        if (rank == 0) {
            pthread_create(&t, NULL, receive, NULL);
            while (!receiving) usleep(1000);
            usleep(200000); /* the other thread is inside MPI_Recv by now */
            C(MPI_Send)(a, 1, MPI_INT, other, 2, MPI_COMM_WORLD);
            pthread_join(t, NULL);
        } else {
            C(MPI_Recv)(b, 1, MPI_INT, other, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            C(MPI_Send)(a, 1, MPI_INT, other, 1, MPI_COMM_WORLD);
        }
        C(MPI_Barrier)(MPI_COMM_WORLD);
    }
    if (rank == 0) printf("PROVIDED %s\n", provided == MPI_THREAD_MULTIPLE ? "multiple" : "less");
    return finish();
}
