/* The fused training step: observe, qparams, fake quant, with the module
 * state torch's two QAT fake-quant modules keep (docs/semantics.md, "The
 * fused training step"):
 * - train_qparams "observer", torch's FakeQuantize: with the observer on,
 *   the observer's calculate_qparams gives new qparams; with fake quant on,
 *   x is fake-quantized with the current ones.
 * - train_qparams "fused_op", torch's FusedMovingAvgObsFakeQuantize: with
 *   fake quant on, ATen's ChooseQuantizationParams gives new qparams from
 *   the running min/max and x is fake-quantized with them; with it off the
 *   qparams are left as they were.
 * With fake quant off, y = x and the mask is all ones. One driver serves
 * the reference and the generated kernels of every backend and ISA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observer_internal.h"
#include "qgen/kernel_support.h"
#include "rt_internal.h"
#include "arg_check.h"

void qg_observer_enable(qg_observer *o, bool observe, bool fake_quant) {
    QG_NEED_OR_RETURN(o);
    o->observe_on = observe;
    o->fake_quant_on = fake_quant;
}

void qg_observer_enabled(const qg_observer *o, bool *observe, bool *fake_quant) {
    QG_NEED_OR_RETURN(o);
    if (observe)
        *observe = o->observe_on;
    if (fake_quant)
        *fake_quant = o->fake_quant_on;
}

void qg_observer_train_qparams(const qg_observer *o, float *scale, int32_t *zero_point) {
    QG_NEED_OR_RETURN(o && scale && zero_point);
    memcpy(scale, o->train_scale, o->channels * sizeof(float));
    memcpy(zero_point, o->train_zp, o->channels * sizeof(int32_t));
}

qg_status qg_observer_restore(qg_observer *o, const float *min, const float *max, const float *scale,
                              const int32_t *zero_point, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(min, err, "one running min per channel");
    QG_NEED(max, err, "one running max per channel");
    QG_NEED(scale, err, "one scale per channel");
    QG_NEED(zero_point, err, "one zero point per channel");
    const qg_spec *sp = &o->spec;
    if (sp->observer.type == QG_OBS_HISTOGRAM)
        return qg_error_set(err, QG_ERR_STATE,
                            "observer.type: histogram keeps a histogram besides min/max; expected a min/max observer "
                            "(restore a histogram from a state file)");
    for (size_t c = 0; c < o->channels; c++) {
        if (zero_point[c] < sp->quant_min || zero_point[c] > sp->quant_max)
            return qg_error_set(err, QG_ERR_INVALID,
                                "zero_point[%zu]: %d; expected a value in the spec's range %lld..%lld", c,
                                (int)zero_point[c], (long long)sp->quant_min, (long long)sp->quant_max);
        if (isnan(min[c]) || isnan(max[c]))
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: NaN; expected numbers (+inf/-inf: unobserved)", c);
    }
    memcpy(o->min, min, o->channels * sizeof(float));
    memcpy(o->max, max, o->channels * sizeof(float));
    memcpy(o->train_scale, scale, o->channels * sizeof(float));
    memcpy(o->train_zp, zero_point, o->channels * sizeof(int32_t));
    o->batches = min[0] <= max[0];
    return QG_OK;
}

qg_status qg_observer_rule_qparams(const qg_observer *o, float *scale, int32_t *zero_point, float *zero_point_float,
                                   qg_error *err) {
    if (o->spec.train_qparams == QG_TRAIN_QPARAMS_FUSED_OP)
        return qg_choose_qparams_fused_op(&o->spec, o->min, o->max, o->channels, scale, zero_point, err);
    return qg_observer_qparams(o, scale, zero_point, zero_point_float, err);
}

/* New qparams into the module's buffers, by the spec's rule, when the rule
 * asks for them this step; on failure the buffers are left as they were. */
