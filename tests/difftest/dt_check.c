/* Cases, data and comparisons of the differential tester (dt_check.h).
 *
 * Every float the data holds is made with exact operations (integer
 * arithmetic, +, -, * and / on doubles, ldexp, nextafter), so dt_runner
 * under qemu draws the bits the host draws. This file is built with
 * -ffp-contract=off everywhere. */
#include "dt_check.h"

#include "qgen/blocks.h"
#include "dt_rng.h"
#include "../float_nudge.h"
#include "rt_internal.h" /* qg_param_index: which parameters an element takes */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {"fake_quant", "quantize", "dequantize",       "fake_quant_backward",
                                       "requantize", "observe",  "fused_train_step", "quantize_dynamic"};
_Static_assert(sizeof op_names / sizeof op_names[0] == DT_OP_COUNT, "a name for every op");

const char *dt_op_name(dt_op op) { return op < DT_OP_COUNT && op_names[op] ? op_names[op] : "?"; }

/* ---- numbers ------------------------------------------------------------- */

static bool per_group(const qg_spec *sp) { return qg_qscheme_is_per_group(sp->qscheme); }
static bool per_channel(const qg_spec *sp) { return qg_qscheme_is_per_channel(sp->qscheme); }
static size_t fsize(const qg_spec *sp) { return qg_float_type_size(sp->float_type); }

/* ---- cases --------------------------------------------------------------- */

static bool keeps_min_max(qg_observer_type t) {
    return t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX || t == QG_OBS_PER_CHANNEL_MINMAX ||
           t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
}

/* A length near the loop structure: inside the first iterations, at a
 * multiple of the step and beside it, small, or anywhere below 1500. */
static size_t draw_length(dt_rng *r, size_t step) {
    switch (dt_next(r) % 4) {
    case 0: return dt_below(r, 2 * step + 3);
    case 1: return (1 + dt_below(r, 4)) * step + dt_below(r, 3) - 1;
    case 2: return dt_below(r, 10);
    default: return dt_below(r, 1500);
    }
}

static size_t draw_inner(const qg_spec *sp, dt_rng *r) {
    if (!per_channel(sp) && !per_group(sp))
        return 1;
    switch (dt_next(r) % 4) {
    case 0: return 1; /* channels last */
    case 1: return 2 + dt_below(r, 7);
    case 2: return 9 + dt_below(r, 40);
    default: return 1 + dt_below(r, 3);
    }
}

size_t dt_draw_cases(const qg_spec *sp, uint64_t seed, size_t step, dt_case *out, size_t cap) {
    dt_rng r = {seed};
    const size_t C = per_channel(sp) || per_group(sp) ? sp->channel_len : 1;
    const bool observer = !per_group(sp), fused = observer && keeps_min_max(sp->observer.type);
    const bool dynamic = qg_quantize_dynamic_check(sp, NULL) == QG_OK && sp->float_type == QG_FLOAT32;
    const size_t E = qg_block_elems(sp->block); /* ggml's block formats: rows of whole blocks, no qparams */
    size_t k = 0;
    for (int op = 0; op < DT_OP_COUNT; op++) {
        if ((op == DT_OBSERVE && !observer) || (op == DT_FUSED && !fused) || (op == DT_DYNAMIC && !dynamic) ||
            (E && op > DT_DEQUANTIZE))
            continue;
        for (int i = 0; i < 4 && k < cap; i++) {
            dt_case c = {(dt_op)op, draw_length(&r, step ? step : 1), draw_inner(sp, &r), dt_next(&r)};
            if (E) { /* one scale per element for the data's magnitudes (fill_x) */
                c.n = (c.n % 40 + (i == 0)) * E;
                c.inner = 1;
                out[k++] = c;
                continue;
            }
            if (op == DT_BACKWARD)
                c.inner = 1;
            const size_t run = C * c.inner;
            if (op == DT_DYNAMIC)
                c.inner = 1;                          /* rows of the last axis */
            if (per_group(sp) && op != DT_REQUANTIZE) /* whole slices of the grouped axis */
                c.n = (c.n / run > 4 ? 4 : c.n / run + (i == 0)) * run;
            if (op == DT_FUSED)
                c.n = (1 + dt_below(&r, 3)) * run;
            if (c.n * c.inner > 200000) /* a long run of a wide layout: keep it small */
                c.n = c.n % 2000;
            out[k++] = c;
        }
    }
    return k;
}

