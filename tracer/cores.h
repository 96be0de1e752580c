/* Where two ranks run: the round trip of a cache line between their cores, timed over a flag
 * in an MPI shared-memory window (each rank waiting for the other's value and writing the
 * next). The tracer times it at MPI_Init and MPI_Finalize, loggps-rtt (--line) around its
 * sweep, the same way, so that a trace's figure and a calibration's compare. What a message
 * over shared memory costs rests on it, and it changes where the OS or a hypervisor runs the
 * ranks on cores farther apart (another socket or core complex; on this project's 2-vCPU
 * machine 55-100 ns, or about 330 ns in spells of seconds to minutes). */
#ifndef LOGGPS_CORES_H
#define LOGGPS_CORES_H

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

/* The median of `nb` > 0 batch figures (sorted in place by insertion: a few hundred at most). */
static inline double median_batch(double *batch, int nb)
{
    for (int j = 1; j < nb; j++)
        for (int k = j; k > 0 && batch[k - 1] > batch[k]; k--) {
            double x = batch[k];
            batch[k] = batch[k - 1], batch[k - 1] = x;
        }
    return nb % 2 ? batch[nb / 2] : (batch[nb / 2 - 1] + batch[nb / 2]) / 2;
}

/* The round trip between the cores of `node`'s ranks `a` and `b`, ns, over up to `rounds` round
 * trips or 2 ms (`clock_ns` reads the time): the median of the means of its batches of 64, so
 * that one round trip the OS or a hypervisor interrupted (a rank off its CPU for milliseconds)
 * does not become the figure; the mean of all where fewer than 3 batches ran. -1 on its other
 * ranks, where `a` and `b` are not two ranks of `node`, or where the library shares no memory
 * (`node` should return errors, not abort). `a` times, `b` answers. A rank that spins 4,096
 * times yields, so that two ranks on one core (oversubscribed) take turns rather than spin
 * through their time slices; the figure is then microseconds. Collective over `node`, with the
 * same `a` and `b` everywhere. */
static double cores_round_trip(MPI_Comm node, int a, int b, int rounds,
                               int64_t (*clock_ns)(void))
{
    enum { BUDGET_NS = 2000000, SPINS = 4096, STOP = -1, BATCH = 64, MAX_BATCHES = 512 };
    int me, n;
    PMPI_Comm_rank(node, &me);
    PMPI_Comm_size(node, &n);
    if (a < 0 || b < 0 || a >= n || b >= n || a == b) return -1;
    int *flag = NULL;
    MPI_Win win;
    if (PMPI_Win_allocate_shared(me == a ? 64 : 0, 1, MPI_INFO_NULL, node, &flag, &win) !=
        MPI_SUCCESS)
        return -1;
    MPI_Aint bytes;
    int unit;
    PMPI_Win_shared_query(win, a, &bytes, &unit, &flag);
    if (me == a) __atomic_store_n(flag, 0, __ATOMIC_RELEASE);
    PMPI_Barrier(node);
    double each = -1;
    if (me == a && rounds > 0) {
        double batch[MAX_BATCHES];
        int64_t t0 = clock_ns(), t = t0, from = t0;
        int i = 0, nb = 0;
        for (; i < rounds && t - t0 < BUDGET_NS; i++) {
            int yielded = 0;
            __atomic_store_n(flag, 2 * i + 1, __ATOMIC_RELEASE);
            for (int s = 0; __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 2 * i + 2; s++)
                if (s >= SPINS) sched_yield(), s = 0, yielded = 1;
            if (i % BATCH == BATCH - 1) {
                t = clock_ns();
                if (nb < MAX_BATCHES) batch[nb++] = (double)(t - from) / BATCH;
                from = t;
            } else if (yielded) {
                t = clock_ns();
            }
        }
        each = (double)(clock_ns() - t0) / i;
        if (nb >= 3) {
            each = median_batch(batch, nb);
        }
        __atomic_store_n(flag, STOP, __ATOMIC_RELEASE);
    } else if (me == b && rounds > 0) {
        for (int v = 1;; v += 2) {
            int got, s = 0;
            while ((got = __atomic_load_n(flag, __ATOMIC_ACQUIRE)) != v && got != STOP)
                if (++s >= SPINS) sched_yield(), s = 0;
            if (got == STOP) break;
            __atomic_store_n(flag, v + 1, __ATOMIC_RELEASE);
        }
    }
    PMPI_Barrier(node);
    PMPI_Win_free(&win);
    return each;
}

