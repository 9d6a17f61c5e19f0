"""The timer both Python benchmarks use: the median over `runs` of the
time of one call, each run repeating the call until it lasts at least
`min_seconds` (so short calls are not timer noise)."""
import statistics
import time


def median_seconds(fn, runs, min_seconds, max_reps=1 << 16):
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        if time.perf_counter() - t0 > min_seconds or reps > max_reps:
            break
        reps *= 2
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)
