/* loggps-rtt: round-trip times for LogGPS calibration (Ino et al., PPoPP 2001, §4.3, Fig. 3).
 *
 * Rank 0: MPI_Send(k) to rank 1, spin w ns, MPI_Recv(k) from rank 1.
 * Rank 1: MPI_Recv(k) from rank 0, MPI_Send(k) back.
 * Each rank sends from one buffer, written before each send as a program computes into what it
 * sends (outside the timed round trip), and receives into another. Sending back the buffer a
 * message was received into costs more on cores far apart (the receiver's copy then reads
 * lines dirty in the other core's cache and writes lines that core holds: 16 KiB 2x, 256 KiB
 * 2-3x on this project's machine at about 320 ns a cache line, alike at about 70 ns); a buffer
 * written once and never again costs less than one written before each send (there 16 KiB
 * 0.75x, 256 KiB 0.5x). MODEL.md (§13) says what a trace cannot tell of this.
 * One message is in flight per round trip, so no buffer ever floods. Each round trip is timed
 * on its own; rank 0 prints, per size and imbalance, the mean of the repetitions' middle half
 * (between their quartiles: robust as a median, finer than the clock's step) and the minimum,
 * then the same mean of rank 0's MPI_Send and MPI_Recv alone (the calls' own
 * durations tell the send overhead from the receive overhead, which the round trip sums), and
 * last the plain mean of every repetition (the rare long ones, the operating system's
 * interruptions of either rank, included: what a program repeating the exchange pays):
 *
 *     rtt K W_NS MIDDLE_NS MIN_NS REPS SEND_NS RECV_NS MEAN_NS
 *
 * With --hide F, each size then gets one more point, at an imbalance of F times its round trip
 * at w = 0 (at least HIDE_MIN_NS; --w must list 0): long enough that the reply is there before
 * rank 0 receives, short enough that the wait does not chill rank 0's caches (a spin of
 * hundreds of microseconds makes the next MPI call several times slower). Its round trip is
 * rank 0's send, w and its receive, timed each (the spin's clock reads and its overshoot past
 * w are left out). Its line reads as an rtt line does:
 *
 *     hide K W_NS MIDDLE_NS MIN_NS REPS SEND_NS RECV_NS MEAN_NS
 *
 * Then the same point once more with MPI_Isend in place of MPI_Send (the request waited for
 * after the spin, untimed): the mean of the middle half of the Isend's own durations. Where
 * MPI_Send returns only once the library has its buffer back (Open MPI's shared memory takes
 * its fragment back from the receiver), the Isend returns when the message has left: the
 * difference is the part of the send's overhead after the message's departure (the model's
 * `Od`, §13), which round trips cannot tell from the latency:
 *
 *     isend K W_NS MIDDLE_NS REPS
 *
 * Before the first size, rank 0 times the clock itself (two reads with nothing between, the
 * median of MAX_REPS): each timed interval above holds one such interval of the clock's own
 * (a hiding point's round trip two, its send's and its receive's), which calibrate leaves in
 * (a program's calls are separated by work of its own: MODEL.md §10), and so does each timed
 * repetition of the local probes below (work inside one call), which it takes out of theirs:
 *
 *     clock MEDIAN_NS REPS
 *
 * With --poll B, rank 0 then times failed polls (MPI_Test on a receive nothing has matched yet,
 * MPI_Iprobe for a message nobody sent), in B batches of POLL_BATCH calls, and prints the
 * median and the minimum of the batches' time per call:
 *
 *     poll MEDIAN_NS MIN_NS B
 *
 * and then times posted receives (MPI_Irecv of a message nobody has sent, POST_BATCH of them
 * in a row, each then cancelled and freed, untimed), in B batches, the median and the minimum
 * of the batches' time per call: what posting a receive costs (the model's `post`):
 *
 *     post MEDIAN_NS MIN_NS B
 *
 * and, of the same requests once cancelled (complete), each MPI_Wait (POST_BATCH in a row): what
 * a completion call costs with nothing left to wait for (the model's `wait`):
 *
 *     waitdone MEDIAN_NS MIN_NS B
 *
 * With --reduce K,K,..., rank 0 then times MPI_Reduce_local (MPI_SUM on K bytes of doubles),
 * the arithmetic a reducing collective's step does, each repetition after reading 256 KiB of
 * other memory (evict: its buffers out of the first-level cache, as a collective's are), and
 * prints per size the median and the minimum over the repetitions:
 *
 *     reduce K MEDIAN_NS MIN_NS REPS
 *
 * With --progress K, rank 1 posts a receive of K bytes, computes PROGRESS_SPIN_NS, then waits
 * for it while rank 0 sends it at once; rank 0 then times the same message's plain round trip.
 * Where the library moves messages only inside MPI calls (no progress thread), the wait holds
 * the whole transfer; where it progresses in the background, the wait finds the message there.
 * Rank 0 prints the medians over the repetitions:
 *
 *     progress K WAIT_NS RTT_NS REPS
 *
 * With --copy K,K,..., rank 0 then times memcpy of each K bytes (after evict, as --reduce) between page-aligned buffers twice: with
 * the destination COPY_ALIAS bytes past the source modulo 4096, and with both aligned. Some
 * CPUs copy the first many times slower (a load is taken to depend on a store 4 KiB away), and
 * what a message costs then depends on where the program's buffers lie, which no model
 * parameter carries. Under COPY_BATCH bytes each repetition times BATCH copies of K bytes
 * (each a call of memcpy, from and to successive blocks), so that the interval is not the
 * clock's resolution (a 1 KiB copy took 10 ns, one tick of this VM's clock, or less). It prints
 * the medians over the repetitions of the interval, a line a size (the aligned copies' time a
 * byte at each size is the model's `copy`, ns a byte copied in a collective):
 *
 *     copy K ALIGNED_NS ALIASED_NS REPS BATCH
 *
 * and then times malloc and free of K bytes (after evict), the pair's median: what a
 * collective's temporary costs (the model's `alloc`):
 *
 *     alloc K MEDIAN_NS REPS
 *
 *
 * With --exchange K,K,..., both ranks then exchange N messages of K bytes each way at once, as a
 * halo does (MPI_Irecv N from the other rank, MPI_Isend N to it, MPI_Waitall), for N = 1 and
 * 2, EXCHANGE_REPS times each after a barrier, each rank writing its messages before each
 * exchange (untimed), and rank 0 prints the mean of the middle half of its exchanges' durations. Two messages in opposite directions overlap their latencies, not
 * their ranks' CPU work, so the second message's cost (N = 2 against N = 1) is what a message
 * occupies its ranks' CPUs (the model's §14):
 *
 *     exchange K N MIDDLE_NS REPS
 *
 * With --bounce K,K,..., rank 0 then times round trips of K bytes three ways: as the sweep times
 * them (a send buffer written before each send, a separate receive buffer), from one buffer
 * on each rank, received into and sent back (a ping-pong bouncing its buffer; MODEL.md §13,
 * `bounce`), and from a send buffer written once, before the first (a program sending data it
 * does not write between its sends: what a trace cannot tell, MODEL.md §13); then exchanges of
 * one message each way at once (as --exchange makes them, N = 1) two ways, from a send buffer
 * written before each exchange and from one written once (a halo of fixed boundaries: the share
 * a `clean` send takes, MODEL.md §13, is the exchanges' where they were timed); then one
 * message one way from a send buffer written once, answered by an empty one, two ways: into a
 * buffer the receiver has not sent from and into one it has just sent to the sender (whose
 * copy read its lines: `bounce_clean`, MODEL.md §13, the difference a byte); and prints the
 * mean of the middle half of each:
 *
 *     bounce K WRITTEN_NS BOUNCED_NS REPS CLEAN_NS XWRITTEN_NS XCLEAN_NS OWN_NS INTO_SENT_NS
 *
 * With --held K,K,..., rank 0 then sends K bytes to rank 1 (by rendezvous above the eager
 * limit: rank 1's single copy reads the buffer), both ranks wait at a barrier, and rank 0 times
 * a memcpy of K bytes into the buffer it sent, then the same after a send, into a buffer it
 * did not send, and the same two with MPI_Reduce_local (MPI_SUM on doubles) in place of the
 * memcpy, each after evict (as --copy and --reduce time theirs); medians over the repetitions.
 * What a collective's own write into lines its peer has just read costs more (MODEL.md §15,
 * `held`: the copies' difference a byte):
 *
 *     held K COPY_SENT_NS COPY_OWN_NS REDUCE_SENT_NS REDUCE_OWN_NS REPS
 *
 * With --alias K,K,..., both ranks then exchange K bytes each way (an Irecv, a blocking Send, a
 * Wait, after a barrier: as Open MPI's collectives exchange), sending from a page-aligned
 * buffer, in turn into a page-aligned one and into one COPY_ALIAS bytes past a page's start,
 * and rank 0 prints the medians over the repetitions: where the receiver copies a rendezvous
 * payload once (Open MPI's shared memory), that copy runs into 4 KiB aliasing as a memcpy does
 * (MODEL.md §9, "Where buffers lie"):
 *
 *     alias K ALIGNED_NS ALIASED_NS REPS
 *
 * With --drained K,K,..., rank 1 then sends K bytes to rank 0 after a barrier, and rank 0
 * receives them DRAIN_WAIT_NS later, having waited two ways: spinning on the clock, outside
 * MPI (the message waits where the sender left it), and spinning in MPI_Iprobe for a message
 * that never comes (the library's progress takes the message in while the rank waits inside
 * a call, as a rank blocked in a Recv, a Wait or a collective does); rank 0 times each
 * MPI_Recv and prints the medians over the repetitions (MODEL.md §14, "Messages taken in
 * while waiting"):
 *
 *     drained K COMPUTED_NS DRAINED_NS REPS
 *
 * With --coll R, both ranks then make R rounds of 8-byte collectives of every kind (Bcast,
 * Allreduce, Allgather, Alltoall, Reduce, Gather, Scatter, Scan, Barrier; the roots
 * alternating): run under the tracer, the trace is what `calibrate` fits `oc` to, a
 * collective call's cost beyond its messages. Then the same R rounds once more through PMPI_,
 * which the tracer does not see (the loop as the program runs untraced, in the same launch, at
 * the same placement and minute), each rank timing each round (one clock read at its start),
 * and rank 0 prints each rank's round, ns, the mean of the middle half of its rounds (as robust
 * as their median to an interrupted one, and finer than the clock's step):
 *
 *     coll_untraced RANK ROUND_NS ROUNDS
 *
 * With --detours MS, both ranks first spin on the clock for MS ms at once, outside MPI, and rank
 * 0 prints, for each rank, how often the clock jumped by more than DETOUR_NS between two reads
 * (the operating system or the hypervisor took the CPU: a detour), how long they took in all,
 * the span spun and the median detour (MODEL.md §17; a round trip that catches one is
 * interrupted, and one at the hiding point spans the imbalance too):
 *
 *     detours RANK COUNT LOST_NS SPAN_NS MEDIAN_NS
 *
 * With --line N, rank 0 times up to N round trips (or 2 ms) of a cache line between the two
 * ranks' cores (tracer/cores.h, as the tracer does) before the sweep and again after it, and
 * prints the mean of each, or -1 where the ranks share no memory. What a message over shared memory costs rests on it, and it changes
 * when the OS or a hypervisor runs the ranks on cores farther apart (60-90 ns against 350 ns
 * on this project's 2-vCPU machine, flipping within seconds):
 *
 *     line BEFORE_NS AFTER_NS N
 *
 * and the same figure right after each size's points (printed as it is timed, so that a move
 * of the ranks within the sweep is seen at the size where it happened):
 *
 *     line_at K NS
 *
 * Usage: mpirun -np 2 loggps-rtt --sizes K,K,... --w NS,NS,... [--reps N] [--warmup N] [--time-ms T] [--hide F] [--poll B] [--reduce K,K,...] [--progress K] [--copy K,K,...] [--exchange K,K,...] [--bounce K,K,...] [--held K,K,...] [--alias K,K,...] [--drained K,K,...] [--coll R] [--detours MS] [--line N]
 *
 * Each point gets at least N repetitions and more while it has run for less than T ms (at most
 * MAX_REPS), so that cheap points, the noisiest, get many.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cores.h"

#define MAX_REPS 4001
#define HIDE_MIN_NS 2000

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The imbalance: a spin on the clock, so its length is exact whatever the CPU does. */
static void spin(int64_t w) {
    if (w <= 0) return;
    int64_t end = now_ns() + w;
    while (now_ns() < end) {
    }
}

