/* Bias quantization and requantization of int32 accumulators: the PTQ path.
 * Two schemes: fp32 (multiply by m = s_in * s_w / s_out in fp32) and
 * fixed point (gemmlowp/TFLite: a Q31 multiplier and a rounding shift). */
#include <float.h>
#include <math.h>
#include <string.h>
#include <stdint.h>

#include "rt_internal.h"
#include "arg_check.h"

/* Saturating; NaN (0 * inf from scales no validation let through) is 0. */
static int32_t clamp_i32(double v) {
    return v != v ? 0 : v <= (double)INT32_MIN ? INT32_MIN : v >= (double)INT32_MAX ? INT32_MAX : (int32_t)v;
}

qg_status qg_requant_params_validate(const qg_spec *sp, const qg_requant_params *rp, qg_error *err) {
    QG_NEED_AS(sp, "out_spec", err, "the output spec");
    QG_NEED(rp, err, "requantization parameters");
    QG_NEED_DATA(rp->s_w, rp->channels, err);
    if (!(rp->s_in > 0.0f) || !isfinite(rp->s_in) || !(rp->s_out > 0.0f) || !isfinite(rp->s_out))
        return qg_error_set(err, QG_ERR_INVALID, "s_in/s_out: got %g and %g; expected finite scales > 0",
                            (double)rp->s_in, (double)rp->s_out);
    if (rp->z_out < sp->quant_min || rp->z_out > sp->quant_max)
        return qg_error_set(err, QG_ERR_INVALID, "z_out: got %d; expected a value in %lld..%lld", (int)rp->z_out,
                            (long long)sp->quant_min, (long long)sp->quant_max);
    for (size_t c = 0; c < rp->channels; c++) {
        const float sw = rp->s_w[c], m = rp->s_in * sw / rp->s_out;
        if (!(sw > 0.0f) || !isfinite(sw))
            return qg_error_set(err, QG_ERR_INVALID, "s_w[%zu]: got %g; expected a finite scale > 0", c, (double)sw);
        /* the fp32 multiplier must be a normal float; the fixed-point one fits Q31 with a shift of at most 31 */
        if (!(m >= FLT_MIN) || !isfinite(m) || (sp->requant == QG_REQUANT_FIXED_POINT && m >= 2147483648.0f))
            return qg_error_set(err, QG_ERR_INVALID,
                                "s_in * s_w[%zu] / s_out: got %g; expected a multiplier in [1.2e-38, %s)", c, (double)m,
                                sp->requant == QG_REQUANT_FIXED_POINT ? "2^31" : "inf");
    }
    return QG_OK;
}

void qg_ref_quantize_bias(const float *bias, int32_t *bq, size_t channels, float s_in, const float *s_w) {
    QG_NEED_OR_RETURN((bias && bq && s_w) || channels == 0);
    for (size_t c = 0; c < channels; c++) {
        float inv = 1.0f / (s_in * s_w[c]);
        float b = bias[c];
        bq[c] = isnan(b) ? 0 : clamp_i32((double)nearbyintf(b * inv));
    }
}

void qg_quantize_multiplier(double m, int32_t *mult, int *shift) {
    QG_NEED_OR_RETURN(mult && shift);
    if (!(m > 0.0)) {
        *mult = 0;
        *shift = 0;
        return;
    }
    int e;
    double frac = frexp(m, &e); /* m = frac * 2^e, frac in [0.5, 1) */
    int64_t q = (int64_t)round(frac * 2147483648.0);
    if (q == (int64_t)1 << 31) { /* frac rounded up to 1.0 */
        q /= 2;
        e++;
    }
    if (e < -31) {
        q = 0;
        e = 0;
    }
    if (e > 31) { /* beyond Q31 with a 31-bit shift: saturate */
        q = INT32_MAX;
        e = 31;
    }
    *mult = (int32_t)q;
    *shift = e;
}

/* round(a * b / 2^31), saturating the one overflowing case. */
static int32_t rounding_doubling_high_mul(int32_t a, int32_t b) {
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (int64_t)1 << 30 : 1 - ((int64_t)1 << 30);
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^e rounded to nearest, ties away from zero. */
static int32_t rounding_shift_right(int32_t x, int e) {
    if (e <= 0)
        return x;
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t rem = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > threshold ? 1 : 0);
}

int32_t qg_multiply_by_quantized_multiplier(int32_t x, int32_t mult, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t xs = clamp_i32((double)x * (double)((int64_t)1 << left));
    return rounding_shift_right(rounding_doubling_high_mul(xs, mult), right);
}

void qg_ref_requantize(const qg_spec *sp, const int32_t *acc, void *y, size_t n, const qg_requant_params *rp) {
    QG_NEED_OR_RETURN(sp && rp && rp->s_w && ((acc && y) || n == 0));
    if (qg_dtype_is_packed(sp->dtype) && n)
        memset(y, 0, qg_q_bytes(sp->dtype, n));
    for (size_t i = 0; i < n; i++) {
        size_t c = qg_channel_of(i, rp->inner ? rp->inner : 1, rp->channels);
        /* acc + bias saturates to int32, as the vector kernels' adds do */
        const int32_t a = clamp_i32((double)acc[i] + (double)(rp->bias_q ? rp->bias_q[c] : 0));
        double v;
        if (sp->requant == QG_REQUANT_FIXED_POINT) {
            int32_t mult;
            int shift;
            qg_quantize_multiplier((double)rp->s_in * (double)rp->s_w[c] / (double)rp->s_out, &mult, &shift);
            v = (double)qg_multiply_by_quantized_multiplier(a, mult, shift);
        } else {
            const float t = (float)a * (rp->s_in * rp->s_w[c] / rp->s_out);
            if (qg_dtype_is_float8(sp->dtype)) { /* the fp32 scheme's t to the format, zero point 0 */
                qg_store_q(sp->dtype, y, i, qg_fp8_encode(sp->dtype, t, sp->saturate));
                continue;
            }
            v = (double)qg_round_mode(sp->rounding, t);
        }
        v = v != v ? 0.0 : v; /* NaN from an invalid multiplier: the zero point */
        v += rp->z_out;
        int64_t q = v < (double)sp->quant_min ? sp->quant_min : v > (double)sp->quant_max ? sp->quant_max : (int64_t)v;
        qg_store_q(sp->dtype, y, i, q);
    }
}
