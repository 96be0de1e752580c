/* Part of loggps_trace.c (included there, in order: one translation unit): record(), the one recording path; communicators and requests; helpers shared by the wrappers. */
/* ------------------------------------------------------------------------------------------ */
/* record(): the one recording path                                                            */
/* ------------------------------------------------------------------------------------------ */

HOT uint8_t *encode(uint8_t *p, const struct event *e)
{
    *p++ = (uint8_t)e->code;
    p = put_sleb(p, (int64_t)(e->t_call - T.prev_return));
    p = put_sleb(p, (int64_t)(e->t_return - e->t_call));
    switch (shape_of[e->code]) {
    case SH_NONE:
        break;
    case SH_SEND:
    case SH_ISEND:
        p = put_uleb(p, e->bytes);
        p = put_sleb(p, e->peer);
        p = put_sleb(p, e->tag);
        p = put_uleb(p, e->comm);
        if (shape_of[e->code] == SH_ISEND) p = put_uleb(p, e->req);
        break;
    case SH_RECV:
    case SH_IRECV:
        p = put_uleb(p, e->recv_bytes);
        p = put_sleb(p, e->peer);
        p = put_sleb(p, e->tag);
        p = put_uleb(p, e->comm);
        p = put_uleb(p, e->flags);
        if (shape_of[e->code] == SH_IRECV) p = put_uleb(p, e->req);
        break;
    case SH_SENDRECV:
        p = put_uleb(p, e->bytes);
        p = put_sleb(p, e->peer);
        p = put_sleb(p, e->tag);
        p = put_uleb(p, e->recv_bytes);
        p = put_sleb(p, e->source);
        p = put_sleb(p, e->recvtag);
        p = put_uleb(p, e->comm);
        p = put_uleb(p, e->flags);
        break;
    case SH_COMPLETE:
        p = put_uleb(p, e->n);
        for (size_t i = 0; i < e->n; i++) {
            p = put_uleb(p, e->done[i].req);
            p = put_sleb(p, e->done[i].source);
            p = put_sleb(p, e->done[i].tag);
        }
        break;
    case SH_CANCEL:
        p = put_uleb(p, e->req);
        break;
    case SH_COLL:
    case SH_ICOLL:
        p = put_uleb(p, e->comm);
        p = put_sleb(p, e->root);
        p = put_uleb(p, e->bytes);
        p = put_uleb(p, e->recv_bytes);
        p = put_uleb(p, e->n);
        for (size_t i = 0; i < e->n; i++) p = put_uleb(p, e->counts[i]);
        if (shape_of[e->code] == SH_ICOLL) p = put_uleb(p, e->req);
        break;
    case SH_COMMOP:
        p = put_uleb(p, e->comm);
        p = put_sleb(p, e->newcomm);
        break;
    }
    return p;
}

HOT void record(const struct event *e)
{
    if (!T.recording) return;
    size_t bound = 128 + 30 * e->n; /* 1 + 2*10 + 9*10 bytes, 3*10 per list entry */
    if (T.len + bound > T.cap || (T.sites && T.slen + 10 > T.scap)) flush_events();
    uint64_t site = T.sites ? site_id(T.site) : 0;
    if (T.len + bound > T.cap) {
        /* a single record larger than the buffer (collective on a huge communicator) */
        uint8_t *b = malloc(E_HEAD + bound);
        if (!b) abort();
        uint8_t *end = encode(b + E_HEAD, e);
        put_u32(b + CHUNK_HEAD, 1);
        if (T.sites) {
            T.slen = (size_t)(put_uleb(T.sbuf, site + 1) - T.sbuf);
            write_sites(1);
        }
        append_chunk(b, 'E', (uint32_t)T.rank, (size_t)(end - b - CHUNK_HEAD));
        free(b);
    } else {
        T.len = (size_t)(encode(T.buf + T.len, e) - T.buf);
        T.nrec++;
        if (T.sites) T.slen = (size_t)(put_uleb(T.sbuf + T.slen, site + 1) - T.sbuf);
    }
    T.prev_return = e->t_return;
    T.events++;
}

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

/* ------------------------------------------------------------------------------------------ */
/* Helpers shared by the wrappers                                                              */
/* ------------------------------------------------------------------------------------------ */

static inline uint64_t type_bytes(int count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size_x(type, &size);
    return size > 0 ? (uint64_t)count * (uint64_t)size : 0;
}

static inline uint64_t status_bytes(const MPI_Status *st)
{
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n); /* cheaper than PMPI_Get_elements_x */
    if (n != MPI_UNDEFINED) return n > 0 ? (uint64_t)n : 0;
    MPI_Count x = 0; /* more than INT_MAX bytes */
    PMPI_Get_elements_x(st, MPI_BYTE, &x);
    return x > 0 ? (uint64_t)x : 0;
}

static inline int64_t tag_of(int tag) { return tag == MPI_ANY_TAG ? -1 : tag; }

static inline uint64_t wildcard_flags(int source, int tag)
{
    return (source == MPI_ANY_SOURCE ? F_ANY_SOURCE : 0) | (tag == MPI_ANY_TAG ? F_ANY_TAG : 0);
}

/* Send, Ssend, Bsend, Rsend and (with req) their nonblocking forms. */
HOT void send_event(int code, uint64_t t0, uint64_t t1, int count, MPI_Datatype type,
                       int dest, int tag, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    struct event e = { .code = code, .t_call = t0, .t_return = t1,
                       .bytes = type_bytes(count, type), .peer = world_rank(c, dest),
                       .tag = tag, .comm = c->id };
    if (req) e.req = request_new(*req, c, REQ_SEND);
    record(&e);
}

