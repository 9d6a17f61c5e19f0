/* ggml's 32-element block formats, element for element as
 * docs/semantics.md ("Block formats") states them: ggml's reference
 * arithmetic where it is defined C, and qgen's rules where it is not
 * (non-finite inputs, a scale whose reciprocal overflows, MXFP4 exponents
 * below the format's). Every float operation is written in ggml's order;
 * the build keeps FMA contraction off. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "qgen/blocks.h"
#include "qgen/kernel_support.h"
#include "arg_check.h"
#include "block_internal.h"
#include "rt_internal.h"

enum { QK = 32, HALF = QK / 2 };

/* Byte layouts: offsets of the scale (d), the second fp16 (m or s), the
 * fifth bits (qh) and the codes (qs) in a block; -1 where absent. */
typedef struct block_layout {
    qg_block_format format;
    size_t bytes;
    int d, m, qh, qs;
} block_layout;

static const block_layout layouts[] = {{QG_BLOCK_Q8_0, 34, 0, -1, -1, 2},  {QG_BLOCK_Q8_1, 36, 0, 2, -1, 4},
                                       {QG_BLOCK_Q4_0, 18, 0, -1, -1, 2},  {QG_BLOCK_Q4_1, 20, 0, 2, -1, 4},
                                       {QG_BLOCK_Q5_0, 22, 0, -1, 2, 6},   {QG_BLOCK_Q5_1, 24, 0, 2, 4, 8},
                                       {QG_BLOCK_MXFP4, 17, -1, -1, -1, 1}};

/* The E2M1 values of MXFP4's codes, doubled (ggml's kvalues_mxfp4): code
 * 8 is -0, equal to 0. */
static const int8_t mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static const block_layout *layout_of(qg_block_format f) {
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++)
        if (layouts[k].format == f)
            return &layouts[k];
    return NULL;
}

bool qg_block_layout_of(qg_block_format f, qg_block_layout *out) {
    const block_layout *l = layout_of(f);
    if (l && out)
        *out = (qg_block_layout){l->d, l->m, l->qh, l->qs};
    return l != NULL;
}

size_t qg_block_elems(qg_block_format f) {
    if (f == QG_BLOCK_Q4_K || f == QG_BLOCK_Q6_K)
        return 256;
    return layout_of(f) ? QK : 0;
}

size_t qg_block_bytes(qg_block_format f) {
    if (f == QG_BLOCK_Q4_K)
        return 144;
    if (f == QG_BLOCK_Q6_K)
        return 210;
    const block_layout *l = layout_of(f);
    return l ? l->bytes : 0;
}

size_t qg_block_row_bytes(qg_block_format f, size_t n) {
    const size_t elems = qg_block_elems(f);
    return elems && n % elems == 0 ? n / elems * qg_block_bytes(f) : 0;
}

/* qgen's rule for what ggml leaves undefined: NaN reads as 0, +-inf as
 * +-FLT_MAX, so every block's extremes and scale are finite. */
float qg_block_read_finite(float v) {
    if (v != v)
        return 0.0f;
    return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : v;
}

/* 1/d, 0 for d = 0 and where the reciprocal overflows (d below 2^-128):
 * such a block is written as an all-zero block, its fp16 d being 0. */
static float reciprocal(float d) {
    if (d == 0.0f)
        return 0.0f;
    const float id = 1.0f / d;
    return isinf(id) ? 0.0f : id;
}

