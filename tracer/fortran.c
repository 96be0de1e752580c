/*
 * Fortran entry points for Open MPI, compiled into libloggps-trace.so with loggps_trace.c.
 *
 * Why: Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) call the C library's
 * PMPI_ routines directly, below the MPI_ routines the tracer defines, so a Fortran program
 * would run untraced. MPICH's bindings call the MPI_ routines, which the tracer sees already:
 * there this file compiles to nothing (no call is recorded twice).
 *
 * How: for every routine the tracer wraps (routines.tsv), a function with Open MPI's Fortran
 * calling convention converts the Fortran handles, sentinels, LOGICALs and indices to C, calls
 * the tracer's C MPI_ routine (which records and calls PMPI_), and writes the outputs and ierr
 * back. Most are generated from the table's C parameters (fortran_wrappers.c, by wrappers.awk,
 * included at the end); those written here hold LOGICALs, arrays of handles or indices. Each
 * function is defined under every name a Fortran program ends up calling:
 *
 *   mpi_send_, mpi_send__, mpi_send, MPI_SEND   mpif.h and `use mpi` (gfortran calls mpi_send_;
 *                                               the others are other compilers' manglings, all
 *                                               four exported by libmpi_mpifh too)
 *   ompi_send_f                                 what `use mpi_f08` calls: libmpi_usempif08's
 *                                               mpi_send_f08_ calls ompi_send_f of libmpi_mpifh
 *   mpi_test_f08_                               the eleven routines whose mpi_f08 version calls
 *                                               pmpi_test_ & co. instead (LOGICAL arguments);
 *                                               their f08 arguments have the mpif.h layout
 *                                               (TYPE(MPI_Comm) etc. hold one INTEGER)
 *
 * Preloaded, or linked before the MPI libraries, these definitions come first. Tested with
 * Open MPI 4.1 and gfortran.
 */
#include <mpi.h>

#ifdef OPEN_MPI
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Statuses are passed through as they are: Open MPI's Fortran status (MPI_STATUS_SIZE
 * INTEGERs, or mpi_f08's bind(C) TYPE(MPI_Status)) has the layout of a C MPI_Status, and Open
 * MPI's own Fortran wrappers cast it the same way. Arrays of counts and displacements too. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is not a C int");
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status is not INTEGERs");

#define F_TRUE 1 /* .TRUE. of gfortran (Open MPI's OMPI_FORTRAN_VALUE_TRUE) */

/* Fortran's MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, ... are common blocks: a program
 * passes their address, which Open MPI's wrappers compare with the four names a Fortran
 * compiler may give the block (ompi/mpi/fortran/base/constants.h). Weak: a library need not
 * define all four (Debian's has only mpi_fortran_bottom_ & co.); an absent one is NULL. */
#define SENTINEL(lo, UP)                                                                        \
    extern char lo __attribute__((weak)), lo##_ __attribute__((weak)),                          \
        lo##__ __attribute__((weak)), UP __attribute__((weak));                                 \
    static int is_##lo(const void *p)                                                           \
    {                                                                                           \
        return p && (p == &lo || p == &lo##_ || p == &lo##__ || p == &UP);                      \
    }
SENTINEL(mpi_fortran_bottom, MPI_FORTRAN_BOTTOM)
SENTINEL(mpi_fortran_in_place, MPI_FORTRAN_IN_PLACE)
SENTINEL(mpi_fortran_status_ignore, MPI_FORTRAN_STATUS_IGNORE)
SENTINEL(mpi_fortran_statuses_ignore, MPI_FORTRAN_STATUSES_IGNORE)
SENTINEL(mpi_fortran_unweighted, MPI_FORTRAN_UNWEIGHTED)
SENTINEL(mpi_fortran_weights_empty, MPI_FORTRAN_WEIGHTS_EMPTY)

static void *fbuf(void *p)
{
    return is_mpi_fortran_bottom(p) ? MPI_BOTTOM : is_mpi_fortran_in_place(p) ? MPI_IN_PLACE : p;
}

static MPI_Status *fstatus(MPI_Fint *s)
{
    return is_mpi_fortran_status_ignore(s) ? MPI_STATUS_IGNORE : (MPI_Status *)s;
}

static MPI_Status *fstatuses(MPI_Fint *s)
{
    return is_mpi_fortran_statuses_ignore(s) ? MPI_STATUSES_IGNORE : (MPI_Status *)s;
}

static const int *fweights(MPI_Fint *w)
{
    return is_mpi_fortran_unweighted(w) ? MPI_UNWEIGHTED
         : is_mpi_fortran_weights_empty(w) ? MPI_WEIGHTS_EMPTY : w;
}

#define COMM(f) MPI_Comm_f2c(*(f))
#define TYPE(f) MPI_Type_f2c(*(f))
#define OP(f) MPI_Op_f2c(*(f))
#define WIN(f) MPI_Win_f2c(*(f))

/* ierr is NULL where mpi_f08's optional ierror is absent */
static void set(MPI_Fint *ierr, int rc)
{
    if (ierr) *ierr = rc;
}

/* A routine that makes a communicator or a request: its handle goes back on success. */
static void made_comm(int rc, const MPI_Comm *c, MPI_Fint *f, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS) *f = MPI_Comm_c2f(*c);
    set(ierr, rc);
}