/* Recv and the probes: source and tag are the actual ones, from the status (if found).
 * Returns the communicator, NULL if it is unknown (nothing recorded). */
HOT struct comm *recv_event(int code, uint64_t t0, uint64_t t1, int source, int tag,
                            MPI_Comm comm, const MPI_Status *st, int found)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return NULL; }
    struct event e = { .code = code, .t_call = t0, .t_return = t1, .comm = c->id,
                       .flags = wildcard_flags(source, tag) };
    if (found) {
        e.recv_bytes = status_bytes(st);
        e.peer = world_rank(c, st->MPI_SOURCE);
        e.tag = tag_of(st->MPI_TAG);
        if (code == C_IPROBE || code == C_IMPROBE) e.flags |= F_FOUND;
    } else {
        e.peer = world_rank(c, source);
        e.tag = tag_of(tag);
    }
    record(&e);
    return c;
}

HOT void complete_event(int code, uint64_t t0, uint64_t t1, const struct done *d, size_t n)
{
    struct event e = { .code = code, .t_call = t0, .t_return = t1, .n = n, .done = d };
    record(&e);
}

/* A collective and (with req, the request it made) a nonblocking one. */
HOT void coll_event(int code, uint64_t t0, uint64_t t1, struct comm *c, int root,
                    uint64_t bytes, uint64_t recv_bytes, size_t n, const uint64_t *counts,
                    const MPI_Request *req)
{
    struct event e = { .code = code, .t_call = t0, .t_return = t1, .comm = c->id,
                       .root = root < 0 ? -1 : world_rank(c, root), .bytes = bytes,
                       .recv_bytes = recv_bytes, .n = n, .counts = counts };
    if (req) e.req = request_new(*req, c, REQ_SEND);
    record(&e);
}

/*
 * Persistent requests. A *_init call is not recorded (it communicates nothing): the persistent
 * table keeps its arguments under the handle it returned, and each MPI_Start of that handle
 * records the nonblocking operation it starts (MPI_Isend & co., MPI_Irecv) with a new request
 * id, in the request table under the persistent handle like any request, so that its
 * completion names it. The handle stays valid after a completion and can be started again:
 * its arguments are forgotten only at MPI_Request_free. One on a communicator the tracer does
 * not know is kept without one (c NULL), so that its starts count as untracked calls.
 */
static void persist_forget(uint64_t key)
{
    struct slot *s = table_find(&T.pers, key);
    if (!s) return;
    free(s->init);
    if (s->c) comm_release(s->c);
    table_remove(&T.pers, s);
}

/* After MPI_Send_init & co. (code: the nonblocking routine a start amounts to) and
 * MPI_Recv_init (C_IRECV; peer is the source). */
static void persist_new(MPI_Request r, int code, int count, MPI_Datatype type, int peer,
                        int tag, MPI_Comm comm)
{
    struct comm *c = comm_get(comm);
    struct persist *p = malloc(sizeof *p);
    if (!p) abort();
    int recv = code == C_IRECV;
    *p = (struct persist){ .code = (uint8_t)code, .bytes = type_bytes(count, type),
                           .peer = c ? world_rank(c, peer) : 0, .tag = tag_of(tag),
                           .flags = recv ? wildcard_flags(peer, tag) : 0,
                           .kind = !recv ? REQ_SEND
                                         : peer == MPI_PROC_NULL ? REQ_RECV_NULL : REQ_RECV };
    persist_forget(key_req(r)); /* a handle freed where the tracer did not see it */
    struct slot *s = table_put(&T.pers, key_req(r));
    s->init = p;
    s->c = c;
    if (c) c->refs++;
}

/* Record the operation one start of persistent request r begins, at [t0, t1]; 1 if recorded.
 * Not ours (a persistent collective, say): nothing. */
static int start_event(MPI_Request r, uint64_t t0, uint64_t t1)
{
    struct slot *s = table_find(&T.pers, key_req(r));
    if (!s) return 0;
    if (!s->c) { T.untracked++; return 0; }
    const struct persist *p = s->init;
    struct event e = { .code = p->code, .t_call = t0, .t_return = t1, .peer = p->peer,
                       .tag = p->tag, .comm = s->c->id, .flags = p->flags,
                       .req = request_new(r, s->c, p->kind) };
    if (p->code == C_IRECV) e.recv_bytes = p->bytes;
    else e.bytes = p->bytes;
    record(&e);
    return 1;
}

/* Arrays for a call on n requests: handle bits before the call, statuses, completions. */
struct multi { uint64_t *keys; MPI_Status *st; struct done *done; };

static struct multi multi_for(int n, MPI_Request reqs[])
{
    size_t m = n > 0 ? (size_t)n : 1;
    char *p = scratch(m * (sizeof(uint64_t) + sizeof(MPI_Status) + sizeof(struct done)) + 64);
    struct multi x;
    x.done = (struct done *)p;
    x.st = (MPI_Status *)(p + m * sizeof(struct done));
    x.keys = (uint64_t *)(p + m * (sizeof(struct done) + sizeof(MPI_Status)));
    for (int i = 0; i < n; i++) x.keys[i] = key_req(reqs[i]);
    return x;
}
