/* Part of loggps_trace.c (included there, in order: one translation unit): Routine codes and shapes (the table of FORMAT.md), and encoding helpers. */
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

/* flags of receives and probes; F_CLEAN of sends and Sendrecv's send half; F_RECV_PAGE and
 * F_SEND_PAGE: the receive buffer's offset in its 4 KiB page in bits 8-19, the send buffer's
 * in bits 20-31 (page_of); F_REDUCED a collective's (which carries no page bits: see
 * note_reduced) */
enum { F_ANY_SOURCE = 1, F_ANY_TAG = 2, F_FOUND = 4, F_BOUNCED = 8, F_CLEAN = 16,
       F_RECV_PAGE = 32, F_SEND_PAGE = 64, F_REDUCED = 64 };

/* A send-shaped record whose code has this bit carries a `uleb flags` after its fields. */
#define CODE_FLAGS 0x80

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

static uint8_t *put_f64(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return put_u64(p, bits);
}

static uint8_t *put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    if (n > 65536) n = 65536;
    p = put_uleb(p, n);
    memcpy(p, s, n);
    return p + n;
}
