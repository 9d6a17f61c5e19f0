/* The observer object, shared by the observer, histogram and state-file
 * translation units. */
#ifndef QGEN_OBSERVER_INTERNAL_H
#define QGEN_OBSERVER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "qgen/runtime.h"

/* The observers whose state is a running min/max (per tensor or per
 * channel), which a vectorized reduction serves. */
static inline bool qg_observer_keeps_min_max(qg_observer_type t) {
    return t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX || t == QG_OBS_PER_CHANNEL_MINMAX ||
           t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
}

struct qg_observer {
    qg_spec spec;
    size_t channels; /* channel_len, 1 for per-tensor observers */
    float *min, *max;
    float *hist; /* histogram observer: spec.observer.bins counts */
    uint64_t batches;
    /* The fused training step's module state, torch's scale, zero_point,
     * observer_enabled and fake_quant_enabled buffers (train_step.c);
     * `channels` values each, train_zpf for float zero points. */
    float *train_scale, *train_zpf;
    int32_t *train_zp;
    bool observe_on, fake_quant_on;
};

/* An observer that only reduces: MinMax over `channels` channels when
 * `spec`'s observer is per channel, else per tensor; its min/max after one
 * update are the batch's. For the pieces of qg_parallel_observe; NULL when
 * out of memory. */
qg_observer *qg_observer_reducer(const qg_spec *spec, size_t channels);

/* The qparams the spec's train_qparams rule gives for the observer's state:
 * its calculate_qparams ("observer") or ATen's ChooseQuantizationParams on
 * its min/max ("fused_op"); docs/semantics.md. The training step and
 * dynamic quantization both take their qparams here. */
qg_status qg_observer_rule_qparams(const qg_observer *o, float *scale, int32_t *zero_point, float *zero_point_float,
                                   qg_error *err);

/* The fused training step with its two kernels as calls with a context
 * (train_step.c): the one driver of qg_fused_train_step_with and
 * qg_parallel_fused_train_step. A NULL call is the reference's. */
typedef struct qg_step_calls {
    qg_status (*observe)(void *ctx, qg_observer *obs, const void *x, size_t n, size_t inner, qg_error *err);
    void (*fake_quant)(void *ctx, const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp);
    void *ctx;
} qg_step_calls;
/* x and y hold the spec's float_type. */
qg_status qg_fused_train_step_calls(qg_observer *obs, const qg_step_calls *calls, const void *x, void *y, uint8_t *mask,
                                    size_t n, size_t inner, float *scale, int32_t *zero_point, qg_error *err);

/* qg_observer_update on x of the observer's float_type (a 16-bit one
 * widened first). */
qg_status qg_observer_update_typed(qg_observer *obs, const void *x, size_t n, size_t inner, qg_error *err);

/* The pointer checks of the public training-step functions (arg_check.h). */
#define QG_NEED_TRAIN_STEP_ARGS(o, x, y, n, scale, zero_point, err)                                                    \
    do {                                                                                                               \
        QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");                                              \
        QG_NEED_DATA(x, n, err);                                                                                       \
        QG_NEED_DATA(y, n, err);                                                                                       \
        QG_NEED(scale, err, "room for one scale per channel");                                                         \
        QG_NEED(zero_point, err, "room for one zero point per channel");                                               \
    } while (0)

/* Histogram observer (histogram.c). */
qg_status qg_hist_update(qg_observer *obs, const float *x, size_t n, float batch_min, float batch_max);
void qg_hist_search(const qg_observer *obs, float *new_min, float *new_max);

#endif
