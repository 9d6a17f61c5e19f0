/* ggml's K-quants Q4_K and Q6_K: 256-element blocks whose sub-block scales
 * (and Q4_K's mins) come from a search and are themselves quantized to 6 or
 * 8 bits under one fp16 scale (docs/semantics.md, "Block formats"). Every
 * float operation is ggml's reference's, in its order, FMA contraction
 * off. Where a code's value is beyond what ggml's nearest_int takes, the
 * block is refused instead of written. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "block_internal.h"
#include "qgen/kernel_support.h"

enum { QK_K = 256, NEAREST_MAX = 4194303 };

/* ggml's nearest_int: round to nearest-even by adding 1.5 * 2^23, exact for
 * |v| <= 4194303; false beyond that or for NaN. */
typedef struct nearest_ctx {
    bool ok;
    float bad;
} nearest_ctx;

static int nearest(nearest_ctx *c, float v) {
    if (!(fabsf(v) <= (float)NEAREST_MAX)) {
        if (c->ok)
            c->bad = v;
        c->ok = false;
        return 0;
    }
    const float biased = v + 12582912.f;
    int32_t i;
    memcpy(&i, &biased, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ggml's make_qkx2_quants(32, 15, x, w, L, &min, Laux, -1, 0.1, 20,
 * false): codes 0..15 and the scale and (negated) min of least weighted
 * squared error among 21 candidate grids. */
static float search_scale_min(nearest_ctx *c, const float *x, const float *w, uint8_t *L, float *the_min) {
    enum { N = 32, NMAX = 15, NSTEP = 20 };
    const float rmin = -1.f, rdelta = 0.1f;
    uint8_t aux[N];
    float min = x[0], max = x[0], sum_w = w[0], sum_x = sum_w * x[0];
    for (int i = 1; i < N; ++i) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        memset(L, 0, N);
        *the_min = -min;
        return 0.f;
    }
    float iscale = NMAX / (max - min), scale = 1 / iscale, best_error = 0;
    for (int i = 0; i < N; ++i) {
        L[i] = (uint8_t)clamp_int(nearest(c, iscale * (x[i] - min)), 0, NMAX);
        float diff = scale * L[i] + min - x[i];
        best_error += w[i] * (diff * diff);
    }
    for (int is = 0; is <= NSTEP; ++is) {
        iscale = (rmin + rdelta * is + NMAX) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < N; ++i) {
            const int l = clamp_int(nearest(c, iscale * (x[i] - min)), 0, NMAX);
            aux[i] = (uint8_t)l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (!(D > 0))
            continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D, this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float cur_error = 0;
        for (int i = 0; i < N; ++i) {
            float diff = this_scale * aux[i] + this_min - x[i];
            cur_error += w[i] * (diff * diff);
        }
        if (cur_error < best_error) {
            memcpy(L, aux, N);
            best_error = cur_error;
            scale = this_scale;
            min = this_min;
        }
    }
    *the_min = -min;
    return scale;
}

/* Q4_K: d, dmin (fp16), scales[12], qs[128]. The search's part: the
 * block's fields but qs (b zeroed before), the search's codes in L and
 * each sub-block's final scale and min, sub[j] = fp16(d)·sc and
 * sub[8 + j] = fp16(dmin)·m (ggml's order). */
