/* Four fp32 or int32 lanes in GCC/clang vector types, for the runtime's
 * portable scans (scan_minmax.c, histogram.c): the compiler maps them to
 * SSE, NEON or RVV, and to scalar code elsewhere. */
#ifndef QGEN_RT_VEC4_H
#define QGEN_RT_VEC4_H

#include <stdint.h>
#include <string.h>

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

/* Four floats from p, which need not be aligned. */
static inline v4f load4(const float *p) {
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The lanes of all ones where m is set take a, the others b. */
static inline v4f select4(v4i m, v4f a, v4f b) { return (v4f)((m & (v4i)a) | (~m & (v4i)b)); }

#endif
