/* v moved by `ulps` representable floats (up when positive): the near-ties
 * the kernel tests and the differential tester put beside exact ties. */
#ifndef QGEN_TESTS_FLOAT_NUDGE_H
#define QGEN_TESTS_FLOAT_NUDGE_H

#include <math.h>

static inline float nudge(float v, int ulps) {
    for (; ulps > 0; ulps--)
        v = nextafterf(v, INFINITY);
    for (; ulps < 0; ulps++)
        v = nextafterf(v, -INFINITY);
    return v;
}

#endif