static void made_request(int rc, const MPI_Request *r, MPI_Fint *f, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS) *f = MPI_Request_c2f(*r);
    set(ierr, rc);
}

static void made_win(int rc, const MPI_Win *w, MPI_Fint *f, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS) *f = MPI_Win_c2f(*w);
    set(ierr, rc);
}

/* A matched probe's message goes back, and a matched receive's (now MPI_MESSAGE_NULL) */
static void made_message(int rc, const MPI_Message *m, MPI_Fint *f, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS) *f = MPI_Message_c2f(*m);
    set(ierr, rc);
}

/* Arrays converted for a call (requests are pointers in C): on the stack when they are small,
 * else malloc'd. Not a static buffer: under MPI_THREAD_MULTIPLE several threads may be in
 * these wrappers at once. */
enum { N_LOCAL = 64 };

static void *space(int n, size_t size, void *local)
{
    if (n <= N_LOCAL) return local;
    void *p = malloc((size_t)n * size);
    if (!p) abort();
    return p;
}

static MPI_Request *requests_in(int n, const MPI_Fint *f, MPI_Request *local)
{
    MPI_Request *r = space(n, sizeof *r, local);
    for (int i = 0; i < n; i++) r[i] = MPI_Request_f2c(f[i]);
    return r;
}

/* Completed requests became MPI_REQUEST_NULL (also under MPI_ERR_IN_STATUS): write back */
static void requests_out(int rc, int n, MPI_Request *r, MPI_Fint *f, MPI_Request *local)
{
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        for (int i = 0; i < n; i++) f[i] = MPI_Request_c2f(r[i]);
    if (r != local) free(r);
}

static MPI_Datatype *types_in(int n, const MPI_Fint *f, MPI_Datatype *local)
{
    MPI_Datatype *t = space(n, sizeof *t, local);
    for (int i = 0; i < n; i++) t[i] = MPI_Type_f2c(f[i]);
    return t;
}

static void types_free(MPI_Datatype *t, MPI_Datatype *local)
{
    if (t != local) free(t);
}

/* The n datatypes of f as an array that outlives the call, for Ialltoallw: Open MPI reads the
 * arrays again when the operation completes (to release derived datatypes). Each distinct
 * array is kept to the end of the program, and given again when the same one comes back
 * (programs pass few distinct ones). */
static const MPI_Datatype *types_kept(int n, const MPI_Fint *f)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct kept { struct kept *next; int n; MPI_Datatype t[]; } *all;
    MPI_Datatype local[N_LOCAL], *t = types_in(n, f, local);
    size_t bytes = (size_t)(n > 0 ? n : 0) * sizeof *t;
    pthread_mutex_lock(&lock);
    struct kept *k = all;
    while (k && (k->n != n || memcmp(k->t, t, bytes) != 0)) k = k->next;
    if (!k) {
        if (!(k = malloc(sizeof *k + bytes))) abort();
        k->n = n;
        memcpy(k->t, t, bytes);
        k->next = all;
        all = k;
    }
    pthread_mutex_unlock(&lock);
    types_free(t, local);
    return k->t;
}