/* ---- parameters and data ------------------------------------------------- */

typedef struct params {
    float *scale, *zf;
    int32_t *zp;
    size_t count;
    qg_qparams qp;
} params;

/* 16-bit outputs: a scale 1.5 units of the type's last place above a power
 * of two, so that y = q * s for a power-of-two q is a tie of the type. */
static float tie_scale(const qg_spec *sp, float power_of_two) {
    const int m = sp->float_type == QG_BFLOAT16 ? 7 : 10;
    return power_of_two * (1.0f + ldexpf(3.0f, -m - 1));
}

static bool draw_params(const qg_spec *sp, dt_rng *r, size_t n, size_t inner, params *p) {
    const size_t C = per_channel(sp) || per_group(sp) ? sp->channel_len : 1;
    p->count = qg_qparams_count(sp, n, inner);
    const size_t count = p->count ? p->count : 1;
    p->scale = malloc(count * sizeof(float));
    p->zf = malloc(count * sizeof(float));
    p->zp = malloc(count * sizeof(int32_t));
    if (!p->scale || !p->zf || !p->zp)
        return false;
    const int64_t span = sp->quant_max - sp->quant_min + 1;
    for (size_t c = 0; c < count; c++) {
        switch (dt_next(r) % 3) {
        case 0: p->scale[c] = ldexpf(1.0f, -(int)(2 + dt_below(r, 8))); break;
        case 1:
            p->scale[c] = sp->float_type != QG_FLOAT32 ? tie_scale(sp, ldexpf(1.0f, -(int)(2 + dt_below(r, 8))))
                                                       : (float)(0.001 + 0.05 * dt_uniform(r));
            break;
        default:
            p->scale[c] = (float)(ldexp(1.0 + dt_uniform(r), -(int)dt_below(r, 12)) * (dt_next(r) % 8 ? 0.01 : 30.0));
        }
        int64_t z = sp->quant_min + (int64_t)(dt_next(r) % (uint64_t)span);
        if (dt_next(r) % 5 == 0) /* the range's ends: where a 16-bit store of q is closest to saturating */
            z = dt_next(r) % 2 ? sp->quant_min : sp->quant_max;
        p->zp[c] = qg_dtype_is_float8(sp->dtype) ? 0 : (int32_t)z;
        p->zf[c] = (float)(dt_uniform(r) * 200.0 - 50.0);
        if (sp->observer.type == QG_OBS_FIXED_QPARAMS) {
            p->scale[c] = sp->observer.fixed_scale;
            p->zp[c] = sp->observer.fixed_zero_point;
        }
    }
    p->qp = (qg_qparams){p->scale, p->zp, sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS ? p->zf : NULL, C,
                         C > 1 || per_group(sp) ? inner : 1};
    return true;
}

static void free_params(params *p) {
    free(p->scale);
    free(p->zf);
    free(p->zp);
}

static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3.4e38f, -3.4e38f, 1e-40f, -1e-40f};

/* A special value; no NaN where the spec's caller promises finite inputs
 * (`nan: unchecked`), whose kernels give a NaN any in-range result. */
static float draw_special(const qg_spec *sp, dt_rng *r) {
    const size_t n = sizeof specials / sizeof specials[0], first = sp->nan_policy == QG_NAN_UNCHECKED;
    return specials[first + dt_below(r, n - first)];
}

/* fp8: a code's value, the tie to the next code and beside it, overflow,
 * specials, or anything in the range; times the scale. */
