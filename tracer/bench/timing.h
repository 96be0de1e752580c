/* What the benchmark programs time with: a monotonic clock in nanoseconds, and an order of
 * int64_t for qsort (medians of repetitions). */
#ifndef LOGGPS_BENCH_TIMING_H
#define LOGGPS_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

static inline int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#endif
