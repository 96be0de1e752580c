/* Part of loggps_trace.c (included there, in order: one translation unit): Wrappers: environment, point to point, completion. */
/* ------------------------------------------------------------------------------------------ */
/* Wrappers: environment                                                                       */
/* ------------------------------------------------------------------------------------------ */

int MPI_Init(int *argc, char ***argv)
{
    uint64_t t0 = now();
    int rc = PMPI_Init(argc, argv);
    uint64_t t1 = now();
    if (rc == MPI_SUCCESS)
        tracer_start(C_INIT, t0, t1, __builtin_return_address(0), __builtin_frame_address(0));
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    uint64_t t0 = now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    uint64_t t1 = now();
    if (rc == MPI_SUCCESS)
        tracer_start(C_INIT_THREAD, t0, t1, __builtin_return_address(0),
                     __builtin_frame_address(0));
    return rc;
}

int MPI_Finalize(void)
{
    if (T.active) tracer_finish(now(), __builtin_return_address(0), __builtin_frame_address(0));
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (T.active) flush_if_idle(); /* keep this rank's events */
    return PMPI_Abort(comm, errorcode);
}

/* ------------------------------------------------------------------------------------------ */
/* Wrappers: point to point                                                                    */
/* ------------------------------------------------------------------------------------------ */

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    if (!enter()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    recv_event(C_RECV, t0, now(), buf, count, type, source, tag, comm, status, 1);
    return leave(rc);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    if (!enter()) return PMPI_Irecv(buf, count, type, source, tag, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    uint64_t t1 = now();
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_IRECV, .t_call = t0, .t_return = t1,
                       .recv_bytes = type_bytes(count, type), .peer = world_rank(c, source),
                       .tag = tag_of(tag), .comm = c->id, .flags = wildcard_flags(source, tag),
                       .req = request_new(*req, c,
                                          source == MPI_PROC_NULL ? REQ_RECV_NULL : REQ_RECV) };
    e.flags |= received(buf, e.recv_bytes, e.peer);
    e.flags |= page_of(buf, count, type, e.recv_bytes, 1);
    record(&e);
    return leave(rc);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!enter())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status);
    uint64_t t1 = now();
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_SENDRECV, .t_call = t0, .t_return = t1,
                       .bytes = type_bytes(sendcount, sendtype), .peer = world_rank(c, dest),
                       .tag = sendtag, .recv_bytes = status_bytes(status),
                       .source = world_rank(c, status->MPI_SOURCE),
                       .recvtag = tag_of(status->MPI_TAG), .comm = c->id,
                       .flags = wildcard_flags(source, recvtag) };
    /* before the receive, which may overlap it */
    e.flags |= note_sent(sendbuf, sendcount, sendtype, e.bytes, e.peer);
    e.flags |= received(recvbuf, e.recv_bytes, e.source);
    e.flags |= page_of(sendbuf, sendcount, sendtype, e.bytes, 0);
    e.flags |= page_of(recvbuf, recvcount, recvtype, e.recv_bytes, 1);
    record(&e);
    return leave(rc);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!enter())
        return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                     status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                   status);
    uint64_t t1 = now();
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_SENDRECV_REPLACE, .t_call = t0, .t_return = t1,
                       .bytes = type_bytes(count, type), .peer = world_rank(c, dest),
                       .tag = sendtag, .recv_bytes = status_bytes(status),
                       .source = world_rank(c, status->MPI_SOURCE),
                       .recvtag = tag_of(status->MPI_TAG), .comm = c->id,
                       .flags = wildcard_flags(source, recvtag) };
    e.flags |= note_sent(buf, count, type, e.bytes, e.peer);
    received(buf, e.recv_bytes, -2); /* written; not flagged bounced (FORMAT.md) */
    record(&e);
    return leave(rc);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!enter()) return PMPI_Probe(source, tag, comm, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Probe(source, tag, comm, status);
    recv_event(C_PROBE, t0, now(), NULL, 0, MPI_DATATYPE_NULL, source, tag, comm, status, 1);
    return leave(rc);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!enter()) return PMPI_Iprobe(source, tag, comm, flag, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    recv_event(C_IPROBE, t0, now(), NULL, 0, MPI_DATATYPE_NULL, source, tag, comm, status, *flag);
    return leave(rc);
}

