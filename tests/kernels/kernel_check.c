/* Generated kernels against the runtime's reference, bit for bit.
 *
 * Built once per spec and architecture with -DKC_SPEC=<name>,
 * -DKC_HEADER=\"<name>.h\" and
 * -DKC_ISAS="X(isa, QG_ISA_ISA) ..." for the generated vector ISAs; run as
 * `kernel_check ISA`. Every op
 * runs on every length 0..259 (the widest strip, RVV at VLEN 1024 with
 * LMUL 8, is 256 lanes: every remainder and a few past it) and a few large ones, on unaligned pointers, in
 * place where the spec allows it, on ties, near-ties, saturation, NaN, inf
 * and signed zeros, per tensor and per channel in both layouts.
 * Exit status 77 (skipped) when this CPU cannot run the ISA.
 *
 * Plain C without CUnit: it is cross-compiled for aarch64 and riscv64,
 * where Debian's CUnit is not installed; ctest runs it like any test. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../float_nudge.h"
#include "block_check.h"
#include "length_class.h"

#ifdef KC_JIT
/* JIT mode: the spec is read from KC_SPEC_FILE and its kernels come from
 * qgen's JIT (q buffers of type KC_QTYPE); the disk cache is exercised on
 * the way (see main). */
#include <stdint.h>
#include <unistd.h>

#include "qgen/jit.h"
#define KC_Q KC_QTYPE
#define KC_QP void
#define KC_FBITS KC_FLOAT_BITS
static qg_spec jit_spec;
static const qg_spec *SP = &jit_spec;
#else
#define KC_STR2(x) #x
#define KC_STR(x) KC_STR2(x)
#define KC_CAT2(a, b) a##b
#define KC_CAT(a, b) KC_CAT2(a, b)
#include KC_HEADER /* "<spec>.h", from the build */

#define KC_SYM(op, isa) KC_CAT(KC_SPEC, KC_CAT(_##op##__, isa))
#define KC_Q KC_CAT(KC_SPEC, _q_t)
#define KC_QP KC_Q
#define KC_SPEC_STRUCT KC_CAT(KC_SPEC, _spec)
#define KC_FBITS KC_CAT(KC_SPEC, _FLOAT_BITS)
static const qg_spec *SP = &KC_SPEC_STRUCT;
#endif

/* The kernels' float tensors: float, or the bit patterns of a 16-bit
 * float_type (docs/semantics.md, "Float types"). The tests below work on
 * floats exactly representable in the type; kc_* below narrow them for the
 * kernel and widen its results, and the reference's results are rounded to
 * the type before comparing. */
#if KC_FBITS == 16
typedef uint16_t KC_F;
#else
typedef float KC_F;
#endif

typedef struct kc_kernels {
    const char *isa;
    qg_isa id;
    void (*quantize)(const KC_F *, KC_QP *, size_t, const qg_qparams *);
    void (*dequantize)(const KC_QP *, KC_F *, size_t, const qg_qparams *);
    void (*fake_quant)(const KC_F *, KC_F *, uint8_t *, size_t, const qg_qparams *);
    void (*fake_quant_backward)(const KC_F *, const uint8_t *, KC_F *, size_t);
    qg_status (*observe)(const KC_F *, size_t, size_t, qg_observer *, qg_error *);
    void (*requantize)(const int32_t *, KC_QP *, size_t, const qg_requant_params *);
} kc_kernels;

#ifdef KC_JIT
static kc_kernels kc_table[1];
#else
#define KC_ENTRY(isa, id)                                                                                              \
    {                                                                                                                  \
#isa, id, KC_SYM(quantize, isa), KC_SYM(dequantize, isa), KC_SYM(fake_quant, isa),                             \
            KC_SYM(fake_quant_backward, isa), KC_SYM(observe, isa), KC_SYM(requantize, isa)                            \
    }

/* KC_ISAS: X(isa, QG_ISA_ID) for each vector ISA of this build's
 * architecture, from the ISA table (tests/kernels/CMakeLists.txt). */
#ifndef KC_ISAS
#define KC_ISAS
#endif
#define X(isa, id) KC_ENTRY(isa, id),
static const kc_kernels kc_table[] = {KC_ENTRY(scalar, QG_ISA_SCALAR), KC_ISAS};
#undef X
#endif

static const kc_kernels *K;

/* The backend, for the manifest: the C backend by the compiler that built
 * it, the LLVM backend's objects, the JIT. */
#if defined(__x86_64__)
#define KC_ARCH "x86_64"
#elif defined(__aarch64__)
#define KC_ARCH "aarch64"
#elif defined(__riscv)
#define KC_ARCH "riscv64"
#else
#define KC_ARCH "other"
#endif
#if defined(KC_JIT)
#define KC_BACKEND_NAME "jit"
#elif defined(KC_LLVM)
#define KC_BACKEND_NAME "llvm"
#elif defined(__clang__)
#define KC_BACKEND_NAME "c-clang"
#else
#define KC_BACKEND_NAME "c-gcc"
#endif
static unsigned checks_failed;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            checks_failed++;                                                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
        }                                                                                                              \
    } while (0)
#define CHECK_EQ(a, b) CHECK((a) == (b))

#define CHECK_FAIL(msg) CHECK(!(msg))
static unsigned long long compared, mismatches, total_mismatches; /* mismatches: this test's */

/* ---- the kernels on float buffers -------------------------------------- */

enum { LMAX = 259, CH_MAX = 64, BUF = 70000 };

#if KC_FBITS == 16
static uint16_t h_in[BUF + 8], h_out[BUF + 8];
static const uint16_t GUARD = 0x5A5A;

/* x rounded to the float type, in place. */
static void kc_round(float *x, size_t n) {
    qg_float_type_narrow(SP->float_type, x, h_in, n);
    qg_float_type_widen(SP->float_type, h_in, x, n);
}
/* 16-bit copies of the float arguments, at the same alignment offset. The
 * NaNs get payloads, quiet and signalling in turn: every float output
 * narrows a NaN to torch's one all the same (docs/semantics.md, "Float
 * types"). */
static uint16_t *kc_in(const float *x, size_t n) {
    uint16_t *h = h_in + ((uintptr_t)x / sizeof(float)) % 2;
    qg_float_type_narrow(SP->float_type, x, h, n);
    const bool bf = SP->float_type == QG_BFLOAT16;
    const uint16_t exponent = bf ? 0x7F80 : 0x7C00, quiet = bf ? 0x40 : 0x200, payload = bf ? 0x15 : 0x155;
    for (size_t i = 0; i < n; i++)
        if ((h[i] & exponent) == exponent && (h[i] & (exponent ^ 0x7FFF)))
            h[i] = i % 2 ? (uint16_t)(h[i] | payload) : (uint16_t)((h[i] & ~quiet) | 1u);
    return h;
}
/* The 16-bit output for float output y, at y's offset from a 16-byte line. */
static uint16_t *kc_out(const float *y, size_t n) {
    uint16_t *h = h_out + ((uintptr_t)y / sizeof(float)) % 4;
    h[n] = GUARD;
    return h;
}
static void kc_back(const uint16_t *h, float *y, size_t n) {
    CHECK_EQ(h[n], GUARD); /* nothing written past n */
    qg_float_type_widen(SP->float_type, h, y, n);
}
static void kc_quantize(const float *x, KC_QP *q, size_t n, const qg_qparams *qp) {
    K->quantize(kc_in(x, n), q, n, qp);
}
static void kc_dequantize(const KC_QP *q, float *y, size_t n, const qg_qparams *qp) {
    uint16_t *h = kc_out(y, n);
    K->dequantize(q, h, n, qp);
    kc_back(h, y, n);
}
static void kc_fake_quant(const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    uint16_t *h = kc_in(x, n);
    if (x == y) { /* in place in the 16-bit tensor too */
        K->fake_quant(h, h, mask, n, qp);
        qg_float_type_widen(SP->float_type, h, y, n);
        return;
    }
    uint16_t *o = kc_out(y, n);
    K->fake_quant(h, o, mask, n, qp);
    kc_back(o, y, n);
}
static void kc_backward(const float *dy, const uint8_t *mask, float *dx, size_t n) {
    uint16_t *h = kc_in(dy, n), *o = kc_out(dx, n);
    K->fake_quant_backward(h, mask, o, n);
    kc_back(o, dx, n);
}
static qg_status kc_observe(const float *x, size_t n, size_t inner, qg_observer *obs, qg_error *err) {
    return K->observe(kc_in(x, n), n, inner, obs, err);
}
/* The fused step on this ISA's kernels, or with kernels false on the
 * runtime's own 16-bit reference path. */
