/* Part of loggps_trace.c (included there, in order: one translation unit): Wrappers: one-sided communication, neighborhood collectives, communicators; at exit. */
/* ------------------------------------------------------------------------------------------ */
/* Wrappers: one-sided communication and neighborhood collectives. Recorded with their times   */
/* only (shape none): the model does not cost them, a reader keeps their durations.           */
/* ------------------------------------------------------------------------------------------ */

/* The body of such a wrapper; `call` is its PMPI call. The record names no window or
 * communicator, so it is written whatever group the call is on. */
#define TIMES_ONLY(routine, call)                                                \
    do {                                                                         \
        if (!enter()) return call;                                               \
        uint64_t t0_ = now();                                                    \
        int rc_ = call;                                                          \
        struct event e_ = { .code = routine, .t_call = t0_, .t_return = now() }; \
        record(&e_);                                                             \
        return leave(rc_);                                                       \
    } while (0)

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    TIMES_ONLY(C_WIN_CREATE, PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    TIMES_ONLY(C_WIN_ALLOCATE, PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    TIMES_ONLY(C_WIN_ALLOCATE_SHARED,
               PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    TIMES_ONLY(C_WIN_CREATE_DYNAMIC, PMPI_Win_create_dynamic(info, comm, win));
}

int MPI_Win_free(MPI_Win *win) { TIMES_ONLY(C_WIN_FREE, PMPI_Win_free(win)); }

int MPI_Win_fence(int assert, MPI_Win win) { TIMES_ONLY(C_WIN_FENCE, PMPI_Win_fence(assert, win)); }

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    TIMES_ONLY(C_WIN_LOCK, PMPI_Win_lock(lock_type, rank, assert, win));
}

int MPI_Win_unlock(int rank, MPI_Win win) { TIMES_ONLY(C_WIN_UNLOCK, PMPI_Win_unlock(rank, win)); }

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    TIMES_ONLY(C_WIN_LOCK_ALL, PMPI_Win_lock_all(assert, win));
}

int MPI_Win_unlock_all(MPI_Win win) { TIMES_ONLY(C_WIN_UNLOCK_ALL, PMPI_Win_unlock_all(win)); }

int MPI_Win_flush(int rank, MPI_Win win) { TIMES_ONLY(C_WIN_FLUSH, PMPI_Win_flush(rank, win)); }

int MPI_Win_flush_all(MPI_Win win) { TIMES_ONLY(C_WIN_FLUSH_ALL, PMPI_Win_flush_all(win)); }

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    TIMES_ONLY(C_WIN_FLUSH_LOCAL, PMPI_Win_flush_local(rank, win));
}

int MPI_Win_sync(MPI_Win win) { TIMES_ONLY(C_WIN_SYNC, PMPI_Win_sync(win)); }

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    TIMES_ONLY(C_WIN_POST, PMPI_Win_post(group, assert, win));
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    TIMES_ONLY(C_WIN_START, PMPI_Win_start(group, assert, win));
}

int MPI_Win_complete(MPI_Win win) { TIMES_ONLY(C_WIN_COMPLETE, PMPI_Win_complete(win)); }

int MPI_Win_wait(MPI_Win win) { TIMES_ONLY(C_WIN_WAIT, PMPI_Win_wait(win)); }

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win)
{
    TIMES_ONLY(C_PUT, PMPI_Put(origin_addr, origin_count, origin_type, target_rank, target_disp,
                               target_count, target_type, win));
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_type, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win)
{
    TIMES_ONLY(C_GET, PMPI_Get(origin_addr, origin_count, origin_type, target_rank, target_disp,
                               target_count, target_type, win));
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_type,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
    TIMES_ONLY(C_ACCUMULATE, PMPI_Accumulate(origin_addr, origin_count, origin_type,
                                             target_rank, target_disp, target_count,
                                             target_type, op, win));
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_type,
                       void *result_addr, int result_count, MPI_Datatype result_type,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
    TIMES_ONLY(C_GET_ACCUMULATE,
               PMPI_Get_accumulate(origin_addr, origin_count, origin_type, result_addr,
                                   result_count, result_type, target_rank, target_disp,
                                   target_count, target_type, op, win));
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype type,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    TIMES_ONLY(C_FETCH_AND_OP, PMPI_Fetch_and_op(origin_addr, result_addr, type, target_rank,
                                                 target_disp, op, win));
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype type, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    TIMES_ONLY(C_COMPARE_AND_SWAP, PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr,
                                                         type, target_rank, target_disp, win));
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMES_ONLY(C_NEIGHBOR_ALLGATHER, PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype,
                                                             recvbuf, recvcount, recvtype, comm));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMES_ONLY(C_NEIGHBOR_ALLGATHERV,
               PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                        displs, recvtype, comm));
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMES_ONLY(C_NEIGHBOR_ALLTOALL, PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                           recvcount, recvtype, comm));
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMES_ONLY(C_NEIGHBOR_ALLTOALLV,
               PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm));
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm)
{
    TIMES_ONLY(C_NEIGHBOR_ALLTOALLW,
               PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                       recvcounts, rdispls, recvtypes, comm));
}

