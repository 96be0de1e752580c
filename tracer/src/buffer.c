/* Part of loggps_trace.c (included there, in order: one translation unit): The tracer's state, its hash tables, and writing chunks. */
/* ------------------------------------------------------------------------------------------ */
/* Tracer state                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* A communicator the tracer knows: its job-wide id and its members as world ranks. */
struct comm {
    uint32_t id;
    int size, me;        /* size, and this rank's rank in it */
    int32_t *members;    /* world rank of each rank; NULL means identity (MPI_COMM_WORLD) */
    int refs;            /* the comm table's reference + one per pending request */
};

/* What a request is, for the status its completion records (see request_done). Requests of
 * nonblocking collectives and MPI_Comm_idup are REQ_SEND (source and tag -1). */
enum { REQ_SEND, REQ_RECV, REQ_RECV_NULL /* a receive from MPI_PROC_NULL */ };

/* The tracer's side of an MPI_Comm_idup: its own nonblocking broadcast of the new
 * communicator's id over the parent, completed with the idup's request (see idup_start). */
struct idup {
    struct idup *next;   /* in T.idups: every one not completed yet */
    uint64_t id;         /* the broadcast's buffer */
    MPI_Request bcast;
    MPI_Comm nc;         /* the new communicator: its handle is set at the call */
};

/* A request queued behind a live one with the same handle value (see request_new). */
struct queued {
    struct queued *next;
    uint64_t id;
    struct comm *c;
    struct idup *idup;   /* MPI_Comm_idup's request only, else NULL */
    uint8_t kind;
};

/* The arguments of a persistent request's *_init call, for the operation each MPI_Start of
 * it records (see persist_new). */
struct persist {
    uint8_t code, kind;  /* the nonblocking routine a start amounts to (C_ISEND, ..., C_IRECV);
                          * the request kind of its starts */
    const void *buf;     /* its buffer (NULL for the buffered sends, whose data the library copies) */
    uint8_t contiguous;  /* its data lie contiguously from buf (see contiguous) */
    uint64_t bytes, flags;
    int64_t peer, tag;   /* world rank (or -1, -2), tag (or -1) */
};

/* Slot of a small open-addressing hash table keyed by a handle's bits. */
struct slot {
    uint64_t key;
    uint64_t id;         /* request id (request table) */
    struct comm *c;      /* the communicator (NULL in the persistent table: not known) */
    union {
        struct queued *queue; /* request table: younger requests with this handle value, a
                               * ring (queue is the youngest, queue->next the oldest); NULL if
                               * none */
        struct persist *init; /* persistent table: the *_init call's arguments */
    };
    struct idup *idup;   /* request table: MPI_Comm_idup's request only, else NULL */
    uint8_t used, kind;  /* kind: REQ_SEND, REQ_RECV or REQ_RECV_NULL */
};

struct table { struct slot *s; size_t cap, n; };

#define CHUNK_HEAD 9      /* kind u8, rank u32, length u32 */
#define E_HEAD (CHUNK_HEAD + 4)

