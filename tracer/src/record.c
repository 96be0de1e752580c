/* Part of loggps_trace.c (included there, in order: one translation unit): record(), the one recording path; helpers shared by the wrappers. */
/* ------------------------------------------------------------------------------------------ */
/* record(): the one recording path                                                            */
/* ------------------------------------------------------------------------------------------ */

HOT uint8_t *encode(uint8_t *p, const struct event *e)
{
    int sh = shape_of[e->code];
    int flagged = sh == SH_SEND || sh == SH_ISEND || sh == SH_COLL || sh == SH_ICOLL;
    *p++ = (uint8_t)(e->code | (flagged && e->flags ? CODE_FLAGS : 0));
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
        if (e->flags) p = put_uleb(p, e->flags);
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
        if (e->flags) p = put_uleb(p, e->flags);
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
    T.last_call = e->t_call, T.last_code = e->code;
    T.events++;
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

/*
 * The buffers of the rank's last sends, by address and size, each with its destination and a
 * fingerprint of each quarter of its contents. Two things are told from them
 * (src/model/MODEL.md §13, "What a trace cannot tell"):
 * - a receive into a buffer this rank last sent from to the receive's source (`source` a world
 *   rank; -1: any) is `bounced` (tracer/FORMAT.md, receive flag 8): a ping-pong sending back
 *   what it received, whose lines the other side's copy just read;
 * - a send of at least CLEAN_MIN bytes every byte of which lies in a quarter of a kept buffer
 *   whose fingerprint is the one it had at that buffer's send, that no receive has written
 *   since, and past which the rank's calls have moved no more than a core's cache (T.cache)
 *   since, is `clean` (send flag 16): data written long before and still in the sender's cache
 *   (a halo sent from buffers written once; an Alltoall's blocks sent one by one by earlier
 *   collectives), which a receiver's copy reads faster than lines the sender has just written;
 *   one that has left the cache (a loop of collectives over megabytes of buffers) is read as
 *   slowly as written lines. The bytes counted are those the rank's sends and receives read
 *   and wrote (its computation's are not seen: a buffer it may have pushed out is still
 *   flagged). A program that rewrites a buffer with the values it held is taken for one that
 *   did not write it.
 */
#define SENT (sizeof T.sent / sizeof T.sent[0])
#define PARTS (sizeof T.sent[0].print / sizeof T.sent[0].print[0])
#define ALL_PARTS ((1u << PARTS) - 1)
#define COLL_DEST (-3) /* a collective's send buffer: sent to no one peer (see coll_clean) */
#define COLL_SOURCE (-4) /* a collective's receive buffer: from no one peer (see received) */
#define CLEAN_MIN 1024 /* bytes: smaller sends are not fingerprinted (see fingerprint) */
#define PRINT_WORDS 8  /* a quarter's: 32 over a buffer */

/* A hash of PRINT_WORDS 8-byte words evenly spaced over `bytes` (≥ CLEAN_MIN / PARTS) bytes at
 * `buf`, the first and the last among them: about 8 ns (a 1 KiB to 256 KiB buffer in cache;
 * 32 words over a buffer 32 ns, 50 ns with a division a word). */
static uint64_t fingerprint(const void *buf, uint64_t bytes)
{
    const unsigned char *b = buf;
    uint64_t last = bytes / 8 - 1, step = last / (PRINT_WORDS - 1), h = bytes, w;
    for (uint64_t i = 0; i < PRINT_WORDS - 1; i++) {
        memcpy(&w, b + 8 * i * step, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15u;
        h ^= h >> 29;
    }
    memcpy(&w, b + 8 * last, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15u;
    return h ^ h >> 29;
}

/* Where quarter `i` (0 … PARTS) of a kept buffer starts: its first byte's address (PARTS: the
 * buffer's end), quarters of whole 8-byte words but the last. */
static inline uintptr_t part_of(const struct sent *s, unsigned i)
{
    return i == PARTS ? s->hi : s->lo + ((s->hi - s->lo) * i / PARTS & ~(uintptr_t)7);
}

/* Whether every byte of the buffer `now` is about to send (its quarters' fingerprints taken)
 * lies in a quarter of a kept buffer that no receive has written since its send, whose
 * fingerprint is the one it had then, and that the rank's calls have moved no more than a
 * cache past since (note_sent); `own`: the kept entry of the same address and size, if any. */
static int unchanged(const struct sent *now, const struct sent *own)
{
    uintptr_t lo = now->lo, hi = now->hi;
    /* the buffer itself, whole and unchanged (a halo's, a loop's): no other to look at */
    if (own && own->kept == ALL_PARTS && !(T.cache && T.moved - own->moved > T.cache) &&
        !memcmp(own->print, now->print, sizeof own->print))
        return 1;
    struct { uintptr_t lo, hi; } got[SENT * PARTS];
    size_t n = 0;
    for (size_t k = 0; k < SENT; k++) {
        const struct sent *s = &T.sent[k];
        int same = s == own; /* its quarters are now's: prints taken */
        if (!s->kept || s->hi <= lo || hi <= s->lo) continue;
        if (T.cache && T.moved - s->moved > T.cache) continue;
        for (unsigned i = 0; i < PARTS; i++) {
            uintptr_t a = part_of(s, i), b = part_of(s, i + 1);
            if (!(s->kept >> i & 1) || b <= lo || hi <= a) continue;
            uint64_t print = same ? now->print[i] : fingerprint((const void *)a, b - a);
            if (print != s->print[i]) continue;
            got[n].lo = a > lo ? a : lo, got[n].hi = b < hi ? b : hi;
            n++;
        }
    }
    /* covered: sweep [lo, hi) forward over the pieces, each time by the one reaching furthest
     * from the point reached (at most SENT × PARTS pieces: quadratic is fine) */
    for (uintptr_t at = lo; at < hi;) {
        uintptr_t reach = at;
        for (size_t k = 0; k < n; k++)
            if (got[k].lo <= at && got[k].hi > reach) reach = got[k].hi;
        if (reach == at) return 0;
        at = reach;
    }
    return 1;
}

/* Whether `count` elements of `type` lie in exactly their bytes from the buffer on (no lower
 * bound, no holes): the only send buffers the tracer reads. */
static int contiguous(int count, MPI_Datatype type)
{
    MPI_Count lb, extent, true_lb, true_extent, size;
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent) != MPI_SUCCESS ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return 0;
    return true_lb == 0 && true_extent == size && extent == size;
}

/* Where a message of at least PAGE_MIN bytes whose `count` elements of `type` lie contiguously
 * from `buf` starts in its 4 KiB page, as flags: a receive buffer's (`into`) F_RECV_PAGE and the
 * offset in bits 8-19, a send buffer's F_SEND_PAGE and bits 20-31. A single copy from a buffer
 * into one that starts a few bytes further into its page runs several times slower on many
 * CPUs (4 KiB aliasing, src/model/MODEL.md §9); only the replay, which matches both ends,
 * knows whether a message does. */
#define PAGE_MIN 1024
static inline uint64_t page_of(const void *buf, int count, MPI_Datatype type, uint64_t bytes,
                               int into)
{
    if (!buf || bytes < PAGE_MIN || !contiguous(count, type)) return 0;
    uint64_t off = (uintptr_t)buf & 4095;
    return into ? F_RECV_PAGE | off << 8 : F_SEND_PAGE | off << 20;
}

/* Keep the buffer of a send of `count` elements of `type` (`bytes` bytes) to `dest` (a world
 * rank); its flags: F_CLEAN where every byte is unchanged since a send from it (unchanged). The
 * buffer is read only where its type lays the data out contiguously from it, and not at all
 * under LOGGPS_TRACE_CLEAN=0 (a CUDA-aware MPI sending from device memory). */
static inline uint64_t note_sent(const void *buf, int count, MPI_Datatype type, uint64_t bytes,
                                 int64_t dest)
{
    if (!buf || bytes == 0 || (dest < 0 && dest != COLL_DEST)) return 0;
    uintptr_t lo = (uintptr_t)buf, hi = lo + bytes;
    int read = T.clean && bytes >= CLEAN_MIN && contiguous(count, type);
    struct sent now = { .lo = lo, .hi = hi, .dest = dest, .kept = read ? ALL_PARTS : 0,
                        .moved = T.moved };
    for (unsigned i = 0; read && i < PARTS; i++) {
        uintptr_t a = part_of(&now, i);
        now.print[i] = fingerprint((const void *)a, part_of(&now, i + 1) - a);
    }
    struct sent *s = NULL;
    for (size_t i = 0; i < SENT && !s; i++)
        if (T.sent[i].lo == lo && T.sent[i].hi == hi) s = &T.sent[i];
    uint64_t flags = read && unchanged(&now, s) ? F_CLEAN : 0;
    if (!s) s = &T.sent[T.sent_next++ % SENT];
    *s = now;
    T.moved += bytes;
    return flags;
}

/*
 * The result buffers of the rank's last Allreduce calls, and of its Scan and Exscan calls but
 * at the communicator's last rank (src/model/MODEL.md §13, "A reduction's result received
 * into"): a later collective that receives into one of them (or copies its own block there, a
 * Gather's root) costs more above the eager limit, as a receive into lines its peer has read
 * does (measured; a scan sends its result on to the next rank, the last rank's is read by no
 * one and costs nothing more; an Allreduce on 2 ranks only receives and reduces into it, yet
 * costs as much). A collective whose
 * receive buffer overlaps one, before any receive has written into it and within a cache's
 * worth of bytes moved, is flagged `reduced` (F_REDUCED, FORMAT.md); a receive into an entry,
 * a collective's or a point-to-point one, empties it.
 */
#define REDUCED (sizeof T.reduced / sizeof T.reduced[0])

/* Keep `bytes` bytes at `buf` as a reduction's result buffer: in the entry of the same range,
 * else an empty one, else the oldest. */
static inline void note_reduced(const void *buf, uint64_t bytes)
{
    uintptr_t lo = (uintptr_t)buf, hi = lo + bytes;
    if (!buf || bytes == 0) return;
    struct reduced *r = NULL;
    for (size_t i = 0; i < REDUCED && !r; i++)
        if (T.reduced[i].lo == lo && T.reduced[i].hi == hi) r = &T.reduced[i];
    for (size_t i = 0; i < REDUCED && !r; i++)
        if (T.reduced[i].lo == T.reduced[i].hi) r = &T.reduced[i];
    if (!r) r = &T.reduced[T.reduced_next++ % REDUCED];
    *r = (struct reduced){ .lo = lo, .hi = hi, .moved = T.moved };
}

/* A receive into [lo, hi): F_REDUCED where it is a collective's (`coll`) and overlaps a kept
 * result buffer the rank's calls have moved no more than a cache past since; every entry it
 * overlaps is emptied. Called before the receive's bytes are counted as moved. */
static inline uint64_t landed_reduced(uintptr_t lo, uintptr_t hi, int coll)
{
    uint64_t flags = 0;
    for (size_t i = 0; i < REDUCED; i++) {
        struct reduced *r = &T.reduced[i];
        if (r->lo == r->hi || r->hi <= lo || hi <= r->lo) continue;
        int cached = T.cache == 0 || T.moved - r->moved <= T.cache;
        if (coll && cached) flags = F_REDUCED;
        r->lo = r->hi = 0;
    }
    return flags;
}

/* A receive into `bytes` bytes at `buf` from `source`: F_BOUNCED where a kept send buffer to
 * that peer overlaps it, or (a collective's receive buffer, COLL_SOURCE) any kept send buffer
 * the rank's calls have moved no more than a cache past since (its peers' copies read those
 * lines, and they are still in their caches); the quarters of kept buffers it overlaps are no
 * longer unchanged. */
static inline uint64_t received(const void *buf, uint64_t bytes, int64_t source)
{
    uintptr_t lo = (uintptr_t)buf, hi = lo + bytes;
    uint64_t flags = 0;
    for (size_t i = 0; buf && i < SENT; i++) {
        struct sent *s = &T.sent[i];
        if (s->lo < hi && lo < s->hi) {
            int cached = T.cache == 0 || T.moved - s->moved <= T.cache;
            if ((source == -1 && s->dest >= 0) || s->dest == source ||
                (source == COLL_SOURCE && cached))
                flags = F_BOUNCED;
            for (unsigned k = 0; k < PARTS; k++)
                if (part_of(s, k) < hi && lo < part_of(s, k + 1)) s->kept &= ~(1u << k);
        }
    }
    if (buf && source != COLL_SOURCE) landed_reduced(lo, hi, 0);
    if (buf) T.moved += bytes;
    return flags;
}

/* Send, Ssend, Bsend, Rsend and (with req) their nonblocking forms; `buf` the buffer a receiver
 * reads (NULL for the buffered sends, whose data the library copies). */
HOT void send_event(int code, uint64_t t0, uint64_t t1, const void *buf, int count,
                    MPI_Datatype type, int dest, int tag, MPI_Comm comm, const MPI_Request *req)
{
    struct comm *c = comm_get(comm);
    if (!c) { T.untracked++; return; }
    struct event e = { .code = code, .t_call = t0, .t_return = t1,
                       .bytes = type_bytes(count, type), .peer = world_rank(c, dest),
                       .tag = tag, .comm = c->id };
    if (req) e.req = request_new(*req, c, REQ_SEND);
    e.flags = note_sent(buf, count, type, e.bytes, e.peer);
    e.flags |= page_of(buf, count, type, e.bytes, 0);
    record(&e);
}

/* Recv (`buf` its buffer, of `count` elements of `type`) and the probes (NULL, 0,
 * MPI_DATATYPE_NULL): source and tag are the actual ones, from the status (if found). Returns
 * the communicator, NULL if it is unknown (nothing recorded). */
HOT struct comm *recv_event(int code, uint64_t t0, uint64_t t1, const void *buf, int count,
                            MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            const MPI_Status *st, int found)
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
        e.flags |= received(buf, e.recv_bytes, e.peer);
        e.flags |= page_of(buf, count, type, e.recv_bytes, 1);
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

/* A collective's buffers: `sendbuf` (`count` elements of `type`, `bytes` in all; NULL or
 * MPI_IN_PLACE: none) kept as a send's, to no one peer, and `recvbuf` (`recv_bytes`; NULL or
 * MPI_IN_PLACE: none) written, as a receive's. F_CLEAN where the send buffer is unchanged since
 * the rank's last send from it (note_sent): the collective's messages of the rank's own data
 * are read from lines written long before; F_BOUNCED where the receive buffer overlaps one the
 * rank sent from, a cache's worth of bytes ago at most (received): what the collective receives
 * into it lands in lines its peers' copies read (FORMAT.md, `coll` flags); F_REDUCED where it
 * overlaps a reduction's result buffer (landed_reduced). In place, the data lie in the
 * receive buffer, which the call writes: never clean. */
static inline uint64_t coll_clean(const void *sendbuf, int count, MPI_Datatype type,
                                  uint64_t bytes, const void *recvbuf, uint64_t recv_bytes)
{
    uint64_t flags = 0;
    if (sendbuf != MPI_IN_PLACE) flags = note_sent(sendbuf, count, type, bytes, COLL_DEST);
    if (recvbuf && recvbuf != MPI_IN_PLACE) {
        uintptr_t lo = (uintptr_t)recvbuf;
        flags |= landed_reduced(lo, lo + recv_bytes, 1);
        flags |= received(recvbuf, recv_bytes, COLL_SOURCE);
    }
    return flags;
}

/* A collective and (with req, the request it made) a nonblocking one; `flags` F_CLEAN or 0
 * (coll_clean). */
HOT void coll_event(int code, uint64_t t0, uint64_t t1, struct comm *c, int root,
                    uint64_t bytes, uint64_t recv_bytes, size_t n, const uint64_t *counts,
                    const MPI_Request *req, uint64_t flags)
{
    struct event e = { .code = code, .t_call = t0, .t_return = t1, .comm = c->id,
                       .root = root < 0 ? -1 : world_rank(c, root), .bytes = bytes,
                       .recv_bytes = recv_bytes, .n = n, .counts = counts, .flags = flags };
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
static void persist_new(MPI_Request r, int code, const void *buf, int count, MPI_Datatype type,
                        int peer, int tag, MPI_Comm comm)
{
    struct comm *c = comm_get(comm);
    struct persist *p = malloc(sizeof *p);
    if (!p) abort();
    int recv = code == C_IRECV;
    *p = (struct persist){ .code = (uint8_t)code, .buf = buf, .bytes = type_bytes(count, type),
                           .contiguous = (uint8_t)contiguous(count, type),
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
    if (p->code == C_IRECV) {
        e.recv_bytes = p->bytes;
        e.flags |= received(p->buf, p->bytes, p->peer);
        e.flags |= page_of(p->buf, p->contiguous, MPI_BYTE, p->bytes, 1);
    } else {
        e.bytes = p->bytes;
        e.flags = note_sent(p->buf, p->contiguous, MPI_BYTE, p->bytes, p->peer);
        e.flags |= page_of(p->buf, p->contiguous, MPI_BYTE, p->bytes, 0);
    }
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