/* Parses "a,b,c" into a malloc'd array; returns the count, 0 on a bad list. */
static int parse_list(const char *s, long long **out) {
    int n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    *out = malloc(sizeof(long long) * n);
    char *end;
    for (int i = 0; i < n; i++) {
        (*out)[i] = strtoll(s, &end, 10);
        if (end == s || (*end != ',' && *end != '\0') || (*out)[i] < 0) return 0;
        s = end + 1;
    }
    return n;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its median. */
static long long median(long long *v, int n) {
    qsort(v, n, sizeof(long long), cmp_ll);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The plain mean of v[0..n): what a program that repeats the operation pays on average, the
 * rare long repetitions (the operating system's interruptions) included. */
static double mean_of(const long long *v, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += (double)v[i];
    return n > 0 ? sum / n : 0;
}

/* Sorts v[0..n) and returns the mean of its middle half (the values between its quartiles):
 * as robust as the median to a preempted repetition, and not a multiple of the clock's step.
 * A clock that advances 10 ns at a time (as some hypervisors' do) puts every median of a
 * 300 ns round trip on one of 290, 300, 310: 3% apart, where the middle half's mean lies
 * between. */
static double middle_mean(long long *v, int n) {
    qsort(v, n, sizeof(long long), cmp_ll);
    int lo = n / 4, hi = n - n / 4;
    double sum = 0;
    for (int i = lo; i < hi; i++) sum += (double)v[i];
    return sum / (hi - lo);
}

/* Timed in batches: a clock read costs about as much as a failed poll. */
#define POLL_BATCH 1000

/* Posted receives timed in batches of this many (each waits in the library's posted queue
 * until the batch is cancelled). */
#define POST_BATCH 64

/* Failed polls on rank 0 while rank 1 waits; rank 1 then sends the message rank 0's receive
 * waits for, so that every request completes. */
static void polls(int rank, int batches, long long *per_call) {
    char b = 0;
    if (rank == 1) {
        MPI_Recv(&b, 0, MPI_BYTE, 0, 76, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&b, 1, MPI_BYTE, 0, 77, MPI_COMM_WORLD);
        return;
    }
    MPI_Request req;
    int flag = 0;
    MPI_Irecv(&b, 1, MPI_BYTE, 1, 77, MPI_COMM_WORLD, &req);
    for (int k = 0; k < batches; k++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < POLL_BATCH; i++) {
            if (i & 1) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            else MPI_Iprobe(1, 78, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        per_call[k] = (now_ns() - t0) / POLL_BATCH;
    }
    qsort(per_call, batches, sizeof(long long), cmp_ll);
    printf("poll %lld %lld %d\n", per_call[batches / 2], per_call[0], batches);
    MPI_Request posted[POST_BATCH];
    char sink[POST_BATCH];
    long long *waited = malloc(sizeof(long long) * (size_t)batches);
    for (int k = 0; k < batches; k++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < POST_BATCH; i++)
            MPI_Irecv(&sink[i], 1, MPI_BYTE, 1, 79, MPI_COMM_WORLD, &posted[i]);
        per_call[k] = (now_ns() - t0) / POST_BATCH;
        for (int i = 0; i < POST_BATCH; i++) MPI_Cancel(&posted[i]);
        /* Each request complete (cancelled): what a completion call costs with nothing left
         * to wait for (MODEL.md §4, `wait`). */
        t0 = now_ns();
        for (int i = 0; i < POST_BATCH; i++) MPI_Wait(&posted[i], MPI_STATUS_IGNORE);
        waited[k] = (now_ns() - t0) / POST_BATCH;
    }
    qsort(per_call, batches, sizeof(long long), cmp_ll);
    printf("post %lld %lld %d\n", per_call[batches / 2], per_call[0], batches);
    qsort(waited, batches, sizeof(long long), cmp_ll);
    printf("waitdone %lld %lld %d\n", waited[batches / 2], waited[0], batches);
    free(waited);
    fflush(stdout);
    MPI_Send(&b, 0, MPI_BYTE, 1, 76, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* Reads EVICT_BYTES of other memory, a line at a time: what the core's first-level cache held
 * is gone, what its second-level one holds stays (its size is 1–2 MiB on current CPUs), as
 * between a program's uses of a collective's buffers. Each probe of local work (--reduce,
 * --copy) calls it before each timed repetition: the model's `copy` and `gamma` are a
 * collective's copies and reductions, whose buffers a program's other work and the library's
 * own have moved out of the first level (src/model/MODEL.md §15). */
#define EVICT_BYTES (256 << 10)
static void evict(void) {
    static char *scratch;
    if (!scratch) {
        scratch = malloc(EVICT_BYTES);
        memset(scratch, 1, EVICT_BYTES);
    }
    unsigned sum = 0;
    for (size_t i = 0; i < EVICT_BYTES; i += 64) sum += (unsigned char)scratch[i];
    __asm__ volatile("" : : "r"(sum) : "memory");
}

/* MPI_Reduce_local over each size in turn, timed per call as the round trips are (at least
 * reps calls, more while a size has run for less than time_ms), each after evict(). */
static void reductions(const long long *sizes, int n, int reps, int warmup, double time_ms, long long *t) {
    for (int i = 0; i < n; i++) {
        int count = (int)(sizes[i] / (long long)sizeof(double));
        double *in = malloc(sizeof(double) * (count > 0 ? count : 1));
        double *inout = malloc(sizeof(double) * (count > 0 ? count : 1));
        for (int j = 0; j < count; j++) in[j] = 1e-9 * j, inout[j] = 1.0;
        int done = 0;
        int64_t start = now_ns();
        for (int r = -warmup;; r++) {
            evict();
            int64_t t0 = now_ns();
            MPI_Reduce_local(in, inout, count, MPI_DOUBLE, MPI_SUM);
            int64_t t1 = now_ns();
            if (r == 0) start = t0;
            if (r >= 0) t[done++] = t1 - t0;
            if (r >= reps - 1 && (done >= MAX_REPS || t1 - start >= (int64_t)(time_ms * 1e6))) break;
        }
        long long m = median(t, done);
        printf("reduce %lld %lld %lld %d\n", (long long)count * (long long)sizeof(double), m, t[0], done);
        fflush(stdout);
        free(in);
        free(inout);
    }
}

#define COPY_ALIAS 16
/* Bytes a repetition of the --copy probe copies at least, in copies of K bytes (see the top). */
#define COPY_BATCH 16384

/* The --line probe (see the top; cores.h): the cores' round trip over up to n round trips,
 * ns; -1 where the two ranks do not share memory. */
static double line_round_trip(int n) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    double each = cores_round_trip(node, 0, 1, n, now_ns);
    MPI_Comm_free(&node);
    return each;
}

/* Where MPI put the ranks: on one node (they share memory) or on several. calibrate writes the
 * set's class from it ("node" or "network"). */
static void print_nodes(int rank, int size) {
    MPI_Comm node;
    int n = size;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    if (rank == 0) printf("nodes %d\n", (size + n - 1) / n);
}

/* A jump of the clock between two reads longer than this is a detour (--detours). */
#define DETOUR_NS 1000
#define MAX_DETOURS 65536

/* The --detours probe (see the top): both ranks spin on the clock for `ms` ms. */
static void detours(int rank, double ms) {
    static long long gap[MAX_DETOURS];
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t t0 = now_ns(), last = t0, end = t0 + (int64_t)(ms * 1e6);
    long long n = 0, lost = 0;
    for (;;) {
        int64_t t = now_ns();
        if (t - last > DETOUR_NS) {
            lost += t - last;
            if (n < MAX_DETOURS) gap[n] = t - last;
            n++;
        }
        last = t;
        if (t >= end) break;
    }
    long long kept = n < MAX_DETOURS ? n : MAX_DETOURS;
    qsort(gap, (size_t)kept, sizeof gap[0], cmp_ll);
    long long mine[4] = {n, lost, last - t0, kept > 0 ? gap[kept / 2] : 0}, other[4];
    if (rank == 1) {
        MPI_Send(mine, 4, MPI_LONG_LONG, 0, 81, MPI_COMM_WORLD);
        return;
    }
    MPI_Recv(other, 4, MPI_LONG_LONG, 1, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 0; r < 2; r++) {
        long long *d = r == 0 ? mine : other;
        printf("detours %d %lld %lld %lld %lld\n", r, d[0], d[1], d[2], d[3]);
    }
    fflush(stdout);
}

/* One round of the --coll probe's collectives, through P##MPI_ (P empty: as a program calls
 * them, which the tracer records; P: through PMPI_, which it does not see). */
#define COLL_ROUND(P, i)                                                                       \
    do {                                                                                       \
        int root = (i) % 2;                                                                    \
        P##MPI_Bcast(x, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);                                  \
        P##MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);                        \
        P##MPI_Allgather(x, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, MPI_COMM_WORLD);                  \
        P##MPI_Alltoall(x, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, MPI_COMM_WORLD);                   \
        P##MPI_Reduce(x, y, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);                     \
        P##MPI_Gather(x, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);               \
        P##MPI_Scatter(y, 1, MPI_DOUBLE, x, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);              \
        P##MPI_Scan(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);                             \
        P##MPI_Barrier(MPI_COMM_WORLD);                                                        \
    } while (0)

/* The --coll probe (see the top): rounds of 8-byte collectives of every kind, traced, then
 * untraced and timed. */
static void collective_calls(int rank, int rounds) {
    double x[2] = {1.0, 2.0}, y[2] = {0.0, 0.0};
    for (int i = 0; i < rounds; i++) COLL_ROUND(, i);
    long long *t = malloc(sizeof(long long) * (size_t)rounds);
    PMPI_Barrier(MPI_COMM_WORLD);
    int64_t start = now_ns();
    for (int i = 0; i < rounds; i++) {
        COLL_ROUND(P, i);
        int64_t end = now_ns();
        t[i] = end - start;
        start = end;
    }
    double mine = middle_mean(t, rounds), each[2] = {mine, mine};
    free(t);
    if (rank == 0) PMPI_Recv(&each[1], 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 1) PMPI_Send(&mine, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < 2; r++) printf("coll_untraced %d %.1f %d\n", r, each[r], rounds);
    fflush(stdout);
}

/* The clock's own cost (see the top): the median of `reps` intervals with nothing between
 * their two reads, which every timed repetition of the local probes holds. */
static void clock_cost(int reps, long long *t) {
    for (int r = -5; r < reps; r++) {
        int64_t t0 = now_ns();
        int64_t t1 = now_ns();
        if (r >= 0) t[r] = t1 - t0;
    }
    printf("clock %lld %d\n", median(t, reps), reps);
    fflush(stdout);
}

/* The --copy probe (see the top): `reps` memcpy of k bytes per placement, each after
 * evict(); then `reps` malloc and free of k bytes, each after evict(). */
static void copies(long long k, int reps, long long *aligned, long long *aliased) {
    long long batch = k > 0 && k < COPY_BATCH ? COPY_BATCH / k : 1;
    size_t span = ((size_t)(k * batch) + 4096) / 4096 * 4096;
    char *src = aligned_alloc(4096, 3 * span), *dst = src + span;
    memset(src, 1, 3 * span);
    /* A call each, as a collective's copy is: not inlined into moves. */
    void *(*volatile copy)(void *, const void *, size_t) = memcpy;
    for (int r = -5; r < reps; r++)
        for (int a = 0; a < 2; a++) {
            char *d = dst + (a ? COPY_ALIAS : 0);
            evict();
            int64_t t0 = now_ns();
            for (long long b = 0; b < batch; b++) copy(d + b * k, src + b * k, (size_t)k);
            __asm__ volatile("" : : "r"(d) : "memory");
            int64_t t = now_ns() - t0;
            if (r >= 0) (a ? aliased : aligned)[r] = t;
        }
    printf("copy %lld %lld %lld %d %lld\n", k, median(aligned, reps), median(aliased, reps), reps, batch);
    fflush(stdout);
    free(src);
    for (int r = -5; r < reps; r++) {
        evict();
        int64_t t0 = now_ns();
        void *p = malloc((size_t)k);
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
        int64_t t = now_ns() - t0;
        if (r >= 0) aligned[r] = t;
    }
    printf("alloc %lld %lld %d\n", k, median(aligned, reps), reps);
    fflush(stdout);
}

#define EXCHANGE_REPS 201

/* The --exchange probe (see the top): k bytes, n messages each way, `reps` times. */
static void exchange(int rank, long long k, int n, int reps, long long *t) {
    char *out = malloc((size_t)(k > 0 ? k : 1) * n), *in = malloc((size_t)(k > 0 ? k : 1) * n);
    memset(out, 1, (size_t)(k > 0 ? k : 1) * n);
    memset(in, 0, (size_t)(k > 0 ? k : 1) * n);
    MPI_Request req[4];
    MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: GCC takes MPICH's for an empty array */
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = -5; r < reps; r++) {
        /* Written before it is sent, as a halo's is computed into: a message read from lines
         * dirty in the sender's cache costs more than one read from clean ones (over shared
         * memory here, 1.5x at 256 KiB on cores far apart). */
        memset(out, r & 0x7f, (size_t)(k > 0 ? k : 1) * n);
        int64_t t0 = now_ns();
        for (int i = 0; i < n; i++)
            MPI_Irecv(in + i * k, (int)k, MPI_BYTE, peer, 40 + i, MPI_COMM_WORLD, &req[i]);
        for (int i = 0; i < n; i++)
            MPI_Isend(out + i * k, (int)k, MPI_BYTE, peer, 40 + i, MPI_COMM_WORLD, &req[n + i]);
        MPI_Waitall(2 * n, req, st);
        if (r >= 0) t[r] = now_ns() - t0;
    }
    if (rank == 0) {
        printf("exchange %lld %d %.1f %d\n", k, n, middle_mean(t, reps), reps);
        fflush(stdout);
    }
    free(out);
    free(in);
}

/* The --bounce probe (see the top): k bytes, `reps` round trips each way. */
static void bounce(int rank, long long k, int reps, long long *written, long long *bounced,
                   long long *clean) {
    size_t span = ((size_t)(k > 0 ? k : 1) + 4095) / 4096 * 4096;
    char *a = aligned_alloc(4096, span), *b = aligned_alloc(4096, span);
    char *c = aligned_alloc(4096, span);
    memset(a, 1, span);
    memset(b, 2, span);
    memset(c, 3, span);
    for (int way = 0; way < 3; way++) {
        /* written: sent from b (written before each send), received into a; bounced: a both;
         * clean: sent from c (written once, above), received into a */
        char *out = way == 0 ? b : way == 1 ? a : c, *in = a;
        long long *t = way == 0 ? written : way == 1 ? bounced : clean;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = -5; r < reps; r++) {
            if (rank == 0) {
                if (way == 0) memset(out, r & 0x7f, (size_t)k);
                int64_t t0 = now_ns();
                MPI_Send(out, (int)k, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
                MPI_Recv(in, (int)k, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (r >= 0) t[r] = now_ns() - t0;
            } else {
                MPI_Recv(in, (int)k, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(out, (int)k, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
                if (way == 0) memset(out, r & 0x7f, (size_t)k);
            }
        }
    }
    double round_trips[3] = { middle_mean(written, reps), middle_mean(bounced, reps),
                              middle_mean(clean, reps) };
    /* Exchanges, both ranks alike: from b written before each (into a), from c written once. */
    int peer = 1 - rank;
    for (int way = 0; way < 2; way++) {
        char *out = way == 0 ? b : c;
        long long *t = way == 0 ? written : clean;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = -5; r < reps; r++) {
            if (way == 0) memset(out, r & 0x7f, (size_t)k);
            MPI_Request req[2];
            MPI_Status st[2];
            int64_t t0 = now_ns();
            MPI_Irecv(a, (int)k, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(out, (int)k, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, st);
            if (r >= 0) t[r] = now_ns() - t0;
        }
    }
    double exchanges[2] = { middle_mean(written, reps), middle_mean(clean, reps) };
    /* One way from c (written once) to rank 1, into b (which rank 1 never sends from: its own
     * lines) or into a, which rank 1 has just sent to rank 0 (rank 0's copy read its lines: a
     * Bcast into a buffer its leaf last sent from), each answered by an empty message; before
     * each, rank 1 sends a or d (written once) to rank 0, which receives into b. */
    char *d = aligned_alloc(4096, span);
    memset(d, 4, span);
    for (int way = 0; way < 2; way++) {
        long long *t = way == 0 ? written : bounced;
        for (int r = -5; r < reps; r++) {
            if (rank == 1) MPI_Send(way == 0 ? d : a, (int)k, MPI_BYTE, 0, 12, MPI_COMM_WORLD);
            else MPI_Recv(b, (int)k, MPI_BYTE, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                int64_t t0 = now_ns();
                MPI_Send(c, (int)k, MPI_BYTE, 1, 13, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (r >= 0) t[r] = now_ns() - t0;
            } else {
                MPI_Recv(way == 0 ? b : a, (int)k, MPI_BYTE, 0, 13, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, 14, MPI_COMM_WORLD);
            }
        }
    }
    if (rank == 0) {
        printf("bounce %lld %.1f %.1f %d %.1f %.1f %.1f %.1f %.1f\n", k, round_trips[0],
               round_trips[1], reps, round_trips[2], exchanges[0], exchanges[1],
               middle_mean(written, reps), middle_mean(bounced, reps));
        fflush(stdout);
    }
    free(a);
    free(b);
    free(c);
    free(d);
}

/* The --held probe (see the top): k bytes, `reps` sends, each then one of four timed writes. */
static void held(int rank, long long k, int reps, long long *t[4]) {
    size_t span = ((size_t)(k > 0 ? k : 1) + 4095) / 4096 * 4096;
    char *sent = aligned_alloc(4096, span), *own = aligned_alloc(4096, span);
    char *src = aligned_alloc(4096, span), *in = aligned_alloc(4096, span);
    memset(sent, 0, span);
    memset(own, 0, span);
    memset(src, 0, span);
    memset(in, 0, span);
    for (int r = -5; r < reps; r++)
        for (int way = 0; way < 4; way++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                MPI_Send(sent, (int)k, MPI_BYTE, 1, 12, MPI_COMM_WORLD);
            else
                MPI_Recv(in, (int)k, MPI_BYTE, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank != 0) continue;
            char *d = way % 2 == 0 ? sent : own;
            evict();
            int64_t t0 = now_ns();
            if (way < 2)
                memcpy(d, src, (size_t)k);
            else
                MPI_Reduce_local(src, d, (int)(k / 8), MPI_DOUBLE, MPI_SUM);
            __asm__ volatile("" : : "r"(d) : "memory");
            if (r >= 0) t[way][r] = now_ns() - t0;
        }
    if (rank == 0) {
        printf("held %lld %lld %lld %lld %lld %d\n", k, median(t[0], reps), median(t[1], reps),
               median(t[2], reps), median(t[3], reps), reps);
        fflush(stdout);
    }
    free(sent);
    free(own);
    free(src);
    free(in);
}

/* How long rank 0 waits before its receive in the --drained probe: long past the message's
 * arrival (a one-way trip of an eager message takes under 2 µs here). */
#define DRAIN_WAIT_NS 3000

/* The --drained probe (see the top): k bytes, `reps` times each way. */
static void drained(int rank, long long k, int reps, long long *t[2]) {
    char *buf = aligned_alloc(4096, ((size_t)(k > 0 ? k : 1) + 4095) / 4096 * 4096);
    memset(buf, 1, (size_t)(k > 0 ? k : 1));
    for (int r = -5; r < reps; r++)
        for (int way = 0; way < 2; way++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                MPI_Send(buf, (int)k, MPI_BYTE, 0, 13, MPI_COMM_WORLD);
                continue;
            }
            if (way == 0) spin(DRAIN_WAIT_NS);
            else
                for (int64_t t0 = now_ns(); now_ns() - t0 < DRAIN_WAIT_NS;) {
                    int found;
                    MPI_Iprobe(1, 14, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
                }
            int64_t t0 = now_ns();
            MPI_Recv(buf, (int)k, MPI_BYTE, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r >= 0) t[way][r] = now_ns() - t0;
        }
    if (rank == 0) {
        printf("drained %lld %lld %lld %d\n", k, median(t[0], reps), median(t[1], reps), reps);
        fflush(stdout);
    }
    free(buf);
}

/* The --alias probe (see the top): `reps` exchanges of k bytes each way into a page-aligned
 * receive buffer and as many into one COPY_ALIAS bytes past a page's start, taking turns. */
static void alias(int rank, long long k, int reps, long long *t[2]) {
    size_t span = ((size_t)(k > 0 ? k : 1) + 4095) / 4096 * 4096;
    char *out = aligned_alloc(4096, span), *in = aligned_alloc(4096, span + 4096);
    memset(out, 1, span);
    memset(in, 0, span + 4096);
    for (int r = -5; r < reps; r++)
        for (int a = 0; a < 2; a++) {
            MPI_Barrier(MPI_COMM_WORLD);
            int64_t t0 = now_ns();
            MPI_Request q;
            MPI_Irecv(in + (a ? COPY_ALIAS : 0), (int)k, MPI_BYTE, 1 - rank, 13, MPI_COMM_WORLD, &q);
            MPI_Send(out, (int)k, MPI_BYTE, 1 - rank, 13, MPI_COMM_WORLD);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            if (r >= 0) t[a][r] = now_ns() - t0;
        }
    if (rank == 0) {
        printf("alias %lld %lld %lld %d\n", k, median(t[0], reps), median(t[1], reps), reps);
        fflush(stdout);
    }
    free(out);
    free(in);
}

#define PROGRESS_SPIN_NS 200000

/* The --progress probe (see the top): `reps` posted receives waited for after a spin, and as
 * many plain round trips of the same size. */
static void progress_probe(int rank, long long k, int reps, long long *wait, long long *rtt) {
    char *buf = malloc(k > 0 ? k : 1);
    memset(buf, 1, k > 0 ? k : 1);
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Request req;
            MPI_Irecv(buf, (int)k, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
            MPI_Send(buf, 0, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
            spin(PROGRESS_SPIN_NS);
            int64_t t0 = now_ns();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            long long w = now_ns() - t0;
            MPI_Send(&w, 1, MPI_LONG_LONG, 0, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)k, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)k, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
        } else {
            /* The receive is posted before the message leaves. */
            MPI_Recv(buf, 0, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Request req;
            MPI_Isend(buf, (int)k, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &req);
            MPI_Recv(&wait[r], 1, MPI_LONG_LONG, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            int64_t t0 = now_ns();
            MPI_Send(buf, (int)k, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)k, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rtt[r] = now_ns() - t0;
        }
    }
    if (rank == 0) {
        long long w = median(wait, reps);
        printf("progress %lld %lld %lld %d\n", k, w, median(rtt, reps), reps);
        fflush(stdout);
    }
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long *sizes = NULL, *ws = NULL, *reduce = NULL;
    long long progress_k = -1, *copy = NULL, *xch = NULL, *bnc = NULL, *hld = NULL, *als = NULL, *drn = NULL;
    int coll_rounds = 0, line_n = 0;
    double detour_ms = 0;
    int nsizes = 0, nws = 0, nreduce = 0, ncopy = 0, nxch = 0, nbnc = 0, nhld = 0, nals = 0, ndrn = 0, reps = 31, warmup = 5, poll_batches = 0;
    double time_ms = 0, hide = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes")) nsizes = parse_list(argv[i + 1], &sizes);
        else if (!strcmp(argv[i], "--w")) nws = parse_list(argv[i + 1], &ws);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--time-ms")) time_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--hide")) hide = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--poll")) poll_batches = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reduce")) nreduce = parse_list(argv[i + 1], &reduce);
        else if (!strcmp(argv[i], "--progress")) progress_k = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--copy")) ncopy = parse_list(argv[i + 1], &copy);
        else if (!strcmp(argv[i], "--line")) line_n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--coll")) coll_rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--detours")) detour_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--exchange")) nxch = parse_list(argv[i + 1], &xch);
        else if (!strcmp(argv[i], "--bounce")) nbnc = parse_list(argv[i + 1], &bnc);
        else if (!strcmp(argv[i], "--held")) nhld = parse_list(argv[i + 1], &hld);
        else if (!strcmp(argv[i], "--alias")) nals = parse_list(argv[i + 1], &als);
        else if (!strcmp(argv[i], "--drained")) ndrn = parse_list(argv[i + 1], &drn);
    }
    int has_zero = 0;
    for (int j = 0; j < nws; j++) has_zero |= ws[j] == 0;
    if (size != 2 || nsizes == 0 || nws == 0 || reps < 1 || reps > MAX_REPS || warmup < 0 || time_ms < 0 ||
        hide < 0 || (hide > 0 && !has_zero) || poll_batches < 0 || poll_batches > MAX_REPS || (reduce && nreduce == 0) || (copy && ncopy == 0) || (xch && nxch == 0) || (bnc && nbnc == 0) || (hld && nhld == 0) || (als && nals == 0) || (drn && ndrn == 0) ||
        coll_rounds < 0 || line_n < 0 || detour_ms < 0 || detour_ms > 1000) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 %s --sizes K,K,... --w NS,NS,... [--reps N<=%d] [--warmup N] [--time-ms T] [--hide F (--w lists 0)] [--poll B] [--reduce K,K,...] [--progress K] [--copy K,K,...] [--exchange K,K,...] [--bounce K,K,...] [--held K,K,...] [--alias K,K,...] [--drained K,K,...] [--coll R] [--detours MS] [--line N]%s\n", argv[0], MAX_REPS,
                    size != 2 ? " (needs exactly 2 ranks)" : "");
        MPI_Finalize();
        return 2;
    }
    long long kmax = 0;
    for (int i = 0; i < nsizes; i++) kmax = sizes[i] > kmax ? sizes[i] : kmax;
    size_t span = ((size_t)(kmax > 0 ? kmax : 1) + 4095) / 4096 * 4096;
    char *out = aligned_alloc(4096, span), *in = aligned_alloc(4096, span);
    memset(out, 1, span);
    memset(in, 0, span);
    long long *rtt = malloc(sizeof(long long) * MAX_REPS);
    long long *send = malloc(sizeof(long long) * MAX_REPS);
    long long *recv = malloc(sizeof(long long) * MAX_REPS);
    print_nodes(rank, size);
    if (rank == 0) clock_cost(MAX_REPS, rtt);
    if (detour_ms > 0) detours(rank, detour_ms);
    double line_before = line_n > 0 ? line_round_trip(line_n) : -1;
    for (int i = 0; i < nsizes; i++) {
        int k = (int)sizes[i];
        long long rtt0 = 0;
        long long hidden_w = 0;
        for (int j = 0; j < nws + 2 * (hide > 0); j++) {
            /* j == nws: the point that hides the transfer (only rank 0 spins: rank 1 need not
             * know w); j == nws + 1: the same with MPI_Isend. */
            int isend = j == nws + 1;
            long long w = j < nws ? ws[j] : isend ? hidden_w : (long long)(hide * rtt0);
            if (j == nws && w < HIDE_MIN_NS) w = HIDE_MIN_NS;
            if (j == nws) hidden_w = w;
            MPI_Barrier(MPI_COMM_WORLD);
            int done = 0;
            int64_t start = 0;
            /* Rank 0 decides when a point has enough repetitions and tells rank 1 in the tag
             * of its message (1: more follow, 0: the last), so both stop together. */
            for (int r = -warmup;; r++) {
                if (rank == 0) {
                    if (r == 0) start = now_ns();
                    int last = r >= reps - 1 && (r + 1 >= MAX_REPS || now_ns() - start >= (int64_t)(time_ms * 1e6));
                    memset(out, r & 0x7f, (size_t)k);
                    int64_t t0 = now_ns();
                    MPI_Request req = MPI_REQUEST_NULL;
                    if (isend)
                        MPI_Isend(out, k, MPI_BYTE, 1, last ? 0 : 1, MPI_COMM_WORLD, &req);
                    else
                        MPI_Send(out, k, MPI_BYTE, 1, last ? 0 : 1, MPI_COMM_WORLD);
                    int64_t t1 = now_ns();
                    spin(w);
                    if (isend) MPI_Wait(&req, MPI_STATUS_IGNORE);
                    int64_t t2 = now_ns();
                    MPI_Recv(in, k, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    int64_t t3 = now_ns();
                    if (r >= 0) {
                        send[done] = t1 - t0;
                        recv[done] = t3 - t2;
                        /* At the hiding point the reply is there before rank 0 receives, so
                         * the round trip is its send, w and its receive: the spin's own clock
                         * reads and its overshoot past w (50-100 ns here) are not part of it. */
                        rtt[done++] = j == nws ? (t1 - t0) + w + (t3 - t2) : t3 - t0;
                    }
                    if (last) break;
                } else {
                    MPI_Status st;
                    MPI_Recv(in, k, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                    MPI_Send(out, k, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                    if (st.MPI_TAG == 0) break;
                    /* The next reply written while rank 0 takes this one in and writes its own. */
                    memset(out, r & 0x7f, (size_t)k);
                }
            }
            if (rank == 0) {
                double mean = mean_of(rtt, done);
                double m = middle_mean(rtt, done);
                if (w == 0) rtt0 = (long long)m;
                if (isend) {
                    printf("isend %d %lld %.1f %d\n", k, w, middle_mean(send, done), done);
                    fflush(stdout);
                    continue;
                }
                printf("%s %d %lld %.1f %lld %d %.1f %.1f %.1f\n", j < nws ? "rtt" : "hide", k, w, m, rtt[0], done,
                       middle_mean(send, done), middle_mean(recv, done), mean);
                fflush(stdout);
            }
        }
        if (line_n > 0) {
            double at = line_round_trip(line_n);
            if (rank == 0) printf("line_at %d %.1f\n", k, at);
        }
    }
    if (line_n > 0) {
        double line_after = line_round_trip(line_n);
        if (rank == 0) printf("line %.1f %.1f %d\n", line_before, line_after, line_n);
    }
    if (poll_batches > 0) polls(rank, poll_batches, rtt);
    if (nreduce > 0 && rank == 0) reductions(reduce, nreduce, reps, warmup, time_ms, rtt);
    if (progress_k >= 0) progress_probe(rank, progress_k, reps < MAX_REPS ? reps : MAX_REPS, send, recv);
    for (int i = 0; i < ncopy && rank == 0; i++) copies(copy[i], MAX_REPS, send, recv);
    long long *xt = malloc(sizeof(long long) * EXCHANGE_REPS);
    for (int i = 0; i < nxch; i++)
        for (int n = 1; n <= 2; n++) exchange(rank, xch[i], n, EXCHANGE_REPS, xt);
    long long *bt = malloc(sizeof(long long) * EXCHANGE_REPS);
    long long *ct = malloc(sizeof(long long) * EXCHANGE_REPS);
    for (int i = 0; i < nbnc; i++) bounce(rank, bnc[i], EXCHANGE_REPS, xt, bt, ct);
    long long *ht = malloc(sizeof(long long) * EXCHANGE_REPS);
    long long *hts[4] = { xt, bt, ct, ht };
    for (int i = 0; i < nhld; i++) held(rank, hld[i], EXCHANGE_REPS, hts);
    for (int i = 0; i < nals; i++) alias(rank, als[i], EXCHANGE_REPS, hts);
    for (int i = 0; i < ndrn; i++) drained(rank, drn[i], EXCHANGE_REPS, hts);
    free(ht);
    free(ct);
    free(bt);
    free(xt);
    if (coll_rounds > 0) collective_calls(rank, coll_rounds);
    free(out);
    free(in);
    free(rtt);
    free(send);
    free(recv);
    /* The measurement is over: calibrate ends a launch that hangs in MPI_Finalize from here on
     * (MPICH 4.0.2 does, at times, over two of its "nodes" on one machine). */
    if (rank == 0) {
        printf("end\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
