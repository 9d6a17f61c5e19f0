/* qgen/parallel.h - the ops on several threads, bit-identical to one call.
 *
 * A large tensor is cut into pieces along its elements and each piece is
 * handed to the same kernel (generated, JIT-compiled, or NULL for the
 * runtime's reference): the elementwise ops need no combining; observers
 * reduce each piece and fold the combined min/max once. Cuts fall on
 * channel-run boundaries and on whole mask bytes, and each piece gets its
 * channels' parameters rotated to start at its first run, so every output
 * byte and the observer state are those of one call on the whole tensor
 * (docs/semantics.md, "Threads").
 *
 * The threads are the host's (a parallel_for callback over its own pool) or
 * the built-in pool's:
 *
 *   qg_pool *pool;
 *   qg_pool_create(0, &pool, &err);               // one thread per CPU
 *   qg_parallel par = qg_pool_parallel(pool);
 *   qg_parallel_fake_quant(&par, k->spec, k->fake_quant, x, y, mask, n, &qp);
 *   qg_pool_destroy(pool);
 *
 * Small tensors (below min_task_elements per thread) run as one call on the
 * calling thread; so does everything when memory for a piece's parameters
 * or reduction cannot be had. */
#ifndef QGEN_PARALLEL_H
#define QGEN_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "qgen/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs task(task_ctx, i) once for every i < count, on any threads, and
 * returns when all have returned. Tasks are independent and may run in any
 * order. */
typedef void (*qg_task_fn)(void *task_ctx, size_t i);
typedef void (*qg_parallel_for_fn)(void *pool, size_t count, qg_task_fn task, void *task_ctx);

typedef struct qg_parallel {
    qg_parallel_for_fn parallel_for; /* NULL: every task on the calling thread */
    void *pool;                      /* passed back to parallel_for */
    size_t threads;                  /* pieces to cut a large tensor into (0 or 1: one call) */
    size_t min_task_elements;        /* no piece smaller than this; 0: 65536 */
} qg_parallel;

/* ---- the built-in pool ------------------------------------------------ */

typedef struct qg_pool qg_pool;

/* A pool of `threads` threads counting the caller's (0: one per online
 * CPU); threads - 1 workers wait for work. */
qg_status qg_pool_create(size_t threads, qg_pool **out, qg_error *err);
void qg_pool_destroy(qg_pool *pool);
size_t qg_pool_threads(const qg_pool *pool);
/* A qg_parallel_for_fn: the caller runs tasks too. Calls from several
 * host threads are served one after another. */
void qg_pool_parallel_for(void *pool, size_t count, qg_task_fn task, void *task_ctx);
/* {qg_pool_parallel_for, pool, its thread count, 0}. */
qg_parallel qg_pool_parallel(qg_pool *pool);

/* ---- the ops ------------------------------------------------------------
 * `spec` is the kernels' spec (qg_kernels.spec for JIT kernels, NAME_spec
 * for generated files); a NULL kernel runs the runtime's reference. A NULL
 * `par` runs one call. Arguments as the kernels take them (qgen/jit.h):
 * for a bfloat16 or float16 spec the float tensors hold its codes (cast its
 * u16 kernels to these types), and a NULL kernel runs the reference
 * through qg_ftype_* (qgen/kernel_support.h); 4-bit q tensors are packed.
 * Per-group specs run one call; a block spec's qp may be NULL (its rows
 * take no qparams). */

typedef void (*qg_dequantize_fn)(const void *q, float *x, size_t n, const qg_qparams *qp);
typedef void (*qg_backward_fn)(const float *dy, const uint8_t *mask, float *dx, size_t n);
typedef void (*qg_requantize_fn)(const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);

void qg_parallel_quantize(const qg_parallel *par, const qg_spec *spec, qg_quantize_fn kernel, const float *x, void *q,
                          size_t n, const qg_qparams *qp);
void qg_parallel_dequantize(const qg_parallel *par, const qg_spec *spec, qg_dequantize_fn kernel, const void *q,
                            float *x, size_t n, const qg_qparams *qp);
void qg_parallel_fake_quant(const qg_parallel *par, const qg_spec *spec, qg_fake_quant_fn kernel, const float *x,
                            float *y, uint8_t *mask, size_t n, const qg_qparams *qp);
void qg_parallel_fake_quant_backward(const qg_parallel *par, const qg_spec *spec, qg_backward_fn kernel,
                                     const float *dy, const uint8_t *mask, float *dx, size_t n);
void qg_parallel_requantize(const qg_parallel *par, const qg_spec *out_spec, qg_requantize_fn kernel,
                            const int32_t *acc, void *q, size_t n, const qg_requant_params *rp);

/* observe(x) into obs, as one call of `kernel` would (histogram observers
 * and the observers that record nothing run one call); x holds the spec's
 * float_type, as in the ops above. On an error (NaN,
 * inf, a layout that does not split into channels) the error is the one
 * call's and the state is kept. */
qg_status qg_parallel_observe(const qg_parallel *par, qg_observe_fn kernel, qg_observer *obs, const float *x, size_t n,
                              size_t inner, qg_error *err);

/* qg_fused_train_step_with (or qg_fused_train_step16_with, for a 16-bit
 * spec's codes and cast kernels) on several threads: the observe and the
 * fake quant above, the qparams in between on the calling thread. */
qg_status qg_parallel_fused_train_step(const qg_parallel *par, qg_observe_fn observe, qg_fake_quant_fn fake_quant,
                                       qg_observer *obs, const float *x, float *y, uint8_t *mask, size_t n,
                                       size_t inner, float *scale, int32_t *zero_point, qg_error *err);

#ifdef __cplusplus
}
#endif
#endif
