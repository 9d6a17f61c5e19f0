/* The observer object, shared by the observer, histogram and state-file
 * translation units. */
#ifndef QGEN_OBSERVER_INTERNAL_H
#define QGEN_OBSERVER_INTERNAL_H

#include <stdint.h>

#include "qgen/runtime.h"

struct qg_observer {
    qg_spec spec;
    size_t channels; /* channel_len, 1 for per-tensor observers */
    float *min, *max;
    float *hist; /* histogram observer: spec.observer.bins counts */
    uint64_t batches;
};

/* Histogram observer (histogram.c). */
void qg_hist_update(qg_observer *obs, const float *x, size_t n, float batch_min, float batch_max);
void qg_hist_search(const qg_observer *obs, float *new_min, float *new_max);

#endif
