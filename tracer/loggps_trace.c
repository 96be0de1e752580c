/*
 * loggps-trace: a PMPI tracer that writes the loggps binary trace format (see FORMAT.md).
 *
 * How it works, in one paragraph: every wrapper takes the time, calls the PMPI routine, takes
 * the time again and fills a `struct event` that it hands to record(), the one recording path.
 * record() encodes the event (LEB128/zigzag) into this rank's buffer; a full buffer is appended
 * to the trace file as one `E` chunk with a single write() (the file is opened with O_APPEND by
 * every rank, so chunks never interleave on a local filesystem). Rank 0 creates the file and
 * writes the header and the `J` chunk in MPI_Init; each rank writes its `R` and `P` chunks at
 * Init and again at Finalize; the rank 0 of each new communicator writes its `C` chunk; rank 0
 * appends the `X` index and the trailer at Finalize, after everybody flushed. Under
 * MPI_THREAD_MULTIPLE only one thread at a time may be inside a wrapper (enter/leave); a rank
 * whose threads really call MPI at once stops recording.
 *
 * Environment: LOGGPS_TRACE (output path, default ./loggps-trace.bin), LOGGPS_TRACE_BUFFER
 * (event buffer bytes per rank, default 4 MiB, 4 KiB..64 MiB), LOGGPS_TRACE_DISABLE=1,
 * LOGGPS_TRACE_EAGER_CVAR (name of the control variable to report as the eager limit),
 * LOGGPS_TRACE_SITES=0 (no call sites: no `S` and `M` chunks).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cores.h"
#include "place.h"

/* ------------------------------------------------------------------------------------------ */
/* Routine codes and shapes: the table of FORMAT.md                                            */
/* ------------------------------------------------------------------------------------------ */

enum shape { SH_NONE, SH_SEND, SH_ISEND, SH_RECV, SH_IRECV, SH_SENDRECV, SH_COMPLETE,
             SH_CANCEL, SH_COLL, SH_ICOLL, SH_COMMOP };

enum code {
    C_INIT = 0, C_INIT_THREAD = 1, C_FINALIZE = 2,
    C_SEND = 10, C_SSEND = 11, C_BSEND = 12, C_RSEND = 13,
    C_ISEND = 14, C_ISSEND = 15, C_IBSEND = 16, C_IRSEND = 17, C_MRECV = 18, C_IMRECV = 19,
    C_RECV = 20, C_IRECV = 21, C_SENDRECV = 22, C_SENDRECV_REPLACE = 23,
    C_PROBE = 24, C_IPROBE = 25, C_CANCEL = 26, C_REQUEST_FREE = 27,
    C_MPROBE = 28, C_IMPROBE = 29,
    C_WAIT = 30, C_WAITALL = 31, C_WAITANY = 32, C_WAITSOME = 33,
    C_TEST = 34, C_TESTALL = 35, C_TESTANY = 36, C_TESTSOME = 37,
    C_BARRIER = 40, C_BCAST = 41, C_REDUCE = 42, C_ALLREDUCE = 43,
    C_GATHER = 44, C_GATHERV = 45, C_SCATTER = 46, C_SCATTERV = 47,
    C_ALLGATHER = 48, C_ALLGATHERV = 49, C_ALLTOALL = 50, C_ALLTOALLV = 51,
    C_REDUCE_SCATTER = 52, C_REDUCE_SCATTER_BLOCK = 53, C_SCAN = 54, C_EXSCAN = 55,
    C_ALLTOALLW = 56,
    C_COMM_DUP = 60, C_COMM_SPLIT = 61, C_COMM_CREATE = 62, C_COMM_FREE = 63, C_COMM_IDUP = 64,
    /* one-sided communication and neighborhood collectives: shape none (times only) */
    C_WIN_CREATE = 70, C_WIN_ALLOCATE = 71, C_WIN_ALLOCATE_SHARED = 72,
    C_WIN_CREATE_DYNAMIC = 73, C_WIN_FREE = 74, C_WIN_FENCE = 75, C_WIN_LOCK = 76,
    C_WIN_UNLOCK = 77, C_WIN_LOCK_ALL = 78, C_WIN_UNLOCK_ALL = 79, C_WIN_FLUSH = 80,
    C_WIN_FLUSH_ALL = 81, C_WIN_FLUSH_LOCAL = 82, C_WIN_SYNC = 83, C_WIN_POST = 84,
    C_WIN_START = 85, C_WIN_COMPLETE = 86, C_WIN_WAIT = 87,
    C_PUT = 88, C_GET = 89, C_ACCUMULATE = 90, C_GET_ACCUMULATE = 91, C_FETCH_AND_OP = 92,
    C_COMPARE_AND_SWAP = 93,
    C_NEIGHBOR_ALLGATHER = 100, C_NEIGHBOR_ALLGATHERV = 101, C_NEIGHBOR_ALLTOALL = 102,
    C_NEIGHBOR_ALLTOALLV = 103, C_NEIGHBOR_ALLTOALLW = 104,
    /* nonblocking collectives: the blocking twin's code + 70 */
    C_IBARRIER = 110, C_IBCAST = 111, C_IREDUCE = 112, C_IALLREDUCE = 113,
    C_IGATHER = 114, C_IGATHERV = 115, C_ISCATTER = 116, C_ISCATTERV = 117,
    C_IALLGATHER = 118, C_IALLGATHERV = 119, C_IALLTOALL = 120, C_IALLTOALLV = 121,
    C_IREDUCE_SCATTER = 122, C_IREDUCE_SCATTER_BLOCK = 123, C_ISCAN = 124, C_IEXSCAN = 125,
    C_IALLTOALLW = 126,
    C_COUNT = 127
};

