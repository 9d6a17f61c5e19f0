/* Observers and the fused training step on several threads
 * (qgen/parallel.h). Each piece is reduced by the observe kernel into a
 * MinMax observer of its own; the pieces' min/max are combined and folded
 * into the real observer once, as one call folds its batch. Per-channel
 * data of several channel periods is cut on whole periods; a single period
 * (a weight) is cut on whole channels. */
#include <math.h>
#include <stdlib.h>

#include "observer_internal.h"
#include "parallel_cut.h"
#include "arg_check.h"

typedef struct reduce_job {
    qg_observe_fn kernel;
    const char *x; /* the spec's float_type */
    size_t n, inner, step;
    size_t element_size; /* of x */
    qg_observer **part;
    qg_status *status;
} reduce_job;

/* One call of the kernel, or of the reference, on x[0..n). */
static qg_status observe_one(const reduce_job *j, qg_observer *o, const void *x, size_t n, qg_error *err) {
    return j->kernel ? j->kernel(x, n, j->inner, o, err) : qg_observer_update_typed(o, x, n, j->inner, err);
}

static void reduce_piece(void *ctx, size_t i) {
    const reduce_job *j = ctx;
    const size_t at = i * j->step, n = j->n - at < j->step ? j->n - at : j->step;
    qg_error err;
    j->status[i] = observe_one(j, j->part[i], j->x + at * j->element_size, n, &err);
}

/* How to cut: *pieces and job->step, and *by_channel when the pieces are
 * channel ranges of one period; 1 piece when the data is not cut. */
static size_t plan_cut(const qg_parallel *par, const qg_observer *o, reduce_job *j, bool *by_channel) {
    *by_channel = false;
    if (!qg_observer_keeps_min_max(o->spec.observer.type))
        return 1;
    if (o->channels == 1)
        return qg_cut(par, j->n, qg_cut_grain(1, 1), &j->step);
    const size_t C = o->channels;
    if (j->inner == 0 || j->inner > SIZE_MAX / C || j->n % (j->inner * C) != 0)
        return 1; /* the one call reports the layout */
    const size_t period = j->inner * C;
    if (j->n / period >= 2)
        return qg_cut(par, j->n, period, &j->step);
    *by_channel = true;
    return qg_cut(par, j->n, j->inner, &j->step);
}

/* Running min/max of the pieces, combined into min[C], max[C]. */
static void combine(const qg_observer *o, const reduce_job *j, size_t pieces, bool by_channel, float *mn, float *mx) {
    for (size_t c = 0; c < o->channels; c++) {
        mn[c] = INFINITY;
        mx[c] = -INFINITY;
    }
    for (size_t i = 0; i < pieces; i++) {
        const qg_observer *p = j->part[i];
        const size_t first = by_channel ? i * j->step / j->inner : 0;
        for (size_t c = 0; c < p->channels; c++) {
            mn[first + c] = p->min[c] < mn[first + c] ? p->min[c] : mn[first + c];
            mx[first + c] = p->max[c] > mx[first + c] ? p->max[c] : mx[first + c];
        }
    }
}

/* The pieces' reducers; false when memory runs out. */
static bool make_parts(const qg_observer *o, const reduce_job *j, size_t pieces, bool by_channel) {
    for (size_t i = 0; i < pieces; i++) {
        const size_t at = i * j->step, n = j->n - at < j->step ? j->n - at : j->step;
        if (!(j->part[i] = qg_observer_reducer(&o->spec, by_channel ? n / j->inner : o->channels)))
            return false;
    }
    return true;
}

static qg_status observe_cut(const qg_parallel *par, reduce_job *j, qg_observer *o, size_t pieces, bool by_channel,
                             qg_error *err) {
    j->part = calloc(pieces, sizeof *j->part);
    j->status = calloc(pieces, sizeof *j->status);
    float *mn = malloc(2 * o->channels * sizeof(float));
    bool ok = j->part && j->status && mn && make_parts(o, j, pieces, by_channel);
    if (ok) {
        qg_run_pieces(par, pieces, reduce_piece, j);
        for (size_t i = 0; i < pieces; i++)
            ok &= j->status[i] == QG_OK;
    }
    qg_status st = QG_OK;
    if (ok) {
        combine(o, j, pieces, by_channel, mn, mn + o->channels);
        st = qg_observer_fold(o, mn, mn + o->channels, err);
    } else { /* out of memory or bad data: the one call, with its own error */
        st = observe_one(j, o, j->x, j->n, err);
    }
    for (size_t i = 0; j->part && i < pieces; i++)
        qg_observer_destroy(j->part[i]);
    free(j->part);
    free(j->status);
    free(mn);
    return st;
}

qg_status qg_parallel_observe(const qg_parallel *par, qg_observe_fn kernel, qg_observer *obs, const float *x, size_t n,
                              size_t inner, qg_error *err) {
    QG_NEED(obs, err, "an observer from qg_observer_create");
    QG_NEED_DATA(x, n, err);
    reduce_job j = {kernel, (const char *)x, n, inner, n, qg_float_type_size(obs->spec.float_type), NULL, NULL};
    bool by_channel;
    const size_t pieces = plan_cut(par, obs, &j, &by_channel);
    if (pieces == 1)
        return observe_one(&j, obs, x, n, err);
    return observe_cut(par, &j, obs, pieces, by_channel, err);
}

/* The training step's two kernels on par's threads. */
typedef struct parallel_kernels {
    const qg_parallel *par;
    qg_observe_fn observe;
    qg_fake_quant_fn fake_quant;
    const qg_spec *spec;
} parallel_kernels;

static qg_status observe_call(void *ctx, qg_observer *o, const void *x, size_t n, size_t inner, qg_error *err) {
    const parallel_kernels *k = ctx;
    return qg_parallel_observe(k->par, k->observe, o, x, n, inner, err);
}

static void fake_quant_call(void *ctx, const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    const parallel_kernels *k = ctx;
    qg_parallel_fake_quant(k->par, k->spec, k->fake_quant, x, y, mask, n, qp);
}

qg_status qg_parallel_fused_train_step(const qg_parallel *par, qg_observe_fn observe, qg_fake_quant_fn fake_quant,
                                       qg_observer *obs, const float *x, float *y, uint8_t *mask, size_t n,
                                       size_t inner, float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED_TRAIN_STEP_ARGS(obs, x, y, n, scale, zero_point, err);
    parallel_kernels k = {par, observe, fake_quant, &obs->spec};
    const qg_step_calls calls = {observe_call, fake_quant_call, &k};
    return qg_fused_train_step_calls(obs, &calls, x, y, mask, n, inner, scale, zero_point, err);
}
