/* bfloat16 and float16 tensors (docs/semantics.md, "Float types"): exact
 * widening to float and nearest-even narrowing in integer arithmetic, so
 * every ISA and compiler gives the same bits. NaN narrows as torch 1.13
 * converts it: bfloat16 0x7FC0, float16 0x7E00 with the NaN's sign; a
 * float16 NaN widens quieted. */
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"
#include "rt_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define QG_X86_CONVERT 1 /* float16_x86.c: AVX2 and F16C loops, when the CPU has them */
#endif

/* a float's bits, unsigned, through kernel_support.h's helpers */
static inline uint32_t bits_of(float f) { return (uint32_t)qg_ks_bits_f2i(f); }
static inline float float_of(uint32_t u) { return qg_ks_bits_i2f((int32_t)u); }

/* The loops below call these static forms: the exported ones may be
 * interposed in the shared library, which would keep them out of line. */
static inline float bf16_widen(uint16_t h) { return float_of((uint32_t)h << 16); }

static inline uint16_t bf16_narrow(float f) {
    const uint32_t u = bits_of(f);
    /* adding 0x7FFF plus the kept part's lowest bit rounds half to even;
     * a carry into the exponent is the correct next binade (or infinity) */
    const uint16_t r = (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    return (u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC0 : r;
}

float qg_bf16_to_float(uint16_t h) { return bf16_widen(h); }
uint16_t qg_float_to_bf16(float f) { return bf16_narrow(f); }

static inline float f16_widen(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1F) /* inf, and NaN quieted with its payload kept (as F16C does) */
        return float_of(sign | 0x7F800000u | (mant << 13) | (mant ? 0x400000u : 0));
    if (exp == 0) { /* zero and subnormals: mant * 2^-24, exact in float */
        const float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* m >> shift rounded half to even (1 <= shift <= 31). */
static uint32_t shift_rne(uint32_t m, unsigned shift) {
    const uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    return q + (rem > half || (rem == half && (q & 1u)));
}

static inline uint16_t f16_narrow(float f) {
    const uint32_t u = bits_of(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u);
    if (a >= 0x477FF000u) /* 65520 and up: past the tie above 65504 */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) /* normal: rebias 127 -> 15, keep 10 mantissa bits */
        return (uint16_t)(sign | shift_rne(a - 0x38000000u, 13));
    if (a <= 0x33000000u) /* 2^-25 and below: the tie at 2^-25 goes to even 0 */
        return (uint16_t)sign;
    /* subnormal: (1.m) * 2^(e-150) in units of 2^-24; a carry gives the
     * smallest normal's code, as it should */
    const unsigned e = a >> 23;
    return (uint16_t)(sign | shift_rne((a & 0x7FFFFFu) | 0x800000u, 126u - e));
}

float qg_f16_to_float(uint16_t h) { return f16_widen(h); }
uint16_t qg_float_to_f16(float f) { return f16_narrow(f); }

/* The prefix of whole vectors the CPU's vector loops convert (x86 with AVX2
 * and F16C), or 0; the element loops below do the rest. */
static size_t vector_widen(qg_float_type type, const uint16_t *h, float *out, size_t n) {
#ifdef QG_X86_CONVERT
    if (qg_x86_convert_ok())
        return type == QG_BFLOAT16 ? qg_x86_bf16_widen(h, out, n) : qg_x86_f16_widen(h, out, n);
#endif
    (void)type, (void)h, (void)out, (void)n;
    return 0;
}

static size_t vector_narrow(qg_float_type type, const float *in, uint16_t *h, size_t n) {
#ifdef QG_X86_CONVERT
    if (qg_x86_convert_ok())
        return type == QG_BFLOAT16 ? qg_x86_bf16_narrow(in, h, n) : qg_x86_f16_narrow(in, h, n);
#endif
    (void)type, (void)in, (void)h, (void)n;
    return 0;
}

void qg_float_type_widen(qg_float_type type, const void *in, float *out, size_t n) {
    QG_NEED_OR_RETURN((in && out) || n == 0);
    if (type != QG_BFLOAT16 && type != QG_FLOAT16) {
        if (n)
            memmove(out, in, n * sizeof(float));
        return;
    }
    const uint16_t *h = in;
    for (size_t i = vector_widen(type, h, out, n); i < n; i++)
        out[i] = type == QG_BFLOAT16 ? bf16_widen(h[i]) : f16_widen(h[i]);
}

void qg_float_type_narrow(qg_float_type type, const float *in, void *out, size_t n) {
    QG_NEED_OR_RETURN((in && out) || n == 0);
    if (type != QG_BFLOAT16 && type != QG_FLOAT16) {
        if (n)
            memmove(out, in, n * sizeof(float));
        return;
    }
    uint16_t *h = out;
    for (size_t i = vector_narrow(type, in, h, n); i < n; i++)
        h[i] = type == QG_BFLOAT16 ? bf16_narrow(in[i]) : f16_narrow(in[i]);
}