static const unsigned char shape_of[C_COUNT] = {
    [C_INIT] = SH_NONE, [C_INIT_THREAD] = SH_NONE, [C_FINALIZE] = SH_NONE,
    [C_SEND] = SH_SEND, [C_SSEND] = SH_SEND, [C_BSEND] = SH_SEND, [C_RSEND] = SH_SEND,
    [C_ISEND] = SH_ISEND, [C_ISSEND] = SH_ISEND, [C_IBSEND] = SH_ISEND, [C_IRSEND] = SH_ISEND,
    [C_RECV] = SH_RECV, [C_IRECV] = SH_IRECV, [C_MRECV] = SH_RECV, [C_IMRECV] = SH_IRECV,
    [C_SENDRECV] = SH_SENDRECV, [C_SENDRECV_REPLACE] = SH_SENDRECV,
    [C_PROBE] = SH_RECV, [C_IPROBE] = SH_RECV, [C_MPROBE] = SH_RECV, [C_IMPROBE] = SH_RECV,
    [C_CANCEL] = SH_CANCEL,
    [C_REQUEST_FREE] = SH_COMPLETE,
    [C_WAIT] = SH_COMPLETE, [C_WAITALL] = SH_COMPLETE, [C_WAITANY] = SH_COMPLETE,
    [C_WAITSOME] = SH_COMPLETE, [C_TEST] = SH_COMPLETE, [C_TESTALL] = SH_COMPLETE,
    [C_TESTANY] = SH_COMPLETE, [C_TESTSOME] = SH_COMPLETE,
    [C_BARRIER] = SH_COLL, [C_BCAST] = SH_COLL, [C_REDUCE] = SH_COLL, [C_ALLREDUCE] = SH_COLL,
    [C_GATHER] = SH_COLL, [C_GATHERV] = SH_COLL, [C_SCATTER] = SH_COLL, [C_SCATTERV] = SH_COLL,
    [C_ALLGATHER] = SH_COLL, [C_ALLGATHERV] = SH_COLL, [C_ALLTOALL] = SH_COLL,
    [C_ALLTOALLV] = SH_COLL, [C_REDUCE_SCATTER] = SH_COLL, [C_REDUCE_SCATTER_BLOCK] = SH_COLL,
    [C_SCAN] = SH_COLL, [C_EXSCAN] = SH_COLL, [C_ALLTOALLW] = SH_COLL,
    [C_COMM_DUP] = SH_COMMOP, [C_COMM_SPLIT] = SH_COMMOP, [C_COMM_CREATE] = SH_COMMOP,
    [C_COMM_FREE] = SH_COMMOP, [C_COMM_IDUP] = SH_ICOLL,
    /* codes 70-104 are SH_NONE (0), as every code not listed */
    [C_IBARRIER] = SH_ICOLL, [C_IBCAST] = SH_ICOLL, [C_IREDUCE] = SH_ICOLL,
    [C_IALLREDUCE] = SH_ICOLL, [C_IGATHER] = SH_ICOLL, [C_IGATHERV] = SH_ICOLL,
    [C_ISCATTER] = SH_ICOLL, [C_ISCATTERV] = SH_ICOLL, [C_IALLGATHER] = SH_ICOLL,
    [C_IALLGATHERV] = SH_ICOLL, [C_IALLTOALL] = SH_ICOLL, [C_IALLTOALLV] = SH_ICOLL,
    [C_IREDUCE_SCATTER] = SH_ICOLL, [C_IREDUCE_SCATTER_BLOCK] = SH_ICOLL, [C_ISCAN] = SH_ICOLL,
    [C_IEXSCAN] = SH_ICOLL, [C_IALLTOALLW] = SH_ICOLL,
};

/* flags of receives and probes */
enum { F_ANY_SOURCE = 1, F_ANY_TAG = 2, F_FOUND = 4 };

/* One completed request inside a `complete` record. */
struct done { uint64_t req; int64_t source, tag; };

/* What a wrapper hands to record(). Fields a shape does not use are ignored. */
struct event {
    int code;
    uint64_t t_call, t_return;
    uint64_t bytes, recv_bytes;     /* send side / receive side */
    int64_t peer, tag;              /* send: dest; recv: source (world ranks) */
    int64_t source, recvtag;        /* receive half of sendrecv */
    uint64_t comm, flags, req;
    int64_t root, newcomm;
    size_t n;                       /* entries of done[] or counts[] */
    const struct done *done;
    const uint64_t *counts;
};

/* Inlined into every wrapper, so that the routine code is a constant there and record()'s
 * switch on the shape folds away (fewer instructions per traced call; see tracer/bench/run.sh). */
#define HOT static inline __attribute__((always_inline))

/* ------------------------------------------------------------------------------------------ */
/* Encoding helpers                                                                            */
/* ------------------------------------------------------------------------------------------ */

static uint8_t *put_uleb(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static uint8_t *put_sleb(uint8_t *p, int64_t v)
{
    return put_uleb(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static uint8_t *put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
    return p + 8;
}

static uint8_t *put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    if (n > 65536) n = 65536;
    p = put_uleb(p, n);
    memcpy(p, s, n);
    return p + n;
}

/*
 * The clock. Times are CLOCK_MONOTONIC nanoseconds. Where the kernel itself derives
 * CLOCK_MONOTONIC from the TSC (x86-64, clocksource "tsc"), now() reads the TSC directly,
 * which costs about half of clock_gettime, and converts it with a scale fitted against
 * clock_gettime; it re-anchors to clock_gettime every millisecond, so it stays within a few
 * ns of CLOCK_MONOTONIC, and it never goes backwards. LOGGPS_TRACE_CLOCK=monotonic turns it
 * off (clock_gettime for every time stamp).
 */
static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>

static struct {
    int on;
    uint64_t tsc, ns;         /* anchor: a TSC value and the CLOCK_MONOTONIC time it had */
    uint64_t mult;            /* ns per tick, times 2^32 */
    uint64_t period;          /* re-anchor after this many ticks (1 ms) */
    uint64_t tsc0, ns0;       /* first anchor: the scale is fitted from it */
    uint64_t last;            /* last time returned */
} clk;

/* A TSC value and CLOCK_MONOTONIC taken together: the tightest of three tries, or of up to
 * ten while the tightest is wider than 1000 ticks (a preemption between the readings). */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 10 && (i < 3 || best > 1000); i++) {
        uint64_t a = __rdtsc(), m = mono(), b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = m;
        }
    }
}

static void clock_fit(uint64_t tsc, uint64_t ns)
{
    double ns_per_tick = (double)(ns - clk.ns0) / (double)(tsc - clk.tsc0);
    clk.mult = (uint64_t)(ns_per_tick * 4294967296.0);
    clk.period = (uint64_t)(1e6 / ns_per_tick);
    clk.tsc = tsc;
    clk.ns = ns;
}

static uint64_t clock_reanchor(void)
{
    uint64_t tsc, ns;
    tsc_pair(&tsc, &ns);
    if (tsc > clk.tsc && ns > clk.ns) clock_fit(tsc, ns);
    else clk.tsc = tsc, clk.ns = ns; /* TSC went backwards (unsynchronized cores?) */
    if (ns < clk.last) ns = clk.last;
    return clk.last = ns;
}

static void clock_start(void)
{
    const char *env = getenv("LOGGPS_TRACE_CLOCK");
    if (env && strcmp(env, "monotonic") == 0) return;
    char source[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return;
    if (!fgets(source, sizeof source, f)) source[0] = 0;
    fclose(f);
    if (strcmp(source, "tsc\n") != 0) return;
    tsc_pair(&clk.tsc0, &clk.ns0);
    uint64_t tsc, ns;
    do tsc_pair(&tsc, &ns); while (ns - clk.ns0 < 1000000); /* first scale over 1 ms */
    if (tsc <= clk.tsc0) return;
    clock_fit(tsc, ns);
    clk.last = ns;
    clk.on = 1;
}

static inline uint64_t now(void)
{
    if (!clk.on) return mono();
    uint64_t d = __rdtsc() - clk.tsc;
    if (d >= clk.period) return clock_reanchor();
    uint64_t t = clk.ns + ((d * clk.mult) >> 32);
    if (t < clk.last) t = clk.last;
    return clk.last = t;
}
#else
static void clock_start(void) {}
static inline uint64_t now(void) { return mono(); }
#endif

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
    } links[LINK_CLASSES];
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
    uint64_t events;
    double own_ns;       /* the tracer's own time per record (see own_time); < 0: not timed */
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
} T = { .fd = -1, .own_ns = -1 };

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

/* Start of a wrapper: 1 if this call is recorded (the thread now owns the tracer's state and
 * must call leave), 0 if it just calls the PMPI routine. `ra` and `frame` are the wrapper's
 * return address and frame (the enter() macro passes them): where the call came from. */
HOT int enter_at(void *ra, void *frame)
{
    if (!T.recording) return 0;
    uintptr_t me = thread_id(), other = grab(me);
    if (!other) {
        T.site = site_of(ra, frame);
        return 1;
    }
    if (other != me) overlap();
    return 0;
}
#define enter() enter_at(__builtin_return_address(0), __builtin_frame_address(0))

