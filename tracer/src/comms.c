/* Part of loggps_trace.c (included there, in order: one translation unit): Communicators and requests. */
/* ------------------------------------------------------------------------------------------ */
/* Communicators and requests                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* World rank of rank r of c, with the special peers of FORMAT.md. */
static inline int64_t world_rank(const struct comm *c, int r)
{
    if (r == MPI_ANY_SOURCE) return -1;
    if (r == MPI_PROC_NULL) return -2;
    if (r < 0 || r >= c->size) return r; /* MPI_ROOT and the like: never on a tracked comm */
    return c->members ? c->members[r] : r;
}

static void comm_release(struct comm *c)
{
    if (c == &T.world || c == T.self) return;
    if (--c->refs == 0) {
        free(c->members);
        free(c);
    }
}

static void comm_insert(MPI_Comm handle, struct comm *c)
{
    struct slot *s = table_put(&T.comms, key_comm(handle));
    if (s->c) comm_release(s->c); /* a handle we missed being freed */
    s->c = c;
}

static struct comm *new_comm(uint32_t id, MPI_Comm handle)
{
    struct comm *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->id = id;
    c->refs = 1;
    PMPI_Comm_size(handle, &c->size);
    PMPI_Comm_rank(handle, &c->me);
    c->members = malloc(sizeof(int32_t) * (size_t)c->size);
    int *ranks = malloc(sizeof(int) * (size_t)c->size), *world = malloc(sizeof(int) * (size_t)c->size);
    if (!c->members || !ranks || !world) abort();
    MPI_Group g;
    PMPI_Comm_group(handle, &g);
    for (int i = 0; i < c->size; i++) ranks[i] = i;
    PMPI_Group_translate_ranks(g, c->size, ranks, T.world_group, world);
    PMPI_Group_free(&g);
    for (int i = 0; i < c->size; i++) c->members[i] = world[i];
    free(ranks);
    free(world);
    return c;
}

/* The tracked communicator of a handle, or NULL. MPI_COMM_SELF is registered on first use:
 * its only member can do that alone (id 1 + rank, see comm_register for the id scheme). */
static struct comm *comm_get(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD) return &T.world;
    struct slot *s = table_find(&T.comms, key_comm(comm));
    if (s) return s->c;
    if (comm == MPI_COMM_SELF && T.active) {
        T.self = new_comm(1u + (uint32_t)T.rank, MPI_COMM_SELF);
        comm_insert(MPI_COMM_SELF, T.self);
        if (T.recording) write_comm_chunk(T.self);
        return T.self;
    }
    return NULL;
}

/* The id of a new communicator, given out by its rank 0 (see comm_register); 0 once ids are
 * exhausted. */
static uint64_t comm_id_new(void)
{
    uint64_t id = 1u + (uint64_t)T.rank +
                  (uint64_t)T.size * __atomic_add_fetch(&T.comm_seq, 1, __ATOMIC_RELAXED);
    if (id <= UINT32_MAX) return id;
    warn("communicator ids exhausted; calls on new communicators are not recorded");
    return 0;
}

/*
 * Register a communicator just created (collective over its members). Its id is
 * 1 + w + P * s, where w is the world rank of its rank 0 and s the number of communicators
 * that rank has led the creation of so far (s = 0 is MPI_COMM_SELF): unique job-wide with no
 * global agreement, and identical on every member because rank 0 broadcasts it. Rank 0 of the
 * new communicator appends its C chunk. Returns NULL (untracked) for MPI_COMM_NULL and
 * intercommunicators.
 *
 * Every rank takes part even when it does not record the call, as the others may record calls
 * on the communicator: a rank stopped by overlapping threads still gives out ids and writes C
 * chunks (both safe from any thread). Only a thread that owns the tracer's state (see enter)
 * puts the communicator in the table.
 */
static struct comm *comm_register(MPI_Comm nc)
{
    if (!T.active || nc == MPI_COMM_NULL) return NULL;
    int inter = 0, me = 0;
    PMPI_Comm_test_inter(nc, &inter);
    if (inter) return NULL;
    PMPI_Comm_rank(nc, &me);
    uint64_t id = me == 0 ? comm_id_new() : 0;
    PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, nc);
    if (id == 0) return NULL;
    struct comm *c = new_comm((uint32_t)id, nc);
    if (me == 0) write_comm_chunk(c); /* (a no-op once a write failed) */
    if (!owned()) {
        comm_release(c);
        return NULL;
    }
    comm_insert(nc, c);
    return c;
}

/*
 * MPI_Comm_idup's communicator cannot be registered as comm_register does: it is not usable
 * before the idup's request completes, and a blocking broadcast inside one rank's Wait could
 * deadlock a legal program. So at the call the tracer starts its own nonblocking broadcast of
 * the id over the parent (whose rank 0 is the new one's and gives the id out), and when the
 * idup's request completes it completes the broadcast and registers the communicator with
 * no collective. Every rank starts the broadcast whether or not it records the call, as
 * comm_register takes part; one whose idup request is freed (or never completed) leaves the
 * communicator unknown, and its broadcast is completed at MPI_Finalize. Returns the state
 * for the request's entry, NULL for an intercommunicator (not tracked).
 */