/* ------------------------------------------------------------------------------------------ */
/* Wrappers: communicators                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* After a creation call with a routine code, called at t0 if enter() let it in (own): register
 * the new communicator (collective over it: every rank takes part, see comm_register) and, if
 * own, record the commop event (times taken around the MPI call only). Only the owner reads
 * the clock (now() updates its state). Returns rc. */
static int created(int own, int code, uint64_t t0, int rc, MPI_Comm parent, const MPI_Comm *nc)
{
    uint64_t t1 = own ? now() : 0;
    struct comm *c = comm_register(rc == MPI_SUCCESS ? *nc : MPI_COMM_NULL);
    if (!own) return rc;
    struct comm *p = comm_get(parent);
    if (p) {
        struct event e = { .code = code, .t_call = t0, .t_return = t1, .comm = p->id,
                           .newcomm = c ? (int64_t)c->id : -1 };
        record(&e);
    } else {
        T.untracked++;
    }
    return leave(rc);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    if (!T.active) return PMPI_Comm_dup(comm, newcomm);
    int own = enter();
    uint64_t t0 = own ? now() : 0;
    int rc = PMPI_Comm_dup(comm, newcomm);
    return created(own, C_COMM_DUP, t0, rc, comm, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (!T.active) return PMPI_Comm_split(comm, color, key, newcomm);
    int own = enter();
    uint64_t t0 = own ? now() : 0;
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    return created(own, C_COMM_SPLIT, t0, rc, comm, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    if (!T.active) return PMPI_Comm_create(comm, group, newcomm);
    int own = enter();
    uint64_t t0 = own ? now() : 0;
    int rc = PMPI_Comm_create(comm, group, newcomm);
    return created(own, C_COMM_CREATE, t0, rc, comm, newcomm);
}

/* Recorded as the nonblocking collective it is (shape icoll, no bytes); its communicator is
 * registered when its request completes (see idup_start). Only the owner reads the clock. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
    if (!T.active) return PMPI_Comm_idup(comm, newcomm, req);
    int own = enter();
    uint64_t t0 = own ? now() : 0;
    int rc = PMPI_Comm_idup(comm, newcomm, req);
    uint64_t t1 = own ? now() : 0;
    struct idup *d = rc == MPI_SUCCESS ? idup_start(comm, *newcomm) : NULL;
    if (!own) return rc; /* its broadcast is never completed: the communicator stays unknown */
    if (d) {
        d->next = T.idups;
        T.idups = d;
    }
    struct comm *p = comm_get(comm);
    if (!p) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_COMM_IDUP, .t_call = t0, .t_return = t1, .comm = p->id,
                       .root = -1, .req = request_new(*req, p, REQ_SEND) };
    struct slot *s = table_find(&T.reqs, key_req(*req));
    if (s->queue) s->queue->idup = d; /* the youngest with this handle value: ours */
    else s->idup = d;
    record(&e);
    return leave(rc);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (!enter()) return PMPI_Comm_free(comm);
    struct slot *s = table_find(&T.comms, key_comm(*comm));
    struct comm *c = s ? s->c : NULL;
    if (s) table_remove(&T.comms, s);
    uint64_t t0 = now();
    int rc = PMPI_Comm_free(comm);
    uint64_t t1 = now();
    if (c) {
        struct event e = { .code = C_COMM_FREE, .t_call = t0, .t_return = t1, .comm = c->id,
                           .newcomm = -1 };
        record(&e);
        comm_release(c);
    } else {
        T.untracked++;
    }
    return leave(rc);
}

/* Communicator constructors without a routine code: not recorded (they count as computation),
 * but their communicators get an id and a C chunk so that calls on them are recorded. They
 * enter() all the same, to own the table they put the communicator in (own: leave after).
 * Returns rc. */
static int registered(int own, int rc, MPI_Comm *nc)
{
    if (rc == MPI_SUCCESS) comm_register(*nc);
    return own ? leave(rc) : rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, newcomm);
    return registered(own, rc, newcomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    int own = enter();
    int rc = PMPI_Intercomm_merge(intercomm, high, newcomm);
    return registered(own, rc, newcomm);
}

/* ------------------------------------------------------------------------------------------ */
/* At exit: MPI ran, but the tracer never saw its MPI_Init                                     */
/* ------------------------------------------------------------------------------------------ */

/* Otherwise such a job (MPI linked statically, bindings that call PMPI_Init directly) would
 * leave no trace and no word. tracer_start sets T.size first, so 0 means it never ran. MPI may
 * be finalized by now: the rank comes from the launcher's environment; one line, from rank 0
 * (or from every process where the launcher does not say). */
__attribute__((destructor)) static void untraced_check(void)
{
    int initialized = 0;
    if (T.size != 0 || PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank) rank = getenv("PMI_RANK");
    if (!rank) rank = getenv("PMIX_RANK");
    if (rank && strcmp(rank, "0") != 0) return;
    fprintf(stderr, "loggps-trace: MPI was initialized without the tracer's MPI_Init (MPI linked "
            "statically? bindings that call PMPI_Init?); this job ran UNTRACED\n");
}