/* The length of Alltoallw's datatype arrays: the size of the (remote) group */
static int peers(MPI_Comm c)
{
    int inter = 0, n = 0;
    MPI_Comm_test_inter(c, &inter);
    if (inter) MPI_Comm_remote_size(c, &n);
    else MPI_Comm_size(c, &n);
    return n;
}

static int *logicals_in(int n, const MPI_Fint *f, int *local)
{
    int *v = space(n, sizeof *v, local);
    for (int i = 0; i < n; i++) v[i] = f[i] != 0;
    return v;
}

/* The n indices of Waitany & co.: C counts from 0, Fortran from 1; MPI_UNDEFINED stays */
static void indices_out(int rc, int n, MPI_Fint *indices)
{
    if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || n == MPI_UNDEFINED) return;
    for (int i = 0; i < n; i++)
        if (indices[i] != MPI_UNDEFINED) indices[i]++;
}

/* The names of one routine (see the top of the file), aliases of ompi_<name>_f */
#define ALIAS(lo) __attribute__((alias("ompi_" #lo "_f")))
#define NAMES(lo, UP)                                                                           \
    extern __typeof__(ompi_##lo##_f) mpi_##lo##_ ALIAS(lo), mpi_##lo##__ ALIAS(lo),              \
        mpi_##lo ALIAS(lo), MPI_##UP ALIAS(lo);
#define F08_NAME(lo) extern __typeof__(ompi_##lo##_f) mpi_##lo##_f08_ ALIAS(lo);

/* ------------------------------------------------------------------------------------------ */
/* Environment                                                                                 */
/* ------------------------------------------------------------------------------------------ */

void ompi_init_f(MPI_Fint *ierr)
{
    set(ierr, MPI_Init(NULL, NULL));
}
NAMES(init, INIT)

void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    set(ierr, MPI_Init_thread(NULL, NULL, *required, provided));
}
NAMES(init_thread, INIT_THREAD)

void ompi_finalize_f(MPI_Fint *ierr)
{
    set(ierr, MPI_Finalize());
}
NAMES(finalize, FINALIZE)

/* ------------------------------------------------------------------------------------------ */
/* Point to point                                                                              */
/* ------------------------------------------------------------------------------------------ */

void ompi_iprobe_f(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
                   MPI_Fint *status, MPI_Fint *ierr)
{
    int f = 0;
    set(ierr, MPI_Iprobe(*source, *tag, COMM(comm), &f, fstatus(status)));
    *flag = f ? F_TRUE : 0;
}
NAMES(iprobe, IPROBE)
F08_NAME(iprobe)

void ompi_mprobe_f(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message,
                   MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Message m;
    made_message(MPI_Mprobe(*source, *tag, COMM(comm), &m, fstatus(status)), &m, message, ierr);
}
NAMES(mprobe, MPROBE)

/* the message is set only when one was found */
void ompi_improbe_f(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
                    MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Message m;
    int f = 0, rc = MPI_Improbe(*source, *tag, COMM(comm), &f, &m, fstatus(status));
    if (f) made_message(rc, &m, message, ierr);
    else set(ierr, rc);
    *flag = f ? F_TRUE : 0;
}
NAMES(improbe, IMPROBE)
F08_NAME(improbe)

void ompi_mrecv_f(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message,
                  MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Message m = MPI_Message_f2c(*message);
    made_message(MPI_Mrecv(fbuf(buf), *count, TYPE(type), &m, fstatus(status)), &m, message,
                 ierr);
}
NAMES(mrecv, MRECV)

void ompi_imrecv_f(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message,
                   MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Message m = MPI_Message_f2c(*message);
    MPI_Request r;
    int rc = MPI_Imrecv(fbuf(buf), *count, TYPE(type), &m, &r);
    made_message(rc, &m, message, NULL);
    made_request(rc, &r, req, ierr);
}
NAMES(imrecv, IMRECV)

