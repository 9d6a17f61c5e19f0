/* Reference quantize, dequantize, fake_quant and its backward: the oracle
 * every generated kernel is compared with, bit for bit. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rt_internal.h"
#include "arg_check.h"
#include "qgen/blocks.h"

size_t qg_mask_bytes(const qg_spec *spec, size_t n) { return spec && spec->compat_mask ? (n + 7) / 8 : n; }

size_t qg_qparams_count(const qg_spec *sp, size_t n, size_t inner) {
    if (!sp)
        return 0;
    if (qg_qscheme_is_per_group(sp->qscheme)) {
        const size_t D = sp->channel_len, G = sp->group_size ? sp->group_size : 1, run = D * (inner ? inner : 1);
        return (n + run - 1) / run * ((D + G - 1) / G) * (inner ? inner : 1);
    }
    return qg_qscheme_is_per_channel(sp->qscheme) ? sp->channel_len : 1;
}

qg_status qg_qparams_validate_n(const qg_spec *sp, const qg_qparams *qp, size_t n, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec from qg_spec_load_file or qg_spec_validate");
    QG_NEED(qp, err, "qparams");
    QG_NEED(qp->scale, err, "one scale per channel");
    const bool grouped = qg_qscheme_is_per_group(sp->qscheme);
    size_t want = qg_qscheme_is_per_channel(sp->qscheme) || grouped ? sp->channel_len : 1;
    if (qp->channels != want)
        return qg_error_set(err, QG_ERR_INVALID, "qparams: got %zu channels; expected %zu (channel_len of spec \"%s\")",
                            qp->channels, want, sp->name);
    if (qp->inner == 0)
        return qg_error_set(err, QG_ERR_INVALID, "qparams.inner: got 0; expected >= 1");
    if (grouped && qp->inner > SIZE_MAX / qp->channels)
        return qg_error_set(err, QG_ERR_INVALID, "qparams.inner: got %zu; expected channels * inner below 2^64",
                            qp->inner);
    if (grouped && n % (qp->channels * qp->inner) != 0)
        return qg_error_set(err, QG_ERR_INVALID,
                            "n: got %zu elements; expected a multiple of channel_len * inner = %zu for qscheme %s", n,
                            qp->channels * qp->inner, qg_qscheme_name(sp->qscheme));
    const size_t count = grouped ? qg_qparams_count(sp, n, qp->inner) : qp->channels;
    for (size_t c = 0; c < count; c++) {
        float s = qp->scale[c];
        if (!(s > 0.0f) || !isfinite(s))
            return qg_error_set(err, QG_ERR_INVALID, "scale[%zu]: got %g; expected a finite value > 0", c, (double)s);
        if (sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS) {
            if (!qp->zero_point_float || !isfinite(qp->zero_point_float[c]))
                return qg_error_set(err, QG_ERR_INVALID, "zero_point[%zu]: expected a finite float zero point", c);
            continue;
        }
        QG_NEED(qp->zero_point, err, "one zero point per scale");
        int32_t z = qp->zero_point[c];
        if (z != 0 && qg_dtype_is_float8(sp->dtype))
            return qg_error_set(err, QG_ERR_INVALID, "zero_point[%zu]: got %d; expected 0 for dtype %s", c, (int)z,
                                qg_dtype_name(sp->dtype));
        if (z < sp->quant_min || z > sp->quant_max)
            return qg_error_set(err, QG_ERR_INVALID, "zero_point[%zu]: got %d; expected a value in %lld..%lld", c,
                                (int)z, (long long)sp->quant_min, (long long)sp->quant_max);
    }
    return QG_OK;
}

qg_status qg_qparams_validate(const qg_spec *sp, const qg_qparams *qp, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec from qg_spec_load_file or qg_spec_validate");
    QG_NEED(qp, err, "qparams");
    QG_NEED(qp->scale, err, "one scale per channel");
    /* per-group: one slice of the axis, the only size known here */
    return qg_qparams_validate_n(sp, qp, qp->channels * qp->inner, err);
}

/* q of one element in the spec's dtype, with the gradient mask's in-range
 * bit: fp8 codes (rounded, saturated or overflowed) or integers. */
