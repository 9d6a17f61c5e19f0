/* A quantizer with PPQ's quantization states. The state decides whether
 * apply() fake-quantizes; bake/dequantize/restore move a parameter tensor
 * between its float and its fake-quantized values without losing a bit. */
#include <stdlib.h>
#include <string.h>

#include "qgen/runtime.h"
#include "arg_check.h"

struct qg_quantizer {
    qg_spec spec;
    size_t channels;
    float *scale;
    int32_t *zero_point;
    qg_quant_state state;
    qg_quant_state before_dequant; /* where restore() returns from DEQUANTIZED */
    /* The baked parameter: where it lives, its originals, its baked values. */
    float *param;
    float *original;
    size_t n, inner;
};

static const char *const state_names[] = {"INITIAL", "ACTIVATED", "BAKED", "DEQUANTIZED", "PASSIVE", "FP32"};

const char *qg_quant_state_name(qg_quant_state s) {
    return (unsigned)s < sizeof state_names / sizeof state_names[0] ? state_names[s] : "?";
}

qg_status qg_quantizer_create(const qg_spec *spec, qg_quantizer **out, qg_error *err) {
    QG_NEED(out, err, "a place for the quantizer");
    *out = NULL;
    QG_NEED(spec, err, "a spec from qg_spec_load_file or qg_spec_validate");
    qg_status st = qg_spec_validate(spec, err);
    if (st)
        return st;
    if (spec->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        return qg_error_set(err, QG_ERR_INVALID,
                            "qscheme: quantizer states take integer zero points; got per_channel_affine_float_qparams");
    qg_quantizer *q = calloc(1, sizeof *q);
    if (!q)
        return qg_error_set(err, QG_ERR_NOMEM, "quantizer: out of memory");
    q->spec = *spec;
    q->channels = qg_qscheme_is_per_channel(spec->qscheme) ? spec->channel_len : 1;
    q->scale = calloc(q->channels, sizeof(float));
    q->zero_point = calloc(q->channels, sizeof(int32_t));
    if (!q->scale || !q->zero_point) {
        qg_quantizer_destroy(q);
        return qg_error_set(err, QG_ERR_NOMEM, "quantizer: out of memory");
    }
    q->state = QG_STATE_INITIAL;
    *out = q;
    return QG_OK;
}

void qg_quantizer_destroy(qg_quantizer *q) {
    if (!q)
        return;
    free(q->scale);
    free(q->zero_point);
    free(q->original);
    free(q);
}

qg_quant_state qg_quantizer_state(const qg_quantizer *q) { return q ? q->state : QG_STATE_INITIAL; }

static qg_status wrong_state(const qg_quantizer *q, const char *op, qg_error *err) {
    return qg_error_set(err, QG_ERR_STATE, "quantizer \"%s\": %s is not allowed in state %s", q->spec.name, op,
                        qg_quant_state_name(q->state));
}

static qg_status set_qparams(qg_quantizer *q, const float *scale, const int32_t *zp, qg_error *err) {
    qg_qparams qp = {scale, zp, NULL, q->channels, 1};
    qg_status st = qg_qparams_validate(&q->spec, &qp, err);
    if (st)
        return st;
    memcpy(q->scale, scale, q->channels * sizeof(float));
    memcpy(q->zero_point, zp, q->channels * sizeof(int32_t));
    return QG_OK;
}

qg_status qg_quantizer_activate(qg_quantizer *q, const float *scale, const int32_t *zp, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    QG_NEED(scale, err, "one scale per channel");
    QG_NEED(zp, err, "one zero point per channel");
    if (q->state != QG_STATE_INITIAL && q->state != QG_STATE_ACTIVATED)
        return wrong_state(q, "activate()", err);
    qg_status st = set_qparams(q, scale, zp, err);
    if (!st)
        q->state = QG_STATE_ACTIVATED;
    return st;
}

qg_status qg_quantizer_set_passive(qg_quantizer *q, const float *scale, const int32_t *zp, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    QG_NEED(scale, err, "one scale per channel");
    QG_NEED(zp, err, "one zero point per channel");
    if (q->state == QG_STATE_BAKED || q->state == QG_STATE_DEQUANTIZED)
        return wrong_state(q, "set_passive()", err);
    qg_status st = set_qparams(q, scale, zp, err);
    if (!st)
        q->state = QG_STATE_PASSIVE;
    return st;
}

qg_status qg_quantizer_set_fp32(qg_quantizer *q, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    if (q->state == QG_STATE_BAKED || q->state == QG_STATE_DEQUANTIZED)
        return wrong_state(q, "set_fp32()", err);
    q->state = QG_STATE_FP32;
    return QG_OK;
}

static void fake_quant_with(const qg_quantizer *q, const float *x, float *y, size_t n, size_t inner) {
    qg_qparams qp = {q->scale, q->zero_point, NULL, q->channels, inner ? inner : 1};
    qg_ref_fake_quant(&q->spec, x, y, NULL, n, &qp);
}

qg_status qg_quantizer_apply(const qg_quantizer *q, const float *x, float *y, size_t n, size_t inner, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    QG_NEED_DATA(x, n, err);
    QG_NEED_DATA(y, n, err);
    (void)err;
    switch (q->state) {
    case QG_STATE_ACTIVATED:
    case QG_STATE_BAKED:
    case QG_STATE_PASSIVE: fake_quant_with(q, x, y, n, inner); return QG_OK;
    default:
        if (y != x)
            memmove(y, x, n * sizeof(float));
        return QG_OK;
    }
}

qg_status qg_quantizer_bake(qg_quantizer *q, float *param, size_t n, size_t inner, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    QG_NEED_DATA(param, n, err);
    if (q->state != QG_STATE_ACTIVATED)
        return wrong_state(q, "bake()", err);
    float *orig = malloc(n ? n * sizeof(float) : 1);
    if (!orig)
        return qg_error_set(err, QG_ERR_NOMEM, "quantizer: out of memory");
    memcpy(orig, param, n * sizeof(float));
    free(q->original);
    q->original = orig;
    q->param = param;
    q->n = n;
    q->inner = inner;
    fake_quant_with(q, orig, param, n, inner);
    q->state = QG_STATE_BAKED;
    return QG_OK;
}

qg_status qg_quantizer_dequantize(qg_quantizer *q, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    switch (q->state) {
    case QG_STATE_DEQUANTIZED: return QG_OK; /* repeating it is harmless */
    case QG_STATE_BAKED:
        memcpy(q->param, q->original, q->n * sizeof(float));
        /* fall through */
    case QG_STATE_ACTIVATED:
    case QG_STATE_PASSIVE:
        q->before_dequant = q->state;
        q->state = QG_STATE_DEQUANTIZED;
        return QG_OK;
    default: return wrong_state(q, "dequantize()", err);
    }
}

qg_status qg_quantizer_restore(qg_quantizer *q, qg_error *err) {
    QG_NEED_AS(q, "qz", err, "a quantizer from qg_quantizer_create");
    switch (q->state) {
    case QG_STATE_DEQUANTIZED:
        q->state = q->before_dequant;
        if (q->state == QG_STATE_BAKED)
            fake_quant_with(q, q->original, q->param, q->n, q->inner);
        return QG_OK;
    case QG_STATE_BAKED:
        memcpy(q->param, q->original, q->n * sizeof(float));
        free(q->original);
        q->original = NULL;
        q->param = NULL;
        q->state = QG_STATE_ACTIVATED;
        return QG_OK;
    default: return wrong_state(q, "restore()", err);
    }
}
