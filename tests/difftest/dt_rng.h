/* The differential tester's random numbers: splitmix64, integers only, so
 * that every architecture draws the same sequence from a seed. */
#ifndef QGEN_DT_RNG_H
#define QGEN_DT_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct dt_rng {
    uint64_t s;
} dt_rng;

static inline uint64_t dt_next(dt_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 0 <= result < n (0 when n is 0). */
static inline size_t dt_below(dt_rng *r, size_t n) { return n ? (size_t)(dt_next(r) % n) : 0; }

/* [0, 1), a multiple of 2^-53. */
static inline double dt_uniform(dt_rng *r) { return (double)(dt_next(r) >> 11) / 9007199254740992.0; }

#endif