static float draw_x_fp8(const qg_spec *sp, dt_rng *r, float s) {
    const uint8_t code = (uint8_t)dt_next(r);
    const float v = qg_fp8_decode(sp->dtype, code), w = qg_fp8_decode(sp->dtype, (uint8_t)(code + 1));
    const float tie = isfinite(v) && isfinite(w) && signbit(v) == signbit(w) ? (float)(((double)v + w) / 2 * s) : v * s;
    const double max = (double)sp->quant_max;
    switch (dt_next(r) % 8) {
    case 0: return v * s;
    case 1: return tie;
    case 2: return nudge(tie, (int)dt_below(r, 5) - 2);
    case 3: return (float)((dt_next(r) & 1 ? 1 : -1) * max * s * (0.95 + 0.2 * dt_uniform(r)));
    case 4: return draw_special(sp, r);
    default: return (float)((2 * dt_uniform(r) - 1) * max * s * (dt_next(r) & 1 ? 1.0 : 1e-3));
    }
}

/* A value for a parameter (s, z): ties, near-ties, grid points, saturation,
 * zeros, specials, or anything in and around the range. */
static float draw_x(const qg_spec *sp, dt_rng *r, float s, int32_t z) {
    if (qg_dtype_is_float8(sp->dtype))
        return draw_x_fp8(sp, r, s);
    const int64_t lo = sp->quant_min - z, hi = sp->quant_max - z;
    const double k = (double)(lo - 3) + (double)(dt_next(r) % (uint64_t)(hi - lo + 7));
    switch (dt_next(r) % 13) {
    case 0: return (float)((k + 0.5) * s);
    case 1: return nudge((float)((k + 0.5) * s), (int)dt_below(r, 5) - 2);
    case 2: return (float)(k * s);
    case 3: return (float)((dt_next(r) & 1 ? 1 : -1) * (double)(hi - lo) * s * (1.0 + 1000.0 * dt_uniform(r)));
    case 4: return draw_special(sp, r);
    case 5: return dt_next(r) & 1 ? 0.0f : -0.0f;
    default: return (float)(((double)lo - 2 + dt_uniform(r) * (double)(hi - lo + 4)) * s);
    }
}

/* A float tensor in the spec's type: `t` as the kernel takes it (at an
 * offset of 0 to 3 elements), `w` the same values widened for the
 * reference. NaNs of 16-bit tensors carry payloads, quiet and signalling. */
typedef struct ftensor {
    unsigned char *base, *t;
    float *w;
} ftensor;

enum { GUARD = 64 };

static bool ft_alloc(const qg_spec *sp, ftensor *f, size_t n, size_t off) {
    f->base = malloc((n + 4) * fsize(sp) + GUARD);
    f->w = malloc((n + 1) * sizeof(float));
    if (!f->base || !f->w)
        return false;
    memset(f->base, 0xA5, (n + 4) * fsize(sp) + GUARD);
    f->t = f->base + off * fsize(sp);
    return true;
}
static void ft_free(ftensor *f) {
    free(f->base);
    free(f->w);
}

/* w holds the values; makes t from them, and w from t again. */
static void ft_settle(const qg_spec *sp, ftensor *f, size_t n, dt_rng *r) {
    if (sp->float_type == QG_FLOAT32) {
        memcpy(f->t, f->w, n * sizeof(float));
        return;
    }
    uint16_t *h = (uint16_t *)(void *)f->t;
    qg_float_type_narrow(sp->float_type, f->w, h, n);
    const bool bf = sp->float_type == QG_BFLOAT16;
    const uint16_t e = bf ? 0x7F80 : 0x7C00, quiet = bf ? 0x40 : 0x200;
    for (size_t i = 0; i < n; i++)
        if ((h[i] & e) == e && (h[i] & (e ^ 0x7FFF)) && dt_next(r) % 2)
            h[i] = dt_next(r) % 2 ? (uint16_t)(h[i] | (dt_next(r) & (quiet - 1))) : (uint16_t)((h[i] & ~quiet) | 1u);
    qg_float_type_widen(sp->float_type, h, f->w, n);
}

/* The reference's float32 result in the spec's type, for byte comparison. */
static void narrow_into(const qg_spec *sp, const float *y, void *out, size_t n) {
    if (sp->float_type == QG_FLOAT32)
        memcpy(out, y, n * sizeof(float));
    else
        qg_float_type_narrow(sp->float_type, y, out, n);
}

/* ---- comparing ----------------------------------------------------------- */