/* End of a wrapper that enter() let in; returns rc, for `return leave(rc);`. */
HOT int leave(int rc)
{
    __atomic_store_n(&T.owner, 0, __ATOMIC_RELEASE);
    return rc;
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

/* ------------------------------------------------------------------------------------------ */
/* Call sites                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Every record has a site: the return address of the program's MPI call. A rank's distinct
 * addresses make its site table, in order of first use; the `S` chunk written just before
 * each `E` chunk carries the addresses new since the last one and each record's index into
 * the table, plus one. The `M` chunk lists the loaded objects (path, build id, where they lie), so that
 * `loggps-predict callsites` can turn the addresses into function, file and line: they differ
 * from rank to rank, since each process loads its objects at addresses of its own.
 *
 * A call that reached the wrapper through this library (fortran.c's entry points) or through
 * MPI's Fortran bindings (MPICH's libmpifort, Open MPI's mpi_f08 module) was made by the
 * program somewhere further up the stack: program_site finds it.
 */

/* Whether a return address lies in this library or in a binding (see above). */
static inline int indirect(uintptr_t a)
{
    int in = a - T.self_lo < T.self_span;
    for (int i = 0; i < T.nbindings; i++) in |= a - T.bindings[i].lo < T.bindings[i].span;
    return in;
}

/* The first return address on the stack outside this library and the bindings, else
 * `otherwise`. */
static uintptr_t unwound(uintptr_t otherwise)
{
    void *pcs[8];
    int n = backtrace(pcs, 8);
    for (int i = 0; i < n; i++)
        if (!indirect((uintptr_t)pcs[i])) return (uintptr_t)pcs[i];
    return otherwise;
}

/* Unwinding costs a microsecond or more a call; a binding's frame has the same layout at each
 * of its calls, so where its return address lies above the stack pointer at a return address
 * `ra` into it is learned from one unwinding, checked by SITE_CHECKS more, and then read
 * directly (T.binding_calls: slot id = the word offset, kind = checks left; UINT64_MAX: not
 * found, unwind every time). x86-64 only: elsewhere every call through a binding unwinds. */
#define SITE_CHECKS 4
static uintptr_t through_binding(uintptr_t ra, const uintptr_t *sp)
{
#if defined(__x86_64__)
    struct slot *s = table_find(&T.binding_calls, ra);
    if (s && s->kind == 0 && s->id != UINT64_MAX && !indirect(sp[s->id]) && sp[s->id])
        return sp[s->id];
    uintptr_t u = unwound(0);
    if (!u) return ra;
    if (!s) {
        s = table_put(&T.binding_calls, ra);
        s->id = UINT64_MAX;
        for (uint64_t d = 0; d < 256 && s->id == UINT64_MAX; d++)
            if (sp[d] == u) s->id = d;
        s->kind = s->id == UINT64_MAX ? 0 : SITE_CHECKS;
    } else if (s->kind > 0) {
        if (sp[s->id] == u) s->kind--;
        else s->id = UINT64_MAX, s->kind = 0;
    }
    return u;
#else
    (void)sp;
    return unwound(ra);
#endif
}

/* The program's call that led to a wrapper whose return address `ra` is indirect; `frame` is
 * the wrapper's frame (it keeps a frame pointer, see the Makefile: on x86-64 the caller's
 * stack pointer once the wrapper returned is frame + 2 words). */
__attribute__((cold, noinline)) static uintptr_t program_site(uintptr_t ra, const uintptr_t *frame)
{
    if (!frame) return unwound(ra);
    const uintptr_t *sp = frame + 2;
    /* From fortran.c's entry point (which keeps a frame pointer too): its return address is
     * one frame up. */
    if (ra - T.self_lo < T.self_span) {
        const uintptr_t *up = (const uintptr_t *)frame[0];
        if (!(up > frame && (uintptr_t)(up - frame) < (1u << 20))) return unwound(ra);
        ra = up[1];
        sp = up + 2;
        if (!indirect(ra)) return ra;
    }
    return through_binding(ra, sp);
}

/* The site of a call whose wrapper has return address `ra` and frame `frame`. */
HOT uintptr_t site_of(void *ra, void *frame)
{
    uintptr_t a = (uintptr_t)ra;
    return indirect(a) ? program_site(a, frame) : a;
}

/* The index of address a in the site table (added if new). */
HOT uint64_t site_id(uintptr_t a)
{
    if (a == T.last_site && T.naddrs) return T.last_id;
    struct slot *s = table_find(&T.site_ids, a);
    if (!s) {
        if (T.naddrs == T.addrs_cap) {
            T.addrs_cap = T.addrs_cap ? 2 * T.addrs_cap : 256;
            T.addrs = realloc(T.addrs, T.addrs_cap * sizeof *T.addrs);
            if (!T.addrs) abort();
        }
        s = table_put(&T.site_ids, a);
        s->id = T.naddrs;
        T.addrs[T.naddrs++] = a;
    }
    T.last_site = a;
    T.last_id = s->id;
    return s->id;
}

/* Appends the S chunk of the next E chunk's `nrec` records (their indices are in sbuf). */
static void write_sites(uint32_t nrec)
{
    size_t fresh = T.naddrs - T.addrs_written;
    size_t need = CHUNK_HEAD + 8 + 8 * fresh + T.slen;
    if (need > T.sout_cap) {
        free(T.sout);
        T.sout_cap = 2 * need;
        T.sout = malloc(T.sout_cap);
        if (!T.sout) abort();
    }
    uint8_t *p = put_u32(T.sout + CHUNK_HEAD, (uint32_t)fresh);
    for (size_t i = T.addrs_written; i < T.naddrs; i++) p = put_u64(p, T.addrs[i]);
    p = put_u32(p, nrec);
    memcpy(p, T.sbuf, T.slen);
    p += T.slen;
    append_chunk(T.sout, 'S', (uint32_t)T.rank, (size_t)(p - T.sout - CHUNK_HEAD));
    T.addrs_written = T.naddrs;
    T.slen = 0;
}

/* The loaded objects, encoded as the M chunk's payload. */
struct objects { uint8_t *b; size_t len, cap; uint32_t n, seen; };

static const char *const binding_names[] = {
    "libmpifort.", "libmpichfort.", "libmpi_mpifh.", "libmpi_usempif08.",
    "libmpi_usempi_ignore_tkr.", "libmpi_usempi.", "libfmpich."
};

static int one_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct objects *o = data;
    int first = o->seen++ == 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    char id[2 * 64 + 1] = "";
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo) lo = a;
            if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE && !*id) {
            /* the GNU build id note: namesz, descsz, type 3, "GNU\0", the id */
            const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
            const uint8_t *end = n + ph->p_memsz;
            while (n + 12 <= end) {
                uint32_t namesz, descsz, type;
                memcpy(&namesz, n, 4);
                memcpy(&descsz, n + 4, 4);
                memcpy(&type, n + 8, 4);
                const uint8_t *name = n + 12, *desc = name + ((namesz + 3) & ~3u);
                if (desc + descsz > end) break;
                if (type == 3 && namesz == 4 && memcmp(name, "GNU", 4) == 0 && descsz <= 64) {
                    for (uint32_t k = 0; k < descsz; k++) sprintf(id + 2 * k, "%02x", desc[k]);
                    break;
                }
                n = desc + ((descsz + 3) & ~3u);
            }
        }
    }
    if (hi <= lo) return 0;
    char path[4096] = "";
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (!*name && first) { /* the program itself */
        ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
        path[k > 0 ? k : 0] = 0;
    } else {
        snprintf(path, sizeof path, "%s", name);
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if ((uintptr_t)&program_site - lo < hi - lo) {
        T.self_lo = lo;
        T.self_span = hi - lo;
    }
    for (size_t i = 0; i < sizeof binding_names / sizeof *binding_names; i++)
        if (strncmp(base, binding_names[i], strlen(binding_names[i])) == 0 && T.nbindings < 4) {
            T.bindings[T.nbindings].lo = lo;
            T.bindings[T.nbindings++].span = hi - lo;
        }
    if (o->len + 3 * 8 + 2 * 10 + sizeof id + strlen(path) > o->cap) {
        o->cap = 2 * o->cap + sizeof path + 256;
        o->b = realloc(o->b, o->cap);
        if (!o->b) abort();
    }
    uint8_t *p = o->b + o->len;
    p = put_u64(p, (uint64_t)info->dlpi_addr);
    p = put_u64(p, (uint64_t)lo);
    p = put_u64(p, (uint64_t)hi);
    p = put_str(p, id);
    p = put_str(p, path);
    o->len = (size_t)(p - o->b);
    o->n++;
    return 0;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size;
    ++*(uint32_t *)data;
    return 0;
}

