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

static inline float f16_widen(uint16_t h) { return qg_ks_f16_to_f32(h); }
static inline uint16_t f16_narrow(float f) { return qg_ks_f32_to_f16(f); }

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
