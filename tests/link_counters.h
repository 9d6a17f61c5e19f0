/* Kernels for the runtime's drivers that must not reach them: each counts
 * its calls in qg_test_link_calls (unit suites that hand drivers a spec or
 * a memory state where the kernel has no business running). */
#ifndef QGEN_TEST_LINK_COUNTERS_H
#define QGEN_TEST_LINK_COUNTERS_H

#include "qgen/kernel_support.h"

static unsigned qg_test_link_calls;
static inline void qg_test_link_quantize(const void *x, void *q, size_t n, const qg_qparams *qp) {
    (void)x, (void)q, (void)n, (void)qp;
    qg_test_link_calls++;
}
static inline void qg_test_link_dequantize(const void *q, void *y, size_t n, const qg_qparams *qp) {
    (void)q, (void)y, (void)n, (void)qp;
    qg_test_link_calls++;
}
static inline void qg_test_link_fake_quant(const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    (void)x, (void)y, (void)mask, (void)n, (void)qp;
    qg_test_link_calls++;
}

#endif
