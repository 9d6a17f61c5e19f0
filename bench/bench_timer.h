/* Timing shared by the benchmarks: a monotonic clock, medians, and the
 * throughput of a kernel call as the median of 7 runs of at least 20 ms. */
#ifndef QGEN_BENCH_TIMER_H
#define QGEN_BENCH_TIMER_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

enum { BENCH_RUNS = 7 };

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A buffer on a cache line, as PyTorch's CPU allocator places tensors (64
 * bytes): malloc's 16 would make every 32- or 64-byte vector access of a
 * kernel, XNNPACK's or qgen's, split cache lines half or all of the time
 * (docs/performance.md, "Alignment"). Exits when out of memory. */
static inline void *bench_alloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        exit(2);
    return p;
}

/* Sorts v. */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], bench_cmp);
    return v[n / 2];
}

/* Calls of fn that take at least 20 ms. */
static inline int bench_reps(void (*fn)(void)) {
    int reps = 1;
    for (;;) {
        const double t0 = bench_now();
        for (int r = 0; r < reps; r++)
            fn();
        if (bench_now() - t0 > 0.02 || reps > (1 << 20))
            return reps;
        reps *= 2;
    }
}

/* Elements per second of `reps` calls of fn, which handles n elements per call. */
static inline double bench_run(void (*fn)(void), int reps, size_t n) {
    const double t0 = bench_now();
    for (int r = 0; r < reps; r++)
        fn();
    return (double)n * reps / (bench_now() - t0);
}

/* Elements per second of fn, which handles n elements per call. */
static inline double bench_rate(void (*fn)(void), size_t n) {
    const int reps = bench_reps(fn);
    double v[BENCH_RUNS];
    for (int k = 0; k < BENCH_RUNS; k++)
        v[k] = bench_run(fn, reps, n);
    return bench_median(v, BENCH_RUNS);
}

/* a against b, runs taken in turn (a, b, a, b, ...) so that both meet the
 * same state of a shared machine, whose other tenants come and go within a
 * run of seconds: the median of the 11 runs' ratios a / b. */
static inline double bench_paired_ratio(void (*a)(void), void (*b)(void), size_t n) {
    enum { PAIRS = 11 };
    const int ra = bench_reps(a), rb = bench_reps(b);
    double v[PAIRS];
    for (int k = 0; k < PAIRS; k++) {
        const double x = bench_run(a, ra, n);
        v[k] = x / bench_run(b, rb, n);
    }
    return bench_median(v, PAIRS);
}

#endif