static struct {
    int active;          /* all ranks run the tracer's collective protocol (identical everywhere) */
    int recording;       /* this rank records events */
    int stopped;         /* recording stopped because two threads called MPI at once */
    uintptr_t owner;     /* the thread inside a wrapper (enter), 0 if none */
    int rank, size;
    int fd;
    char path[4096];
    MPI_Comm priv;       /* private duplicate of MPI_COMM_WORLD for the tracer's own messages */
    MPI_Group world_group;
    char host[256];
    int64_t offset_init;
    MPI_Comm node;       /* the ranks sharing this rank's memory (MPI_COMM_NULL: not timed) */
    int cores_partner;   /* world rank of the node's second rank, where this rank times cores */
    double cores_init;   /* the cores' round trip at MPI_Init, ns (see time_cores); < 0: none */
    uint32_t node_first; /* P chunk: the lowest world rank of this rank's node, its node id */
    struct place place_init; /* P chunk: where this rank ran at MPI_Init */
    int nlinks;          /* the node's pairs timed (see pick_links), the same on all its ranks */
    struct link {
        int cls, a, b;   /* class (place.h), the pair as node ranks (a times, b answers) */
        uint32_t wa, wb; /* ... as world ranks (node rank 0 only) */
        double init_ns;  /* their round trip at MPI_Init (node rank 0 only; < 0: none) */
        double msg_init[MSG_SIZES]; /* a message's of each of MSG_BYTES, the same */
    } links[LINK_CLASSES];
    MPI_Comm leaders;    /* the nodes' first ranks, where two nodes or more (else MPI_COMM_NULL) */
    int net_partner;     /* world rank of the second node's first rank (world rank 0 only) */
    double net_init[MSG_SIZES]; /* a message's round trip to it at MPI_Init (world rank 0) */
    char must_measure;   /* this rank measures its clock offset */
    char *measure;       /* rank 0: must_measure of every rank */
    uint8_t *buf;        /* E chunk under construction: header space, then records */
    size_t len, cap;
    uint32_t nrec;
    uint64_t prev_return;
    uint64_t next_req;   /* next request id */
    uint64_t comm_seq;   /* communicators this rank has led the creation of */
    uint64_t cancels;    /* MPI_Cancel calls so far */
    uint64_t untracked;  /* calls not recorded because their communicator is unknown */
    struct sent {        /* the last sends' buffers (see note_sent) */
        uintptr_t lo, hi;
        int64_t dest;
        uint64_t print[4]; /* each quarter's fingerprint at the send (see part_of) */
        unsigned kept;   /* bit i: no receive has written into quarter i since */
        uint64_t moved;  /* T.moved at the send */
    } sent[8];
    unsigned sent_next;
    struct reduced {     /* Allreduce's, Scan's, Exscan's result buffers (see note_reduced) */
        uintptr_t lo, hi; /* both 0: an empty entry */
        uint64_t moved;  /* T.moved at the call */
    } reduced[4];
    unsigned reduced_next;
    int clean;           /* send buffers are fingerprinted (LOGGPS_TRACE_CLEAN not 0; see note_sent) */
    uint64_t moved;      /* bytes the rank's sends and receives read or wrote in its buffers so far */
    uint64_t cache;      /* a core's second-level cache, bytes (see cache_bytes); 0: no limit */
    uint64_t events;
    double own_ns;       /* the tracer's own time per record (see own_time); < 0: not timed */
    double in_call_ns;   /* its time inside each recorded call's span (see own_time); < 0: not timed */
    double own_req_ns, in_call_req_ns; /* the same for records of requests; < 0: not timed */
    /* the tracer's own time sampled during the run (see own_sample) */
    double clock_ns;        /* one clock read (see own_time); < 0: not timed, nothing sampled */
    double sample_delta;    /* what a gap holds beyond a sample (see sample_offset) */
    int sample_all;         /* every call sampled (see sample_offset) */
    uint64_t sample_at;     /* the clock at a sampled call's wrapper entry; 0: not sampled */
    uint64_t sample_events, sample_flushes; /* T.events and T.flushes then */
    uint64_t flushes;       /* E chunks written so far */
    uint64_t last_call;     /* the last record's call time and routine code */
    int last_code;
    uint64_t rng;           /* xorshift state: which of a routine's samples are kept */
    struct own_kept {       /* a routine's samples, ns: a uniform choice of up to OWN_KEPT */
        uint32_t seen;
        float ns[63];
    } *own_by[256];         /* by routine code */
    uint32_t node_cpus;  /* the CPUs the node's ranks may run on at Init (see find_node); 0: unknown */
    struct comm world, *self;
    struct table comms, reqs, msgs; /* communicators, requests, messages (matched probes) */
    struct table pers;   /* persistent requests, by the handle their *_init returned */
    struct queued *spare; /* unused queue entries, kept for reuse */
    struct idup *idups;  /* MPI_Comm_idup broadcasts not completed yet */
    void *scratch;       /* arrays for the multi-request and v-collective wrappers */
    size_t scratch_cap;
    int write_failed;
    /* call sites (see "Call sites" below) */
    int sites;           /* this rank records them */
    uintptr_t site;      /* where the call inside a wrapper was made from */
    struct table site_ids; /* address -> its index in addrs */
    struct table binding_calls; /* see through_binding */
    uintptr_t last_site; /* the last address looked up, and its index */
    uint64_t last_id;
    uint64_t *addrs;     /* the site table: every address, in order of first use */
    size_t naddrs, addrs_cap, addrs_written; /* ... those written in S chunks so far */
    uint8_t *sbuf;       /* the site index of each record of the E chunk under construction */
    size_t slen, scap;
    uint8_t *sout;       /* an S chunk being written */
    size_t sout_cap;
    uintptr_t self_lo, self_span; /* this library's loaded segments */
    struct { uintptr_t lo, span; } bindings[4]; /* MPI's language bindings' */
    int nbindings;
    uint32_t nobjects;   /* the objects the M chunk lists */
} T = { .fd = -1, .own_ns = -1, .in_call_ns = -1, .own_req_ns = -1, .in_call_req_ns = -1,
        .clock_ns = -1 };