static void search_q4_k(nearest_ctx *c, const float *x, uint8_t *b, uint8_t *L, float *sub) {
    uint8_t *sc = b + 4;
    float w[32], mins[8], scales[8], max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l)
            sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; ++l)
            w[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = search_scale_min(c, x + 32 * j, w, L + 32 * j, &mins[j]);
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f, inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
        uint8_t ls = (uint8_t)nearest(c, inv_scale * scales[j]), lm = (uint8_t)nearest(c, inv_min * mins[j]);
        ls = ls < 63 ? ls : 63;
        lm = lm < 63 ? lm : 63;
        if (j < 4) {
            sc[j] = ls;
            sc[j + 4] = lm;
        } else {
            sc[j + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
            sc[j - 4] |= (uint8_t)((ls >> 4) << 6);
            sc[j - 0] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    qg_block_put_f16(b, max_scale / 63.f);
    qg_block_put_f16(b + 2, max_min / 63.f);
    int32_t sm[16]; /* the 6-bit scales and mins as packed */
    qg_ks_q4k_scales(sm, sc);
    for (int j = 0; j < 8; ++j) {
        sub[j] = qg_block_get_f16(b) * (float)sm[j];
        sub[8 + j] = qg_block_get_f16(b + 2) * (float)sm[8 + j];
    }
}

/* The element loop: a sub-block whose scale is 0 keeps the search's codes. */
static void codes_q4_k(nearest_ctx *c, const float *x, const float *sub, uint8_t *L) {
    for (int j = 0; j < 8; ++j) {
        const float d = sub[j], dm = sub[8 + j];
        if (!d)
            continue;
        for (int i = 0; i < 32; ++i)
            L[32 * j + i] = (uint8_t)clamp_int(nearest(c, (x[32 * j + i] + dm) / d), 0, 15);
    }
}

static void pack_q4_k(const uint8_t *L, uint8_t *b) {
    uint8_t *q = b + 16;
    for (int j = 0; j < QK_K; j += 64, q += 32)
        for (int l = 0; l < 32; ++l)
            q[l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
}

/* ggml's make_qx_quants(16, 32, x, L, 1, NULL): codes 0..63 (l + 32) and
 * the scale of least x²-weighted squared error among 19 grids. */
static float search_scale(nearest_ctx *c, const float *x, int8_t *L) {
    enum { N = 16, NMAX = 32 };
    float max = 0, amax = 0;
    for (int i = 0; i < N; ++i) {
        const float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < 1e-15f) { /* ggml's GROUP_MAX_EPS */
        memset(L, 0, N);
        return 0.f;
    }
    float iscale = -NMAX / max, sumlx = 0, suml2 = 0;
    for (int i = 0; i < N; ++i) {
        const int l = clamp_int(nearest(c, iscale * x[i]), -NMAX, NMAX - 1);
        L[i] = (int8_t)(l + NMAX);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f, best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = -(NMAX + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < N; ++i) {
            const int l = clamp_int(nearest(c, iscale * x[i]), -NMAX, NMAX - 1);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < N; ++i)
                L[i] = (int8_t)(NMAX + clamp_int(nearest(c, iscale * x[i]), -NMAX, NMAX - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* Q6_K: ql[128], qh[64], scales[16] (int8), d (fp16). The search's part:
 * the block zeroed but d and the scales, the search's codes (l + 32) in L
 * and each sub-block's final scale sub[j] = fp16(d)·sc[j]. */
static void search_q6_k(nearest_ctx *c, const float *x, uint8_t *b, uint8_t *L, float *sub) {
    float scales[16], max_scale = 0, max_abs_scale = 0;
    int8_t *sc = (int8_t *)(b + 192);
    for (int ib = 0; ib < 16; ++ib) {
        scales[ib] = search_scale(c, x + 16 * ib, (int8_t *)L + 16 * ib);
        if (fabsf(scales[ib]) > max_abs_scale) {
            max_abs_scale = fabsf(scales[ib]);
            max_scale = scales[ib];
        }
    }
    memset(b, 0, 210);
    if (max_abs_scale < 1e-15f) {
        qg_block_put_f16(b + 208, 0.f);
        memset(sub, 0, 16 * sizeof sub[0]);
        return;
    }
    const float iscale = -128.f / max_scale;
    qg_block_put_f16(b + 208, 1 / iscale);
    for (int ib = 0; ib < 16; ++ib) {
        const int s = nearest(c, iscale * scales[ib]);
        sc[ib] = (int8_t)(s < 127 ? s : 127);
    }
    for (int j = 0; j < 16; ++j)
        sub[j] = qg_block_get_f16(b + 208) * sc[j];
}

static void codes_q6_k(nearest_ctx *c, const float *x, const float *sub, uint8_t *L) {
    for (int j = 0; j < 16; ++j) {
        const float d = sub[j];
        if (!d)
            continue;
        for (int i = 0; i < 16; ++i)
            L[16 * j + i] = (uint8_t)(clamp_int(nearest(c, x[16 * j + i] / d), -32, 31) + 32);
    }
}

static void pack_q6_k(const uint8_t *L, uint8_t *b) {
    uint8_t *ql = b, *qh = b + 128;
    for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32)
        for (int l = 0; l < 32; ++l) {
            const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
            ql[l] = (uint8_t)((q1 & 0xF) | ((q3 & 0xF) << 4));
            ql[l + 32] = (uint8_t)((q2 & 0xF) | ((q4 & 0xF) << 4));
            qh[l] = (uint8_t)((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
        }
}

/* The search of either format (b zeroed first: q4_K's scales are or-ed in). */
static void search(nearest_ctx *c, qg_block_format f, const float *x, uint8_t *b, uint8_t *L, float *sub) {
    memset(b, 0, qg_block_bytes(f));
    if (f == QG_BLOCK_Q4_K)
        search_q4_k(c, x, b, L, sub);
    else
        search_q6_k(c, x, b, L, sub);
}

bool qg_kquant_quantize_block(qg_block_format f, const float *x, uint8_t *b, float *bad) {
    nearest_ctx c = {true, 0.0f};
    uint8_t L[QK_K];
    float sub[16];
    search(&c, f, x, b, L, sub);
    if (f == QG_BLOCK_Q4_K) {
        codes_q4_k(&c, x, sub, L);
        pack_q4_k(L, b);
    } else {
        codes_q6_k(&c, x, sub, L);
        pack_q6_k(L, b);
    }
    *bad = c.bad;
    return c.ok;
}

/* 1 where nearest_int cannot take a value of the element loop (they are
 * monotonic in x, d being positive or negative, so a sub-block's extremes
 * bound them), else 2 where a sub-block's scale is 0, else 0. */
static int element_loop_takes(qg_block_format f, const float *x, const float *sub) {
    const bool q4 = f == QG_BLOCK_Q4_K;
    const int rows = q4 ? 8 : 16, len = q4 ? 32 : 16;
    int kept = 0;
    for (int j = 0; j < rows; j++) {
        const float d = sub[j], dm = q4 ? sub[8 + j] : 0.0f;
        if (!d) {
            kept = 2;
            continue;
        }
        float lo = x[len * j], hi = lo;
        for (int i = 1; i < len; i++) {
            lo = fminf(lo, x[len * j + i]);
            hi = fmaxf(hi, x[len * j + i]);
        }
        const float a = q4 ? (lo + dm) / d : lo / d, z = q4 ? (hi + dm) / d : hi / d;
        if (!(fabsf(a) <= (float)NEAREST_MAX && fabsf(z) <= (float)NEAREST_MAX))
            return 1;
    }
    return kept;
}

int qg_block_kquant_search(qg_block_format f, const float *x, uint8_t *b, uint8_t *codes, float *sub) {
    if ((f != QG_BLOCK_Q4_K && f != QG_BLOCK_Q6_K) || !x || !b || !codes || !sub)
        return 1;
    for (int i = 0; i < QK_K; i++)
        if (!(fabsf(x[i]) <= FLT_MAX))
            return 1; /* read finite by the reference */
    nearest_ctx c = {true, 0.0f};
    search(&c, f, x, b, codes, sub);
    return c.ok ? element_loop_takes(f, x, sub) : 1;
}

void qg_kquant_dequantize_block(qg_block_format f, const uint8_t *b, float *y) {
    if (f == QG_BLOCK_Q4_K) {
        const float d = qg_block_get_f16(b), min = qg_block_get_f16(b + 2);
        const uint8_t *q = b + 16;
        int32_t sm[16];
        qg_ks_q4k_scales(sm, b + 4);
        for (int j = 0, is = 0; j < QK_K; j += 64, q += 32, is += 2) {
            const float d1 = d * (float)sm[is], m1 = min * (float)sm[8 + is];
            const float d2 = d * (float)sm[is + 1], m2 = min * (float)sm[8 + is + 1];
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * (q[l] >> 4) - m2;
        }
        return;
    }
    const float d = qg_block_get_f16(b + 208);
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    for (int n = 0; n < QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            y[l + 0] = d * sc[is + 0] * (int8_t)(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
            y[l + 32] = d * sc[is + 2] * (int8_t)(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
            y[l + 64] = d * sc[is + 4] * (int8_t)(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
            y[l + 96] = d * sc[is + 6] * (int8_t)(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
}