void ompi_cancel_f(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    set(ierr, MPI_Cancel(&r));
}
NAMES(cancel, CANCEL)

void ompi_request_free_f(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    made_request(MPI_Request_free(&r), &r, req, ierr);
}
NAMES(request_free, REQUEST_FREE)

/* A start may give the request another C handle (Open MPI's start_f writes it back too) */
void ompi_start_f(MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    made_request(MPI_Start(&r), &r, req, ierr);
}
NAMES(start, START)

void ompi_startall_f(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*count, reqs, local);
    int rc = MPI_Startall(*count, r);
    requests_out(rc, *count, r, reqs, local);
    set(ierr, rc);
}
NAMES(startall, STARTALL)

/* ------------------------------------------------------------------------------------------ */
/* Completion                                                                                  */
/* ------------------------------------------------------------------------------------------ */

void ompi_wait_f(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    made_request(MPI_Wait(&r, fstatus(status)), &r, req, ierr);
}
NAMES(wait, WAIT)

void ompi_test_f(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    int f = 0;
    made_request(MPI_Test(&r, &f, fstatus(status)), &r, req, ierr);
    *flag = f ? F_TRUE : 0;
}
NAMES(test, TEST)
F08_NAME(test)

void ompi_waitall_f(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*count, reqs, local);
    int rc = MPI_Waitall(*count, r, fstatuses(statuses));
    requests_out(rc, *count, r, reqs, local);
    set(ierr, rc);
}
NAMES(waitall, WAITALL)

void ompi_testall_f(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *statuses,
                    MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*count, reqs, local);
    int f = 0, rc = MPI_Testall(*count, r, &f, fstatuses(statuses));
    requests_out(rc, *count, r, reqs, local);
    *flag = f ? F_TRUE : 0;
    set(ierr, rc);
}
NAMES(testall, TESTALL)
F08_NAME(testall)

void ompi_waitany_f(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status,
                    MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*count, reqs, local);
    int rc = MPI_Waitany(*count, r, index, fstatus(status));
    requests_out(rc, *count, r, reqs, local);
    indices_out(rc, 1, index);
    set(ierr, rc);
}
NAMES(waitany, WAITANY)

void ompi_testany_f(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
                    MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*count, reqs, local);
    int f = 0, rc = MPI_Testany(*count, r, index, &f, fstatus(status));
    requests_out(rc, *count, r, reqs, local);
    indices_out(rc, 1, index);
    *flag = f ? F_TRUE : 0;
    set(ierr, rc);
}
NAMES(testany, TESTANY)
F08_NAME(testany)

void ompi_waitsome_f(MPI_Fint *incount, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                     MPI_Fint *statuses, MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*incount, reqs, local);
    int rc = MPI_Waitsome(*incount, r, outcount, indices, fstatuses(statuses));
    requests_out(rc, *incount, r, reqs, local);
    indices_out(rc, *outcount, indices);
    set(ierr, rc);
}
NAMES(waitsome, WAITSOME)

void ompi_testsome_f(MPI_Fint *incount, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                     MPI_Fint *statuses, MPI_Fint *ierr)
{
    MPI_Request local[N_LOCAL], *r = requests_in(*incount, reqs, local);
    int rc = MPI_Testsome(*incount, r, outcount, indices, fstatuses(statuses));
    requests_out(rc, *incount, r, reqs, local);
    indices_out(rc, *outcount, indices);
    set(ierr, rc);
}
NAMES(testsome, TESTSOME)
F08_NAME(testsome)

/* ------------------------------------------------------------------------------------------ */
/* Collectives with arrays of datatypes                                                        */
/* ------------------------------------------------------------------------------------------ */

/* datatype arrays, one entry per rank; sendtypes not read under MPI_IN_PLACE */
void ompi_alltoallw_f(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtypes,
                      void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtypes,
                      MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = COMM(comm);
    int n = peers(c), in_place = is_mpi_fortran_in_place(sendbuf);
    MPI_Datatype slocal[N_LOCAL], *st = in_place ? NULL : types_in(n, sendtypes, slocal);
    MPI_Datatype rlocal[N_LOCAL], *rt = types_in(n, recvtypes, rlocal);
    set(ierr, MPI_Alltoallw(fbuf(sendbuf), sendcounts, sdispls, st, fbuf(recvbuf), recvcounts,
                            rdispls, rt, c));
    if (st) types_free(st, slocal);
    types_free(rt, rlocal);
}
NAMES(alltoallw, ALLTOALLW)