static qg_status kc_fused_step(qg_observer *o, bool kernels, const float *x, float *y, uint8_t *mask, size_t n,
                               size_t inner, float *s, int32_t *z, qg_error *err) {
    uint16_t *h = kc_in(x, n), *out = kc_out(y, n);
    const qg_status st = qg_fused_train_step16_with(o, kernels ? K->observe : NULL, kernels ? K->fake_quant : NULL, h,
                                                    out, mask, n, inner, s, z, err);
    kc_back(out, y, n);
    return st;
}
#else
static void kc_round(float *x, size_t n) { (void)x, (void)n; }
#define kc_quantize(...) K->quantize(__VA_ARGS__)
#define kc_dequantize(...) K->dequantize(__VA_ARGS__)
#define kc_fake_quant(...) K->fake_quant(__VA_ARGS__)
#define kc_backward(...) K->fake_quant_backward(__VA_ARGS__)
#define kc_observe(...) K->observe(__VA_ARGS__)
static qg_status kc_fused_step(qg_observer *o, bool kernels, const float *x, float *y, uint8_t *mask, size_t n,
                               size_t inner, float *s, int32_t *z, qg_error *err) {
    return qg_fused_train_step_with(o, kernels ? (qg_observe_fn)K->observe : NULL,
                                    kernels ? (qg_fake_quant_fn)K->fake_quant : NULL, x, y, mask, n, inner, s, z, err);
}
#endif

/* ---- deterministic inputs -------------------------------------------------- */

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double uniform(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static const size_t big_lengths[] = {1000, 4099, 65537};

static bool per_group(void) { return qg_qscheme_is_per_group(SP->qscheme); }

/* Per-group parameters are many (one per group of each slice); tests keep
 * their params in static storage. */
typedef struct params {
    float scale[BUF], zf[BUF];
    int32_t zp[BUF];
    size_t channels;   /* per-group: the grouped axis' length */
    float first_scale; /* scale[0] as made: a power of two */
    int32_t first_zp;  /* zp[0] as made */
} params;

/* 16-bit outputs: a scale one and a half units of the type's last place
 * above a power of two, so that y = n * s for n a power of two is a tie
 * whose lower neighbour is odd. */
static float tie_scale_of(float power_of_two) {
    const int m = SP->float_type == QG_BFLOAT16 ? 7 : 10;
    return power_of_two * (1.0f + ldexpf(3.0f, -m - 1));
}

/* 16-bit float types, one parameter set (per tensor): every other length
 * case runs on the tie scale instead of the power of two, so that both
 * input ties (x / s) and output ties (narrowing y) are met. */
/* Per tensor, the length picks the zero point among the one made and the
 * ends of the range (where a store that adds z at 16 bits is closest to
 * saturating), and for 16-bit floats a tie scale every other length. */
static void alternate_params(params *p, size_t len) {
    if (p->channels != 1 || per_group() || SP->observer.type == QG_OBS_FIXED_QPARAMS)
        return;
    if (KC_FBITS == 16)
        p->scale[0] = len % 2 ? tie_scale_of(p->first_scale) : p->first_scale;
    if (!qg_dtype_is_float8(SP->dtype))
        p->zp[0] = len % 3 == 1 ? (int32_t)SP->quant_min : len % 3 == 2 ? (int32_t)SP->quant_max : p->first_zp;
}

static void make_params(params *p) {
    p->channels = qg_qscheme_is_per_channel(SP->qscheme) || per_group() ? SP->channel_len : 1;
    const size_t count = per_group() ? BUF : p->channels;
    for (size_t c = 0; c < count; c++) {
        /* some powers of two (exact ties), the rest arbitrary */
        p->scale[c] = c % 3 == 0 ? ldexpf(1.0f, -(int)(2 + next() % 8)) : (float)(0.001 + 0.05 * uniform());
#if KC_FBITS == 16
        if (c % 3 == 1) /* per channel: some tie scales among the others */
            p->scale[c] = tie_scale_of(ldexpf(1.0f, -(int)(2 + next() % 8)));
#endif
        int64_t span = SP->quant_max - SP->quant_min + 1;
        p->zp[c] = qg_dtype_is_float8(SP->dtype) ? 0 : (int32_t)(SP->quant_min + (int64_t)(next() % (uint64_t)span));
        p->zf[c] = (float)(uniform() * 200.0);
    }
    if (p->channels >= 3 && !qg_dtype_is_float8(SP->dtype)) { /* the range's ends among the channels */
        p->zp[1] = (int32_t)SP->quant_min;
        p->zp[2] = (int32_t)SP->quant_max;
    }
    p->first_scale = p->scale[0];
    p->first_zp = p->zp[0];
    if (SP->observer.type == QG_OBS_FIXED_QPARAMS) {
        p->scale[0] = SP->observer.fixed_scale;
        p->zp[0] = SP->observer.fixed_zero_point;
    }
}

static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3.4e38f, -3.4e38f, 1e-40f, -1e-40f};
#define N_SPECIALS (sizeof specials / sizeof specials[0])

/* fp8 (docs/semantics.md, "fp8"): a random code's value, the tie between
 * it and the next code, the floats beside that tie, overflow past max
 * finite, specials, or a random value across the range; times the scale. */
static float make_x_fp8(float s) {
    const uint8_t code = (uint8_t)next();
    const float v = qg_fp8_decode(SP->dtype, code), w = qg_fp8_decode(SP->dtype, (uint8_t)(code + 1));
    const float tie = isfinite(v) && isfinite(w) && signbit(v) == signbit(w) ? (float)(((double)v + w) / 2 * s) : v * s;
    const double max = (double)SP->quant_max;
    switch (next() % 8) {
    case 0: return v * s;
    case 1: return tie;
    case 2: return nudge(tie, (int)(next() % 5) - 2);
    case 3: return (float)((next() & 1 ? 1 : -1) * max * s * (0.95 + 0.2 * uniform()));
    case 4: return specials[next() % N_SPECIALS];
    default: return (float)((2 * uniform() - 1) * max * s * (next() & 1 ? 1.0 : 1e-3));
    }
}

/* One value for element i of channel c: ties, near-ties, grid points,
 * saturation, specials, or a random value in and around the range. */
static float make_x(const params *p, size_t c) {
    const float s = p->scale[c];
    if (qg_dtype_is_float8(SP->dtype))
        return make_x_fp8(s);
    const int64_t lo = SP->quant_min - p->zp[c], hi = SP->quant_max - p->zp[c];
    const double k = (double)(lo - 3) + (double)(next() % (uint64_t)(hi - lo + 7));
    switch (next() % 12) {
    case 0: return (float)((k + 0.5) * s);
    case 1: return nudge((float)((k + 0.5) * s), (int)(next() % 5) - 2);
    case 2: return (float)(k * s);
    case 3: return (float)((next() & 1 ? 1 : -1) * (double)(hi - lo) * s * (1.0 + 1000.0 * uniform()));
    case 4: return specials[next() % N_SPECIALS];
    default: return (float)(((double)lo - 2 + uniform() * (double)(hi - lo + 4)) * s);
    }
}

