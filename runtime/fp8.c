/* The OCP 8-bit floats, as the reference computes them (docs/semantics.md,
 * "fp8"): a value rounds to the nearest code by a search over the codes'
 * values, not by the bit tricks the kernels use, so the kernels are checked
 * against an independent account of the format. */
#include <math.h>

#include "rt_internal.h"

typedef struct fp8_format {
    int man;         /* mantissa bits */
    int bias;        /* exponent bias */
    uint8_t max;     /* the code of the largest finite value */
    uint8_t special; /* codes at or above it (magnitude) are NaN or, for e5m2, inf first */
    bool has_inf;
} fp8_format;

/* The codes from the dtype's layout: the largest finite magnitude is the
 * top exponent with all mantissa ones but one (e4m3fn, whose 0x7F is NaN)
 * or the exponent below the top with all ones (e5m2). */
static fp8_format format_of(qg_dtype d) {
    fp8_format f = {0};
    qg_dtype_float8_layout(d, &f.man, &f.bias, &f.has_inf);
    f.max = (uint8_t)(f.has_inf ? 0x7Fu - (1u << f.man) : 0x7Eu);
    f.special = (uint8_t)(f.max + 1u);
    return f;
}

/* The magnitude code c read as if exponents went on past the format's
 * top: c = max + 1 is the value an overflowing magnitude rounds to. */
static double magnitude_of(const fp8_format *f, unsigned c) {
    const unsigned e = c >> f->man, m = c & ((1u << f->man) - 1u);
    if (e == 0)
        return ldexp((double)m, 1 - f->bias - f->man);
    return ldexp((double)((1u << f->man) + m), (int)e - f->bias - f->man);
}

uint8_t qg_fp8_round(qg_dtype d, float v, bool saturate, bool *fits) {
    const fp8_format f = format_of(d);
    const uint8_t sign = signbit(v) ? 0x80 : 0x00;
    *fits = false;
    if (isnan(v))
        return sign | 0x7F;
    const double a = fabs((double)v);
    /* the largest code whose value is <= a, among 0 .. max + 1 */
    unsigned lo = 0, hi = f.max + 1u;
    if (a >= magnitude_of(&f, hi)) {
        lo = hi;
    } else {
        while (hi - lo > 1) {
            const unsigned mid = (lo + hi) / 2;
            if (magnitude_of(&f, mid) <= a)
                lo = mid;
            else
                hi = mid;
        }
        const double below = magnitude_of(&f, lo), above = magnitude_of(&f, lo + 1);
        const double half = (below + above) / 2; /* exact in double */
        if (a > half || (a == half && (lo & 1u)))
            lo++;
    }
    if (lo <= f.max) {
        *fits = true;
        return (uint8_t)(sign | lo);
    }
    if (saturate)
        return sign | f.max;
    return (uint8_t)(sign | (f.has_inf ? f.special : 0x7F)); /* +-inf, or NaN */
}

uint8_t qg_fp8_encode(qg_dtype d, float v, bool saturate) {
    bool fits;
    return qg_fp8_round(d, v, saturate, &fits);
}

float qg_fp8_decode(qg_dtype d, uint8_t bits) {
    const fp8_format f = format_of(d);
    const unsigned mag = bits & 0x7Fu;
    float a;
    if (mag >= f.special)
        a = f.has_inf && mag == f.special ? INFINITY : NAN;
    else
        a = (float)magnitude_of(&f, mag);
    if (isnan(a))
        return NAN; /* one NaN, whatever the code's sign */
    return bits & 0x80u ? -a : a;
}