typedef struct run {
    const qg_spec *sp;
    const dt_kernels *k;
    const dt_case *c;
    dt_tally *t;
    uint64_t found;
} run;

/* n elements of `size` bytes, then `guard` bytes past them. */
static void compare(run *u, const char *what, const void *got, const void *want, size_t n, size_t size, size_t guard) {
    const unsigned char *a = got, *b = want;
    u->t->values += n;
    for (size_t i = 0; i < n * size + guard; i++)
        if (a[i] != b[i]) {
            if (u->t->mismatches++ == 0) {
                u->t->first.c = *u->c;
                snprintf(u->t->first.what, sizeof u->t->first.what, "%s%s", what, i >= n * size ? " (past n)" : "");
                u->t->first.index = i / size;
            }
            u->found++;
            return;
        }
}

static void check(run *u, const char *what, bool ok) {
    if (!ok)
        compare(u, what, "\1", "\0", 1, 1, 0);
}

/* ---- the ops -------------------------------------------------------------- */

static void fill_x(run *u, dt_rng *r, ftensor *x, size_t n, const params *p) {
    for (size_t i = 0; i < n; i++) {
        const size_t j = qg_param_index(u->sp, &p->qp, i);
        x->w[i] = draw_x(u->sp, r, p->scale[j], p->zp[j]);
    }
    ft_settle(u->sp, x, n, r);
}

static void op_fake_quant(run *u, dt_rng *r, size_t n, params *p) {
    const qg_spec *sp = u->sp;
    const size_t fs = fsize(sp), mb = qg_mask_bytes(sp, n);
    ftensor x = {0}, y = {0};
    float *ry = malloc((n + 1) * sizeof(float));
    unsigned char *want = malloc(n * fs + GUARD), *m = malloc(mb + GUARD), *rm = malloc(mb + GUARD);
    if (ry && want && m && rm && ft_alloc(sp, &x, n, dt_below(r, 4)) && ft_alloc(sp, &y, n, dt_below(r, 4))) {
        fill_x(u, r, &x, n, p);
        memset(m, 0xA5, mb + GUARD);
        memset(rm, 0xA5, mb + GUARD);
        memset(want + n * fs, 0xA5, GUARD);
        qg_ref_fake_quant(sp, x.w, ry, rm, n, &p->qp);
        narrow_into(sp, ry, want, n);
        u->k->fake_quant(x.t, y.t, m, n, &p->qp);
        compare(u, "fake_quant y", y.t, want, n, fs, GUARD);
        compare(u, "fake_quant mask", m, rm, mb, 1, GUARD);
        u->k->fake_quant(x.t, y.t, NULL, n, &p->qp);
        compare(u, "fake_quant y (no mask)", y.t, want, n, fs, GUARD);
        if (sp->in_place) {
            u->k->fake_quant(x.t, x.t, NULL, n, &p->qp);
            compare(u, "fake_quant y (in place)", x.t, want, n, fs, 0);
        }
    }
    ft_free(&x);
    ft_free(&y);
    free(ry);
    free(want);
    free(m);
    free(rm);
}

static void op_quantize(run *u, dt_rng *r, size_t n, params *p, bool dequantize) {
    const qg_spec *sp = u->sp;
    const size_t fs = fsize(sp), qb = sp->block ? qg_block_row_bytes(sp->block, n) : qg_q_bytes(sp->dtype, n);
    ftensor x = {0}, y = {0};
    float *ry = malloc((n + 1) * sizeof(float));
    unsigned char *q = malloc(qb + GUARD + 8), *rq = malloc(qb + GUARD + 8), *want = malloc(n * fs + GUARD);
    if (ry && q && rq && want && ft_alloc(sp, &x, n, dt_below(r, 4)) && ft_alloc(sp, &y, n, dt_below(r, 4))) {
        fill_x(u, r, &x, n, p);
        unsigned char *qt = q + dt_below(r, 2) * qg_dtype_size(sp->dtype); /* an element's alignment, or not */
        memset(q, 0xA5, qb + GUARD + 8);
        memset(rq, 0xA5, qb + GUARD + 8);
        qg_ref_quantize(sp, x.w, rq, n, &p->qp);
        if (!dequantize) {
            u->k->quantize(x.t, qt, n, &p->qp);
            compare(u, "quantize", qt, rq, qb, 1, GUARD);
        } else { /* any stored value, also outside [qmin, qmax] */
            for (size_t i = 0; i < qb; i++)
                qt[i] = dt_next(r) % 4 ? rq[i] : (unsigned char)dt_next(r);
            memset(want + n * fs, 0xA5, GUARD);
            qg_ref_dequantize(sp, qt, ry, n, &p->qp);
            narrow_into(sp, ry, want, n);
            u->k->dequantize(qt, y.t, n, &p->qp);
            compare(u, "dequantize", y.t, want, n, fs, GUARD);
        }
    }
    ft_free(&x);
    ft_free(&y);
    free(ry);
    free(q);
    free(rq);
    free(want);
}