/* Element i's parameter index (docs/semantics.md, "Layouts"). */
static size_t param_of(const params *p, size_t i, size_t inner) {
    if (p->channels <= 1)
        return 0;
    const size_t c = (i / inner) % p->channels;
    if (!per_group())
        return c;
    const size_t G = SP->group_size, groups = (p->channels + G - 1) / G;
    return ((i / inner / p->channels) * groups + c / G) * inner + i % inner;
}

static void fill(float *x, size_t n, const params *p, size_t inner) {
    for (size_t i = 0; i < n; i++)
        x[i] = make_x(p, param_of(p, i, inner));
    kc_round(x, n);
}

static qg_qparams qparams_of(const params *p, size_t inner) {
    const bool fzp = SP->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
    qg_qparams qp = {p->scale, p->zp, fzp ? p->zf : NULL, p->channels, inner};
    return qp;
}

static void count(const char *what, size_t n, const void *got, const void *want, size_t size, size_t len,
                  size_t inner) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * size, (const char *)want + i * size, size) != 0 && bad++ == 0)
            first = i;
    compared += n;
    mismatches += bad;
    total_mismatches += bad;
    if (bad && mismatches == bad) /* a test's first failing case, in detail */
        fprintf(stderr, "\n  %s/%s %s: length %zu, inner %zu: %zu mismatches, first at %zu\n", SP->name, K->isa, what,
                len, inner, bad, first);
}

/* Lengths, and the layouts (inner) to run each at. */
static size_t n_layouts(void) { return qg_qscheme_is_per_channel(SP->qscheme) || per_group() ? 3 : 1; }
static size_t layout_inner(size_t k) { return k == 0 ? 1 : k == 1 ? 3 : 17; }

/* Length case li at a layout: every length to LMAX and a few big ones;
 * per-group tensors are whole slices of the axis, 0 to 12 of them, and the
 * big lengths rounded down to slices. NO_CASE skips. */
#define NO_CASE ((size_t)-1)
static size_t case_len(size_t li, size_t inner) {
    const size_t raw = li <= LMAX ? li : big_lengths[li - LMAX - 1];
    if (!per_group())
        return raw;
    const size_t slice = SP->channel_len * inner;
    if (li <= LMAX)
        return li <= 12 && li * slice <= BUF ? li * slice : NO_CASE;
    return raw / slice * slice;
}

/* The parameters of a layout repeat every period elements. */
static size_t period_of(size_t inner) {
    if (per_group())
        return SP->channel_len * inner;
    return qg_qscheme_is_per_channel(SP->qscheme) ? SP->channel_len * inner : 1;
}

/* Elements per main-loop iteration on this ISA at this width (--step). */
static size_t kc_step = 1;
/* KC_ALL_LENGTHS=1: every length of the list, not one per length class. */
static bool kc_all_lengths;

/* The ops of the manifest. */
enum { OP_FAKE_QUANT, OP_QUANTIZE, OP_DEQUANTIZE, OP_BACKWARD, OP_REQUANTIZE, OP_OBSERVE, OP_FUSED, OP_DYNAMIC, N_OPS };
static const char *const op_names[N_OPS] = {"fake_quant", "quantize", "dequantize",       "backward",
                                            "requantize", "observe",  "fused_train_step", "quantize_dynamic"};

/* The step of a layout's classes: a per-channel walk of runs (inner > 1)
 * hands the kernel one span per run of inner elements, whatever n, so n
 * mod inner (in n mod period) says all its spans do; other walks span n. */
static size_t step_of(size_t inner) {
    return inner > 1 && qg_qscheme_is_per_channel(SP->qscheme) && !per_group() ? 1 : kc_step;
}

/* This case's class for op: noted in the manifest. */
static void note(int op, size_t n, size_t inner, size_t period) {
    kc_manifest_note((size_t)op, kc_class_key(n, inner, period, step_of(inner)));
}

/* The cases of a test: every length of the list at every layout, each
 * length class once (the first length of the list in it; a big length's
 * class at its smallest length), unless kc_all_lengths. */
typedef struct kc_cases {
    size_t channels; /* the op's parameters repeat every channels x inner elements; 0: the spec's (period_of) */
    size_t li, lk, len, inner;
    kc_class_set seen[3];
} kc_cases;

static bool cases_next(kc_cases *c) {
    const size_t n_lengths = LMAX + 1 + sizeof big_lengths / sizeof big_lengths[0];
    for (;;) {
        if (++c->lk >= n_layouts()) {
            c->lk = 0;
            c->li++;
        }
        if (c->li >= n_lengths) {
            for (size_t k = 0; k < 3; k++)
                kc_class_clear(&c->seen[k]);
            return false;
        }
        c->inner = layout_inner(c->lk);
        size_t len = case_len(c->li, c->inner);
        if (len == NO_CASE)
            continue;
        /* requantize's own channels: its runs, whatever the spec's */
        const size_t period = c->channels ? c->channels * c->inner : period_of(c->inner);
        const size_t step = c->channels ? kc_step : step_of(c->inner);
        if (!kc_all_lengths) {
            if (!kc_class_add(&c->seen[c->lk], kc_class_key(len, c->inner, period, step)))
                continue;
            if (c->li > LMAX)
                len = kc_class_smallest(len, c->inner, period, step, per_group() ? period_of(c->inner) : 1);
        }
        c->len = len;
        return true;
    }
}

#define FOR_CASES_IN(len, inner, channels_)                                                                            \
    for (kc_cases cases_ = {.channels = (channels_), .li = 0, .lk = (size_t)-1}; cases_next(&cases_);)                 \
        for (size_t len = cases_.len, inner = cases_.inner, once_ = 0; once_ < 1; once_++)
#define FOR_CASES(len, inner) FOR_CASES_IN(len, inner, 0)

static float xbuf[BUF + 8], ybuf[BUF + 8], rbuf[BUF + 8];

/* A float output at an offset of 0 to 3 elements that changes with the
 * length, so that spans start at every alignment on the way to a vector
 * boundary (kernel_loops' align_head), as inputs do at xbuf + len % 2. */
static float *y_at(size_t len) { return ybuf + (len / 2) % 4; }
static uint8_t mbuf[BUF + 8], rmbuf[BUF + 8];
static KC_Q qbuf[BUF + 8], rqbuf[BUF + 8];

/* `nan: unchecked` (docs/semantics.md, "NaN inputs"): a NaN lane needs a
 * valid result, not the reference's. Each one is checked here and then
 * given the reference's bits, so that the comparison after it still
 * covers every finite lane bit for bit. */
static float nan_at[BUF + 8]; /* the input, kept for in-place calls */

static bool unchecked(void) { return SP->nan_policy == QG_NAN_UNCHECKED; }

static int64_t q_at(const KC_Q *q, size_t i) {
    if (!qg_dtype_is_packed(SP->dtype))
        return (int64_t)q[i];
    const int v = (((const uint8_t *)q)[i / 2] >> (4 * (i % 2))) & 0xF;
    return SP->dtype == QG_QINT4 && v >= 8 ? v - 16 : v;
}

static void q_copy(KC_Q *got, const KC_Q *want, size_t i) {
    if (!qg_dtype_is_packed(SP->dtype)) {
        got[i] = want[i];
        return;
    }
    const uint8_t keep = (uint8_t)(0xF0u >> (4 * (i % 2)));
    uint8_t *g = (uint8_t *)got + i / 2;
    *g = (uint8_t)((*g & keep) | (((const uint8_t *)want)[i / 2] & ~keep));
}

