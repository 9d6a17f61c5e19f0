/* Observers: running statistics of data, turned into qparams on request.
 * MinMax and moving-average variants, per tensor and per channel, fixed
 * qparams, placeholder; the histogram lives in histogram.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observer_internal.h"
#include "rt_internal.h"
#include "arg_check.h"

static bool is_per_channel_observer(qg_observer_type t) {
    return t == QG_OBS_PER_CHANNEL_MINMAX || t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
}

/* A reset observer of `spec`, unchecked; NULL when out of memory. */
static qg_observer *observer_new(const qg_spec *spec) {
    qg_observer *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->spec = *spec;
    o->channels = is_per_channel_observer(spec->observer.type) ? spec->channel_len : 1;
    o->min = malloc(o->channels * sizeof(float));
    o->max = malloc(o->channels * sizeof(float));
    o->train_scale = malloc(o->channels * sizeof(float));
    o->train_zpf = malloc(o->channels * sizeof(float));
    o->train_zp = malloc(o->channels * sizeof(int32_t));
    if (spec->observer.type == QG_OBS_HISTOGRAM)
        o->hist = calloc((size_t)spec->observer.bins, sizeof(float));
    if (!o->min || !o->max || !o->train_scale || !o->train_zpf || !o->train_zp ||
        (spec->observer.type == QG_OBS_HISTOGRAM && !o->hist)) {
        qg_observer_destroy(o);
        return NULL;
    }
    qg_observer_reset(o);
    return o;
}

qg_status qg_observer_create(const qg_spec *spec, qg_observer **out, qg_error *err) {
    QG_NEED(out, err, "a place for the observer");
    *out = NULL;
    QG_NEED(spec, err, "a spec from qg_spec_load_file or qg_spec_validate");
    qg_status st = qg_spec_validate(spec, err);
    if (st)
        return st;
    if (qg_qscheme_is_per_group(spec->qscheme))
        return qg_error_set(err, QG_ERR_INVALID,
                            "qscheme: %s keeps no observer state; expected qparams from the caller or from "
                            "qg_quantize_dynamic",
                            qg_qscheme_name(spec->qscheme));
    *out = observer_new(spec);
    return *out ? QG_OK : qg_error_set(err, QG_ERR_NOMEM, "observer: out of memory");
}

qg_observer *qg_observer_reducer(const qg_spec *spec, size_t channels) {
    qg_spec s = *spec;
    const bool per_channel = is_per_channel_observer(spec->observer.type);
    s.observer.type = per_channel ? QG_OBS_PER_CHANNEL_MINMAX : QG_OBS_MINMAX;
    s.channel_len = per_channel ? channels : spec->channel_len;
    return observer_new(&s);
}

void qg_observer_destroy(qg_observer *o) {
    if (!o)
        return;
    free(o->min);
    free(o->max);
    free(o->hist);
    free(o->train_scale);
    free(o->train_zpf);
    free(o->train_zp);
    free(o);
}

void qg_observer_reset(qg_observer *o) {
    QG_NEED_OR_RETURN(o);
    for (size_t c = 0; c < o->channels; c++) {
        o->min[c] = INFINITY;
        o->max[c] = -INFINITY;
        /* torch's FakeQuantize buffers before the first step */
        o->train_scale[c] = 1.0f;
        o->train_zp[c] = 0;
        o->train_zpf[c] = 0.0f;
    }
    o->observe_on = o->fake_quant_on = true;
    if (o->hist)
        memset(o->hist, 0, (size_t)o->spec.observer.bins * sizeof(float));
    o->batches = 0;
}

const qg_spec *qg_observer_spec_of(const qg_observer *o) { return o ? &o->spec : NULL; }

uint64_t qg_observer_batches(const qg_observer *o) { return o ? o->batches : 0; }

void qg_observer_minmax(const qg_observer *o, float *min, float *max) {
    QG_NEED_OR_RETURN(o && min && max);
    memcpy(min, o->min, o->channels * sizeof(float));
    memcpy(max, o->max, o->channels * sizeof(float));
}

/* Folds a batch's min/max into the running ones: plain min/max, or torch's
 * moving average min + c * (cur - min), each step rounded to fp32. The
 * first batch sets both: the Python observers test min == +inf and
 * max == -inf together, ATen's fused op tests each for an infinity
 * (docs/semantics.md); on finite data the two agree. */
static void fold(qg_observer *o, size_t c, float cur_min, float cur_max) {
    /* -0.0 and +0.0 compare equal, so which one a reduction returns depends
     * on the order it visits them; +0.0 makes every order agree. */
    cur_min += 0.0f;
    cur_max += 0.0f;
    bool moving = o->spec.observer.type == QG_OBS_MOVING_AVERAGE_MINMAX ||
                  o->spec.observer.type == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
    const float k = o->spec.observer.averaging_constant;
    if (moving && o->spec.train_qparams == QG_TRAIN_QPARAMS_FUSED_OP) {
        o->min[c] = isinf(o->min[c]) ? cur_min : o->min[c] + k * (cur_min - o->min[c]);
        o->max[c] = isinf(o->max[c]) ? cur_max : o->max[c] + k * (cur_max - o->max[c]);
        return;
    }
    bool first = o->min[c] == INFINITY && o->max[c] == -INFINITY;
    if (moving && !first) {
        o->min[c] = o->min[c] + k * (cur_min - o->min[c]);
        o->max[c] = o->max[c] + k * (cur_max - o->max[c]);
    } else {
        o->min[c] = cur_min < o->min[c] ? cur_min : o->min[c];
        o->max[c] = cur_max > o->max[c] ? cur_max : o->max[c];
    }
}