/* Matched probes: recorded as Probe and Iprobe; the message found keeps its communicator for
 * the receive (see message_new). */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!enter()) return PMPI_Mprobe(source, tag, comm, message, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Mprobe(source, tag, comm, message, status);
    struct comm *c = recv_event(C_MPROBE, t0, now(), NULL, 0, MPI_DATATYPE_NULL, source, tag, comm, status, 1);
    if (c && rc == MPI_SUCCESS) message_new(*message, c);
    return leave(rc);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    if (!enter()) return PMPI_Improbe(source, tag, comm, flag, message, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    struct comm *c = recv_event(C_IMPROBE, t0, now(), NULL, 0, MPI_DATATYPE_NULL, source, tag, comm, status, *flag);
    if (c && rc == MPI_SUCCESS && *flag) message_new(*message, c);
    return leave(rc);
}

/* Recorded as MPI_Recv: source, tag and size of the message from the status. It names no
 * source or tag itself: no wildcard flags. */
int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    if (!enter()) return PMPI_Mrecv(buf, count, type, message, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    struct comm *c = message_take(*message); /* before the call sets it to MPI_MESSAGE_NULL */
    uint64_t t0 = now();
    int rc = PMPI_Mrecv(buf, count, type, message, status);
    uint64_t t1 = now();
    if (!c) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_MRECV, .t_call = t0, .t_return = t1,
                       .recv_bytes = status_bytes(status),
                       .peer = world_rank(c, status->MPI_SOURCE),
                       .tag = tag_of(status->MPI_TAG), .comm = c->id };
    received(buf, e.recv_bytes, -2); /* written; not flagged bounced (FORMAT.md) */
    e.flags = page_of(buf, count, type, e.recv_bytes, 1);
    record(&e);
    comm_release(c);
    return leave(rc);
}

/* Recorded as the MPI_Irecv it amounts to: of the posted size, and, as the message's source
 * and tag are known to its probe only, with both wildcards, so that the completion's status
 * gives the actual ones. MPI_MESSAGE_NO_PROC's is an MPI_Irecv from MPI_PROC_NULL. */
int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *req)
{
    if (!enter()) return PMPI_Imrecv(buf, count, type, message, req);
    int source = *message == MPI_MESSAGE_NO_PROC ? MPI_PROC_NULL : MPI_ANY_SOURCE;
    struct comm *c = message_take(*message);
    uint64_t t0 = now();
    int rc = PMPI_Imrecv(buf, count, type, message, req);
    uint64_t t1 = now();
    if (!c) { T.untracked++; return leave(rc); }
    struct event e = { .code = C_IMRECV, .t_call = t0, .t_return = t1,
                       .recv_bytes = type_bytes(count, type), .peer = world_rank(c, source),
                       .tag = -1, .comm = c->id, .flags = wildcard_flags(source, MPI_ANY_TAG),
                       .req = request_new(*req, c,
                                          source == MPI_PROC_NULL ? REQ_RECV_NULL : REQ_RECV) };
    received(buf, e.recv_bytes, -2); /* written; not flagged bounced (FORMAT.md) */
    e.flags |= page_of(buf, count, type, e.recv_bytes, 1);
    record(&e);
    comm_release(c);
    return leave(rc);
}

int MPI_Cancel(MPI_Request *req)
{
    if (!enter()) return PMPI_Cancel(req);
    struct slot *s = table_find(&T.reqs, key_req(*req));
    uint64_t id = s ? s->id : 0;
    uint64_t t0 = now();
    int rc = PMPI_Cancel(req);
    uint64_t t1 = now();
    T.cancels++;
    if (s) {
        struct event e = { .code = C_CANCEL, .t_call = t0, .t_return = t1, .req = id };
        record(&e);
    }
    return leave(rc);
}

/* Recorded like an MPI_Wait that completes the request (no status) when it is one we track
 * (of a persistent request: the operation its last start began, if still active); the request
 * is forgotten. The operation itself goes on without a waiter. */
int MPI_Request_free(MPI_Request *req)
{
    if (!enter()) return PMPI_Request_free(req);
    uint64_t key = key_req(*req);
    uint64_t t0 = now();
    int rc = PMPI_Request_free(req);
    uint64_t t1 = now();
    struct done d;
    if (request_done(&d, key, NULL)) complete_event(C_REQUEST_FREE, t0, t1, &d, 1);
    persist_forget(key); /* a persistent request: its handle is gone */
    return leave(rc);
}

/* Persistent requests: the *_init calls are not recorded (routines.tsv: persist_new); each start is
 * recorded as the nonblocking operation it begins. */
int MPI_Start(MPI_Request *req)
{
    if (!enter()) return PMPI_Start(req);
    uint64_t t0 = now();
    int rc = PMPI_Start(req);
    uint64_t t1 = now();
    if (rc == MPI_SUCCESS) start_event(*req, t0, t1);
    return leave(rc);
}