static bool q_valid(int64_t v) {
    if (qg_dtype_is_float8(SP->dtype))
        return isfinite(qg_fp8_decode(SP->dtype, (uint8_t)v));
    return v >= SP->quant_min && v <= SP->quant_max;
}

/* y is (q - z) * s, in the float type, for a q in [qmin, qmax]. */
static bool y_valid(float y, float s, int32_t z) {
    if (qg_dtype_is_float8(SP->dtype) || SP->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        return isfinite(y);
    const float k = nearbyintf(y / s);
    for (float d = -1.0f; d <= 1.0f; d++) {
        float v = (k + d) * s;
        kc_round(&v, 1);
        if (k + d >= (float)(SP->quant_min - z) && k + d <= (float)(SP->quant_max - z) && v == y)
            return true;
    }
    return false;
}

static void unchecked_quantize(KC_Q *got, const KC_Q *want, size_t n) {
    for (size_t i = 0; unchecked() && i < n; i++)
        if (isnan(nan_at[i])) {
            CHECK(q_valid(q_at(got, i)));
            q_copy(got, want, i);
        }
}

static void unchecked_fake_quant(float *y, uint8_t *mask, const float *want_y, const uint8_t *want_mask, size_t n,
                                 const params *p, size_t inner) {
    for (size_t i = 0; unchecked() && i < n; i++) {
        if (!isnan(nan_at[i]))
            continue;
        const size_t c = param_of(p, i, inner);
        CHECK(y_valid(y[i], p->scale[c], p->zp[c]));
        y[i] = want_y[i];
        if (mask && SP->compat_mask) /* either bit */
            mask[i / 8] = (uint8_t)((mask[i / 8] & ~(1u << (i % 8))) | (want_mask[i / 8] & (1u << (i % 8))));
        else if (mask)
            mask[i] = want_mask[i];
    }
}

static void test_fake_quant(void) {
    static params p;
    make_params(&p);
    FOR_CASES(len, inner) {
        alternate_params(&p, len);
        const size_t off = len % 2; /* every other length on an unaligned pointer */
        float *x = xbuf + off;
        fill(x, len, &p, inner);
        qg_qparams qp = qparams_of(&p, inner);
        note(OP_FAKE_QUANT, len, inner, period_of(inner));
        size_t mb = qg_mask_bytes(SP, len);
        memset(mbuf, 0xA5, mb + 8);
        memset(rmbuf, 0xA5, mb + 8);
        float *y = y_at(len);
        memcpy(nan_at, x, len * sizeof *x);
        kc_fake_quant(x, y, mbuf, len, &qp);
        qg_ref_fake_quant(SP, x, rbuf, rmbuf, len, &qp);
        kc_round(rbuf, len);
        unchecked_fake_quant(y, mbuf, rbuf, rmbuf, len, &p, inner);
        count("fake_quant y", len, y, rbuf, 4, len, inner);
        count("fake_quant mask", mb + 8, mbuf, rmbuf, 1, len, inner); /* and nothing past it */
        kc_fake_quant(x, y, NULL, len, &qp);
        unchecked_fake_quant(y, NULL, rbuf, NULL, len, &p, inner);
        count("fake_quant y (no mask)", len, y, rbuf, 4, len, inner);
        if (SP->in_place) {
            kc_fake_quant(x, x, NULL, len, &qp);
            unchecked_fake_quant(x, NULL, rbuf, NULL, len, &p, inner);
            count("fake_quant in place", len, x, rbuf, 4, len, inner);
        }
    }
    CHECK_EQ(mismatches, 0);
}

static void test_quantize_dequantize(void) {
    static params p;
    make_params(&p);
    FOR_CASES(len, inner) {
        alternate_params(&p, len);
        const size_t off = len % 2;
        float *x = xbuf + off;
        fill(x, len, &p, inner);
        qg_qparams qp = qparams_of(&p, inner);
        KC_Q *q = qbuf + off;
        const size_t qn = qg_q_bytes(SP->dtype, len) / sizeof(KC_Q); /* 4-bit: packed bytes */
        q[qn] = (KC_Q)0x5A;
        note(OP_QUANTIZE, len, inner, period_of(inner));
        note(OP_DEQUANTIZE, len, inner, period_of(inner));
        memcpy(nan_at, x, len * sizeof *x);
        kc_quantize(x, q, len, &qp);
        qg_ref_quantize(SP, x, rqbuf, len, &qp);
        unchecked_quantize(q, rqbuf, len);
        count("quantize", qn, q, rqbuf, sizeof(KC_Q), len, inner);
        CHECK_EQ(q[qn], (KC_Q)0x5A); /* nothing written past n */
        /* dequantize any stored value, also outside [qmin, qmax] */
        for (size_t i = 0; i < qn; i++)
            q[i] = i % 5 == 0 ? (KC_Q)next() : rqbuf[i];
        float *y = y_at(len);
        kc_dequantize(q, y, len, &qp);
        qg_ref_dequantize(SP, q, rbuf, len, &qp);
        kc_round(rbuf, len);
        count("dequantize", len, y, rbuf, 4, len, inner);
    }
    CHECK_EQ(mismatches, 0);
}

/* Dynamic quantization (docs/semantics.md): this ISA's observe and quantize
 * kernels in qg_quantize_dynamic against the reference's, per tensor and in
 * three rows. Non-finite values are refused alike; one row gets a NaN. */
static void kc_quantize_any(const float *x, void *q, size_t n, const qg_qparams *qp) {
    kc_quantize(x, (KC_QP *)q, n, qp);
}

static void test_quantize_dynamic(void) {
    if (qg_qscheme_is_per_channel(SP->qscheme) || SP->dtype == QG_QINT32 || SP->observer.type == QG_OBS_FIXED_QPARAMS ||
        SP->float_type != QG_FLOAT32) {
        qg_error err;
        int32_t z;
        CHECK_EQ(qg_quantize_dynamic(SP, NULL, NULL, xbuf, rqbuf, 1, 4, rbuf, &z, &err), QG_ERR_INVALID);
        return;
    }
    static params p;
    make_params(&p);
    size_t refused = 0;
    FOR_CASES(len, inner) {
        /* per group: rows of the grouped axis */
        const size_t D = SP->channel_len;
        if (per_group() && (inner != 1 || len == 0))
            continue;
        const size_t rows = per_group() ? len / D : len >= 3 ? 3 : 1;
        /* packed 4-bit rows start on whole bytes */
        const size_t row_len = per_group()                                 ? D
                               : qg_dtype_is_packed(SP->dtype) && rows > 1 ? len / rows / 2 * 2
                                                                           : len / rows;
        const size_t per_row = per_group() ? (D + SP->group_size - 1) / SP->group_size : 1;
        note(OP_DYNAMIC, len, inner, period_of(inner));
        fill(xbuf, len, &p, inner);
        for (size_t i = 0; i < len; i++)
            xbuf[i] = isfinite(xbuf[i]) ? xbuf[i] : p.scale[0] * (float)(i % 7);
        const bool nan_in_last_row = rows * row_len > 0 && (per_group() ? rows : len) % 5 == 4;
        if (nan_in_last_row)
            xbuf[rows * row_len - 1] = NAN;
        static float s[BUF], rs[BUF];
        static int32_t z[BUF], rz[BUF];
        qg_error err, rerr;
        qg_status st =
            qg_quantize_dynamic(SP, (qg_observe_fn)K->observe, kc_quantize_any, xbuf, qbuf, rows, row_len, s, z, &err);
        qg_status rst = qg_quantize_dynamic(SP, NULL, NULL, xbuf, rqbuf, rows, row_len, rs, rz, &rerr);
        CHECK_EQ(st, rst);
        refused += st != QG_OK;
        /* refused: for the NaN in the last row after the rows before it,
         * or before any row for the arguments (packed rows of odd length) */
        const bool arguments_refused = st != QG_OK && strstr(err.message, "row_len") != NULL;
        const size_t done = st == QG_OK ? rows : arguments_refused ? 0 : rows - 1;
        if (st == rst && st != QG_OK) {
            CHECK(strcmp(err.message, rerr.message) == 0);
            CHECK(nan_in_last_row || arguments_refused);
        }
        count("quantize_dynamic q", qg_q_bytes(SP->dtype, done * row_len) / sizeof(KC_Q), qbuf, rqbuf, sizeof(KC_Q),
              len, inner);
        count("quantize_dynamic scale", done * per_row, s, rs, sizeof(float), len, inner);
        count("quantize_dynamic zero_point", done * per_row, z, rz, sizeof(int32_t), len, inner);
    }
    CHECK(refused > 0);
    CHECK_EQ(mismatches, 0);
}

static void test_backward(void) {
    FOR_CASES(len, inner) {
        (void)inner;
        if (inner != 1)
            continue;
        note(OP_BACKWARD, len, inner, 1);
        const size_t off = len % 2;
        float *dy = xbuf + off;
        for (size_t i = 0; i < len; i++)
            dy[i] = (float)(uniform() * 4.0 - 2.0);
        kc_round(dy, len);
        size_t mb = qg_mask_bytes(SP, len);
        static const uint8_t byte_values[] = {0, 1, 2, 255, 1, 0};
        for (size_t i = 0; i < mb; i++)
            mbuf[i] = SP->compat_mask ? (uint8_t)next() : byte_values[next() % 6];
        float *dx = y_at(len);
        dx[len] = 12345.0f;
        kc_backward(dy, mbuf, dx, len);
        qg_ref_fake_quant_backward(SP, dy, mbuf, rbuf, len);
        count("backward", len, dx, rbuf, 4, len, 1);
        CHECK_EQ(dx[len], 12345.0f);
    }
    CHECK_EQ(mismatches, 0);
}

/* Missing tensors at n > 0, or missing parameters, leave every output as
 * it was, as the reference's argument check does (and n = 0 touches
 * nothing): no kernel dereferences them. */
static void test_missing_arguments(void) {
    params p;
    make_params(&p);
    const size_t n = 5;
    qg_qparams qp = qparams_of(&p, n);
    KC_F x[8] = {0}, y[8];
    KC_Q q[8];
    uint8_t mask[8];
    for (int round = 0; round < 2; round++) {
        const size_t len = round ? n : 0;
        memset(y, 0x5A, sizeof y);
        memset(q, 0x5A, sizeof q);
        memset(mask, 0x5A, sizeof mask);
        K->quantize(x, q, len, NULL);
        K->dequantize(q, y, len, NULL);
        K->fake_quant(x, y, mask, len, NULL);
        K->fake_quant_backward(x, NULL, y, len);
        K->requantize((const int32_t *)x, q, len, NULL);
        if (len) { /* a NULL tensor with qparams */
            K->quantize(NULL, q, len, &qp);
            K->fake_quant(x, NULL, mask, len, &qp);
            K->dequantize(NULL, y, len, &qp);
        }
        const float s_w = 0.5f;
        qg_requant_params rp = {0.5f, NULL, NULL, 0.25f, 0, 1, 1};
        K->requantize((const int32_t *)x, q, len, &rp); /* no weight scales */
        rp.s_w = &s_w;
        K->requantize(NULL, q, len, &rp);
        for (size_t i = 0; i < sizeof y; i++)
            CHECK_EQ(((const uint8_t *)y)[i], 0x5A);
        for (size_t i = 0; i < sizeof q; i++)
            CHECK_EQ(((const uint8_t *)q)[i], 0x5A);
        for (size_t i = 0; i < sizeof mask; i++)
            CHECK_EQ(mask[i], 0x5A);
    }
    /* n = 0 with every pointer NULL */
    K->quantize(NULL, NULL, 0, &qp);
    K->dequantize(NULL, NULL, 0, &qp);
    K->fake_quant(NULL, NULL, NULL, 0, &qp);
    K->fake_quant_backward(NULL, NULL, NULL, 0);
}

static int32_t acc_value(void) {
    switch (next() % 6) {
    case 0: return (int32_t)(INT32_MAX - (int32_t)(next() % 1000));
    case 1: return (int32_t)(INT32_MIN + (int32_t)(next() % 1000));
    case 2: return (int32_t)next(); /* anywhere */
    default: return (int32_t)(next() % 200001) - 100000;
    }
}

static void test_requantize(void) {
    enum { RQ_CH = 3 };
    float s_w[RQ_CH];
    int32_t bias[RQ_CH];
    static int32_t acc[BUF + 8];
    for (int round = 0; round < 2; round++) {
        const size_t channels = round == 0 ? 1 : RQ_CH;
        for (size_t c = 0; c < RQ_CH; c++) {
            s_w[c] = (float)(0.001 + 0.05 * uniform());
            bias[c] = c == 2 ? (int32_t)(INT32_MAX - 5) : (int32_t)(next() % 20001) - 10000; /* one saturates */
        }
        FOR_CASES_IN(len, inner, channels) { /* each class of requantize's own channels */
            if (inner == 17)
                continue;
            kc_manifest_note(OP_REQUANTIZE, kc_class_key(len, inner, channels * inner, kc_step));
            for (size_t i = 0; i < len; i++)
                acc[i] = acc_value();
            int64_t span = SP->quant_max - SP->quant_min + 1;
            qg_requant_params rp = {
                (float)(0.001 + 0.1 * uniform()),
                s_w,
                next() % 4 ? bias : NULL,
                (float)(0.001 + 0.5 * uniform()),
                qg_dtype_is_float8(SP->dtype) ? 0 : (int32_t)(SP->quant_min + (int64_t)(next() % (uint64_t)span)),
                channels,
                inner};
            KC_Q *q = qbuf + len % 2;
            const size_t qn = qg_q_bytes(SP->dtype, len) / sizeof(KC_Q);
            q[qn] = (KC_Q)0x5A;
            K->requantize(acc, q, len, &rp);
            qg_ref_requantize(SP, acc, rqbuf, len, &rp);
            count("requantize", qn, q, rqbuf, sizeof(KC_Q), len, inner);
            CHECK_EQ(q[qn], (KC_Q)0x5A);
        }
    }
    CHECK_EQ(mismatches, 0);
}

/* The runtime's reference observe, counted where the harness is linked
 * with --wrap for both (KC_COUNT_REFERENCE: the static runtime of the
 * generated-file tests), so every call from the runtime's observe driver
 * comes here. A kernel that keeps min/max must observe finite data on its
 * own vector span and leave to the reference only what it refuses. */
#ifdef KC_COUNT_REFERENCE
#include "observer_internal.h" /* qg_observer_keeps_min_max: the observers the kernels reduce for */

qg_status __real_qg_observer_update(qg_observer *obs, const float *x, size_t n, size_t inner, qg_error *err);
qg_status __real_qg_observer_update_typed(qg_observer *obs, const void *x, size_t n, size_t inner, qg_error *err);
qg_status __wrap_qg_observer_update(qg_observer *obs, const float *x, size_t n, size_t inner, qg_error *err);
qg_status __wrap_qg_observer_update_typed(qg_observer *obs, const void *x, size_t n, size_t inner, qg_error *err);
static int reference_observes;
qg_status __wrap_qg_observer_update(qg_observer *obs, const float *x, size_t n, size_t inner, qg_error *err) {
    reference_observes++;
    return __real_qg_observer_update(obs, x, n, inner, err);
}
qg_status __wrap_qg_observer_update_typed(qg_observer *obs, const void *x, size_t n, size_t inner, qg_error *err) {
    reference_observes++;
    return __real_qg_observer_update_typed(obs, x, n, inner, err);
}

static bool observe_reduces(void) { return qg_observer_keeps_min_max(SP->observer.type); }

/* ... on data it can take: finite in the tensor's type (a 16-bit rounding
 * may overflow), in whole runs of channels x inner per channel. */
static bool observe_fast_path(const float *x, size_t n, size_t inner) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    const qg_observer_type t = SP->observer.type;
    const bool per_channel = t != QG_OBS_MINMAX && t != QG_OBS_MOVING_AVERAGE_MINMAX; /* of those that keep min/max */
    return !per_channel || (inner > 0 && n % (inner * SP->channel_len) == 0);
}
#else
static int reference_observes;
static bool observe_reduces(void) { return false; }
static bool observe_fast_path(const float *x, size_t n, size_t inner) { return (void)x, (void)n, (void)inner, false; }
#endif

