/* gauss: Gaussian elimination with partial pivoting on P ranks, the workload of the LogGPS
 * paper's synchronization analysis (Ino, Fujimoto, Hagihara, PPoPP 2001, §4.4-4.5).
 *
 * Solves A x = b for a dense n x n matrix. Row i of the augmented matrix [A | b] lives on rank
 * i mod P (row-cyclic), so every rank keeps working until the last columns. All of the
 * algorithm's communication is point-to-point, so that the trace shows every message with its
 * real size and peers:
 *
 *   per column k (owner of row k: ok)
 *     1. every rank finds its local pivot candidate (largest |a_ik|, i >= k) and sends
 *        (value, row) to ok;                                         16 bytes
 *     2. ok picks the pivot row p and sends p to every rank;          4 bytes
 *     3. the owner of row p (op) sends the pivot row, columns k..n (b included), to every
 *        other rank;                                                  (n-k+1)*8 bytes
 *     4. if ok != op, ok sends its old row k to op (the other half of the row swap; the first
 *        half is ok's copy of the pivot row from step 3);           (n-k+1)*8 bytes
 *     5. every rank eliminates its rows below k with the pivot row.
 *   back substitution, j = n-1 .. 0: the owner of row j computes x_j and sends it to every
 *   other rank; every rank subtracts x_j's column from its right-hand sides.   8 bytes
 *
 * The pivot rows grow with n: (n+1)*8 bytes at k = 0, so at n = 512 (4104 bytes) they cross
 * Open MPI's default shared-memory eager limit of 4 KiB, and at n = 2048 (16392 bytes) they
 * are still below a raised limit of 64 KiB (the paper's method M1). `--fragment BYTES` sends
 * every message in pieces of at most BYTES bytes (the paper's method M2), so that nothing goes
 * by the rendezvous protocol.
 *
 * Variants: blocking (MPI_Send / MPI_Recv, ordered so that a rendezvous send never waits on a
 * cycle) and `--nonblocking` (MPI_Isend / MPI_Irecv, one MPI_Waitall per step).
 *
 * Usage: gauss N [--nonblocking] [--fragment BYTES] [--seed S] [--verbose]
 * Rank 0 prints
 *   gauss n=N ranks=P variant=original|fragmented mode=blocking|nonblocking time_s=T residual=R
 * with T from the barrier after setup to the end of back substitution (rank 0's clock) and
 * R = ||Ax-b||_inf / (||A||_inf ||x||_inf n eps); the exit status is 1 if R > 100.
 */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_CAND = 1, TAG_CHOICE, TAG_PIVROW, TAG_SWAP, TAG_X };

#define RESIDUAL_LIMIT 100.0

/* ---- communication: fragmenting, blocking or nonblocking point-to-point ---- */

/* How messages go. In nonblocking mode sends and receives are posted into `reqs` and
 * completed together by comm_wait(), so one step's messages overlap; in blocking mode each
 * piece is sent or received at once and comm_wait() does nothing. */
typedef struct {
    int nonblocking;
    int frag_bytes; /* 0: whole messages */
    MPI_Request *reqs;
    int nreq, cap;
} comm_t;