static uint32_t count_objects(void)
{
    uint32_t n = 0;
    dl_iterate_phdr(count_one, &n);
    return n;
}

/* Appends this rank's M chunk; the number of objects loaded (count_objects). */
static uint32_t write_objects(void)
{
    struct objects o = { malloc(4096), CHUNK_HEAD + 4, 4096, 0, 0 };
    if (!o.b) abort();
    T.nbindings = 0;
    dl_iterate_phdr(one_object, &o);
    put_u32(o.b + CHUNK_HEAD, o.n);
    append_chunk(o.b, 'M', (uint32_t)T.rank, o.len - CHUNK_HEAD);
    free(o.b);
    return o.seen;
}

static void flush_events(void)
{
    if (T.nrec == 0 || T.fd < 0) return;
    if (T.sites) write_sites(T.nrec);
    fill_chunk_head(T.buf, 'E', (uint32_t)T.rank, T.len - CHUNK_HEAD);
    put_u32(T.buf + CHUNK_HEAD, T.nrec);
    write_all_or_stop(T.buf, T.len);
    T.len = E_HEAD;
    T.nrec = 0;
}

static void write_rank_chunk(int64_t off_init, int64_t off_fini, double cores_fini)
{
    uint8_t b[CHUNK_HEAD + 320], *p = b + CHUNK_HEAD;
    p = put_str(p, T.host);
    p = put_u64(p, (uint64_t)off_init);
    p = put_u64(p, (uint64_t)off_fini);
    if (T.cores_init >= 0 && cores_fini >= 0) {
        double both[2] = { T.cores_init, cores_fini };
        p = put_u32(p, (uint32_t)T.cores_partner);
        for (int i = 0; i < 2; i++) {
            uint64_t bits;
            memcpy(&bits, &both[i], 8);
            p = put_u64(p, bits);
        }
    }
    if (T.own_ns >= 0) {
        uint64_t bits;
        memcpy(&bits, &T.own_ns, 8);
        p = put_u64(p, bits);
    }
    append_chunk(b, 'R', (uint32_t)T.rank, (size_t)(p - b - CHUNK_HEAD));
}

/* This rank's P chunk: its node, where it ran at Init and now, and (on a node's first rank) the
 * node's links timed at Init and now (`fini_ns`, from time_links). */
static void write_place_chunk(struct place fini, const double *fini_ns)
{
    uint8_t b[CHUNK_HEAD + 4 + 6 * 4 + 1 + LINK_CLASSES * 25], *p = b + CHUNK_HEAD;
    int at[6] = { T.place_init.cpu, T.place_init.socket, T.place_init.llc,
                  fini.cpu, fini.socket, fini.llc };
    p = put_u32(p, T.node_first);
    for (int i = 0; i < 6; i++) p = put_u32(p, (uint32_t)at[i]);
    uint8_t *n = p++;
    *n = 0;
    for (int k = 0; k < T.nlinks; k++) {
        const struct link *l = &T.links[k];
        if (!(l->init_ns > 0 && fini_ns[k] > 0)) continue;
        double both[2] = { l->init_ns, fini_ns[k] };
        *p++ = (uint8_t)l->cls;
        p = put_u32(p, l->wa);
        p = put_u32(p, l->wb);
        for (int i = 0; i < 2; i++) {
            uint64_t bits;
            memcpy(&bits, &both[i], 8);
            p = put_u64(p, bits);
        }
        ++*n;
    }
    append_chunk(b, 'P', (uint32_t)T.rank, (size_t)(p - b - CHUNK_HEAD));
}

static void write_comm_chunk(const struct comm *c)
{
    size_t payload = 8 + 4 * (size_t)c->size;
    uint8_t *b = malloc(CHUNK_HEAD + payload), *p = b + CHUNK_HEAD;
    if (!b) abort();
    p = put_u32(p, c->id);
    p = put_u32(p, (uint32_t)c->size);
    for (int i = 0; i < c->size; i++) p = put_u32(p, (uint32_t)c->members[i]);
    append_chunk(b, 'C', 0xFFFFFFFFu, payload);
    free(b);
}

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

/* ------------------------------------------------------------------------------------------ */
/* Start and end of tracing                                                                    */
/* ------------------------------------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

/* Offset to rank 0's clock (rank 0's clock = mine + offset): ping-pong with rank 0 over the
 * private communicator, keep the sample with the smallest round trip. Collective. Ranks that
 * run on rank 0's machine (same kernel boot id) share its CLOCK_MONOTONIC: offset 0 without
 * measuring (set LOGGPS_TRACE_MEASURE_OFFSETS=1 to measure anyway). */
static int64_t measure_offset(void)
{
    enum { ROUNDS = 16, TAG = 7001 };
    int64_t offset = 0;
    uint64_t t;
    if (T.rank == 0) {
        for (int r = 1; r < T.size; r++)
            for (int k = 0; k < ROUNDS && T.measure[r]; k++) {
                PMPI_Recv(&t, 1, MPI_UINT64_T, r, TAG, T.priv, MPI_STATUS_IGNORE);
                t = now();
                PMPI_Send(&t, 1, MPI_UINT64_T, r, TAG, T.priv);
            }
    } else if (T.must_measure) {
        uint64_t best = UINT64_MAX;
        for (int k = 0; k < ROUNDS; k++) {
            uint64_t a = now();
            PMPI_Send(&a, 1, MPI_UINT64_T, 0, TAG, T.priv);
            PMPI_Recv(&t, 1, MPI_UINT64_T, 0, TAG, T.priv, MPI_STATUS_IGNORE);
            uint64_t b = now();
            if (b - a < best) {
                best = b - a;
                offset = (int64_t)t - (int64_t)(a + (b - a) / 2);
            }
        }
    }
    return offset;
}