/* The sizes of the messages the tracer times between each pair it times a cache line for
 * (message_round_trip), bytes: a small message's, a copy's and a large one's (whose speed
 * moves apart from the small ones' from one launch to another here). */
enum { MSG_SIZES = 3 };
static const int MSG_BYTES[MSG_SIZES] = { 64, 1024, 65536 };

/* The round trip of a `k`-byte message (0 < k <= 2^20) between `node`'s ranks `a` and `b`
 * through MPI (PMPI_Send and PMPI_Recv on `node`, which only the caller uses), ns, timed as
 * loggps-rtt times its round trips: each side writes its send buffer before it sends, receives
 * into another buffer (a buffer sent right after a message was received into it costs a large
 * message more: MODEL.md §13, `bounce`), and `a` times each round trip from its send to its
 * receive's return. After up to 16 round trips untimed, the median of the means of batches of
 * 16 over up to `rounds` round trips or 1 ms (at least one batch). The same placement of the
 * cores can run messages at speeds 25% apart from one launch to the next (the hypervisor's or
 * the other programs' doing), which the cache line's round trip does not see; a prediction
 * compares this figure with its parameters' round trip of the same size. -1 on the other ranks
 * and where a call fails. Collective over `node`, with the same `a`, `b` and `k` everywhere. */
static inline double message_round_trip(MPI_Comm node, int a, int b, int k, int rounds,
                                        int64_t (*clock_ns)(void))
{
    enum { BUDGET_NS = 1000000, WARM = 16, BATCH = 16, MAX_BATCHES = 64 };
    enum { TAG = 0x4c47, STOP = 0x4c48 };
    int me, n;
    PMPI_Comm_rank(node, &me);
    PMPI_Comm_size(node, &n);
    if (a < 0 || b < 0 || a >= n || b >= n || a == b || k <= 0 || k > (1 << 20)) return -1;
    if (me != a && me != b) return -1;
    char *out = malloc(2 * (size_t)k), *in = out + k;
    if (!out) abort();
    memset(in, 0, (size_t)k);
    double each = -1;
    if (me == a) {
        double batch[MAX_BATCHES], sum = 0;
        int nb = 0, ok = 1, timed = 0;
        int64_t start = clock_ns();
        for (int i = 0; ok && i < WARM + rounds; i++) {
            memset(out, i & 0x7f, (size_t)k);
            int64_t t0 = clock_ns();
            ok = PMPI_Send(out, k, MPI_BYTE, b, TAG, node) == MPI_SUCCESS &&
                 PMPI_Recv(in, k, MPI_BYTE, b, TAG, node, MPI_STATUS_IGNORE) == MPI_SUCCESS;
            int64_t t1 = clock_ns();
            if (!timed) {
                /* untimed, up to WARM round trips or a quarter of the budget (ranks taking
                 * turns on a core: a round trip of milliseconds) */
                if (i + 1 >= WARM || t1 - start >= BUDGET_NS / 4) timed = 1, start = t1;
                continue;
            }
            sum += (double)(t1 - t0);
            if (++timed > BATCH) {
                if (nb < MAX_BATCHES) batch[nb++] = sum / BATCH;
                sum = 0, timed = 1;
                if (t1 - start >= BUDGET_NS) break;
            }
        }
        PMPI_Send(out, 0, MPI_BYTE, b, STOP, node);
        if (ok && nb > 0) {
            each = median_batch(batch, nb);
        }
    } else {
        memset(out, 0, (size_t)k);
        for (int i = 1;; i++) {
            MPI_Status st;
            if (PMPI_Recv(in, k, MPI_BYTE, a, MPI_ANY_TAG, node, &st) != MPI_SUCCESS ||
                st.MPI_TAG == STOP || PMPI_Send(out, k, MPI_BYTE, a, TAG, node) != MPI_SUCCESS)
                break;
            /* the next reply written while `a` takes this one in */
            memset(out, i & 0x7f, (size_t)k);
        }
    }
    free(out);
    return each;
}

#endif