static MPI_Request *next_req(comm_t *c) {
    if (c->nreq == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->reqs = realloc(c->reqs, sizeof(MPI_Request) * c->cap);
        if (!c->reqs) {
            fprintf(stderr, "gauss: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    return &c->reqs[c->nreq++];
}

/* Elements per piece: whole message, or as many as fit in frag_bytes (at least one). */
static int piece_len(const comm_t *c, int count, int elem_size) {
    if (c->frag_bytes <= 0) return count > 0 ? count : 1;
    int per = c->frag_bytes / elem_size;
    return per > 0 ? per : 1;
}

/* Sends count elements in pieces of at most frag_bytes bytes. Pieces to one destination with
 * one tag match the receiver's pieces in order (MPI's non-overtaking rule), so recv_frag only
 * has to cut the buffer the same way. */
static void send_frag(comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                      int tag) {
    int es;
    MPI_Type_size(type, &es);
    int per = piece_len(c, count, es);
    const char *p = buf;
    int off = 0;
    do {
        int len = count - off < per ? count - off : per;
        if (c->nonblocking)
            MPI_Isend(p + (size_t)off * es, len, type, dest, tag, MPI_COMM_WORLD, next_req(c));
        else
            MPI_Send(p + (size_t)off * es, len, type, dest, tag, MPI_COMM_WORLD);
        off += len;
    } while (off < count);
}

static void recv_frag(comm_t *c, void *buf, int count, MPI_Datatype type, int src, int tag) {
    int es;
    MPI_Type_size(type, &es);
    int per = piece_len(c, count, es);
    char *p = buf;
    int off = 0;
    do {
        int len = count - off < per ? count - off : per;
        if (c->nonblocking)
            MPI_Irecv(p + (size_t)off * es, len, type, src, tag, MPI_COMM_WORLD, next_req(c));
        else
            MPI_Recv(p + (size_t)off * es, len, type, src, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        off += len;
    } while (off < count);
}

/* Completes everything posted since the last call (nonblocking mode). */
static void comm_wait(comm_t *c) {
    if (c->nreq > 0) MPI_Waitall(c->nreq, c->reqs, MPI_STATUSES_IGNORE);
    c->nreq = 0;
}

/* ---- the matrix ---- */

/* splitmix64: a stateless hash, so any rank can produce any entry from (seed, i, j) without
 * communication, and the residual check can rebuild the original A after elimination. */
static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Entry (i, j) of [A | b], uniform in [-1, 1). Not diagonally dominant: the largest entry of
 * a column is almost never on the diagonal, so partial pivoting swaps rows at nearly every k. */
static double entry(uint64_t seed, int n, int i, int j) {
    uint64_t h = mix(mix(seed) ^ ((uint64_t)i * (uint64_t)(n + 1) + (uint64_t)j));
    return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

typedef struct {
    int n, P, rank;
    int nloc;      /* rows on this rank: i = rank, rank+P, ... */
    double *rows;  /* nloc x (n+1), row i at local index i / P */
} matrix_t;

static int owner(const matrix_t *m, int i) { return i % m->P; }
static double *row(const matrix_t *m, int i) { return m->rows + (size_t)(i / m->P) * (m->n + 1); }

static void matrix_init(matrix_t *m, int n, int P, int rank, uint64_t seed) {
    m->n = n;
    m->P = P;
    m->rank = rank;
    m->nloc = rank < n ? (n - rank + P - 1) / P : 0;
    m->rows = malloc(sizeof(double) * ((size_t)m->nloc * (n + 1) + 1));
    if (!m->rows) {
        fprintf(stderr, "gauss: out of memory for %d rows of %d\n", m->nloc, n + 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = rank; i < n; i += P)
        for (int j = 0; j <= n; j++) row(m, i)[j] = entry(seed, n, i, j);
}

/* ---- elimination ---- */

/* Step 1-2: the pivot row p for column k, known to every rank afterwards. */
static int choose_pivot(const matrix_t *m, comm_t *c, int k) {
    /* local candidate: (|a_ik|, i), or (-1, -1) if this rank has no row >= k */
    double cand[2] = {-1.0, -1.0};
    int first = k + ((m->rank - k % m->P) + m->P) % m->P; /* first own row >= k */
    for (int i = first; i < m->n; i += m->P) {
        double v = fabs(row(m, i)[k]);
        if (v > cand[0]) {
            cand[0] = v;
            cand[1] = i;
        }
    }
    int ok = owner(m, k), p;
    if (m->rank == ok) {
        double *all = malloc(sizeof(double) * 2 * m->P);
        for (int r = 0; r < m->P; r++)
            if (r != ok) recv_frag(c, &all[2 * r], 2, MPI_DOUBLE, r, TAG_CAND);
        all[2 * ok] = cand[0];
        all[2 * ok + 1] = cand[1];
        comm_wait(c);
        /* largest |value|; ties go to the smaller row, so the result does not depend on P */
        int best = -1;
        for (int r = 0; r < m->P; r++) {
            if (all[2 * r + 1] < 0) continue;
            if (best < 0 || all[2 * r] > all[2 * best] ||
                (all[2 * r] == all[2 * best] && all[2 * r + 1] < all[2 * best + 1]))
                best = r;
        }
        if (all[2 * best] == 0.0) {
            fprintf(stderr, "gauss: matrix is singular at column %d\n", k);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        p = (int)all[2 * best + 1];
        free(all);
        for (int r = 0; r < m->P; r++)
            if (r != ok) send_frag(c, &p, 1, MPI_INT, r, TAG_CHOICE);
        comm_wait(c);
    } else {
        send_frag(c, cand, 2, MPI_DOUBLE, ok, TAG_CAND);
        recv_frag(c, &p, 1, MPI_INT, ok, TAG_CHOICE);
        comm_wait(c);
    }
    return p;
}

/* Steps 3-4: every rank gets pivot row p (columns k..n) in piv; rows k and p are swapped.
 * The owner of p sends it straight to every rank, the owner of k included, which stores it as
 * its new row k; only the old row k still has to travel, from ok to op. Order in blocking mode:
 * op sends all pivot rows before receiving, ok receives the pivot row before sending, so even
 * rendezvous sends (above the eager limit) cannot wait on each other in a cycle. */
static void distribute_pivot_row(const matrix_t *m, comm_t *c, int k, int p, double *piv) {
    int ok = owner(m, k), op = owner(m, p), len = m->n - k + 1;
    if (m->rank == op) {
        memcpy(piv, row(m, p) + k, sizeof(double) * len);
        for (int r = 0; r < m->P; r++)
            if (r != op) send_frag(c, piv, len, MPI_DOUBLE, r, TAG_PIVROW);
        if (ok == op) {
            if (p != k) { /* both rows here: swap in place */
                memcpy(row(m, p) + k, row(m, k) + k, sizeof(double) * len);
                memcpy(row(m, k) + k, piv, sizeof(double) * len);
            }
        } else {
            recv_frag(c, row(m, p) + k, len, MPI_DOUBLE, ok, TAG_SWAP);
        }
        comm_wait(c);
    } else {
        recv_frag(c, piv, len, MPI_DOUBLE, op, TAG_PIVROW);
        if (m->rank == ok) {
            /* nonblocking: the old row k is sent from its own place while the pivot row
             * arrives in piv, and replaces it only after the wait */
            send_frag(c, row(m, k) + k, len, MPI_DOUBLE, op, TAG_SWAP);
            comm_wait(c);
            memcpy(row(m, k) + k, piv, sizeof(double) * len);
        } else {
            comm_wait(c);
        }
    }
}

/* Step 5: subtract multiples of the pivot row (piv[0] = a_kk) from own rows below k. */
static void eliminate(matrix_t *m, int k, const double *piv) {
    int n = m->n;
    int first = k + 1 + ((m->rank - (k + 1) % m->P) + m->P) % m->P;
    for (int i = first; i < n; i += m->P) {
        double *a = row(m, i) + k;
        double f = a[0] / piv[0];
        a[0] = 0.0;
        for (int j = 1; j <= n - k; j++) a[j] -= f * piv[j];
    }
}

/* Returns the number of columns whose pivot was not already on the diagonal. */
static int factor(matrix_t *m, comm_t *c) {
    double *piv = malloc(sizeof(double) * (m->n + 1));
    int swaps = 0;
    for (int k = 0; k < m->n - 1; k++) {
        int p = choose_pivot(m, c, k);
        swaps += p != k;
        distribute_pivot_row(m, c, k, p, piv);
        eliminate(m, k, piv);
    }
    free(piv);
    return swaps;
}

/* Column-oriented back substitution: when x_j is known, every rank removes column j from its
 * right-hand sides, so the owner of row j-1 can compute x_{j-1} at once. Every rank ends with
 * all of x (in x[0..n-1]). */
static void back_substitute(matrix_t *m, comm_t *c, double *x) {
    int n = m->n;
    for (int j = n - 1; j >= 0; j--) {
        int oj = owner(m, j);
        if (m->rank == oj) {
            x[j] = row(m, j)[n] / row(m, j)[j];
            for (int r = 0; r < m->P; r++)
                if (r != oj) send_frag(c, &x[j], 1, MPI_DOUBLE, r, TAG_X);
        } else {
            recv_frag(c, &x[j], 1, MPI_DOUBLE, oj, TAG_X);
        }
        comm_wait(c);
        for (int i = m->rank; i < j; i += m->P) row(m, i)[n] -= row(m, i)[j] * x[j];
    }
}

/* ||Ax-b||_inf / (||A||_inf ||x||_inf n eps) with the original A, rebuilt from the seed
 * (row swaps do not change infinity norms). Each rank takes its own rows; one Allreduce. */
static double residual(const matrix_t *m, uint64_t seed, const double *x) {
    int n = m->n;
    double loc[2] = {0.0, 0.0}, glob[2]; /* max |r_i|, max row sum |a_ij| */
    for (int i = m->rank; i < n; i += m->P) {
        double s = 0.0, a = 0.0;
        for (int j = 0; j < n; j++) {
            double v = entry(seed, n, i, j);
            s += v * x[j];
            a += fabs(v);
        }
        s -= entry(seed, n, i, n);
        if (fabs(s) > loc[0] || isnan(s)) loc[0] = isnan(s) ? INFINITY : fabs(s);
        if (a > loc[1]) loc[1] = a;
    }
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double xn = 0.0;
    for (int j = 0; j < n; j++)
        if (fabs(x[j]) > xn) xn = fabs(x[j]);
    return glob[0] / (glob[1] * xn * n * DBL_EPSILON);
}

/* ---- main ---- */

static void usage(int rank) {
    if (rank == 0)
        fprintf(stderr,
                "usage: gauss N [--nonblocking] [--fragment BYTES] [--seed S] [--verbose]\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    int n = 0, verbose = 0;
    unsigned long long seed = 1;
    comm_t c = {0};
    for (int a = 1; a < argc; a++) {
        char *end;
        if (!strcmp(argv[a], "--nonblocking")) {
            c.nonblocking = 1;
        } else if (!strcmp(argv[a], "--verbose")) {
            verbose = 1;
        } else if (!strcmp(argv[a], "--fragment") && a + 1 < argc) {
            long v = strtol(argv[++a], &end, 10);
            if (*end || v < 8 || v > 1 << 30) usage(rank); /* a piece holds at least a double */
            c.frag_bytes = (int)v;
        } else if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
            seed = strtoull(argv[++a], &end, 10);
            if (*end) usage(rank);
        } else if (argv[a][0] != '-' && n == 0) {
            long v = strtol(argv[a], &end, 10);
            if (*end || v < 2 || v > 1 << 20) usage(rank);
            n = (int)v;
        } else {
            usage(rank);
        }
    }
    if (n == 0) usage(rank);

    matrix_t m;
    matrix_init(&m, n, P, rank, seed);
    double *x = malloc(sizeof(double) * n);

    /* everyone starts the timed region together; setup (matrix generation) is outside it */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int swaps = factor(&m, &c);
    back_substitute(&m, &c, x);
    double t = MPI_Wtime() - t0;

    double res = residual(&m, seed, x);
    int status = 0;
    if (rank == 0) {
        printf("gauss n=%d ranks=%d variant=%s mode=%s time_s=%.6f residual=%.3g\n", n, P,
               c.frag_bytes > 0 ? "fragmented" : "original",
               c.nonblocking ? "nonblocking" : "blocking", t, res);
        if (verbose) { /* the same for every P and mode: the arithmetic does not depend on them */
            double sum = 0.0;
            for (int j = 0; j < n; j++) sum += x[j];
            printf("gauss: %d of %d columns swapped rows; fragment=%d bytes; sum(x)=%.17g\n",
                   swaps, n - 1, c.frag_bytes, sum);
        }
        fflush(stdout);
    }
    if (!(res <= RESIDUAL_LIMIT)) { /* also catches NaN */
        if (rank == 0)
            fprintf(stderr, "gauss: FAILED: residual %.3g is above %.0f: the solution is wrong\n",
                    res, RESIDUAL_LIMIT);
        status = 1;
    }
    free(x);
    free(m.rows);
    free(c.reqs);
    MPI_Finalize();
    return status;
}
