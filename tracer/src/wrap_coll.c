/* Part of loggps_trace.c (included there, in order: one translation unit): Wrappers: collectives and their nonblocking forms. */
/* ------------------------------------------------------------------------------------------ */
/* Wrappers: collectives and their nonblocking forms. bytes = what this rank contributes,      */
/* recv_bytes = what it obtains (FORMAT-NOTES.md gives the rule for each routine). One         */
/* function makes the record of a collective and of its nonblocking form (req: the request     */
/* that one made; NULL for the blocking one). The wrappers that only time the call and hand it */
/* to one of these are generated from routines.tsv (every collective, the eight sends).         */
/* ------------------------------------------------------------------------------------------ */

HOT void barrier_event(int code, uint64_t t0, uint64_t t1, MPI_Comm comm,
                       const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (c) coll_event(code, t0, t1, c, -1, 0, 0, 0, NULL, req, 0);
    else T.untracked++;
}

HOT void bcast_event(int code, uint64_t t0, uint64_t t1, const void *buf, int count,
                     MPI_Datatype type, int root, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    int is_root = c->me == root;
    uint64_t flags = coll_clean(is_root ? buf : NULL, count, type, n, is_root ? NULL : buf, n);
    coll_event(code, t0, t1, c, root, is_root ? n : 0, is_root ? 0 : n, 0, NULL, req, flags);
}

HOT void reduce_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                      const void *recvbuf, int count, MPI_Datatype type, int root,
                      MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    int is_root = c->me == root;
    uint64_t flags = coll_clean(sendbuf, count, type, n, is_root ? recvbuf : NULL, n);
    coll_event(code, t0, t1, c, root, n, is_root ? n : 0, 0, NULL, req, flags);
}

/* Allreduce, Scan, Exscan: every rank contributes and obtains count elements. */
HOT void symmetric_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                         const void *recvbuf, int count, MPI_Datatype type, MPI_Comm comm,
                         const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    uint64_t flags = coll_clean(sendbuf, count, type, n, recvbuf, n);
    /* its result (see note_reduced): an Allreduce's, a scan's where it sends it on */
    int scan = code == C_SCAN || code == C_EXSCAN || code == C_ISCAN || code == C_IEXSCAN;
    if (!scan || c->me + 1 < c->size) note_reduced(recvbuf, n);
    coll_event(code, t0, t1, c, -1, n, n, 0, NULL, req, flags);
}

HOT void gather_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    uint64_t block = is_root ? type_bytes(recvcount, recvtype) : 0;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : type_bytes(sendcount, sendtype);
    uint64_t got = block * (uint64_t)c->size;
    uint64_t flags = coll_clean(sendbuf, sendcount, sendtype, sent, is_root ? recvbuf : NULL, got);
    coll_event(code, t0, t1, c, root, sent, got, 0, NULL, req, flags);
}

HOT void gatherv_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                       int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                       const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    size_t n = is_root ? (size_t)c->size : 0;
    uint64_t *counts = scratch(sizeof(uint64_t) * (n + 1)), recvd = 0;
    for (size_t i = 0; i < n; i++) recvd += counts[i] = type_bytes(recvcounts[i], recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? (is_root ? counts[c->me] : 0)
                                            : type_bytes(sendcount, sendtype);
    coll_event(code, t0, t1, c, root, sent, recvd, n, counts, req, 0);
}

HOT void scatter_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                       const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    uint64_t block = is_root ? type_bytes(sendcount, sendtype) : 0;
    uint64_t got = recvbuf == MPI_IN_PLACE ? block : type_bytes(recvcount, recvtype);
    uint64_t sent = block * (uint64_t)c->size;
    uint64_t flags = coll_clean(is_root ? sendbuf : NULL, sendcount, sendtype, sent, recvbuf, got);
    coll_event(code, t0, t1, c, root, sent, got, 0, NULL, req, flags);
}

HOT void scatterv_event(int code, uint64_t t0, uint64_t t1, const int sendcounts[],
                        MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                        const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    size_t n = is_root ? (size_t)c->size : 0;
    uint64_t *counts = scratch(sizeof(uint64_t) * (n + 1)), sent = 0;
    for (size_t i = 0; i < n; i++) sent += counts[i] = type_bytes(sendcounts[i], sendtype);
    uint64_t got = recvbuf == MPI_IN_PLACE ? (is_root ? counts[c->me] : 0)
                                           : type_bytes(recvcount, recvtype);
    coll_event(code, t0, t1, c, root, sent, got, n, counts, req, 0);
}

HOT void allgather_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, const void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t block = type_bytes(recvcount, recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : type_bytes(sendcount, sendtype);
    uint64_t got = block * (uint64_t)c->size;
    uint64_t flags = coll_clean(sendbuf, sendcount, sendtype, sent, recvbuf, got);
    coll_event(code, t0, t1, c, -1, sent, got, 0, NULL, req, flags);
}

HOT void allgatherv_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                          int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                          MPI_Datatype recvtype, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    size_t n = (size_t)c->size;
    uint64_t *counts = scratch(sizeof(uint64_t) * n), recvd = 0;
    for (size_t i = 0; i < n; i++) recvd += counts[i] = type_bytes(recvcounts[i], recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? counts[c->me] : type_bytes(sendcount, sendtype);
    coll_event(code, t0, t1, c, -1, sent, recvd, n, counts, req, 0);
}

HOT void alltoall_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, const void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t got = type_bytes(recvcount, recvtype) * (uint64_t)c->size;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? got
                                            : type_bytes(sendcount, sendtype) * (uint64_t)c->size;
    uint64_t flags = coll_clean(sendbuf, sendcount, sendtype, sent, recvbuf, got);
    coll_event(code, t0, t1, c, -1, sent, got, 0, NULL, req, flags);
}

/* Alltoallv (one datatype a side: stride 0) and Alltoallw (one per rank: stride 1): the bytes
 * sent to each rank, then the bytes received from each. MPI_IN_PLACE sends what it receives
 * (sendtypes is then not read). */
HOT void alltoallv_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                         const int sendcounts[], const MPI_Datatype sendtypes[],
                         const int recvcounts[], const MPI_Datatype recvtypes[],
                         size_t stride, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    size_t n = (size_t)c->size;
    uint64_t *counts = scratch(sizeof(uint64_t) * 2 * n), sent = 0, recvd = 0;
    int in_place = sendbuf == MPI_IN_PLACE;
    for (size_t i = 0; i < n; i++) {
        recvd += counts[n + i] = type_bytes(recvcounts[i], recvtypes[stride * i]);
        sent += counts[i] = in_place ? counts[n + i]
                                     : type_bytes(sendcounts[i], sendtypes[stride * i]);
    }
    coll_event(code, t0, t1, c, -1, sent, recvd, 2 * n, counts, req, 0);
}

HOT void reduce_scatter_event(int code, uint64_t t0, uint64_t t1, const int recvcounts[],
                              MPI_Datatype type, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    size_t n = (size_t)c->size;
    uint64_t *counts = scratch(sizeof(uint64_t) * n), sent = 0;
    for (size_t i = 0; i < n; i++) sent += counts[i] = type_bytes(recvcounts[i], type);
    coll_event(code, t0, t1, c, -1, sent, counts[c->me], n, counts, req, 0);
}

HOT void reduce_scatter_block_event(int code, uint64_t t0, uint64_t t1, int recvcount,
                                    MPI_Datatype type, MPI_Comm comm,
                                    const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(recvcount, type);
    coll_event(code, t0, t1, c, -1, n * (uint64_t)c->size, n, 0, NULL, req, 0);
}