static void compare_observers(const qg_observer *a, const qg_observer *b, size_t len, size_t inner) {
    float amn[CH_MAX], amx[CH_MAX], bmn[CH_MAX], bmx[CH_MAX];
    qg_observer_minmax(a, amn, amx);
    qg_observer_minmax(b, bmn, bmx);
    size_t ch =
        SP->observer.type == QG_OBS_PER_CHANNEL_MINMAX || SP->observer.type == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX
            ? SP->channel_len
            : 1;
    count("observe min", ch, amn, bmn, 4, len, inner);
    count("observe max", ch, amx, bmx, 4, len, inner);
}

static void test_observe(void) {
    static params p;
    make_params(&p);
    qg_error err;
    if (per_group()) { /* no running state per group */
        qg_observer *o = NULL;
        CHECK_EQ(qg_observer_create(SP, &o, &err), QG_ERR_INVALID);
        CHECK(o == NULL);
        return;
    }
    size_t C = qg_qscheme_is_per_channel(SP->qscheme) ? SP->channel_len : 1;
    FOR_CASES(len, inner) {
        /* The histogram kernel is the runtime's own update: a few lengths
         * show the delegation works (its merge is slow under qemu). */
        if (SP->observer.type == QG_OBS_HISTOGRAM && len > 67)
            continue;
        qg_observer *a, *b;
        if (qg_observer_create(SP, &a, &err) || qg_observer_create(SP, &b, &err)) {
            CHECK_FAIL("observer_create");
            return;
        }
        size_t n = C > 1 ? len / (C * inner) * (C * inner) : len; /* whole channel runs */
        note(OP_OBSERVE, n, inner, C * inner);
        for (int batch = 0; batch < 3; batch++) {
            float *x = xbuf + (size_t)batch % 2;
            for (size_t i = 0; i < n; i++) { /* finite data, NaN injected below */
                x[i] = make_x(&p, C <= 1 ? 0 : (i / inner) % C);
                if (!isfinite(x[i]))
                    x[i] = (float)(uniform() * 10.0 - 5.0);
            }
            kc_round(x, n);
            reference_observes = 0;
            qg_status sa = kc_observe(x, n, inner, a, &err);
            if (observe_reduces() && observe_fast_path(x, n, inner))
                CHECK_EQ(reference_observes, 0); /* the vector span, not the reference */
            qg_status sb = qg_observer_update(b, x, n, inner, &err);
            CHECK_EQ(sa, sb);
            compare_observers(a, b, n, inner);
        }
        if (n > 0 && SP->observer.type != QG_OBS_FIXED_QPARAMS && SP->observer.type != QG_OBS_PLACEHOLDER) {
            xbuf[n / 2] = NAN; /* refused, state kept */
            float before_min[CH_MAX], before_max[CH_MAX], after_min[CH_MAX], after_max[CH_MAX];
            qg_observer_minmax(a, before_min, before_max);
            reference_observes = 0;
            CHECK_EQ(kc_observe(xbuf, n, inner, a, &err), QG_ERR_INVALID);
#ifdef KC_COUNT_REFERENCE
            CHECK(reference_observes >= 1); /* the span saw the NaN and left it to the reference to report */
#endif
            qg_observer_minmax(a, after_min, after_max);
            count("observe NaN keeps state", 1, &after_min[0], &before_min[0], 4, n, inner);
        }
        qg_observer_destroy(a);
        qg_observer_destroy(b);
    }
    CHECK_EQ(mismatches, 0);
}