static void op_backward(run *u, dt_rng *r, size_t n) {
    const qg_spec *sp = u->sp;
    const size_t fs = fsize(sp), mb = qg_mask_bytes(sp, n);
    ftensor dy = {0}, dx = {0};
    float *rdx = malloc((n + 1) * sizeof(float));
    unsigned char *want = malloc(n * fs + GUARD), *m = malloc(mb + 1);
    if (rdx && want && m && ft_alloc(sp, &dy, n, dt_below(r, 4)) && ft_alloc(sp, &dx, n, dt_below(r, 4))) {
        static const uint8_t byte_values[] = {0, 1, 2, 255, 1, 0};
        for (size_t i = 0; i < n; i++)
            dy.w[i] = dt_next(r) % 16 ? (float)(dt_uniform(r) * 4.0 - 2.0) : specials[dt_below(r, 9)];
        ft_settle(sp, &dy, n, r);
        for (size_t i = 0; i < mb; i++)
            m[i] = sp->compat_mask ? (uint8_t)dt_next(r) : byte_values[dt_below(r, 6)];
        memset(want + n * fs, 0xA5, GUARD);
        qg_ref_fake_quant_backward(sp, dy.w, m, rdx, n);
        narrow_into(sp, rdx, want, n);
        u->k->fake_quant_backward(dy.t, m, dx.t, n);
        compare(u, "fake_quant_backward", dx.t, want, n, fs, GUARD);
    }
    ft_free(&dy);
    ft_free(&dx);
    free(rdx);
    free(want);
    free(m);
}

static int32_t acc_value(dt_rng *r) {
    switch (dt_next(r) % 6) {
    case 0: return INT32_MAX - (int32_t)dt_below(r, 1000);
    case 1: return INT32_MIN + (int32_t)dt_below(r, 1000);
    case 2: return (int32_t)dt_next(r);
    default: return (int32_t)dt_below(r, 200001) - 100000;
    }
}

static void op_requantize(run *u, dt_rng *r, size_t n, size_t inner) {
    const qg_spec *sp = u->sp;
    enum { RQ_CH = 5 };
    float s_w[RQ_CH];
    int32_t bias[RQ_CH];
    const size_t channels = 1 + dt_below(r, RQ_CH), qb = qg_q_bytes(sp->dtype, n);
    for (size_t c = 0; c < RQ_CH; c++) {
        s_w[c] = (float)(0.001 + 0.05 * dt_uniform(r));
        bias[c] = c == 2 ? INT32_MAX - 5 : (int32_t)dt_below(r, 20001) - 10000;
    }
    const int64_t span = sp->quant_max - sp->quant_min + 1;
    const qg_requant_params rp = {
        (float)(0.001 + 0.1 * dt_uniform(r)),
        s_w,
        dt_next(r) % 4 ? bias : NULL,
        (float)(0.001 + 0.5 * dt_uniform(r)),
        qg_dtype_is_float8(sp->dtype) ? 0 : (int32_t)(sp->quant_min + (int64_t)(dt_next(r) % (uint64_t)span)),
        channels,
        inner};
    qg_error err;
    int32_t *acc = malloc((n + 1) * sizeof(int32_t));
    unsigned char *q = malloc(qb + GUARD), *rq = malloc(qb + GUARD);
    const bool valid = qg_requant_params_validate(sp, &rp, &err) == QG_OK;
    check(u, "requantize params refused", valid); /* drawn to be valid: a refusal is a finding, not a skip */
    if (acc && q && rq && valid) {
        for (size_t i = 0; i < n; i++)
            acc[i] = acc_value(r);
        memset(q, 0xA5, qb + GUARD);
        memset(rq, 0xA5, qb + GUARD);
        qg_ref_requantize(sp, acc, rq, n, &rp);
        u->k->requantize(acc, q, n, &rp);
        compare(u, "requantize", q, rq, qb, 1, GUARD);
    }
    free(acc);
    free(q);
    free(rq);
}