static void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "loggps-trace[%d]: ", T.rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/*
 * Threads. A program may ask for MPI_THREAD_MULTIPLE and still call MPI from one thread at a
 * time; that is traced. Every wrapper that records (or touches the tables and the buffer) runs
 * between enter() and leave(), which make the calling thread the owner of the tracer's state;
 * only the owner touches it, so threads that take turns need no lock. A thread that finds
 * another one inside really overlaps with it: the events of the two have no program order, so
 * this rank stops recording for good (overlap). A thread that finds itself inside is in a
 * callback of its own MPI call (an attribute's delete function calling MPI_Comm_free, say):
 * that call goes through unrecorded.
 */
static inline uintptr_t thread_id(void) { return (uintptr_t)pthread_self(); }

/* Make thread `me` the owner if there is none: 0, else the owner there is. */
static inline uintptr_t grab(uintptr_t me)
{
    uintptr_t none = 0;
    __atomic_compare_exchange_n(&T.owner, &none, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    return none;
}

/* Whether the calling thread owns the tracer's state (it is inside a wrapper enter() let in,
 * or in a call from inside one). */
static inline int owned(void)
{
    return __atomic_load_n(&T.owner, __ATOMIC_RELAXED) == thread_id();
}

/* Two threads inside at once. The events recorded so far stay in the buffer and are written
 * at MPI_Finalize (or exit, MPI_Abort); the other ranks go on recording. Rank 0 then writes no
 * index, so the trace loads as an unfinished one, with a warning. The owner may be inside
 * record() now: only it writes the buffer, and it sees `recording` 0 from its next event on.
 * (Wrappers read `recording` plainly: it only ever drops to 0 here, and a thread that still
 * reads 1 meets the owner in enter().) */
__attribute__((cold, noinline)) static void overlap(void)
{
    __atomic_store_n(&T.recording, 0, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&T.stopped, 1, __ATOMIC_RELAXED))
        warn("two threads called MPI at the same time: rank %d stops recording here (its "
             "events so far are kept; the trace will load as unfinished)", T.rank);
}

HOT uintptr_t site_of(void *ra, void *frame);

/* The tracer's own time sampled during the run (src/model/MODEL.md §16): a record's cost to
 * the tracer depends on its routine and buffers (a send's buffer fingerprinted, a request's
 * entry, a collective's buffers, a binding's frames), which the figures timed at MPI_Init on
 * sends to MPI_PROC_NULL do not show. About one call in OWN_EVERY, chosen by the hash of the
 * rank's record count (no loop's period aliases it), reads the clock once more at its
 * wrapper's entry and once more at its exit: its own time is the two stretches outside the
 * call's span, less one clock read (the reads a trace's gap holds of it are one). Calls that
 * made other than one record, or flushed the buffer, are not sampled. */
enum { OWN_EVERY = 16, OWN_KEPT = sizeof T.own_by[0]->ns / sizeof T.own_by[0]->ns[0] };

HOT int sample_due(void)
{
    return T.clock_ns >= 0 && (T.sample_all || (T.events * 0x9E3779B97F4A7C15ull) >> 60 == 0);
}

static uint64_t xorshift(void)
{
    T.rng ^= T.rng << 13, T.rng ^= T.rng >> 7, T.rng ^= T.rng << 17;
    return T.rng;
}

/* Start of a wrapper: 1 if this call is recorded (the thread now owns the tracer's state and
 * must call leave), 0 if it just calls the PMPI routine. `ra` and `frame` are the wrapper's
 * return address and frame (the enter() macro passes them): where the call came from. */
HOT int enter_at(void *ra, void *frame)
{
    if (!T.recording) return 0;
    uint64_t at = sample_due() ? now() : 0;
    uintptr_t me = thread_id(), other = grab(me);
    if (!other) {
        T.sample_at = at, T.sample_events = T.events, T.sample_flushes = T.flushes;
        T.site = site_of(ra, frame);
        return 1;
    }
    if (other != me) overlap();
    return 0;
}
#define enter() enter_at(__builtin_return_address(0), __builtin_frame_address(0))

static void own_sample(void);

/* End of a wrapper that enter() let in; returns rc, for `return leave(rc);`. */
HOT int leave(int rc)
{
    if (T.sample_at) own_sample();
    __atomic_store_n(&T.owner, 0, __ATOMIC_RELEASE);
    return rc;
}