void ompi_ialltoallw_f(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
                       MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,
                       MPI_Fint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm, MPI_Fint *req,
                       MPI_Fint *ierr)
{
    MPI_Comm c = COMM(comm);
    int n = peers(c);
    const MPI_Datatype *st = is_mpi_fortran_in_place(sendbuf) ? NULL : types_kept(n, sendtypes);
    MPI_Request r;
    made_request(MPI_Ialltoallw(fbuf(sendbuf), sendcounts, sdispls, st, fbuf(recvbuf),
                                recvcounts, rdispls, types_kept(n, recvtypes), c, &r),
                 &r, req, ierr);
}
NAMES(ialltoallw, IALLTOALLW)

/* The in- and out-degree of a communicator's topology, the lengths of Neighbor_alltoallw's
 * datatype arrays (as Open MPI's neighbor_alltoallw_f finds them); 0 without a topology,
 * which the call itself then reports */
static void degrees(MPI_Comm c, int *in, int *out)
{
    int topo = MPI_UNDEFINED, rank, weighted;
    *in = *out = 0;
    MPI_Topo_test(c, &topo);
    if (topo == MPI_CART) {
        MPI_Cartdim_get(c, in);
        *in = *out = 2 * *in;
    } else if (topo == MPI_GRAPH) {
        MPI_Comm_rank(c, &rank);
        MPI_Graph_neighbors_count(c, rank, in);
        *out = *in;
    } else if (topo == MPI_DIST_GRAPH) {
        MPI_Dist_graph_neighbors_count(c, in, out, &weighted);
    }
}

/* displacements are INTEGER(KIND=MPI_ADDRESS_KIND), MPI_Aint in C; datatypes an array each */
void ompi_neighbor_alltoallw_f(void *sendbuf, MPI_Fint *sendcounts, MPI_Aint *sdispls,
                               MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,
                               MPI_Aint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm,
                               MPI_Fint *ierr)
{
    MPI_Comm c = COMM(comm);
    int in, out;
    degrees(c, &in, &out);
    MPI_Datatype slocal[N_LOCAL], *st = types_in(out, sendtypes, slocal);
    MPI_Datatype rlocal[N_LOCAL], *rt = types_in(in, recvtypes, rlocal);
    set(ierr, MPI_Neighbor_alltoallw(fbuf(sendbuf), sendcounts, sdispls, st, fbuf(recvbuf),
                                     recvcounts, rdispls, rt, c));
    types_free(st, slocal);
    types_free(rt, rlocal);
}
NAMES(neighbor_alltoallw, NEIGHBOR_ALLTOALLW)

/* ------------------------------------------------------------------------------------------ */
/* One-sided communication. Sizes and target displacements are INTEGER(KIND=MPI_ADDRESS_KIND), */
/* which Open MPI makes the size of MPI_Aint.                                                  */
/* ------------------------------------------------------------------------------------------ */

/* baseptr receives the window's address: an INTEGER(KIND=MPI_ADDRESS_KIND), or a TYPE(C_PTR)
 * for the _cptr names `use mpi` calls for that overload (mpi_f08 calls ompi_win_allocate_f) */