/* One record per request started: the first at the call's times, each later one at its
 * return with duration 0 (a record may not begin before the previous one returned). */
int MPI_Startall(int count, MPI_Request reqs[])
{
    if (!enter()) return PMPI_Startall(count, reqs);
    uint64_t t0 = now();
    int rc = PMPI_Startall(count, reqs);
    uint64_t t1 = now();
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < count; i++)
            if (start_event(reqs[i], t0, t1)) t0 = t1;
    return leave(rc);
}

/* ------------------------------------------------------------------------------------------ */
/* Wrappers: completion                                                                        */
/* ------------------------------------------------------------------------------------------ */

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (!enter()) return PMPI_Wait(req, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t key = key_req(*req);
    uint64_t t0 = now();
    int rc = PMPI_Wait(req, status);
    uint64_t t1 = now();
    struct done d;
    complete_event(C_WAIT, t0, t1, &d, (size_t)request_done(&d, key, status));
    return leave(rc);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    if (!enter()) return PMPI_Test(req, flag, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t key = key_req(*req);
    uint64_t t0 = now();
    int rc = PMPI_Test(req, flag, status);
    uint64_t t1 = now();
    struct done d;
    size_t n = *flag ? (size_t)request_done(&d, key, status) : 0;
    complete_event(C_TEST, t0, t1, &d, n);
    return leave(rc);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    if (!enter()) return PMPI_Waitall(count, reqs, statuses);
    struct multi m = multi_for(count, reqs);
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? m.st : statuses;
    uint64_t t0 = now();
    int rc = PMPI_Waitall(count, reqs, st);
    uint64_t t1 = now();
    size_t n = 0;
    for (int i = 0; i < count; i++) n += (size_t)request_done(&m.done[n], m.keys[i], &st[i]);
    complete_event(C_WAITALL, t0, t1, m.done, n);
    return leave(rc);
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    if (!enter()) return PMPI_Testall(count, reqs, flag, statuses);
    struct multi m = multi_for(count, reqs);
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? m.st : statuses;
    uint64_t t0 = now();
    int rc = PMPI_Testall(count, reqs, flag, st);
    uint64_t t1 = now();
    size_t n = 0;
    if (*flag)
        for (int i = 0; i < count; i++) n += (size_t)request_done(&m.done[n], m.keys[i], &st[i]);
    complete_event(C_TESTALL, t0, t1, m.done, n);
    return leave(rc);
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    if (!enter()) return PMPI_Waitany(count, reqs, index, status);
    struct multi m = multi_for(count, reqs);
    if (status == MPI_STATUS_IGNORE) status = m.st;
    uint64_t t0 = now();
    int rc = PMPI_Waitany(count, reqs, index, status);
    uint64_t t1 = now();
    size_t n = 0;
    if (*index != MPI_UNDEFINED && *index >= 0 && *index < count)
        n = (size_t)request_done(m.done, m.keys[*index], status);
    complete_event(C_WAITANY, t0, t1, m.done, n);
    return leave(rc);
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    if (!enter()) return PMPI_Testany(count, reqs, index, flag, status);
    struct multi m = multi_for(count, reqs);
    if (status == MPI_STATUS_IGNORE) status = m.st;
    uint64_t t0 = now();
    int rc = PMPI_Testany(count, reqs, index, flag, status);
    uint64_t t1 = now();
    size_t n = 0;
    if (*flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
        n = (size_t)request_done(m.done, m.keys[*index], status);
    complete_event(C_TESTANY, t0, t1, m.done, n);
    return leave(rc);
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!enter()) return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    struct multi m = multi_for(incount, reqs);
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? m.st : statuses;
    uint64_t t0 = now();
    int rc = PMPI_Waitsome(incount, reqs, outcount, indices, st);
    uint64_t t1 = now();
    size_t n = 0;
    if (*outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++)
            n += (size_t)request_done(&m.done[n], m.keys[indices[k]], &st[k]);
    complete_event(C_WAITSOME, t0, t1, m.done, n);
    return leave(rc);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!enter()) return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    struct multi m = multi_for(incount, reqs);
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? m.st : statuses;
    uint64_t t0 = now();
    int rc = PMPI_Testsome(incount, reqs, outcount, indices, st);
    uint64_t t1 = now();
    size_t n = 0;
    if (*outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++)
            n += (size_t)request_done(&m.done[n], m.keys[indices[k]], &st[k]);
    complete_event(C_TESTSOME, t0, t1, m.done, n);
    return leave(rc);
}