/* The fused training step over a run of batches of varied scale and
 * offset, observer and fake quant switched as a training script does: this
 * ISA's observe and fake_quant through the runtime's driver (what the
 * dispatcher's NAME_fused_train_step and qg_kernels_fused_train_step run)
 * against the reference, after every step. A 16-bit spec's step (with its
 * kernels, and on the runtime's 16-bit path) is compared with the float32
 * reference step on the same values, its y rounded to the type. */
static void fused_run(size_t n, size_t inner, size_t ch, bool kernels) {
    static const bool sw[][2] = {{1, 1}, {1, 1}, {1, 1}, {0, 1}, {1, 0}, {0, 0}, {1, 1}, {0, 1}, {1, 1}};
    qg_observer *a, *b;
    qg_error err;
    qg_spec f32 = *SP;
    f32.float_type = QG_FLOAT32;
    if (qg_observer_create(SP, &a, &err) || qg_observer_create(&f32, &b, &err)) {
        CHECK_FAIL("observer_create");
        return;
    }
    float as[CH_MAX], bs[CH_MAX], amn[CH_MAX], amx[CH_MAX], bmn[CH_MAX], bmx[CH_MAX];
    int32_t az[CH_MAX], bz[CH_MAX];
    for (size_t k = 0; k < sizeof sw / sizeof sw[0]; k++) {
        const double sd = exp(uniform() * 8.0 - 4.0), loc = (uniform() * 6.0 - 3.0) * sd;
        for (size_t i = 0; i < n; i++)
            xbuf[i] = k == 2 && i % 3 == 0 ? 0.0f : (float)(loc + sd * (uniform() * 2.0 - 1.0));
        kc_round(xbuf, n);
        qg_observer_enable(a, sw[k][0], sw[k][1]);
        qg_observer_enable(b, sw[k][0], sw[k][1]);
        size_t mb = qg_mask_bytes(SP, n);
        memset(mbuf, 0xA5, mb + 8);
        memset(rmbuf, 0xA5, mb + 8);
        qg_status sa = kc_fused_step(a, kernels, xbuf, ybuf, mbuf, n, inner, as, az, &err);
        qg_status sb = qg_ref_fused_train_step(b, xbuf, rbuf, rmbuf, n, inner, bs, bz, &err);
        kc_round(rbuf, n);
        CHECK_EQ(sa, sb);
        count("fused y", n, ybuf, rbuf, 4, n, inner);
        count("fused mask", mb + 8, mbuf, rmbuf, 1, n, inner);
        count("fused scale", ch, as, bs, 4, n, inner);
        count("fused zero_point", ch, az, bz, 4, n, inner);
        qg_observer_minmax(a, amn, amx);
        qg_observer_minmax(b, bmn, bmx);
        count("fused min", ch, amn, bmn, 4, n, inner);
        count("fused max", ch, amx, bmx, 4, n, inner);
    }
    qg_observer_destroy(a);
    qg_observer_destroy(b);
}