static int64_t quant_elem(const qg_spec *sp, const qg_chan *ch, float x, bool *in_range) {
    if (!qg_dtype_is_float8(sp->dtype))
        return qg_quant_elem(sp, ch, x, in_range);
    if (isnan(x) && sp->nan_policy == QG_NAN_UNCHECKED) { /* a finite code: +0 */
        *in_range = false;
        return 0;
    }
    return qg_fp8_round(sp->dtype, qg_scaled(sp, ch, x), sp->saturate, in_range);
}

static float dequant_elem(const qg_spec *sp, const qg_chan *ch, int64_t q) {
    return qg_dtype_is_float8(sp->dtype) ? qg_fp8_dequant_elem(sp, ch, (uint8_t)q) : qg_dequant_elem(ch, q);
}

void qg_ref_quantize(const qg_spec *sp, const float *x, void *q, size_t n, const qg_qparams *qp) {
    if (sp && sp->block != QG_BLOCK_NONE) { /* a row of blocks; no qparams (docs/semantics.md, "Block formats") */
        (void)qg_block_quantize_ref(sp->block, x, n, q, NULL);
        return;
    }
    QG_NEED_OR_RETURN(sp && qp && ((x && q) || n == 0));
    if (qg_dtype_is_packed(sp->dtype) && n)
        memset(q, 0, qg_q_bytes(sp->dtype, n));
    for (size_t i = 0; i < n; i++) {
        qg_chan ch = qg_chan_of(sp, qp, qg_param_index(sp, qp, i));
        bool in_range;
        qg_store_q(sp->dtype, q, i, quant_elem(sp, &ch, x[i], &in_range));
    }
}

void qg_ref_dequantize(const qg_spec *sp, const void *q, float *x, size_t n, const qg_qparams *qp) {
    if (sp && sp->block != QG_BLOCK_NONE) {
        (void)qg_block_dequantize_ref(sp->block, q, n, x, NULL);
        return;
    }
    QG_NEED_OR_RETURN(sp && qp && ((x && q) || n == 0));
    for (size_t i = 0; i < n; i++) {
        qg_chan ch = qg_chan_of(sp, qp, qg_param_index(sp, qp, i));
        x[i] = dequant_elem(sp, &ch, qg_load_q(sp->dtype, q, i));
    }
}

void qg_ref_fake_quant(const qg_spec *sp, const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    if (sp && sp->block != QG_BLOCK_NONE) {
        (void)qg_block_fake_quant_ref(sp->block, x, y, mask, sp->compat_mask, n, NULL);
        return;
    }
    QG_NEED_OR_RETURN(sp && qp && ((x && y) || n == 0));
    if (mask && sp->compat_mask)
        memset(mask, 0, qg_mask_bytes(sp, n));
    for (size_t i = 0; i < n; i++) {
        qg_chan ch = qg_chan_of(sp, qp, qg_param_index(sp, qp, i));
        float xi = x[i];
        bool in_range;
        int64_t q = quant_elem(sp, &ch, xi, &in_range);
        float out = dequant_elem(sp, &ch, q);
        /* fp8 has a NaN of its own: NaN in, the same NaN out, unless the
         * caller promised finite inputs (docs/semantics.md, "NaN inputs") */
        if (isnan(xi))
            out = sp->nan_policy == QG_NAN_PROPAGATE ||
                          (qg_dtype_is_float8(sp->dtype) && sp->nan_policy != QG_NAN_UNCHECKED)
                      ? xi
                      : 0.0f;
        y[i] = out;
        bool m = sp->saturate ? in_range : true;
        if (isnan(xi))
            m = false;
        if (!mask)
            continue;
        if (sp->compat_mask)
            mask[i / 8] |= (uint8_t)((m ? 1u : 0u) << (i % 8));
        else
            mask[i] = m ? 1 : 0;
    }
}

void qg_ref_fake_quant_backward(const qg_spec *sp, const float *dy, const uint8_t *mask, float *dx, size_t n) {
    QG_NEED_OR_RETURN(sp && ((dy && mask && dx) || n == 0));
    for (size_t i = 0; i < n; i++) {
        bool m = sp->compat_mask ? (mask[i / 8] >> (i % 8)) & 1u : mask[i] != 0;
        dx[i] = m ? dy[i] : 0.0f;
    }
}
