/* Part of loggps_trace.c (included there, in order: one translation unit): Wrappers: collectives and their nonblocking forms. */
/* ------------------------------------------------------------------------------------------ */
/* Wrappers: collectives and their nonblocking forms. bytes = what this rank contributes,      */
/* recv_bytes = what it obtains (FORMAT-NOTES.md gives the rule for each routine). One         */
/* function makes the record of a collective and of its nonblocking form (req: the request     */
/* that one made; NULL for the blocking one).                                                  */
/* ------------------------------------------------------------------------------------------ */

HOT void barrier_event(int code, uint64_t t0, uint64_t t1, MPI_Comm comm,
                       const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (c) coll_event(code, t0, t1, c, -1, 0, 0, 0, NULL, req);
    else T.untracked++;
}

int MPI_Barrier(MPI_Comm comm)
{
    if (!enter()) return PMPI_Barrier(comm);
    uint64_t t0 = now();
    int rc = PMPI_Barrier(comm);
    barrier_event(C_BARRIER, t0, now(), comm, NULL);
    return leave(rc);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Ibarrier(comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ibarrier(comm, req);
    barrier_event(C_IBARRIER, t0, now(), comm, req);
    return leave(rc);
}

HOT void bcast_event(int code, uint64_t t0, uint64_t t1, int count, MPI_Datatype type, int root,
                     MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    int is_root = c->me == root;
    coll_event(code, t0, t1, c, root, is_root ? n : 0, is_root ? 0 : n, 0, NULL, req);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!enter()) return PMPI_Bcast(buf, count, type, root, comm);
    uint64_t t0 = now();
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    bcast_event(C_BCAST, t0, now(), count, type, root, comm, NULL);
    return leave(rc);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *req)
{
    if (!enter()) return PMPI_Ibcast(buf, count, type, root, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ibcast(buf, count, type, root, comm, req);
    bcast_event(C_IBCAST, t0, now(), count, type, root, comm, req);
    return leave(rc);
}

HOT void reduce_event(int code, uint64_t t0, uint64_t t1, int count, MPI_Datatype type,
                      int root, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    coll_event(code, t0, t1, c, root, n, c->me == root ? n : 0, 0, NULL, req);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (!enter()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    uint64_t t0 = now();
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    reduce_event(C_REDUCE, t0, now(), count, type, root, comm, NULL);
    return leave(rc);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, req);
    reduce_event(C_IREDUCE, t0, now(), count, type, root, comm, req);
    return leave(rc);
}

/* Allreduce, Scan, Exscan: every rank contributes and obtains count elements. */
HOT void symmetric_event(int code, uint64_t t0, uint64_t t1, int count, MPI_Datatype type,
                         MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(count, type);
    coll_event(code, t0, t1, c, -1, n, n, 0, NULL, req);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    if (!enter()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    uint64_t t0 = now();
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    symmetric_event(C_ALLREDUCE, t0, now(), count, type, comm, NULL);
    return leave(rc);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
    symmetric_event(C_IALLREDUCE, t0, now(), count, type, comm, req);
    return leave(rc);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    if (!enter()) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
    uint64_t t0 = now();
    int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
    symmetric_event(C_SCAN, t0, now(), count, type, comm, NULL);
    return leave(rc);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, req);
    symmetric_event(C_ISCAN, t0, now(), count, type, comm, req);
    return leave(rc);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    if (!enter()) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
    uint64_t t0 = now();
    int rc = PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
    symmetric_event(C_EXSCAN, t0, now(), count, type, comm, NULL);
    return leave(rc);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, req);
    symmetric_event(C_IEXSCAN, t0, now(), count, type, comm, req);
    return leave(rc);
}

HOT void gather_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    uint64_t block = is_root ? type_bytes(recvcount, recvtype) : 0;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : type_bytes(sendcount, sendtype);
    coll_event(code, t0, t1, c, root, sent, block * (uint64_t)c->size, 0, NULL, req);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    uint64_t t0 = now();
    int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    gather_event(C_GATHER, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype, root,
                 comm, NULL);
    return leave(rc);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *req)
{
    if (!enter())
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          req);
    gather_event(C_IGATHER, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype, root,
                 comm, req);
    return leave(rc);
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
    coll_event(code, t0, t1, c, root, sent, recvd, n, counts, req);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    if (!enter())
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
    uint64_t t0 = now();
    int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm);
    gatherv_event(C_GATHERV, t0, now(), sendbuf, sendcount, sendtype, recvcounts, recvtype,
                  root, comm, NULL);
    return leave(rc);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, root, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           root, comm, req);
    gatherv_event(C_IGATHERV, t0, now(), sendbuf, sendcount, sendtype, recvcounts, recvtype,
                  root, comm, req);
    return leave(rc);
}