qg_status qg_observer_update(qg_observer *o, const float *x, size_t n, size_t inner, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    qg_observer_type t = o->spec.observer.type;
    if (t == QG_OBS_FIXED_QPARAMS || t == QG_OBS_PLACEHOLDER || n == 0)
        return QG_OK;
    const size_t bad = qg_first_nonfinite(x, n);
    if (bad < n)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observed data: %s at element %zu; expected finite values (observer state kept)",
                            isnan(x[bad]) ? "NaN"
                            : x[bad] > 0  ? "inf"
                                          : "-inf",
                            bad);
    if (o->channels > 1 || is_per_channel_observer(t)) {
        if (inner == 0 || n % (inner * o->channels) != 0)
            return qg_error_set(
                err, QG_ERR_INVALID,
                "observed data: %zu elements with inner %zu do not split into channel_len %zu channels; "
                "expected a multiple of channel_len * inner = %zu",
                n, inner, o->channels, inner * o->channels);
        float *cmin = malloc(o->channels * sizeof(float)), *cmax = malloc(o->channels * sizeof(float));
        if (!cmin || !cmax) {
            free(cmin);
            free(cmax);
            return qg_error_set(err, QG_ERR_NOMEM, "observer: out of memory");
        }
        for (size_t c = 0; c < o->channels; c++) {
            cmin[c] = INFINITY;
            cmax[c] = -INFINITY;
        }
        for (size_t i = 0; i < n; i++) {
            size_t c = qg_channel_of(i, inner, o->channels);
            cmin[c] = x[i] < cmin[c] ? x[i] : cmin[c];
            cmax[c] = x[i] > cmax[c] ? x[i] : cmax[c];
        }
        for (size_t c = 0; c < o->channels; c++)
            fold(o, c, cmin[c], cmax[c]);
        free(cmin);
        free(cmax);
    } else {
        float lo, hi;
        qg_minmax_finite(x, n, &lo, &hi);
        if (t == QG_OBS_HISTOGRAM && !isfinite(hi - lo))
            return qg_error_set(err, QG_ERR_INVALID,
                                "observed data: min %g and max %g span more than float32 holds; expected a range "
                                "below 3.4e38 for the histogram (observer state kept)",
                                (double)lo, (double)hi);
        if (t == QG_OBS_HISTOGRAM) {
            if (qg_hist_update(o, x, n, lo, hi) != QG_OK)
                return qg_error_set(err, QG_ERR_NOMEM, "observer: out of memory (observer state kept)");
        } else
            fold(o, 0, lo, hi);
    }
    o->batches++;
    return QG_OK;
}

qg_status qg_observer_fold(qg_observer *o, const float *batch_min, const float *batch_max, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(batch_min, err, "one min per channel");
    QG_NEED(batch_max, err, "one max per channel");
    qg_observer_type t = o->spec.observer.type;
    if (t == QG_OBS_HISTOGRAM)
        return qg_error_set(err, QG_ERR_STATE,
                            "observer.type: histogram needs the data, not its min/max; use update()");
    if (t == QG_OBS_FIXED_QPARAMS || t == QG_OBS_PLACEHOLDER)
        return QG_OK;
    for (size_t c = 0; c < o->channels; c++)
        fold(o, c, batch_min[c], batch_max[c]);
    o->batches++;
    return QG_OK;
}

qg_status qg_observer_qparams(const qg_observer *o, float *scale, int32_t *zero_point, float *zero_point_float,
                              qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(scale, err, "room for one scale per channel");
    QG_NEED(zero_point, err, "room for one zero point per channel");
    const qg_spec *sp = &o->spec;
    switch (sp->observer.type) {
    case QG_OBS_PLACEHOLDER:
        return qg_error_set(err, QG_ERR_STATE,
                            "observer.type: \"placeholder\" records nothing and has no qparams; expected qparams given "
                            "with --scale/--zero-point");
    case QG_OBS_FIXED_QPARAMS:
        scale[0] = sp->observer.fixed_scale;
        zero_point[0] = sp->observer.fixed_zero_point;
        return QG_OK;
    case QG_OBS_HISTOGRAM: {
        if (o->min[0] == INFINITY && o->max[0] == -INFINITY)
            return qg_calculate_qparams(sp, o->min, o->max, 1, scale, zero_point, zero_point_float, err);
        float lo, hi;
        qg_hist_search(o, &lo, &hi);
        return qg_calculate_qparams(sp, &lo, &hi, 1, scale, zero_point, zero_point_float, err);
    }
    default: return qg_calculate_qparams(sp, o->min, o->max, o->channels, scale, zero_point, zero_point_float, err);
    }
}
