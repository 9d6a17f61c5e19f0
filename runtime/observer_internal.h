/* The observer object, shared by the observer, histogram and state-file
 * translation units. */
#ifndef QGEN_OBSERVER_INTERNAL_H
#define QGEN_OBSERVER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "qgen/runtime.h"

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

/* Histogram observer (histogram.c). */
void qg_hist_update(qg_observer *obs, const float *x, size_t n, float batch_min, float batch_max);
void qg_hist_search(const qg_observer *obs, float *new_min, float *new_max);

#endif