static qg_status update_train_qparams(qg_observer *o, qg_error *err) {
    const qg_spec *sp = &o->spec;
    const bool fused = sp->train_qparams == QG_TRAIN_QPARAMS_FUSED_OP;
    if (fused ? !o->fake_quant_on : !o->observe_on)
        return QG_OK;
    const size_t C = o->channels;
    float *s = malloc(C * (2 * sizeof(float) + sizeof(int32_t)));
    if (!s)
        return qg_error_set(err, QG_ERR_NOMEM, "fused step: out of memory");
    float *zf = s + C;
    int32_t *z = (int32_t *)(zf + C);
    memcpy(zf, o->train_zpf, C * sizeof(float));
    qg_status st = qg_observer_rule_qparams(o, s, z, zf, err);
    if (!st) {
        memcpy(o->train_scale, s, C * sizeof(float));
        memcpy(o->train_zp, z, C * sizeof(int32_t));
        memcpy(o->train_zpf, zf, C * sizeof(float));
    }
    free(s);
    return st;
}

static void fake_quant_off(const qg_spec *sp, const void *x, void *y, uint8_t *mask, size_t n) {
    if (y != x)
        memmove(y, x, n * qg_float_type_size(sp->float_type));
    if (!mask)
        return;
    if (!sp->compat_mask) {
        memset(mask, 1, n);
        return;
    }
    memset(mask, 0xFF, n / 8);
    if (n % 8)
        mask[n / 8] = (uint8_t)((1u << (n % 8)) - 1u);
}

/* The reference's observe on x of the observer's float_type: 16-bit
 * tensors through the runtime's driver (docs/semantics.md, "Float
 * types"). */
qg_status qg_observer_update_typed(qg_observer *o, const void *x, size_t n, size_t inner, qg_error *err) {
    if (o->spec.float_type == QG_FLOAT32)
        return qg_observer_update(o, x, n, inner, err);
    return qg_ftype_observe(&o->spec, NULL, x, n, inner, o, err);
}

qg_status qg_fused_train_step_calls(qg_observer *o, const qg_step_calls *calls, const void *x, void *y, uint8_t *mask,
                                    size_t n, size_t inner, float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED_TRAIN_STEP_ARGS(o, x, y, n, scale, zero_point, err);
    const qg_spec *sp = &o->spec;
    if (sp->observer.type == QG_OBS_PLACEHOLDER)
        return qg_error_set(err, QG_ERR_STATE,
                            "observer.type: \"placeholder\" has no qparams to train; expected an observer that "
                            "records data");
    /* Both rules change nothing before every check has passed: the data
     * is observed first (NaN is refused there with the state kept), and
     * a qparams failure leaves the buffers as they were. */
    float *keep_min = NULL;
    qg_status st = QG_OK;
    if (o->observe_on) {
        keep_min = malloc(2 * o->channels * sizeof(float));
        if (!keep_min)
            return qg_error_set(err, QG_ERR_NOMEM, "fused step: out of memory");
        memcpy(keep_min, o->min, o->channels * sizeof(float));
        memcpy(keep_min + o->channels, o->max, o->channels * sizeof(float));
        const uint64_t batches = o->batches;
        st = calls->observe ? calls->observe(calls->ctx, o, x, n, inner, err)
                            : qg_observer_update_typed(o, x, n, inner, err);
        if (!st && (st = update_train_qparams(o, err)) != QG_OK) {
            memcpy(o->min, keep_min, o->channels * sizeof(float));
            memcpy(o->max, keep_min + o->channels, o->channels * sizeof(float));
            o->batches = batches;
        }
        free(keep_min);
    } else {
        st = update_train_qparams(o, err);
    }
    if (st)
        return st;
    if (o->fake_quant_on) {
        const qg_qparams qp = {o->train_scale, o->train_zp,
                               sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS ? o->train_zpf : NULL, o->channels,
                               inner ? inner : 1};
        if (calls->fake_quant)
            calls->fake_quant(calls->ctx, x, y, mask, n, &qp);
        else if (sp->float_type == QG_FLOAT32)
            qg_ref_fake_quant(sp, x, y, mask, n, &qp);
        else
            qg_ftype_fake_quant(sp, NULL, x, y, mask, n, &qp);
    } else {
        fake_quant_off(sp, x, y, mask, n);
    }
    qg_observer_train_qparams(o, scale, zero_point);
    return QG_OK;
}

