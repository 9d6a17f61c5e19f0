/* Internal helpers shared by the reference ops: one element's arithmetic,
 * written once so every op agrees with docs/semantics.md by construction. */
#ifndef QGEN_RT_INTERNAL_H
#define QGEN_RT_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "qgen/runtime.h"

/* Rounds an fp32 value to an integral fp32 value in the spec's mode.
 * half_up is Horizon's floor(t + 0.5) with the addition done in fp32. */
static inline float qg_round_mode(qg_rounding mode, float t) {
    switch (mode) {
    case QG_ROUND_HALF_UP: return floorf(t + 0.5f);
    case QG_ROUND_HALF_AWAY: return roundf(t);
    case QG_ROUND_HALF_EVEN:
    default: return nearbyintf(t);
    }
}

/* One channel's parameters, with the reciprocal computed the one way every
 * kernel computes it. */
typedef struct qg_chan {
    float s, inv;
    int32_t z; /* integer zero point */
    float zf;  /* float zero point (float_qparams) */
    bool fzp;  /* float_qparams scheme */
} qg_chan;

static inline qg_chan qg_chan_of(const qg_spec *sp, const qg_qparams *qp, size_t c) {
    qg_chan ch;
    ch.s = qp->scale[c];
    ch.inv = 1.0f / ch.s;
    ch.fzp = sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
    ch.zf = ch.fzp && qp->zero_point_float ? qp->zero_point_float[c] : 0.0f;
    ch.z = !ch.fzp && qp->zero_point ? qp->zero_point[c] : 0;
    return ch;
}

/* The integer zero point torch derives from a learnable float one
 * (docs/semantics.md, "LSQ"): forward rounds half to even; the per-tensor
 * backward truncates z + 0.5 instead, the per-channel backward rounds half
 * to even again. */
float qg_lsq_zero_point(const qg_spec *sp, float zf, bool backward);

/* One element of the LSQ backward (docs/semantics.md, "LSQ") with its run's
 * s, inv = 1 / s and backward zero point z: adds its ds and dz terms and
 * returns dx. The reference and qg_lsq_backward's tails both run it. */
static inline float qg_lsq_element(const qg_spec *sp, float s, float inv, float z, float g, float xi, float d,
                                   double *ds, double *dz) {
    const float qmin = (float)sp->quant_min, qmax = (float)sp->quant_max;
    const float xq = qg_round_mode(sp->rounding, z + xi * inv);
    const bool below = xq < qmin;
    const bool above = xq > qmax;
    if (below || above) {
        *dz += (double)(d * -1.0f * s * g);
        *ds += (double)(d * ((below ? qmin : qmax) - z) * g);
        return 0.0f;
    }
    const float xfq = (xq - z) * s;
    *ds += (double)(d * (xfq - xi) * inv * g);
    return d;
}

/* scan_minmax.c: the index of x's first non-finite element (n if none);
 * min and max of n >= 1 finite values as the element loop from x[0]
 * gives them (the first of equal extremes, which shows for zeros). */
size_t qg_first_nonfinite(const float *x, size_t n);
void qg_minmax_finite(const float *x, size_t n, float *lo, float *hi);

/* One run of LSQ backward elements sharing a channel's parameters
 * (lsq_backward.c): scale, its inverse, the backward zero point, the
 * range and the gradient scale g. */
typedef struct qg_lsq_params {
    float s, inv, z, qmin, qmax, g;
} qg_lsq_params;

#if defined(__x86_64__) && defined(__GNUC__)
/* lsq_backward_x86.c, for CPUs with AVX2 and half-even rounding: the
 * run's whole vectors (the length it returns), ds and dz added to. */
size_t qg_x86_lsq_run(const qg_lsq_params *p, const float *x, const float *dy, float *dx, size_t len, double *ds,
                      double *dz);
#endif

static inline size_t qg_channel_of(size_t i, size_t inner, size_t channels) {
    return channels <= 1 ? 0 : (i / inner) % channels;
}

/* The index of element i's parameters in qp's scale (and zero point)
 * arrays (docs/semantics.md, "Layouts"): its channel, or for per-group
 * specs its block in ONNX's blocked order, axis length qp->channels. */
static inline size_t qg_param_index(const qg_spec *sp, const qg_qparams *qp, size_t i) {
    if (!qg_qscheme_is_per_group(sp->qscheme))
        return qg_channel_of(i, qp->inner, qp->channels);
    const size_t inner = qp->inner, D = qp->channels, G = sp->group_size;
    const size_t k = i % inner, d = (i / inner) % D, o = i / inner / D;
    return (o * ((D + G - 1) / G) + d / G) * inner + k;
}

/* The repetition of a layout's parameters: the elements of one period
 * (channels x inner; 1 for per-tensor specs or no qparams) and, in
 * *params_per_period, how far a period moves the scale pointer on (per
 * group: a row's groups; per channel the parameters repeat: 0). 0 elements
 * when a per-group layout has no period (inner or channels 0). Drivers that
 * cut a tensor into pieces start each on a period, with qg_qparams_at. */
static inline size_t qg_param_period(const qg_spec *sp, const qg_qparams *qp, size_t *params_per_period) {
    *params_per_period = 0;
    if (!qp || (!qg_qscheme_is_per_channel(sp->qscheme) && !qg_qscheme_is_per_group(sp->qscheme)))
        return 1;
    const size_t inner = qp->inner ? qp->inner : 1;
    if (qg_qscheme_is_per_channel(sp->qscheme))
        return sp->channel_len * inner;
    if (qp->inner == 0 || qp->channels == 0)
        return 0;
    *params_per_period = (qp->channels + sp->group_size - 1) / sp->group_size * inner;
    return qp->channels * inner;
}

