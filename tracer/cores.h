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
#include <stdint.h>

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
            /* The median batch (insertion sort: a few hundred at most). */
            for (int j = 1; j < nb; j++)
                for (int k = j; k > 0 && batch[k - 1] > batch[k]; k--) {
                    double x = batch[k];
                    batch[k] = batch[k - 1], batch[k - 1] = x;
                }
            each = nb % 2 ? batch[nb / 2] : (batch[nb / 2 - 1] + batch[nb / 2]) / 2;
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

#endif