static size_t state_channels(const qg_spec *sp) {
    const qg_observer_type t = sp->observer.type;
    return t == QG_OBS_PER_CHANNEL_MINMAX || t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX ? sp->channel_len : 1;
}

/* The observers' running state: min/max, and a histogram's bins. */
static void compare_state(run *u, const char *what, const qg_observer *a, const qg_observer *b) {
    const qg_spec *sp = u->sp;
    const size_t ch = sp->channel_len, bins = sp->observer.type == QG_OBS_HISTOGRAM ? (size_t)sp->observer.bins : 0;
    float *v = malloc((4 * ch + 2 * bins + 4) * sizeof(float));
    if (!v)
        return;
    qg_observer_minmax(a, v, v + ch);
    qg_observer_minmax(b, v + 2 * ch, v + 3 * ch);
    compare(u, what, v, v + 2 * ch, state_channels(sp), 4, 0);
    compare(u, what, v + ch, v + 3 * ch, state_channels(sp), 4, 0);
    if (bins) {
        float *h = v + 4 * ch, *mm = h + 2 * bins;
        qg_observer_histogram(a, h, &mm[0], &mm[1]);
        qg_observer_histogram(b, h + bins, &mm[2], &mm[3]);
        compare(u, "observe histogram", h, h + bins, bins, 4, 0);
        compare(u, "observe histogram range", mm, mm + 2, 2, 4, 0);
    }
    free(v);
}

static void op_observe(run *u, dt_rng *r, size_t n, size_t inner, params *p) {
    const qg_spec *sp = u->sp;
    qg_observer *a = NULL, *b = NULL;
    qg_error ea, eb;
    ftensor x = {0};
    const bool made = qg_observer_create(sp, &a, &ea) == QG_OK && qg_observer_create(sp, &b, &eb) == QG_OK;
    check(u, "observe: observer_create", made); /* drawn only for specs that keep an observer */
    if (made && ft_alloc(sp, &x, n, dt_below(r, 4))) {
        for (int batch = 0; batch < 3; batch++) {
            const bool nan = batch == 2 && n > 0;
            for (size_t i = 0; i < n; i++) {
                const size_t j = qg_param_index(sp, &p->qp, i);
                x.w[i] = draw_x(sp, r, p->scale[j], p->zp[j]);
                if (!isfinite(x.w[i]))
                    x.w[i] = (float)(dt_uniform(r) * 10.0 - 5.0);
            }
            if (nan) /* refused, the state kept */
                x.w[dt_below(r, n)] = NAN;
            ft_settle(sp, &x, n, r);
            const qg_status sa = u->k->observe(x.t, n, inner, a, &ea);
            const qg_status sb = qg_observer_update(b, x.w, n, inner, &eb);
            check(u, "observe status", sa == sb);
            compare_state(u, "observe min/max", a, b);
        }
    }
    qg_observer_destroy(a);
    qg_observer_destroy(b);
    ft_free(&x);
}

/* The fused training step (what NAME_fused_train_step runs) on the
 * kernels against the reference step on float32, over a few batches of
 * varied scale and offset with observer and fake-quant switched. */