static void own_sample(void)
{
    uint64_t end = now(), at = T.sample_at;
    T.sample_at = 0;
    if (T.events != T.sample_events + 1 || T.flushes != T.sample_flushes) return;
    double ns = (double)(T.last_call - at) + (double)(end - T.prev_return) - T.clock_ns;
    int code = T.last_code;
    if (code < 0 || code > 255) return;
    struct own_kept *k = T.own_by[code];
    if (!k && !(k = T.own_by[code] = calloc(1, sizeof *k))) return;
    uint64_t slot = k->seen < OWN_KEPT ? k->seen : xorshift() % ((uint64_t)k->seen + 1);
    if (slot < OWN_KEPT) k->ns[slot] = (float)(ns > 0 ? ns : 0);
    if (k->seen < UINT32_MAX) k->seen++;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of a routine's kept samples (at least one), ns; sorts them. */
static double kept_median(struct own_kept *k)
{
    size_t m = k->seen < OWN_KEPT ? k->seen : OWN_KEPT;
    qsort(k->ns, m, sizeof k->ns[0], cmp_float);
    return m % 2 ? k->ns[m / 2] : 0.5 * ((double)k->ns[m / 2 - 1] + k->ns[m / 2]);
}

/* ------------------------------------------------------------------------------------------ */
/* Hash tables (linear probing, backward-shift deletion)                                       */
/* ------------------------------------------------------------------------------------------ */

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static struct slot *table_find(struct table *t, uint64_t key)
{
    if (t->n == 0) return NULL;
    for (size_t i = slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (!t->s[i].used) return NULL;
        if (t->s[i].key == key) return &t->s[i];
    }
}

/* The slot for key, existing (used = 1 already) or new (used set to 1, fields zeroed). */
static struct slot *table_put(struct table *t, uint64_t key)
{
    if ((t->n + 1) * 4 > t->cap * 3) {
        struct table g = { calloc(t->cap ? 2 * t->cap : 64, sizeof(struct slot)),
                           t->cap ? 2 * t->cap : 64, 0 };
        if (!g.s) abort();
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i].used) *table_put(&g, t->s[i].key) = t->s[i];
        free(t->s);
        *t = g;
    }
    size_t i = slot_of(key, t->cap);
    while (t->s[i].used && t->s[i].key != key) i = (i + 1) & (t->cap - 1);
    if (!t->s[i].used) {
        memset(&t->s[i], 0, sizeof t->s[i]);
        t->s[i].used = 1;
        t->s[i].key = key;
        t->n++;
    }
    return &t->s[i];
}

static void table_remove(struct table *t, struct slot *s)
{
    size_t mask = t->cap - 1, i = (size_t)(s - t->s), j = i;
    t->s[i].used = 0;
    t->n--;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->s[j].used) return;
        size_t h = slot_of(t->s[j].key, t->cap);
        /* move j back to the hole i unless its home h lies cyclically in (i, j] */
        int stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            t->s[i] = t->s[j];
            t->s[j].used = 0;
            i = j;
        }
    }
}

static inline uint64_t key_comm(MPI_Comm c)
{
    uint64_t k = 0;
    memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
    return k;
}

static inline uint64_t key_req(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static inline uint64_t key_msg(MPI_Message m)
{
    uint64_t k = 0;
    memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
    return k;
}

static void *scratch(size_t bytes)
{
    if (bytes > T.scratch_cap) {
        free(T.scratch);
        T.scratch_cap = bytes < 4096 ? 4096 : bytes;
        T.scratch = malloc(T.scratch_cap);
        if (!T.scratch) abort();
    }
    return T.scratch;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing chunks                                                                              */
/* ------------------------------------------------------------------------------------------ */

static void write_all_or_stop(const void *p, size_t n)
{
    if (T.write_failed) return;
    ssize_t w = write(T.fd, p, n);
    if (w != (ssize_t)n) {
        warn("write to %s failed (%s); this rank stops recording", T.path,
             w < 0 ? strerror(errno) : "short write");
        T.write_failed = 1;
        T.recording = 0;
    }
}

static void fill_chunk_head(uint8_t *p, char kind, uint32_t rank, size_t payload)
{
    p[0] = (uint8_t)kind;
    put_u32(p + 1, rank);
    put_u32(p + 5, (uint32_t)payload);
}

/* Append one chunk; buf has CHUNK_HEAD free bytes before the payload. */
static void append_chunk(uint8_t *buf, char kind, uint32_t rank, size_t payload)
{
    fill_chunk_head(buf, kind, rank, payload);
    write_all_or_stop(buf, CHUNK_HEAD + payload);
}