static void test_fused_train_step(void) {
    const qg_observer_type t = SP->observer.type;
    if (t == QG_OBS_PLACEHOLDER || t == QG_OBS_FIXED_QPARAMS || t == QG_OBS_HISTOGRAM || per_group())
        return;                         /* nothing a min/max kernel trains (per group: no observer, see test_observe) */
    if (SP->float_type != QG_FLOAT32) { /* the float32 entry refuses 16-bit tensors, naming the field */
        qg_observer *o = NULL;
        qg_error err;
        float s[CH_MAX];
        int32_t z[CH_MAX];
        CHECK_EQ(qg_observer_create(SP, &o, &err), QG_OK);
        CHECK_EQ(qg_ref_fused_train_step(o, xbuf, ybuf, NULL, 4, 1, s, z, &err), QG_ERR_INVALID);
        CHECK(strstr(err.message, "float_type") != NULL);
        qg_observer_destroy(o);
    }
    const bool per_channel = t == QG_OBS_PER_CHANNEL_MINMAX || t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
    const size_t C = qg_qscheme_is_per_channel(SP->qscheme) ? SP->channel_len : 1;
    static const size_t rows[] = {1, 2, 7, 33, 259, 1000};
    for (size_t lk = 0; lk < n_layouts(); lk++) {
        kc_class_set seen = {0};
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            const size_t inner = layout_inner(lk), period = C * inner;
            size_t n = rows[r] * period;
            if (n > BUF)
                continue;
            if (!kc_all_lengths) { /* each class once, at its fewest rows */
                if (!kc_class_add(&seen, kc_class_key(n, inner, period, step_of(inner))))
                    continue;
                n = kc_class_smallest(n, inner, period, step_of(inner), period);
            }
            note(OP_FUSED, n, inner, period);
            for (int kernels = SP->float_type == QG_FLOAT32; kernels < 2; kernels++)
                fused_run(n, inner, per_channel ? C : 1, kernels);
        }
        kc_class_clear(&seen);
    }
    CHECK_EQ(mismatches, 0);
}

#ifdef KC_JIT
/* cold and warm compile every op at once (eager), through one disk
 * cache; the ops checked are lazy's, each compiled on its first call. */
static qg_jit *jit_cold, *jit_warm, *jit_lazy;
static const qg_kernels *jit_k;

/* The same spec again: the same kernels, from memory; every op the tests
 * called was compiled once, none fell back to the reference. */
static void test_dispatch(void) {
    qg_error err;
    const qg_kernels *again = NULL;
    CHECK_EQ(qg_jit_compile(jit_lazy, SP, 0, &again, &err), QG_OK);
    CHECK(again == jit_k);
    qg_jit_stats st;
    qg_jit_get_stats(jit_lazy, &st);
    CHECK_EQ(st.memory_hits, 1);
    CHECK(st.lazy_tables == 1 && st.fallbacks == 0 && st.compiled + st.disk_hits >= 1 &&
          st.compiled + st.disk_hits <= (unsigned)__builtin_popcount(QG_JIT_ALL));
    CHECK_EQ(qg_jit_prepare(jit_lazy, jit_k, 0, &err), QG_OK); /* the rest, now */
    qg_jit_get_stats(jit_lazy, &st);
    CHECK(st.compiled + st.disk_hits == (unsigned)__builtin_popcount(QG_JIT_ALL) && st.fallbacks == 0);
}
#else
static void test_dispatch(void) {
    /* The dispatcher picks some ISA this build has, and its results agree. */
    const char *isa = KC_CAT(KC_SPEC, _isa)();
    int known = 0;
    for (size_t i = 0; i < sizeof kc_table / sizeof kc_table[0]; i++)
        known |= strcmp(kc_table[i].isa, isa) == 0;
    CHECK(known);
    static params p;
    make_params(&p);
    const size_t n = per_group() ? 1000 / SP->channel_len * SP->channel_len : 1000;
    fill(xbuf, n, &p, 1);
    qg_qparams qp = qparams_of(&p, 1);
#if KC_FBITS == 16
    uint16_t *h = kc_out(ybuf, n);
    KC_CAT(KC_SPEC, _fake_quant)(kc_in(xbuf, n), h, NULL, n, &qp);
    kc_back(h, ybuf, n);
#else
    KC_CAT(KC_SPEC, _fake_quant)(xbuf, ybuf, NULL, n, &qp);
#endif
    qg_ref_fake_quant(SP, xbuf, rbuf, NULL, n, &qp);
    kc_round(rbuf, n);
    memcpy(nan_at, xbuf, n * sizeof *xbuf);
    unchecked_fake_quant(ybuf, NULL, rbuf, NULL, n, &p, 1);
    count("dispatch fake_quant", n, ybuf, rbuf, 4, n, 1);
#if KC_CAT(KC_SPEC, _HAS_QUANTIZE_DYNAMIC)
    for (size_t i = 0; i < 1000; i++)
        xbuf[i] = isfinite(xbuf[i]) ? xbuf[i] : 0.25f;
    /* per group: rows of the grouped axis */
    const size_t row_len = per_group() ? SP->channel_len : 250;
    /* packed 4-bit rows start on whole bytes: one row when its length is odd */
    const size_t rows = qg_dtype_is_packed(SP->dtype) && row_len % 2 ? 1 : n / row_len;
    static float s[1000], rs[1000];
    static int32_t z[1000], rz[1000];
    qg_error err;
    CHECK_EQ(KC_CAT(KC_SPEC, _quantize_dynamic)(xbuf, qbuf, rows, row_len, s, z, &err), QG_OK);
    CHECK_EQ(qg_quantize_dynamic(SP, NULL, NULL, xbuf, rqbuf, rows, row_len, rs, rz, &err), QG_OK);
    count("dispatch quantize_dynamic", qg_q_bytes(SP->dtype, rows * row_len) / sizeof(KC_Q), qbuf, rqbuf, sizeof(KC_Q),
          n, 1);
    count("dispatch quantize_dynamic scale", rows, s, rs, sizeof(float), n, 1);
#endif
    CHECK_EQ(mismatches, 0);
}
#endif

#ifdef KC_JIT
/* Compiles the spec twice through one fresh cache directory: the first
 * JIT compiles and stores, the second loads the stored object, and its
 * kernels are the ones checked. */
static char cache_dir[256];