static void op_fused(run *u, dt_rng *r, size_t n, size_t inner) {
    const qg_spec *sp = u->sp;
    static const bool sw[][2] = {{1, 1}, {1, 1}, {0, 1}, {1, 0}, {1, 1}};
    qg_spec f32 = *sp;
    f32.float_type = QG_FLOAT32;
    const size_t ch = sp->channel_len, fs = fsize(sp), mb = qg_mask_bytes(sp, n);
    qg_observer *a = NULL, *b = NULL;
    qg_error err;
    ftensor x = {0}, y = {0};
    float *ry = malloc((n + 1) * sizeof(float)), *st = malloc(8 * ch * sizeof(float));
    int32_t *z = malloc(2 * ch * sizeof(int32_t));
    unsigned char *want = malloc(n * fs + 1), *m = malloc(mb + 1), *rm = malloc(mb + 1);
    const bool made = qg_observer_create(sp, &a, &err) == QG_OK && qg_observer_create(&f32, &b, &err) == QG_OK;
    check(u, "fused: observer_create", made);
    const bool ok = made && ry && st && z && want && m && rm && ft_alloc(sp, &x, n, 0) && ft_alloc(sp, &y, n, 0);
    for (size_t k = 0; ok && k < sizeof sw / sizeof sw[0]; k++) {
        const double sd = ldexp(1.0 + dt_uniform(r), (int)dt_below(r, 12) - 6), loc = (dt_uniform(r) * 6.0 - 3.0) * sd;
        for (size_t i = 0; i < n; i++)
            x.w[i] = k == 1 && i % 3 == 0 ? 0.0f : (float)(loc + sd * (dt_uniform(r) * 2.0 - 1.0));
        ft_settle(sp, &x, n, r);
        qg_observer_enable(a, sw[k][0], sw[k][1]);
        qg_observer_enable(b, sw[k][0], sw[k][1]);
        qg_status sa;
        if (sp->float_type == QG_FLOAT32)
            sa = qg_fused_train_step_with(a, (qg_observe_fn)u->k->observe, (qg_fake_quant_fn)u->k->fake_quant,
                                          (const float *)(void *)x.t, (float *)(void *)y.t, m, n, inner, st, z, &err);
        else
            sa = qg_fused_train_step16_with(a, (qg_observe16_fn)u->k->observe, (qg_fake_quant16_fn)u->k->fake_quant,
                                            (const uint16_t *)(void *)x.t, (uint16_t *)(void *)y.t, m, n, inner, st, z,
                                            &err);
        const qg_status sb = qg_ref_fused_train_step(b, x.w, ry, rm, n, inner, st + ch, z + ch, &err);
        check(u, "fused status", sa == sb);
        if (sa != QG_OK || sb != QG_OK)
            break;
        narrow_into(sp, ry, want, n);
        compare(u, "fused y", y.t, want, n, fs, 0);
        compare(u, "fused mask", m, rm, mb, 1, 0);
        const size_t sc = state_channels(sp);
        compare(u, "fused scale", st, st + ch, sc, 4, 0);
        compare(u, "fused zero_point", z, z + ch, sc, 4, 0);
        compare_state(u, "fused min/max", a, b);
    }
    ft_free(&x);
    ft_free(&y);
    qg_observer_destroy(a);
    qg_observer_destroy(b);
    free(ry);
    free(st);
    free(z);
    free(want);
    free(m);
    free(rm);
}

/* Dynamic quantization (docs/semantics.md): the kernels' observe and
 * quantize in qg_quantize_dynamic against the reference's, on one to three
 * rows (per group: rows of the grouped axis), finite data but for a NaN
 * in the last row now and then; the status, q, scales and zero points. */