/* qp for a piece whose first element uses parameter set `first` (the
 * kernel counts runs from the piece's start). */
static inline qg_qparams qg_qparams_at(const qg_qparams *qp, size_t first) {
    qg_qparams p = *qp;
    p.scale += first;
    p.zero_point = p.zero_point ? p.zero_point + first : NULL;
    return p;
}

/* Element i of a q tensor of dtype d (4-bit: packed, the byte zeroed
 * before the first store into it). */
static inline void qg_store_q(qg_dtype d, void *q, size_t i, int64_t v) {
    switch (d) {
    case QG_QINT8: ((int8_t *)q)[i] = (int8_t)v; break;
    case QG_QUINT8:
    case QG_FP8_E4M3FN:
    case QG_FP8_E5M2: ((uint8_t *)q)[i] = (uint8_t)v; break;
    case QG_QINT16: ((int16_t *)q)[i] = (int16_t)v; break;
    case QG_QUINT16: ((uint16_t *)q)[i] = (uint16_t)v; break;
    case QG_QINT32: ((int32_t *)q)[i] = (int32_t)v; break;
    case QG_QINT4:
    case QG_QUINT4: {
        /* the byte was zeroed before; low nibble first */
        uint8_t *b = (uint8_t *)q + i / 2;
        *b = (uint8_t)(*b | (((uint64_t)v & 0xFu) << (4 * (i % 2))));
        break;
    }
    }
}

static inline int64_t qg_load_q(qg_dtype d, const void *q, size_t i) {
    switch (d) {
    case QG_QINT8: return ((const int8_t *)q)[i];
    case QG_QUINT8:
    case QG_FP8_E4M3FN:
    case QG_FP8_E5M2: return ((const uint8_t *)q)[i];
    case QG_QINT16: return ((const int16_t *)q)[i];
    case QG_QUINT16: return ((const uint16_t *)q)[i];
    case QG_QINT4:
    case QG_QUINT4: {
        const int64_t v = (((const uint8_t *)q)[i / 2] >> (4 * (i % 2))) & 0xF;
        return d == QG_QINT4 && v >= 8 ? v - 16 : v;
    }
    case QG_QINT32:
    default: return ((const int32_t *)q)[i];
    }
}

/* x / s or x * fl(1 / s), as the spec scales. */
static inline float qg_scaled(const qg_spec *sp, const qg_chan *ch, float x) {
    return sp->scale_op == QG_SCALE_DIV ? x / ch->s : x * ch->inv;
}

/* q for x, clamped to [qmin, qmax]; *in_range is the gradient mask bit
 * (qmin <= r + z <= qmax before clamping). The integer add and clamp are
 * done in double, where they are exact for every fp32 r. */
static inline int64_t qg_quant_elem(const qg_spec *sp, const qg_chan *ch, float x, bool *in_range) {
    float t = qg_scaled(sp, ch, x);
    if (ch->fzp)
        t = t + ch->zf; /* zero point added before rounding */
    if (isnan(t)) {
        *in_range = false;
        if (ch->fzp) {
            float zr = nearbyintf(ch->zf);
            return zr < (float)sp->quant_min ? sp->quant_min : zr > (float)sp->quant_max ? sp->quant_max : (int64_t)zr;
        }
        return ch->z;
    }
    double v = (double)qg_round_mode(sp->rounding, t);
    if (!ch->fzp)
        v += (double)ch->z;
    if (v < (double)sp->quant_min) {
        *in_range = false;
        return sp->quant_min;
    }
    if (v > (double)sp->quant_max) {
        *in_range = false;
        return sp->quant_max;
    }
    *in_range = true;
    return (int64_t)v;
}

/* fl((q - z) * s) as torch evaluates it: q - z exactly, the product in
 * double, one rounding to fp32. Identical to the fp32 product whenever
 * q - z is exact in fp32 (every 8- and 16-bit dtype). */
static inline float qg_dequant_elem(const qg_chan *ch, int64_t q) {
    double d = ch->fzp ? (double)q - (double)ch->zf : (double)(q - (int64_t)ch->z);
    return (float)(d * (double)ch->s);
}

/* fp8 (docs/semantics.md, "fp8"): the code of v (x already divided by the
 * scale), and whether it rounded to a finite value without saturating. */
uint8_t qg_fp8_round(qg_dtype d, float v, bool saturate, bool *fits);

/* fl(decode(code) * s); every NaN code gives the one NaN qg_fp8_decode
 * returns (an fp32 product would keep or drop a NaN's sign by ISA). */
static inline float qg_fp8_dequant_elem(const qg_spec *sp, const qg_chan *ch, uint8_t code) {
    const float v = qg_fp8_decode(sp->dtype, code);
    return isnan(v) ? v : v * ch->s;
}

/* float16.c's loops on x86 with AVX2 and F16C (float16_x86.c): each
 * converts a prefix of whole vectors and returns its length; the caller
 * finishes the rest. qg_x86_convert_ok says whether the CPU runs them. */
#if defined(__x86_64__) && defined(__GNUC__)
bool qg_x86_convert_ok(void);
size_t qg_x86_f16_widen(const uint16_t *h, float *out, size_t n);
size_t qg_x86_f16_narrow(const float *in, uint16_t *h, size_t n);
size_t qg_x86_bf16_widen(const uint16_t *h, float *out, size_t n);
size_t qg_x86_bf16_narrow(const float *in, uint16_t *h, size_t n);
#endif

#endif