static int jit_setup(const char *isa_name) {
    qg_error err;
    if (qg_spec_load_file(KC_SPEC_FILE, NULL, 0, &jit_spec, &err)) {
        fprintf(stderr, "kernel_check: %s\n", err.message);
        return 2;
    }
    /* fp8: the bits, as uint8_t */
    const bool is_unsigned = qg_dtype_is_unsigned(SP->dtype) || qg_dtype_is_float8(SP->dtype);
    if (qg_dtype_size(SP->dtype) != sizeof(KC_Q) || is_unsigned != ((KC_Q)-1 > 0)) {
        fprintf(stderr, "kernel_check: built with KC_QTYPE for another dtype than %s's\n", SP->name);
        return 2;
    }
    int isa = -1;
    for (int i = 0; i < QG_ISA_COUNT; i++)
        if (strcmp(qg_isa_name((qg_isa)i), isa_name) == 0)
            isa = i;
    if (isa < 0) {
        fprintf(stderr, "kernel_check: unknown ISA %s\n", isa_name);
        return 2;
    }
    if (!qg_cpu_has((qg_isa)isa)) {
        printf("SKIPPED: this CPU cannot run %s\n", isa_name);
        kc_manifest_skipped(&(kc_run){SP->name, KC_BACKEND_NAME, KC_ARCH, isa_name, "-"});
        return 77;
    }
    snprintf(cache_dir, sizeof cache_dir, "%s/qgen-kc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 2;
    }
    const qg_jit_options opt = {isa, cache_dir, false, true, false}, lazy = {isa, cache_dir, false, false, false};
    const qg_kernels *cold = NULL, *warm = NULL;
    qg_jit_stats st;
    if (qg_jit_create(&opt, &jit_cold, &err) || qg_jit_compile(jit_cold, SP, 0, &cold, &err) ||
        qg_jit_create(&opt, &jit_warm, &err) || qg_jit_compile(jit_warm, SP, 0, &warm, &err) ||
        qg_jit_create(&lazy, &jit_lazy, &err) || qg_jit_compile(jit_lazy, SP, 0, &jit_k, &err)) {
        fprintf(stderr, "kernel_check: jit: %s\n", err.message);
        return 1;
    }
    qg_jit_get_stats(jit_cold, &st);
    CHECK(st.compiled == 1 && st.disk_hits == 0);
    qg_jit_get_stats(jit_warm, &st);
    CHECK(st.compiled == 0 && st.disk_hits == 1);
    CHECK(cold != warm && cold->fake_quant != warm->fake_quant);
    qg_jit_get_stats(jit_lazy, &st);
    CHECK(st.compiled == 0 && st.disk_hits == 0 && st.lazy_tables == 1); /* nothing yet */
    CHECK(jit_k->isa == warm->isa);
#if KC_FBITS == 16
#define KC_JK(op) jit_k->u16.op
#else
#define KC_JK(op) jit_k->op
#endif
    kc_table[0] =
        (kc_kernels){qg_isa_name(jit_k->isa),    jit_k->isa,     KC_JK(quantize),  KC_JK(dequantize), KC_JK(fake_quant),
                     KC_JK(fake_quant_backward), KC_JK(observe), KC_JK(requantize)};
    return 0;
}

static void jit_teardown(void) {
    qg_jit_destroy(jit_cold);
    qg_jit_destroy(jit_warm);
    qg_jit_destroy(jit_lazy);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "kernel_check: could not remove %s\n", cache_dir);
}
#endif

/* A block format's kernels (block_check.c): block tensors are bytes, and
 * there are no qparams. */
static void kb_quantize(const void *x, uint8_t *q, size_t n) { K->quantize(x, (KC_QP *)q, n, NULL); }
static void kb_dequantize(const uint8_t *q, void *y, size_t n) { K->dequantize((const KC_QP *)q, y, n, NULL); }
static void kb_fake_quant(const void *x, void *y, uint8_t *mask, size_t n) { K->fake_quant(x, y, mask, n, NULL); }

static int block_main(const char *isa, const char *vl) {
    const kc_block_kernels k = {kb_quantize, kb_dequantize, kb_fake_quant};
    const clock_t start = clock();
    const unsigned bad = kc_block_check(SP, K->isa, &k, &compared);
    printf("  %s/%s %-26s %s %6.2f s\n", SP->name, K->isa, "block formats", bad ? "FAILED" : "passed",
           (double)(clock() - start) / CLOCKS_PER_SEC);
    printf("%s/%s: %llu elements and bytes compared, %u failed checks\n", SP->name, K->isa, compared, bad);
    int rc = bad ? 1 : 0;
    if (kc_manifest_write(&(kc_run){SP->name, KC_BACKEND_NAME, KC_ARCH, isa, vl}, op_names, N_OPS))
        rc = 1;
    return rc;
}

int main(int argc, char **argv) {
    /* --cpu-from-runner: the runner sets the CPU up for the ISA (qemu-user
     * does not report every extension it emulates in HWCAP); --step: the
     * elements of one main-loop iteration (length_class.h); --vl: the
     * vector width a scalable ISA runs at, for the manifest */
    bool runner_cpu = false, usage = argc < 2;
    const char *vl = "-";
    for (int a = 2; a < argc && !usage; a++) {
        if (strcmp(argv[a], "--cpu-from-runner") == 0)
            runner_cpu = true;
        else if (strcmp(argv[a], "--step") == 0 && a + 1 < argc)
            kc_step = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--vl") == 0 && a + 1 < argc)
            vl = argv[++a];
        else
            usage = true;
    }
    if (usage || kc_step == 0) {
        fprintf(stderr, "usage: %s ISA [--cpu-from-runner] [--step N] [--vl BITS]\n", argv[0]);
        return 2;
    }
    const char *all = getenv("KC_ALL_LENGTHS");
    kc_all_lengths = all && strcmp(all, "1") == 0;
#ifdef KC_JIT
    int rc = jit_setup(argv[1]);
    if (rc)
        return rc;
    K = &kc_table[0];
#else
    for (size_t i = 0; i < sizeof kc_table / sizeof kc_table[0]; i++)
        if (strcmp(kc_table[i].isa, argv[1]) == 0)
            K = &kc_table[i];
#endif
    if (!K) {
        fprintf(stderr, "kernel_check: spec %s has no %s kernels in this build\n", SP->name, argv[1]);
        return 2;
    }
    /* the generated NAME_spec (or the spec file) and the entry points agree on the float type */
    if ((SP->float_type == QG_FLOAT32) != (KC_FBITS == 32)) {
        fprintf(stderr, "kernel_check: the kernels take %d-bit floats, but %s's float_type is %s\n", KC_FBITS, SP->name,
                qg_float_type_name(SP->float_type));
        return 2;
    }
    if (!qg_cpu_has(K->id) && !runner_cpu) {
        printf("SKIPPED: this CPU cannot run %s\n", K->isa);
        kc_manifest_skipped(&(kc_run){SP->name, KC_BACKEND_NAME, KC_ARCH, K->isa, vl});
        return 77;
    }
    if (SP->block != QG_BLOCK_NONE) {
        const int block_rc = block_main(argv[1], vl);
#ifdef KC_JIT
        jit_teardown();
#endif
        return block_rc;
    }
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {{"fake_quant", test_fake_quant},
                 {"quantize and dequantize", test_quantize_dequantize},
                 {"fake_quant_backward", test_backward},
                 {"requantize", test_requantize},
                 {"missing arguments", test_missing_arguments},
                 {"observe", test_observe},
                 {"fused_train_step", test_fused_train_step},
                 {"quantize_dynamic", test_quantize_dynamic},
#ifdef KC_JIT
                 {"jit: same spec, same kernels", test_dispatch}};
#else
                 {"dispatch", test_dispatch}};
#endif
    unsigned passed = 0, failed = 0;
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        unsigned before = checks_failed;
        mismatches = 0;
        const clock_t start = clock(); /* where a test's time goes (docs/testing.md) */
        tests[t].fn();
        bool ok = checks_failed == before && mismatches == 0;
        printf("  %s/%s %-26s %s %6.2f s\n", SP->name, K->isa, tests[t].name, ok ? "passed" : "FAILED",
               (double)(clock() - start) / CLOCKS_PER_SEC);
        ok ? passed++ : failed++;
    }
    printf("%s/%s: %llu elements compared, %llu mismatches\n", SP->name, K->isa, compared, total_mismatches);
    printf("%u passed, %u failed\n", passed, failed);
    /* the JIT may serve an ISA with another's kernels (a spec for scalar
     * alone): both are named */
    char isa[64];
    if (strcmp(argv[1], K->isa) == 0)
        snprintf(isa, sizeof isa, "%s", K->isa);
    else
        snprintf(isa, sizeof isa, "%s>%s", argv[1], K->isa);
    if (kc_manifest_write(&(kc_run){SP->name, KC_BACKEND_NAME, KC_ARCH, isa, vl}, op_names, N_OPS))
        failed++;
#ifdef KC_JIT
    jit_teardown();
    failed += checks_failed && !failed;
#endif
    return failed ? 1 : 0;
}
