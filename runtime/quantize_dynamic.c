/* Dynamic quantization: each row's own qparams from its min/max, then
 * quantize, in one call (docs/semantics.md, "Dynamic quantization"). One
 * driver serves the reference and the generated kernels of every backend
 * and ISA: the spec's observe kernel reduces a row into a MinMax observer,
 * the spec's train_qparams rule gives the row's qparams (the observers'
 * fp32 formula, as ONNX's DynamicQuantizeLinear; or ATen's
 * ChooseQuantizationParams, as torch's dynamic quantize), and the spec's
 * quantize kernel writes the row.
 * Specs with fixed qparams are refused: their kernels have them built in. */
#include <stdint.h>
#include <stdio.h>

#include "observer_internal.h"
#include "rt_internal.h"
#include "arg_check.h"

/* The row's number before the message the failing call left. */
static qg_status in_row(qg_error *err, qg_status st, size_t r) {
    if (!err)
        return st;
    char msg[sizeof err->message];
    snprintf(msg, sizeof msg, "%s", err->message);
    return qg_error_set(err, st, "row %zu: %s", r, msg);
}

static qg_status in_group(qg_error *err, qg_status st, size_t g) {
    if (!err)
        return st;
    char msg[sizeof err->message];
    snprintf(msg, sizeof msg, "%s", err->message);
    return qg_error_set(err, st, "group %zu: %s", g, msg);
}

qg_status qg_quantize_dynamic_check(const qg_spec *sp, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec");
    if (sp->float_type != QG_FLOAT32)
        return qg_error_set(err, QG_ERR_INVALID,
                            "float_type: got %s; expected float32 (dynamic quantization takes float32 tensors)",
                            qg_float_type_name(sp->float_type));
    if (qg_qscheme_is_per_channel(sp->qscheme))
        return qg_error_set(err, QG_ERR_INVALID,
                            "qscheme: %s; expected per_tensor_affine or per_tensor_symmetric (dynamic quantization "
                            "gives each row its own qparams; rows, not channels, set the layout)",
                            qg_qscheme_name(sp->qscheme));
    if (sp->observer.type == QG_OBS_FIXED_QPARAMS)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.type: fixed_qparams; expected a min/max observer type (dynamic quantization "
                            "takes its qparams from the data, fixed ones are built into the kernels)");
    if (sp->dtype == QG_QINT32)
        return qg_error_set(err, QG_ERR_INVALID, "dtype: qint32; expected an 8- or 16-bit dtype");
    return QG_OK;
}

qg_status qg_quantize_dynamic(const qg_spec *spec, qg_observe_fn observe, qg_quantize_fn quantize, const float *x,
                              void *q, size_t rows, size_t row_len, float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED(spec, err, "the kernels' spec");
    if (row_len != 0 && rows > SIZE_MAX / row_len)
        return qg_error_set(err, QG_ERR_INVALID, "rows: %zu rows of %zu elements; expected fewer than 2^64 elements",
                            rows, row_len);
    QG_NEED_DATA(x, rows * row_len, err);
    QG_NEED_DATA(q, rows * row_len, err);
    QG_NEED_DATA(scale, rows, err);
    QG_NEED_DATA(zero_point, rows, err);
    qg_status st = qg_quantize_dynamic_check(spec, err);
    if (st)
        return st;
    if (qg_qscheme_is_per_group(spec->qscheme) && rows != 0 && row_len != spec->channel_len)
        return qg_error_set(err, QG_ERR_INVALID,
                            "row_len: got %zu; expected channel_len %zu (per-group dynamic quantization groups each "
                            "row, the spec's grouped axis)",
                            row_len, spec->channel_len);
    if (qg_dtype_is_packed(spec->dtype) && rows > 1 && row_len % 2)
        return qg_error_set(err, QG_ERR_INVALID,
                            "row_len: got %zu with %zu rows of %s; expected an even length (packed rows start on "
                            "whole bytes)",
                            row_len, rows, qg_dtype_name(spec->dtype));
    if (rows != 0 && row_len == 0)
        return qg_error_set(err, QG_ERR_INVALID,
                            "row_len: 0 with %zu rows; expected at least 1 element per row "
                            "(an empty row has no min/max)",
                            rows);
    qg_observer *obs = qg_observer_reducer(spec, 1);
    if (!obs)
        return qg_error_set(err, QG_ERR_NOMEM, "out of memory for a row's observer");
    /* per group: a row is the grouped axis, cut into groups of group_size */
    const size_t G = qg_qscheme_is_per_group(spec->qscheme) ? spec->group_size : row_len;
    const size_t groups = row_len ? (row_len + G - 1) / G : 0;
    for (size_t r = 0; r < rows && st == QG_OK; r++) {
        const float *xr = x + r * row_len;
        float *sr = scale + r * groups;
        int32_t *zr = zero_point + r * groups;
        for (size_t g = 0; g < groups && st == QG_OK; g++) {
            const size_t len = row_len - g * G < G ? row_len - g * G : G;
            qg_observer_reset(obs);
            st = observe ? observe(xr + g * G, len, 1, obs, err) : qg_observer_update(obs, xr + g * G, len, 1, err);
            if (st == QG_OK)
                st = qg_observer_rule_qparams(obs, sr + g, zr + g, NULL, err);
            if (st)
                st = groups > 1 ? in_row(err, in_group(err, st, g), r) : in_row(err, st, r);
        }
        if (st)
            break;
        const qg_qparams qp = {sr, zr, NULL, qg_qscheme_is_per_group(spec->qscheme) ? row_len : 1, 1};
        void *qr = (unsigned char *)q + r * qg_q_bytes(spec->dtype, row_len);
        if (quantize)
            quantize(xr, qr, row_len, &qp);
        else
            qg_ref_quantize(spec, xr, qr, row_len, &qp);
    }
    qg_observer_destroy(obs);
    return st;
}