HOT void scatter_event(int code, uint64_t t0, uint64_t t1, int sendcount,
                       MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                       const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    int is_root = c->me == root;
    uint64_t block = is_root ? type_bytes(sendcount, sendtype) : 0;
    uint64_t got = recvbuf == MPI_IN_PLACE ? block : type_bytes(recvcount, recvtype);
    coll_event(code, t0, t1, c, root, block * (uint64_t)c->size, got, 0, NULL, req);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm);
    uint64_t t0 = now();
    int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                          comm);
    scatter_event(C_SCATTER, t0, now(), sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                  comm, NULL);
    return leave(rc);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    if (!enter())
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, req);
    scatter_event(C_ISCATTER, t0, now(), sendcount, sendtype, recvbuf, recvcount, recvtype,
                  root, comm, req);
    return leave(rc);
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
    coll_event(code, t0, t1, c, root, sent, got, n, counts, req);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    uint64_t t0 = now();
    int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
    scatterv_event(C_SCATTERV, t0, now(), sendcounts, sendtype, recvbuf, recvcount, recvtype,
                   root, comm, NULL);
    return leave(rc);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                              recvtype, root, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm, req);
    scatterv_event(C_ISCATTERV, t0, now(), sendcounts, sendtype, recvbuf, recvcount, recvtype,
                   root, comm, req);
    return leave(rc);
}

HOT void allgather_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t block = type_bytes(recvcount, recvtype);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : type_bytes(sendcount, sendtype);
    coll_event(code, t0, t1, c, -1, sent, block * (uint64_t)c->size, 0, NULL, req);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t t0 = now();
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    allgather_event(C_ALLGATHER, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype,
                    comm, NULL);
    return leave(rc);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               req);
    uint64_t t0 = now();
    int rc = PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             req);
    allgather_event(C_IALLGATHER, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype,
                    comm, req);
    return leave(rc);
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
    coll_event(code, t0, t1, c, -1, sent, recvd, n, counts, req);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    if (!enter())
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    uint64_t t0 = now();
    int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm);
    allgatherv_event(C_ALLGATHERV, t0, now(), sendbuf, sendcount, sendtype, recvcounts,
                     recvtype, comm, NULL);
    return leave(rc);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm, req);
    allgatherv_event(C_IALLGATHERV, t0, now(), sendbuf, sendcount, sendtype, recvcounts,
                     recvtype, comm, req);
    return leave(rc);
}

HOT void alltoall_event(int code, uint64_t t0, uint64_t t1, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t got = type_bytes(recvcount, recvtype) * (uint64_t)c->size;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? got
                                            : type_bytes(sendcount, sendtype) * (uint64_t)c->size;
    coll_event(code, t0, t1, c, -1, sent, got, 0, NULL, req);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    uint64_t t0 = now();
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    alltoall_event(C_ALLTOALL, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype,
                   comm, NULL);
    return leave(rc);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              req);
    uint64_t t0 = now();
    int rc = PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            req);
    alltoall_event(C_IALLTOALL, t0, now(), sendbuf, sendcount, sendtype, recvcount, recvtype,
                   comm, req);
    return leave(rc);
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
    coll_event(code, t0, t1, c, -1, sent, recvd, 2 * n, counts, req);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    uint64_t t0 = now();
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    alltoallv_event(C_ALLTOALLV, t0, now(), sendbuf, sendcounts, &sendtype, recvcounts,
                    &recvtype, 0, comm, NULL);
    return leave(rc);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, req);
    alltoallv_event(C_IALLTOALLV, t0, now(), sendbuf, sendcounts, &sendtype, recvcounts,
                    &recvtype, 0, comm, req);
    return leave(rc);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!enter())
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    uint64_t t0 = now();
    int rc = PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                            rdispls, recvtypes, comm);
    alltoallv_event(C_ALLTOALLW, t0, now(), sendbuf, sendcounts, sendtypes, recvcounts,
                    recvtypes, 1, comm, NULL);
    return leave(rc);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *req)
{
    if (!enter())
        return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                               rdispls, recvtypes, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, req);
    alltoallv_event(C_IALLTOALLW, t0, now(), sendbuf, sendcounts, sendtypes, recvcounts,
                    recvtypes, 1, comm, req);
    return leave(rc);
}

HOT void reduce_scatter_event(int code, uint64_t t0, uint64_t t1, const int recvcounts[],
                              MPI_Datatype type, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    size_t n = (size_t)c->size;
    uint64_t *counts = scratch(sizeof(uint64_t) * n), sent = 0;
    for (size_t i = 0; i < n; i++) sent += counts[i] = type_bytes(recvcounts[i], type);
    coll_event(code, t0, t1, c, -1, sent, counts[c->me], n, counts, req);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (!enter()) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    uint64_t t0 = now();
    int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    reduce_scatter_event(C_REDUCE_SCATTER, t0, now(), recvcounts, type, comm, NULL);
    return leave(rc);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, req);
    reduce_scatter_event(C_IREDUCE_SCATTER, t0, now(), recvcounts, type, comm, req);
    return leave(rc);
}

HOT void reduce_scatter_block_event(int code, uint64_t t0, uint64_t t1, int recvcount,
                                    MPI_Datatype type, MPI_Comm comm,
                                    const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    uint64_t n = type_bytes(recvcount, type);
    coll_event(code, t0, t1, c, -1, n * (uint64_t)c->size, n, 0, NULL, req);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (!enter())
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    uint64_t t0 = now();
    int rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    reduce_scatter_block_event(C_REDUCE_SCATTER_BLOCK, t0, now(), recvcount, type, comm, NULL);
    return leave(rc);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    if (!enter())
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, req);
    reduce_scatter_block_event(C_IREDUCE_SCATTER_BLOCK, t0, now(), recvcount, type, comm, req);
    return leave(rc);
}