static void op_dynamic(run *u, dt_rng *r, size_t n, params *p) {
    const qg_spec *sp = u->sp;
    const size_t D = sp->channel_len;
    const size_t rows = per_group(sp) ? n / D : n >= 3 ? 1 + dt_below(r, 3) : 1;
    size_t row_len = per_group(sp) ? D : rows ? n / rows : 0;
    if (qg_dtype_is_packed(sp->dtype) && rows > 1)
        row_len = row_len / 2 * 2; /* packed rows start on whole bytes */
    const size_t m = rows * row_len, per_row = per_group(sp) ? (D + sp->group_size - 1) / sp->group_size : 1;
    const size_t qb = qg_q_bytes(sp->dtype, m), ns = rows * per_row + 1;
    float *x = malloc((m + 1) * sizeof(float)), *s = malloc(2 * ns * sizeof(float));
    int32_t *z = malloc(2 * ns * sizeof(int32_t));
    unsigned char *q = malloc(2 * (qb + GUARD));
    if (x && s && z && q) {
        for (size_t i = 0; i < m; i++) {
            const size_t j = qg_param_index(sp, &p->qp, i);
            x[i] = draw_x(sp, r, p->scale[j], p->zp[j]);
            if (!isfinite(x[i]))
                x[i] = (float)(dt_uniform(r) * 8.0 - 4.0);
        }
        if (m && dt_next(r) % 4 == 0)
            x[m - 1] = NAN;
        memset(q, 0xA5, 2 * (qb + GUARD));
        memset(s, 0, 2 * ns * sizeof(float));
        memset(z, 0, 2 * ns * sizeof(int32_t));
        qg_error ea, eb;
        const qg_status sa = qg_quantize_dynamic(sp, (qg_observe_fn)u->k->observe, (qg_quantize_fn)u->k->quantize, x, q,
                                                 rows, row_len, s, z, &ea);
        const qg_status sb = qg_quantize_dynamic(sp, NULL, NULL, x, q + qb + GUARD, rows, row_len, s + ns, z + ns, &eb);
        check(u, "quantize_dynamic status", sa == sb);
        compare(u, "quantize_dynamic q", q, q + qb + GUARD, qb, 1, GUARD);
        compare(u, "quantize_dynamic scale", s, s + ns, ns, 4, 0);
        compare(u, "quantize_dynamic zero_point", z, z + ns, ns, 4, 0);
    }
    free(x);
    free(s);
    free(z);
    free(q);
}

uint64_t dt_run_case(const qg_spec *sp, const dt_kernels *k, const dt_case *c, dt_tally *t) {
    run u = {sp, k, c, t, 0};
    dt_rng r = {c->seed};
    params p = {0};
    t->cases++;
    if (draw_params(sp, &r, c->n, c->inner, &p)) {
        switch (c->op) {
        case DT_FAKE_QUANT: op_fake_quant(&u, &r, c->n, &p); break;
        case DT_QUANTIZE: op_quantize(&u, &r, c->n, &p, false); break;
        case DT_DEQUANTIZE: op_quantize(&u, &r, c->n, &p, true); break;
        case DT_BACKWARD: op_backward(&u, &r, c->n); break;
        case DT_REQUANTIZE: op_requantize(&u, &r, c->n, c->inner); break;
        case DT_OBSERVE: op_observe(&u, &r, c->n, c->inner, &p); break;
        case DT_FUSED: op_fused(&u, &r, c->n, c->inner); break;
        case DT_DYNAMIC: op_dynamic(&u, &r, c->n, &p); break;
        default: break;
        }
    }
    free_params(&p);
    return u.found;
}

enum { MAX_CASES = 64 };

void dt_run_seed(const qg_spec *sp, const dt_kernels *k, uint64_t seed, size_t step, dt_tally *t) {
    dt_case cases[MAX_CASES];
    const size_t n = dt_draw_cases(sp, seed, step, cases, MAX_CASES);
    for (size_t i = 0; i < n; i++)
        dt_run_case(sp, k, &cases[i], t);
}

dt_case dt_shrink_length(const qg_spec *sp, const dt_kernels *k, dt_case c) {
    /* per group and the fused step: whole runs of channels */
    const size_t C = per_channel(sp) || per_group(sp) ? sp->channel_len : 1;
    const bool runs = (per_group(sp) && c.op != DT_REQUANTIZE) || c.op == DT_FUSED;
    const size_t unit = sp->block ? qg_block_elems(sp->block) : runs ? C * c.inner : 1;
    for (size_t n = runs && !sp->block ? unit : 0; n < c.n; n += unit) {
        dt_case s = c;
        s.n = n;
        dt_tally t = {0};
        if (dt_run_case(sp, k, &s, &t))
            return s;
    }
    return c;
}