/* Which ranks must measure their clock offset (see measure_offset). Collective. */
static void decide_measurements(void)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f)) boot[0] = 0;
        fclose(f);
    }
    uint64_t mine = hash_str(boot[0] ? boot : T.host), root = mine;
    PMPI_Bcast(&root, 1, MPI_UINT64_T, 0, T.priv);
    const char *force = getenv("LOGGPS_TRACE_MEASURE_OFFSETS");
    T.must_measure = T.rank != 0 && (mine != root || (force && *force && strcmp(force, "0")));
    if (T.rank == 0) {
        T.measure = calloc((size_t)T.size, 1);
        if (!T.measure) abort();
    }
    PMPI_Gather(&T.must_measure, 1, MPI_CHAR, T.measure, 1, MPI_CHAR, 0, T.priv);
}

static int64_t now_signed(void) { return (int64_t)now(); }

/* The cores' round trip of this node's first two ranks (cores.h), ns, at this moment; -1 where
 * this rank is not the node's first, where LOGGPS_TRACE_CORES=0, or where it cannot be timed.
 * Collective over T.node. */
static double time_cores(void)
{
    return T.node == MPI_COMM_NULL ? -1 : cores_round_trip(T.node, 0, 1, 20000, now_signed);
}

/* The round trips of the node's links (pick_links) at this moment into `ns`, on the node's
 * first rank (-1 elsewhere, and where one cannot be timed). The pair of node ranks 0 and 1 is
 * the R chunk's, `cores` (time_cores): not timed twice, each timing costing up to 2 ms of
 * MPI_Init and MPI_Finalize. Collective over T.node. */
static void time_links(double cores, double ns[LINK_CLASSES])
{
    double mine[LINK_CLASSES];
    int timed = 0, me = 0;
    if (T.nlinks == 0) return;
    for (int k = 0; k < T.nlinks; k++) {
        const struct link *l = &T.links[k];
        if (l->a == 0 && l->b == 1) {
            mine[k] = cores;
        } else {
            mine[k] = cores_round_trip(T.node, l->a, l->b, 20000, now_signed);
            timed = 1;
        }
        ns[k] = mine[k];
    }
    /* the timing rank of a pair is its first, not always the node's first */
    if (timed && PMPI_Reduce(mine, ns, T.nlinks, MPI_DOUBLE, MPI_MAX, 0, T.node) != MPI_SUCCESS)
        for (int k = 0; k < T.nlinks; k++) ns[k] = -1;
    PMPI_Comm_rank(T.node, &me);
    if (me != 0)
        for (int k = 0; k < T.nlinks; k++) ns[k] = -1;
}

/* The node's first rank gathers where its `n` ranks run and picks a pair of them for each class
 * of link present (place.h); every rank of the node learns the pairs, since timing them is
 * collective over the node. */
static void pick_links(int n, int me)
{
    int mine[4] = { T.place_init.cpu, T.place_init.socket, T.place_init.llc, T.rank };
    int plan[1 + 5 * LINK_CLASSES] = { 0 }; /* count, then per link: class, a, b, wa, wb */
    int *all = me == 0 ? malloc(sizeof(int) * 4 * (size_t)n) : NULL;
    struct place *at = me == 0 ? malloc(sizeof *at * (size_t)n) : NULL;
    if (me == 0 && (!all || !at)) abort();
    if (PMPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, T.node) == MPI_SUCCESS && me == 0) {
        int pair[LINK_CLASSES][2];
        for (int i = 0; i < n; i++)
            at[i] = (struct place){ all[4 * i], all[4 * i + 1], all[4 * i + 2] };
        place_pick_pairs(at, n, pair);
        for (int c = 0; c < LINK_CLASSES; c++) {
            if (pair[c][0] < 0) continue;
            int *l = plan + 1 + 5 * plan[0]++;
            l[0] = c, l[1] = pair[c][0], l[2] = pair[c][1];
            l[3] = all[4 * pair[c][0] + 3], l[4] = all[4 * pair[c][1] + 3];
        }
    }
    free(all);
    free(at);
    if (PMPI_Bcast(plan, 1 + 5 * LINK_CLASSES, MPI_INT, 0, T.node) != MPI_SUCCESS) plan[0] = 0;
    T.nlinks = plan[0];
    for (int k = 0; k < T.nlinks; k++) {
        const int *l = plan + 1 + 5 * k;
        T.links[k] = (struct link){ l[0], l[1], l[2], (uint32_t)l[3], (uint32_t)l[4], -1 };
    }
}

/* Where this rank runs (the P chunk's node and place at Init) and, unless LOGGPS_TRACE_CORES=0,
 * the node's communicator for time_cores and time_links, this rank's partner there and the
 * node's links. Collective. */