static struct idup *idup_start(MPI_Comm parent, MPI_Comm nc)
{
    int inter = 0, me = 0;
    PMPI_Comm_test_inter(parent, &inter);
    if (inter) return NULL;
    struct idup *d = calloc(1, sizeof *d);
    if (!d) abort();
    PMPI_Comm_rank(parent, &me);
    if (me == 0) d->id = comm_id_new();
    d->nc = nc;
    PMPI_Ibcast(&d->id, 1, MPI_UINT64_T, 0, parent, &d->bcast);
    return d;
}

/* The idup's request completed (complete) or was freed: register its communicator, or leave
 * the broadcast to MPI_Finalize. */
static void idup_done(struct idup *d, int complete)
{
    if (!complete) return;
    PMPI_Wait(&d->bcast, MPI_STATUS_IGNORE);
    if (d->id != 0) {
        struct comm *c = new_comm((uint32_t)d->id, d->nc);
        if (c->me == 0) write_comm_chunk(c);
        comm_insert(d->nc, c);
    }
    struct idup **p = &T.idups;
    while (*p != d) p = &(*p)->next;
    *p = d->next;
    free(d);
}

/*
 * Requests. Each request the tracer creates an id for stays its own request whatever handle
 * value the library returns: both Open MPI and MPICH hand out one shared handle for every small
 * nonblocking send that completed at once and for operations on MPI_PROC_NULL, so several live
 * requests can have the same handle value. The first one lives in the table slot, later ones
 * queue behind it, and a completion (or free) of that handle value takes the oldest. Requests
 * behind a shared handle are complete from the start, so which of them a call names changes no
 * time, and a program that completes all its requests completes every id once. A unique
 * handle, the usual case, costs no more than a plain table entry.
 */
static uint64_t request_new(MPI_Request r, struct comm *c, int kind)
{
    struct slot *s = table_put(&T.reqs, key_req(r));
    uint64_t id = T.next_req++;
    c->refs++;
    if (!s->c) { /* no live request has this handle value */
        s->id = id;
        s->c = c;
        s->kind = (uint8_t)kind;
        return id;
    }
    struct queued *q = T.spare;
    if (q) T.spare = q->next;
    else if (!(q = malloc(sizeof *q))) abort();
    *q = (struct queued){ .id = id, .c = c, .kind = (uint8_t)kind };
    q->next = s->queue ? s->queue->next : q; /* the youngest points at the oldest */
    if (s->queue) s->queue->next = q;
    s->queue = q;
    return id;
}

/* If a request with the handle value `key` is one we track, fill *d with the oldest one's id
 * and, for a receive, the status source and tag (from st; none for a freed request), forget it
 * and return 1. */
static int request_done(struct done *d, uint64_t key, const MPI_Status *st)
{
    struct slot *s = table_find(&T.reqs, key);
    if (!s) return 0;
    d->req = s->id;
    d->source = -1;
    d->tag = -1;
    if (!st) {
        /* freed: no status */
    } else if (s->kind == REQ_RECV_NULL) {
        /* what the standard's status says; MPICH 4.0 leaves it at source 0, tag 0 */
        d->source = -2;
    } else if (s->kind == REQ_RECV) {
        int cancelled = 0;
        if (T.cancels) PMPI_Test_cancelled(st, &cancelled);
        if (!cancelled) {
            d->source = world_rank(s->c, st->MPI_SOURCE);
            d->tag = st->MPI_TAG == MPI_ANY_TAG ? -1 : st->MPI_TAG;
        }
    }
    struct comm *c = s->c;
    struct idup *idup = s->idup;
    struct queued *q = s->queue ? s->queue->next : NULL; /* the next oldest takes the slot */
    if (q) {
        s->id = q->id;
        s->c = q->c;
        s->idup = q->idup;
        s->kind = q->kind;
        if (q == s->queue) s->queue = NULL;
        else s->queue->next = q->next;
        q->next = T.spare;
        T.spare = q;
    } else {
        table_remove(&T.reqs, s);
    }
    if (idup) idup_done(idup, st != NULL);
    comm_release(c);
    return 1;
}

/*
 * Messages of matched probes. MPI_Mrecv and MPI_Imrecv name no communicator, only the message
 * that MPI_Mprobe or MPI_Improbe returned, so the message table keeps the communicator of each
 * message (a reference, as a request does) from its probe to its receive. A message whose
 * probe was not recorded (an unknown communicator) is not in the table, and its receive is not
 * recorded either. MPI_MESSAGE_NO_PROC, the one handle of every probe on MPI_PROC_NULL, is
 * never taken out: it keeps the communicator of the latest such probe.
 */
static void message_new(MPI_Message m, struct comm *c)
{
    struct slot *s = table_put(&T.msgs, key_msg(m));
    if (s->c) comm_release(s->c); /* MPI_MESSAGE_NO_PROC again, or a receive we did not see */
    c->refs++;
    s->c = c;
}

/* The communicator of message m, or NULL; for a receive, which takes the message: the caller
 * releases the communicator after its record. */
static struct comm *message_take(MPI_Message m)
{
    struct slot *s = table_find(&T.msgs, key_msg(m));
    if (!s) return NULL;
    struct comm *c = s->c;
    if (m == MPI_MESSAGE_NO_PROC) c->refs++; /* the table keeps its own */
    else table_remove(&T.msgs, s);
    return c;
}