/* The step's kernels as plain function pointers (qg_fused_train_step_with,
 * qg_fused_train_step16_with). */
typedef struct plain_kernels {
    qg_observe_fn observe;
    qg_fake_quant_fn fake_quant;
    qg_observe16_fn observe16;
    qg_fake_quant16_fn fake_quant16;
} plain_kernels;

static qg_status plain_observe(void *ctx, qg_observer *o, const void *x, size_t n, size_t inner, qg_error *err) {
    const plain_kernels *k = ctx;
    return k->observe ? k->observe(x, n, inner, o, err) : k->observe16(x, n, inner, o, err);
}

static void plain_fake_quant(void *ctx, const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    const plain_kernels *k = ctx;
    if (k->fake_quant)
        k->fake_quant(x, y, mask, n, qp);
    else
        k->fake_quant16(x, y, mask, n, qp);
}

static qg_status plain_step(qg_observer *o, const plain_kernels *k, const void *x, void *y, uint8_t *mask, size_t n,
                            size_t inner, float *scale, int32_t *zero_point, qg_error *err) {
    const qg_step_calls calls = {k->observe || k->observe16 ? plain_observe : NULL,
                                 k->fake_quant || k->fake_quant16 ? plain_fake_quant : NULL, (void *)k};
    return qg_fused_train_step_calls(o, &calls, x, y, mask, n, inner, scale, zero_point, err);
}

/* The tensors' element type must be the spec's. */
static qg_status need_float_type(const qg_observer *o, qg_float_type want, qg_error *err) {
    const qg_float_type have = o->spec.float_type;
    if ((have == QG_FLOAT32) == (want == QG_FLOAT32))
        return QG_OK;
    return qg_error_set(err, QG_ERR_INVALID, "float_type: the spec's is %s; expected %s for %s",
                        qg_float_type_name(have), want == QG_FLOAT32 ? "float32" : "bfloat16 or float16",
                        want == QG_FLOAT32 ? "qg_fused_train_step_with (use qg_fused_train_step16_with)"
                                           : "qg_fused_train_step16_with (use qg_fused_train_step_with)");
}

qg_status qg_fused_train_step_with(qg_observer *o, qg_observe_fn observe, qg_fake_quant_fn fake_quant, const float *x,
                                   float *y, uint8_t *mask, size_t n, size_t inner, float *scale, int32_t *zero_point,
                                   qg_error *err) {
    QG_NEED_TRAIN_STEP_ARGS(o, x, y, n, scale, zero_point, err);
    const qg_status st = need_float_type(o, QG_FLOAT32, err);
    const plain_kernels k = {observe, fake_quant, NULL, NULL};
    return st ? st : plain_step(o, &k, x, y, mask, n, inner, scale, zero_point, err);
}

qg_status qg_fused_train_step16_with(qg_observer *o, qg_observe16_fn observe, qg_fake_quant16_fn fake_quant,
                                     const uint16_t *x, uint16_t *y, uint8_t *mask, size_t n, size_t inner,
                                     float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED_TRAIN_STEP_ARGS(o, x, y, n, scale, zero_point, err);
    const qg_status st = need_float_type(o, QG_BFLOAT16, err);
    const plain_kernels k = {NULL, NULL, observe, fake_quant};
    return st ? st : plain_step(o, &k, x, y, mask, n, inner, scale, zero_point, err);
}

qg_status qg_ref_fused_train_step(qg_observer *o, const float *x, float *y, uint8_t *mask, size_t n, size_t inner,
                                  float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED_TRAIN_STEP_ARGS(o, x, y, n, scale, zero_point, err);
    return qg_fused_train_step_with(o, NULL, NULL, x, y, mask, n, inner, scale, zero_point, err);
}
