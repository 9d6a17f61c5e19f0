/* The runtime observer's scans of a batch (observer.c): the check that
 * every element is finite and the per-tensor min/max, four lanes at a
 * time in GCC/clang vector types. Each gives what the element loop gives:
 * the index of the first non-finite element; and min/max as the loop
 * `lo = x[i] < lo ? x[i] : lo` from x[0] leaves them, the first element
 * of the extreme value, so that an extreme of zero keeps the sign of the
 * first zero. */
#include <string.h>

#include "rt_internal.h"
#include "vec4.h"

size_t qg_first_nonfinite(const float *x, size_t n) {
    const v4i inf_bits = {0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const v4i magnitude = (v4i)load4(x + i) & ~(v4i){INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
        const v4i bad = magnitude >= inf_bits; /* inf and NaN */
        if (bad[0] | bad[1] | bad[2] | bad[3])
            break;
    }
    for (; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return n;
}

/* The first element of x equal to v (which one is). */
static float first_equal(const float *x, size_t n, float v) {
    for (size_t i = 0; i < n; i++)
        if (x[i] == v)
            return x[i];
    return v;
}

void qg_minmax_finite(const float *x, size_t n, float *lo_out, float *hi_out) {
    float lo = x[0], hi = x[0];
    size_t i = 1;
    if (n >= 9) {
        /* lanes hold extremes of their own elements; which of equal values
         * each lane keeps only matters for zeros, fixed below */
        v4f lo4 = load4(x + 1), hi4 = lo4;
        for (i = 5; i + 4 <= n; i += 4) {
            const v4f v = load4(x + i);
            lo4 = select4(v < lo4, v, lo4);
            hi4 = select4(v > hi4, v, hi4);
        }
        for (int k = 0; k < 4; k++) {
            lo = lo4[k] < lo ? lo4[k] : lo;
            hi = hi4[k] > hi ? hi4[k] : hi;
        }
    }
    for (; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    *lo_out = lo == 0.0f ? first_equal(x, n, 0.0f) : lo;
    *hi_out = hi == 0.0f ? first_equal(x, n, 0.0f) : hi;
}