#define WIN_ALLOCATE(lo, UP, fn)                                                                \
    void ompi_##lo##_f(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,     \
                       void *baseptr, MPI_Fint *win, MPI_Fint *ierr)                             \
    {                                                                                           \
        MPI_Win w;                                                                              \
        made_win(fn(*size, *disp_unit, MPI_Info_f2c(*info), COMM(comm), baseptr, &w), &w, win,  \
                 ierr);                                                                         \
    }                                                                                           \
    NAMES(lo, UP)                                                                               \
    extern __typeof__(ompi_##lo##_f) ompi_##lo##_cptr_f ALIAS(lo);                              \
    NAMES(lo##_cptr, UP##_CPTR)
WIN_ALLOCATE(win_allocate, WIN_ALLOCATE, MPI_Win_allocate)
WIN_ALLOCATE(win_allocate_shared, WIN_ALLOCATE_SHARED, MPI_Win_allocate_shared)

void ompi_win_free_f(MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = WIN(win);
    made_win(MPI_Win_free(&w), &w, win, ierr); /* MPI_WIN_NULL */
}
NAMES(win_free, WIN_FREE)

/* ------------------------------------------------------------------------------------------ */
/* Communicators: nonblocking, freed, and constructors with LOGICAL arguments                  */
/* ------------------------------------------------------------------------------------------ */

/* the new communicator's handle is set at the call, usable once the request completes */
void ompi_comm_idup_f(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Comm c;
    MPI_Request r;
    int rc = MPI_Comm_idup(COMM(comm), &c, &r);
    made_comm(rc, &c, newcomm, NULL);
    made_request(rc, &r, req, ierr);
}
NAMES(comm_idup, COMM_IDUP)

void ompi_comm_free_f(MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = COMM(comm);
    made_comm(MPI_Comm_free(&c), &c, comm, ierr); /* MPI_COMM_NULL */
}
NAMES(comm_free, COMM_FREE)

void ompi_cart_create_f(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                        MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    int local[N_LOCAL], *p = logicals_in(*ndims, periods, local);
    MPI_Comm c;
    made_comm(MPI_Cart_create(COMM(comm), *ndims, dims, p, *reorder != 0, &c), &c, newcomm,
              ierr);
    if (p != local) free(p);
}
NAMES(cart_create, CART_CREATE)
F08_NAME(cart_create)

void ompi_cart_sub_f(MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    int ndims = 0; /* stays 0 if comm is not Cartesian: MPI_Cart_sub reports that */
    MPI_Cartdim_get(COMM(comm), &ndims);
    int local[N_LOCAL], *remain = logicals_in(ndims, remain_dims, local);
    MPI_Comm c;
    made_comm(MPI_Cart_sub(COMM(comm), remain, &c), &c, newcomm, ierr);
    if (remain != local) free(remain);
}
NAMES(cart_sub, CART_SUB)
F08_NAME(cart_sub)

void ompi_graph_create_f(MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges,
                         MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c;
    made_comm(MPI_Graph_create(COMM(comm), *nnodes, index, edges, *reorder != 0, &c), &c,
              newcomm, ierr);
}
NAMES(graph_create, GRAPH_CREATE)
F08_NAME(graph_create)

void ompi_dist_graph_create_adjacent_f(MPI_Fint *comm, MPI_Fint *indegree, MPI_Fint *sources,
                                       MPI_Fint *sourceweights, MPI_Fint *outdegree,
                                       MPI_Fint *destinations, MPI_Fint *destweights,
                                       MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *newcomm,
                                       MPI_Fint *ierr)
{
    MPI_Comm c;
    made_comm(MPI_Dist_graph_create_adjacent(COMM(comm), *indegree, sources,
                                             fweights(sourceweights), *outdegree, destinations,
                                             fweights(destweights), MPI_Info_f2c(*info),
                                             *reorder != 0, &c),
              &c, newcomm, ierr);
}
NAMES(dist_graph_create_adjacent, DIST_GRAPH_CREATE_ADJACENT)
F08_NAME(dist_graph_create_adjacent)

void ompi_intercomm_merge_f(MPI_Fint *intercomm, MPI_Fint *high, MPI_Fint *newcomm,
                            MPI_Fint *ierr)
{
    MPI_Comm c;
    made_comm(MPI_Intercomm_merge(COMM(intercomm), *high != 0, &c), &c, newcomm, ierr);
}
NAMES(intercomm_merge, INTERCOMM_MERGE)
F08_NAME(intercomm_merge)

/* Every routine of routines.tsv whose Fortran column says `gen`, generated by wrappers.awk */
#include "fortran_wrappers.c"

#endif /* OPEN_MPI */
