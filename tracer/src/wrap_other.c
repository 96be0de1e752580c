/* Part of loggps_trace.c (included there, in order: one translation unit): Wrappers: communicators and the helpers of their generated wrappers (one-sided communication and neighborhood collectives are all generated, routines.tsv: `times`); at exit. */
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