void qg_block_put_f16(uint8_t *p, float v) {
    const uint16_t h = qg_float_to_f16(v);
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

float qg_block_get_f16(const uint8_t *p) { return qg_f16_to_float((uint16_t)(p[0] | p[1] << 8)); }

/* ggml's MXFP4 exponent: floor(log2f(amax)) - 2 + 127, taken from
 * log2f's float result, so an amax just below 2^k counts as 2^k; below
 * the format's smallest scale (amax < 2^-125) it is 0. */
static uint8_t mxfp4_exponent(float amax) {
    if (!(amax > 0.0f))
        return 0;
    const float e = floorf(log2f(amax)) - 2 + 127;
    return e < 0 ? 0 : (uint8_t)e;
}

float qg_block_mxfp4_scale(float amax, uint8_t *e) {
    const uint8_t byte = mxfp4_exponent(amax);
    if (e)
        *e = byte;
    return qg_ks_e8m0_half(&byte);
}

/* The code whose value times d is nearest x; the lowest code on a tie. */
static uint8_t mxfp4_nearest(float x, float d) {
    int best = 0;
    float best_err = fabsf(mxfp4_values[0] * d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf(mxfp4_values[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return (uint8_t)best;
}

/* The extremes a block's scale comes from, over its values as read. */
typedef struct block_range {
    float amax, max_signed, min, max; /* max_signed: the value of largest magnitude, the first such */
} block_range;

static block_range range_of(const float *x) {
    block_range r = {0.0f, 0.0f, FLT_MAX, -FLT_MAX};
    for (int j = 0; j < QK; j++) {
        const float v = x[j];
        if (r.amax < fabsf(v)) {
            r.amax = fabsf(v);
            r.max_signed = v;
        }
        if (v < r.min)
            r.min = v;
        if (v > r.max)
            r.max = v;
    }
    return r;
}

/* A code's float before the truncating cast: NaN (only (x - min) * 0 where
 * max - min overflows) counts as 0. */
static float product(float a, float b) {
    const float p = a * b;
    return p != p ? 0.0f : p;
}

static void quantize_block(const block_layout *l, const float *raw, uint8_t *b) {
    float x[QK];
    uint8_t code[QK];
    for (int j = 0; j < QK; j++)
        x[j] = qg_block_read_finite(raw[j]);
    const block_range r = range_of(x);
    memset(b, 0, l->bytes);
    switch (l->format) {
    case QG_BLOCK_Q8_0:
    case QG_BLOCK_Q8_1: {
        const float d = r.amax / ((1 << 7) - 1), id = reciprocal(d);
        int sum = 0;
        for (int j = 0; j < QK; j++) {
            const int8_t q = (int8_t)roundf(x[j] * id);
            b[l->qs + j] = (uint8_t)q;
            sum += q;
        }
        qg_block_put_f16(b + l->d, d);
        if (l->m >= 0)
            qg_block_put_f16(b + l->m, (float)sum * d);
        return;
    }
    case QG_BLOCK_Q4_0:
    case QG_BLOCK_Q5_0: {
        const int half_range = l->format == QG_BLOCK_Q4_0 ? 8 : 16;
        const float d = r.max_signed / (float)-half_range, id = reciprocal(d);
        for (int j = 0; j < QK; j++) {
            const int8_t q = (int8_t)(x[j] * id + ((float)half_range + 0.5f));
            code[j] = (uint8_t)(q < 2 * half_range - 1 ? q : 2 * half_range - 1);
        }
        qg_block_put_f16(b + l->d, d);
        break;
    }
    case QG_BLOCK_Q4_1:
    case QG_BLOCK_Q5_1: {
        const int top = l->format == QG_BLOCK_Q4_1 ? 15 : 31;
        const float d = (r.max - r.min) / (float)top, id = reciprocal(d);
        for (int j = 0; j < QK; j++) {
            const float v = product(x[j] - r.min, id) + 0.5f;
            /* Q4_1 takes MIN(15, (int8_t)v), Q5_1 (uint8_t)v: v is at most 31.5 here */
            code[j] = (uint8_t)(top == 15 && (int8_t)v > 15 ? 15 : (int8_t)v);
        }
        qg_block_put_f16(b + l->d, d);
        qg_block_put_f16(b + l->m, r.min);
        break;
    }
    case QG_BLOCK_MXFP4: {
        const float d = qg_block_mxfp4_scale(r.amax, b);
        for (int j = 0; j < QK; j++)
            code[j] = mxfp4_nearest(x[j], d);
        break;
    }
    default: return;
    }
    if (l->qh >= 0)
        qg_ks_pack_fifth(b + l->qh, code);
    qg_ks_pack_nibbles(b + l->qs, code, 16); /* the low four bits of each code */
}

static void dequantize_block(const block_layout *l, const uint8_t *b, float *y) {
    if (l->format == QG_BLOCK_Q8_0 || l->format == QG_BLOCK_Q8_1) {
        const float d = qg_block_get_f16(b + l->d);
        for (int j = 0; j < QK; j++)
            y[j] = (float)(int8_t)b[l->qs + j] * d;
        return;
    }
    uint32_t fifth = 0;
    if (l->qh >= 0)
        for (int k = 0; k < 4; k++)
            fifth |= (uint32_t)b[l->qh + k] << 8 * k;
    const float d = l->format == QG_BLOCK_MXFP4 ? qg_ks_e8m0_half(b) : qg_block_get_f16(b + l->d);
    const float m = l->m >= 0 ? qg_block_get_f16(b + l->m) : 0.0f;
    const int offset = l->format == QG_BLOCK_Q4_0 ? 8 : l->format == QG_BLOCK_Q5_0 ? 16 : 0;
    for (int j = 0; j < QK; j++) {
        const uint8_t byte = b[l->qs + j % HALF];
        const int nibble = j < HALF ? byte & 0x0F : byte >> 4;
        const int q = nibble | (int)(fifth >> j & 1u) << 4;
        if (l->format == QG_BLOCK_MXFP4)
            y[j] = (float)mxfp4_values[nibble] * d;
        else if (l->m >= 0)
            y[j] = (float)q * d + m;
        else
            y[j] = (float)(q - offset) * d;
    }
}

/* The checks both directions share: the format, the row length. */
static qg_status row_check(qg_block_format f, size_t n, const char *fn, qg_error *err) {
    const char *name = qg_block_format_name(f);
    const size_t elems = qg_block_elems(f);
    if (f == QG_BLOCK_NONE || !name || !elems)
        return qg_error_set(err, QG_ERR_INVALID, "%s: format: got %d; expected one of ggml's block formats", fn,
                            (int)f);
    if (n % elems)
        return qg_error_set(err, QG_ERR_INVALID,
                            "%s: row length: got %zu; expected a multiple of %s's block of %zu elements", fn, n, name,
                            elems);
    return QG_OK;
}

qg_status qg_block_quantize_ref(qg_block_format f, const float *x, size_t n, uint8_t *q, qg_error *err) {
    qg_status st = row_check(f, n, "qg_block_quantize_ref", err);
    if (st)
        return st;
    QG_NEED_DATA(x, n, err);
    QG_NEED_DATA(q, n, err);
    const size_t elems = qg_block_elems(f), bytes = qg_block_bytes(f);
    const block_layout *l = layout_of(f); /* NULL for the K-quants */
    float read[256], bad = 0.0f;
    for (size_t i = 0; i < n / elems; i++) {
        if (l) {
            quantize_block(l, x + i * elems, q + i * bytes);
            continue;
        }
        for (size_t j = 0; j < elems; j++)
            read[j] = qg_block_read_finite(x[i * elems + j]);
        if (!qg_kquant_quantize_block(f, read, q + i * bytes, &bad))
            return qg_error_set(err, QG_ERR_INVALID,
                                "qg_block_quantize_ref: block %zu (elements %zu to %zu): its codes reach %g, beyond "
                                "what ggml's nearest_int takes (a magnitude of at most 4194303); expected values "
                                "whose %s scales fp16 can hold",
                                i, i * elems, i * elems + elems - 1, (double)bad, qg_block_format_name(f));
    }
    return QG_OK;
}

qg_status qg_block_dequantize_ref(qg_block_format f, const uint8_t *q, size_t n, float *y, qg_error *err) {
    qg_status st = row_check(f, n, "qg_block_dequantize_ref", err);
    if (st)
        return st;
    QG_NEED_DATA(q, n, err);
    QG_NEED_DATA(y, n, err);
    const size_t elems = qg_block_elems(f), bytes = qg_block_bytes(f);
    const block_layout *l = layout_of(f); /* NULL for the K-quants */
    for (size_t i = 0; i < n / elems; i++) {
        if (l)
            dequantize_block(l, q + i * bytes, y + i * elems);
        else
            qg_kquant_dequantize_block(f, q + i * bytes, y + i * elems);
    }
    return QG_OK;
}

qg_status qg_block_fake_quant_ref(qg_block_format f, const float *x, float *y, uint8_t *mask, bool packed_mask,
                                  size_t n, qg_error *err) {
    qg_status st = row_check(f, n, "qg_block_fake_quant_ref", err);
    if (st)
        return st;
    QG_NEED_DATA(x, n, err);
    QG_NEED_DATA(y, n, err);
    const size_t elems = qg_block_elems(f);
    uint8_t codes[256];
    float read[256];
    if (mask && packed_mask)
        memset(mask, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i += elems) {
        memcpy(read, x + i, elems * sizeof read[0]); /* x may be y */
        if ((st = qg_block_quantize_ref(f, read, elems, codes, err)))
            return st;
        for (size_t j = 0; mask && j < elems; j++) {
            const bool pass = isfinite(read[j]);
            if (packed_mask)
                mask[(i + j) / 8] |= (uint8_t)((pass ? 1u : 0u) << ((i + j) % 8));
            else
                mask[i + j] = pass;
        }
        (void)qg_block_dequantize_ref(f, codes, elems, y + i, NULL);
    }
    return QG_OK;
}