static void find_node(void)
{
    T.node = MPI_COMM_NULL;
    T.node_first = (uint32_t)T.rank;
    T.cores_init = -1;
    T.nlinks = 0;
    T.place_init = place_now();
    MPI_Comm node;
    if (PMPI_Comm_split_type(T.priv, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return;
    PMPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int n = 0, me = 0, zero = 0, one = 1, first = T.rank;
    PMPI_Comm_size(node, &n);
    PMPI_Comm_rank(node, &me);
    /* key 0 keeps T.priv's order, the world's: node rank 0 is the node's lowest world rank. A
     * node of one rank (each rank its own node, as MPICH's -hosts a:1,b:1 has it) has no rank
     * 1 to translate and no pair to time. */
    MPI_Group g;
    PMPI_Comm_group(node, &g);
    PMPI_Group_translate_ranks(g, 1, &zero, T.world_group, &first);
    if (n >= 2) PMPI_Group_translate_ranks(g, 1, &one, T.world_group, &T.cores_partner);
    PMPI_Group_free(&g);
    T.node_first = (uint32_t)first;
    const char *off = getenv("LOGGPS_TRACE_CORES");
    if (n < 2 || (off && strcmp(off, "0") == 0)) {
        PMPI_Comm_free(&node);
        return;
    }
    T.node = node;
    pick_links(n, me);
}

/* Read one integer MPI_T control variable by name; 1 if found with a positive value. */
static int read_cvar(const char *name, uint64_t *value)
{
    int index, namelen = 256, desclen = 0, verbosity, bind, scope, count;
    char cname[256];
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle h;
    if (PMPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return 0;
    if (PMPI_T_cvar_get_info(index, cname, &namelen, &verbosity, &type, &enumtype, NULL,
                             &desclen, &bind, &scope) != MPI_SUCCESS)
        return 0;
    if (bind != MPI_T_BIND_NO_OBJECT) return 0;
    if (PMPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) return 0;
    union { int i; unsigned u; long l; unsigned long ul; long long ll; unsigned long long ull;
            char pad[64]; } v;
    memset(&v, 0, sizeof v);
    int ok = count == 1 && PMPI_T_cvar_read(h, &v) == MPI_SUCCESS;
    PMPI_T_cvar_handle_free(&h);
    if (!ok) return 0;
    long long x;
    if (type == MPI_INT) x = v.i;
    else if (type == MPI_UNSIGNED) x = v.u;
    else if (type == MPI_LONG) x = v.l;
    else if (type == MPI_UNSIGNED_LONG) x = (long long)v.ul;
    else if (type == MPI_LONG_LONG) x = v.ll;
    else if (type == MPI_UNSIGNED_LONG_LONG || type == MPI_COUNT) x = (long long)v.ull;
    else return 0;
    if (x <= 0) return 0;
    *value = (uint64_t)x;
    return 1;
}

/* Open MPI's MCA variables are the store behind its MPI_T cvars (same names, same values). Its
 * MPI_T_init_thread first registers the variables of every installed component, not only of
 * those MPI_Init opened (Open MPI 4.1: 344 -> 1116 variables, about 214 ms of every rank's
 * MPI_Init), while the variables of the components in use are registered already and cost
 * microseconds to read. The MCA API (libopen-pal) is found at run time, so the tracer neither
 * links against it nor needs it under another library. A variable's parsable dump (the lines
 * of `ompi_info --parsable`: "mca:btl:vader:param:btl_vader_eager_limit:value:4096", "...:type:
 * size_t") gives its type and value without assuming Open MPI's struct layouts; whatever is
 * missing or unexpected reads as not found, and the caller falls back to MPI_T. */
typedef int (*mca_var_find_by_name_fn)(const char *full_name, int *index);
typedef int (*mca_var_dump_fn)(int index, char ***lines, int output_type);
enum { MCA_VAR_DUMP_PARSABLE = 1 };

/* The text after "...:param:NAME:KEY:" in a dump, or NULL. */
static const char *mca_dump_field(char **lines, const char *name, const char *key)
{
    char tail[320];
    snprintf(tail, sizeof tail, ":param:%s:%s:", name, key);
    for (char **l = lines; *l; l++) {
        const char *f = strstr(*l, tail);
        if (f && strncmp(*l, "mca:", 4) == 0) return f + strlen(tail);
    }
    return NULL;
}

/* Read one integer MCA variable of Open MPI by name; 1 if registered with a positive value. */
static int read_mca_var(const char *name, uint64_t *value)
{
    static const char *integer_types[] = { "int", "unsigned_int", "unsigned_long",
                                           "unsigned_long_long", "size_t", "long", "int32_t",
                                           "uint32_t", "int64_t", "uint64_t", NULL };
    mca_var_find_by_name_fn find = (mca_var_find_by_name_fn)dlsym(RTLD_DEFAULT,
                                                                  "mca_base_var_find_by_name");
    mca_var_dump_fn dump = (mca_var_dump_fn)dlsym(RTLD_DEFAULT, "mca_base_var_dump");
    int index = -1;
    char **lines = NULL;
    if (!find || !dump || strlen(name) > 256) return 0;
    if (find(name, &index) != 0 || index < 0) return 0;
    if (dump(index, &lines, MCA_VAR_DUMP_PARSABLE) != 0 || !lines) return 0;
    const char *type = mca_dump_field(lines, name, "type");
    const char *text = mca_dump_field(lines, name, "value");
    int integer = 0;
    for (const char **t = integer_types; type && *t && !integer; t++)
        integer = strcmp(type, *t) == 0;
    int ok = 0;
    if (integer && text && *text >= '0' && *text <= '9') {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(text, &end, 10);
        ok = *end == 0 && errno == 0 && x > 0;
        if (ok) *value = (uint64_t)x;
    }
    for (char **l = lines; *l; l++) free(*l);
    free(lines);
    return ok;
}

/* The first name of the lists (up to 3, NULL-terminated) that `read` finds with a positive
 * value, into name (256 bytes) and value; 0 if none. */
static int read_first(const char **lists[3], int (*read)(const char *, uint64_t *), char *name,
                      uint64_t *value)
{
    for (int l = 0; l < 3 && lists[l]; l++)
        for (const char **n = lists[l]; *n; n++)
            if (read(*n, value)) {
                snprintf(name, 256, "%s", *n);
                return 1;
            }
    return 0;
}

/* The eager limit as the library reports it through its control variables (MPI_T cvars, or
 * Open MPI's MCA variables of the same names): the first of a list chosen by library and
 * placement that exists and has a positive value. */
static int find_eager_limit(const char *libversion, int single_node, char *name, uint64_t *value)
{
    static const char *ompi_shm[] = { "btl_vader_eager_limit", "btl_sm_eager_limit", NULL };
    static const char *ompi_net[] = { "btl_tcp_eager_limit", NULL };
    static const char *ch3[] = { "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", NULL };
    static const char *ch4_ofi[] = { "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", NULL };
    static const char *ch4_shm[] = { "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", NULL };
    const char **lists[3] = { NULL, NULL, NULL };
    const char *forced = getenv("LOGGPS_TRACE_EAGER_CVAR");
    const char *one[2] = { forced, NULL };
    if (forced && *forced) {
        lists[0] = one;
    } else if (strstr(libversion, "Open MPI")) {
        lists[0] = single_node ? ompi_shm : ompi_net;
        lists[1] = single_node ? ompi_net : ompi_shm;
    } else if (strstr(libversion, "MPICH")) {
        /* the device is on the line "MPICH Device:\tch4:ucx" */
        const char *d = strstr(libversion, "Device:");
        d = d ? d + strlen("Device:") + strspn(d + strlen("Device:"), " \t") : "";
        if (strncmp(d, "ch3", 3) == 0) lists[0] = ch3;
        else if (strncmp(d, "ch4:ofi", 7) == 0) {
            lists[0] = single_node ? ch4_shm : ch4_ofi;
            lists[1] = single_node ? ch4_ofi : ch4_shm;
        } else if (strncmp(d, "ch4", 3) == 0 && single_node) lists[0] = ch4_shm;
    }
    /* Open MPI: its MCA variables first (read_mca_var says why), MPI_T where they have none */
    if (strstr(libversion, "Open MPI") && read_first(lists, read_mca_var, name, value)) return 1;
    int provided;
    if (PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
    int found = read_first(lists, read_cvar, name, value);
    /* No PMPI_T_finalize: MPICH 4.0 crashes in a later MPI_T_init_thread once the MPI_T
     * reference count has been back to zero (seen with Debian's `mpivars`). Staying
     * initialized is harmless: the program's own init/finalize pairs stay balanced. */
    return found;
}

/* Rank 0: create the file and write the header and the J chunk. 1 on success. */
static int create_trace(int single_node)
{
    T.fd = open(T.path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (T.fd < 0) {
        if (errno == EEXIST)
            warn("%s already exists; not overwriting it. This job runs UNTRACED "
                 "(remove the file or set LOGGPS_TRACE to another path)", T.path);
        else
            warn("cannot create %s (%s); this job runs UNTRACED", T.path, strerror(errno));
        return 0;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    PMPI_Get_library_version(version, &len);
    char cvar[256] = "";
    uint64_t eager = 0;
    int have_eager = find_eager_limit(version, single_node, cvar, &eager);

    uint8_t *b = malloc(16 + CHUNK_HEAD + sizeof version + 600), *p = b;
    if (!b) abort();
    memcpy(p, "LGPSTRC\x1a", 8);
    p = put_u16(p + 8, 1);
    p = put_u16(p, 0);
    p = put_u32(p, (uint32_t)T.size);
    uint8_t *chunk = p;
    p += CHUNK_HEAD;
    p = put_str(p, version);
    *p++ = (uint8_t)have_eager;
    if (have_eager) {
        p = put_str(p, cvar);
        p = put_u64(p, eager);
    }
    *p++ = 0; /* no LogGPS parameters */
    fill_chunk_head(chunk, 'J', 0xFFFFFFFFu, (size_t)(p - chunk - CHUNK_HEAD));
    write_all_or_stop(b, (size_t)(p - b));
    free(b);
    return !T.write_failed;
}

/* Write what this rank buffered, unless a thread is inside a wrapper (it may be writing
 * there); after the end of tracing there is nothing. */
static void flush_if_idle(void)
{
    if (grab(thread_id())) return;
    flush_events();
    leave(0);
}

static void at_exit_flush(void)
{
    /* the program exited without MPI_Finalize: keep what this rank buffered */
    if (T.active) flush_if_idle();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The tracer's own time per record, ns, as a trace sees it: the gap between one recorded call's
 * return and the next one's call when nothing runs between the two calls but the tracer (the
 * encoding and release after a call, the wrapper's entry and call site before the next). A
 * replay takes it out of the computation between calls. Timed on this machine at MPI_Init on
 * MPI_Send to MPI_PROC_NULL, called through the wrapper as a program calls it: the median gap
 * of OWN_CALLS calls, read back from each record's encoded gap. Their records are dropped. */
enum { OWN_CALLS = 101 };
static double own_time(void)
{
    size_t len = T.len, slen = T.slen;
    uint32_t nrec = T.nrec;
    uint64_t prev = T.prev_return, events = T.events;
    double gap[OWN_CALLS];
    int n = 0;
    for (int i = 0; i <= OWN_CALLS; i++) {
        size_t at = T.len;
        MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        if (i == 0 || T.len <= at + 1) continue; /* the first follows no record of its own */
        /* the record: its routine's code, then the gap since the last return (zigzag LEB128) */
        uint64_t v = 0;
        const uint8_t *p = T.buf + at + 1;
        for (int shift = 0; shift < 64; shift += 7, p++) {
            v |= (uint64_t)(*p & 0x7f) << shift;
            if (!(*p & 0x80)) break;
        }
        int64_t d = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        if (d >= 0) gap[n++] = (double)d;
    }
    T.len = len, T.slen = slen, T.nrec = nrec, T.prev_return = prev, T.events = events;
    if (n == 0) return -1;
    qsort(gap, (size_t)n, sizeof gap[0], cmp_double);
    return gap[n / 2];
}

static void tracer_start(int code, uint64_t t0, uint64_t t1, void *ra, void *frame)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &T.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &T.size);
    const char *dis = getenv("LOGGPS_TRACE_DISABLE");
    if (dis && *dis && strcmp(dis, "0") != 0) return;
    clock_start();
    PMPI_Comm_dup(MPI_COMM_WORLD, &T.priv);
    PMPI_Comm_group(MPI_COMM_WORLD, &T.world_group);
    T.world = (struct comm){ .id = 0, .size = T.size, .me = T.rank, .members = NULL, .refs = 1 };
    gethostname(T.host, sizeof T.host - 1);
    const char *path = getenv("LOGGPS_TRACE");
    snprintf(T.path, sizeof T.path, "%s", path && *path ? path : "loggps-trace.bin");

    /* agree on: all on one host? (the largest hash and the largest complement meet) */
    uint64_t h = hash_str(T.host);
    uint64_t in[2] = { h, ~h }, out[2];
    PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, T.priv);
    int single_node = out[0] == ~out[1];

    /* rank 0 creates the file and tells the others its absolute path and identity (inode and
     * size), so that a rank on another node cannot append to a different file of that name */
    struct { int ok; uint64_t ino, size; char path[sizeof T.path]; } made = { 0, 0, 0, "" };
    if (T.rank == 0 && (made.ok = create_trace(single_node))) {
        struct stat sb;
        fstat(T.fd, &sb);
        made.ino = (uint64_t)sb.st_ino;
        made.size = (uint64_t)sb.st_size;
        if (!realpath(T.path, made.path)) snprintf(made.path, sizeof made.path, "%s", T.path);
        snprintf(T.path, sizeof T.path, "%s", made.path);
    }
    PMPI_Bcast(&made, (int)sizeof made, MPI_BYTE, 0, T.priv);
    int ok = made.ok;
    if (ok && T.rank != 0) {
        snprintf(T.path, sizeof T.path, "%s", made.path);
        T.fd = open(T.path, O_WRONLY | O_APPEND | O_CLOEXEC);
        struct stat sb;
        if (T.fd < 0) {
            warn("cannot open %s (%s)", T.path, strerror(errno));
        } else if (fstat(T.fd, &sb) != 0 || (uint64_t)sb.st_ino != made.ino ||
                   (uint64_t)sb.st_size != made.size) {
            warn("%s is not the file rank 0 created (another node's file?)", T.path);
            close(T.fd);
            T.fd = -1;
        }
    }
    int all = T.fd >= 0, every = 0;
    PMPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, T.priv);
    if (!ok || !every) {
        if (ok && T.rank == 0)
            warn("some rank cannot open %s (not a shared filesystem?); this job runs UNTRACED "
                 "and the file holds no events", T.path);
        if (T.fd >= 0) close(T.fd);
        T.fd = -1;
        PMPI_Comm_free(&T.priv);
        return;
    }

    size_t cap = 4u << 20;
    const char *bs = getenv("LOGGPS_TRACE_BUFFER");
    if (bs && *bs) cap = strtoull(bs, NULL, 0);
    if (cap < 4096) cap = 4096;
    if (cap > (64u << 20)) cap = 64u << 20;
    T.buf = malloc(cap);
    if (!T.buf) abort();
    T.cap = cap;
    T.len = E_HEAD;
    const char *sites = getenv("LOGGPS_TRACE_SITES");
    T.sites = !(sites && strcmp(sites, "0") == 0);

    decide_measurements();
    T.offset_init = measure_offset();
    find_node();
    T.cores_init = time_cores();
    double links_init[LINK_CLASSES];
    time_links(T.cores_init, links_init);
    for (int k = 0; k < T.nlinks; k++) T.links[k].init_ns = links_init[k];
    /* survive a crash; replaced at Finalize */
    write_rank_chunk(T.offset_init, T.offset_init, T.cores_init);
    write_place_chunk(T.place_init, links_init);
    if (T.sites) {
        T.scap = cap / 2;
        T.sbuf = malloc(T.scap);
        if (!T.sbuf) abort();
        T.nobjects = write_objects();
        void *pc[2];
        if (T.nbindings) backtrace(pc, 2); /* loads the unwinder now, not inside a call */
        T.site = site_of(ra, frame);
    }
    T.active = 1;
    T.recording = !T.write_failed;
    const char *own = getenv("LOGGPS_TRACE_OWN_TIME");
    if (T.recording && !(own && strcmp(own, "0") == 0)) {
        T.own_ns = own_time();
        if (T.sites) T.site = site_of(ra, frame); /* the Init's, as above */
    }
    atexit(at_exit_flush);
    /* The tracer's setup is part of what the program sees as MPI_Init, so the event returns
     * now, not when PMPI_Init returned. */
    (void)t1;
    struct event e = { .code = code, .t_call = t0, .t_return = now() };
    record(&e);
}

/* Rank 0, after every rank flushed: append the X index and the trailer. */
static void write_index(void)
{
    struct stat sb;
    if (fstat(T.fd, &sb) != 0) return;
    int rfd = open(T.path, O_RDONLY | O_CLOEXEC);
    if (rfd < 0) return;
    size_t n = 0, cap = 64;
    uint8_t *x = malloc(CHUNK_HEAD + 4 + 12 * cap + 16);
    if (!x) abort();
    uint64_t off = 16, end = (uint64_t)sb.st_size;
    while (off + CHUNK_HEAD <= end) {
        uint8_t h[CHUNK_HEAD];
        if (pread(rfd, h, CHUNK_HEAD, (off_t)off) != CHUNK_HEAD) break;
        uint32_t len = h[5] | (uint32_t)h[6] << 8 | (uint32_t)h[7] << 16 | (uint32_t)h[8] << 24;
        if (h[0] == 'E') {
            if (n == cap) {
                cap *= 2;
                x = realloc(x, CHUNK_HEAD + 4 + 12 * cap + 16);
                if (!x) abort();
            }
            uint8_t *p = x + CHUNK_HEAD + 4 + 12 * n++;
            p = put_u32(p, h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 24);
            put_u64(p, off);
        }
        off += CHUNK_HEAD + (uint64_t)len;
    }
    close(rfd);
    if (off != end) {
        warn("%s: chunk scan stopped at %llu of %llu bytes; no index written", T.path,
             (unsigned long long)off, (unsigned long long)end);
        free(x);
        return;
    }
    put_u32(x + CHUNK_HEAD, (uint32_t)n);
    size_t payload = 4 + 12 * n;
    fill_chunk_head(x, 'X', 0xFFFFFFFFu, payload);
    uint8_t *p = put_u64(x + CHUNK_HEAD + payload, end);
    memcpy(p, "LGPSEND\x1a", 8);
    write_all_or_stop(x, CHUNK_HEAD + payload + 16);
    free(x);
}

static void tracer_finish(uint64_t t0, void *ra, void *frame)
{
    PMPI_Barrier(T.priv); /* MPI_Finalize synchronizes; record that part */
    if (T.sites) T.site = site_of(ra, frame);
    struct event e = { .code = C_FINALIZE, .t_call = t0, .t_return = now() };
    record(&e);
    while (T.idups) { /* of idup requests freed or never completed (see idup_start) */
        struct idup *d = T.idups;
        T.idups = d->next;
        PMPI_Wait(&d->bcast, MPI_STATUS_IGNORE);
        free(d);
    }
    int64_t offset_fini = measure_offset();
    struct place place_fini = place_now();
    double cores_fini = time_cores(), links_fini[LINK_CLASSES];
    time_links(cores_fini, links_fini);
    if (T.node != MPI_COMM_NULL) PMPI_Comm_free(&T.node);
    /* also on a rank that stopped recording: its events up to the stop (no-ops once a write
     * failed) */
    write_rank_chunk(T.offset_init, offset_fini, cores_fini);
    write_place_chunk(place_fini, links_fini);
    flush_events();
    /* objects loaded since MPI_Init (dlopen) may hold sites: list them all again */
    if (T.sites && !T.write_failed && count_objects() != T.nobjects) write_objects();
    T.recording = 0;
    /* rank 0 has the sums only when every rank has flushed: the barrier before the index */
    uint64_t counts[3] = { T.events, T.untracked, (uint64_t)T.stopped }, sums[3];
    PMPI_Reduce(counts, sums, 3, MPI_UINT64_T, MPI_SUM, 0, T.priv);
    /* a rank that stopped has no MPI_Finalize: without the index the trace is an unfinished
     * one, which a reader loads with a warning */
    if (T.rank == 0 && !T.write_failed && !sums[2]) write_index();
    if (T.rank == 0) {
        fprintf(stderr, "loggps-trace: wrote %s (%llu events from %d ranks)\n", T.path,
                (unsigned long long)sums[0], T.size);
        if (sums[1])
            fprintf(stderr, "loggps-trace: %llu calls on communicators the tracer does not "
                    "know (intercommunicators, spawned worlds, ...) were not recorded\n",
                    (unsigned long long)sums[1]);
        if (sums[2])
            fprintf(stderr, "loggps-trace: %llu ranks stopped recording (two threads called "
                    "MPI at the same time); no index written: the trace is unfinished\n",
                    (unsigned long long)sums[2]);
    }
    close(T.fd);
    T.fd = -1;
    T.active = 0;
    PMPI_Comm_free(&T.priv);
    PMPI_Group_free(&T.world_group);
    free(T.measure);
    T.measure = NULL;
}

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

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!enter()) return PMPI_Send(buf, count, type, dest, tag, comm);
    uint64_t t0 = now();
    int rc = PMPI_Send(buf, count, type, dest, tag, comm);
    send_event(C_SEND, t0, now(), count, type, dest, tag, comm, NULL);
    return leave(rc);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!enter()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
    uint64_t t0 = now();
    int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
    send_event(C_SSEND, t0, now(), count, type, dest, tag, comm, NULL);
    return leave(rc);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!enter()) return PMPI_Bsend(buf, count, type, dest, tag, comm);
    uint64_t t0 = now();
    int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
    send_event(C_BSEND, t0, now(), count, type, dest, tag, comm, NULL);
    return leave(rc);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!enter()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
    uint64_t t0 = now();
    int rc = PMPI_Rsend(buf, count, type, dest, tag, comm);
    send_event(C_RSEND, t0, now(), count, type, dest, tag, comm, NULL);
    return leave(rc);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    if (!enter()) return PMPI_Isend(buf, count, type, dest, tag, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    send_event(C_ISEND, t0, now(), count, type, dest, tag, comm, req);
    return leave(rc);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    if (!enter()) return PMPI_Issend(buf, count, type, dest, tag, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Issend(buf, count, type, dest, tag, comm, req);
    send_event(C_ISSEND, t0, now(), count, type, dest, tag, comm, req);
    return leave(rc);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    if (!enter()) return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
    send_event(C_IBSEND, t0, now(), count, type, dest, tag, comm, req);
    return leave(rc);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    if (!enter()) return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
    uint64_t t0 = now();
    int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, req);
    send_event(C_IRSEND, t0, now(), count, type, dest, tag, comm, req);
    return leave(rc);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    if (!enter()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    recv_event(C_RECV, t0, now(), source, tag, comm, status, 1);
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
    recv_event(C_PROBE, t0, now(), source, tag, comm, status, 1);
    return leave(rc);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!enter()) return PMPI_Iprobe(source, tag, comm, flag, status);
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    uint64_t t0 = now();
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    recv_event(C_IPROBE, t0, now(), source, tag, comm, status, *flag);
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
    struct comm *c = recv_event(C_MPROBE, t0, now(), source, tag, comm, status, 1);
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
    struct comm *c = recv_event(C_IMPROBE, t0, now(), source, tag, comm, status, *flag);
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

/* Persistent requests: the *_init calls are not recorded (see persist_new); each start is
 * recorded as the nonblocking operation it begins. */
int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Send_init(buf, count, type, dest, tag, comm, req);
    int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) persist_new(*req, C_ISEND, count, type, dest, tag, comm);
    return leave(rc);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Ssend_init(buf, count, type, dest, tag, comm, req);
    int rc = PMPI_Ssend_init(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) persist_new(*req, C_ISSEND, count, type, dest, tag, comm);
    return leave(rc);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Bsend_init(buf, count, type, dest, tag, comm, req);
    int rc = PMPI_Bsend_init(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) persist_new(*req, C_IBSEND, count, type, dest, tag, comm);
    return leave(rc);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request *req)
{
    if (!enter()) return PMPI_Rsend_init(buf, count, type, dest, tag, comm, req);
    int rc = PMPI_Rsend_init(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) persist_new(*req, C_IRSEND, count, type, dest, tag, comm);
    return leave(rc);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    if (!enter()) return PMPI_Recv_init(buf, count, type, source, tag, comm, req);
    int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS) persist_new(*req, C_IRECV, count, type, source, tag, comm);
    return leave(rc);
}

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
