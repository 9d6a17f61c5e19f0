/* The fp8 plans (docs/semantics.md, "fp8"): e4m3fn and e5m2 codes made and
 * read with fp32 arithmetic and bit moves, no table. */
#include <math.h>

#include "plan_build.h"

/* A magnitude rounds to the format's grid by adding and subtracting a
 * power of two whose ulp is the grid's spacing in the magnitude's binade
 * (never below the subnormal spacing); the code is then the bits of the
 * rounded value rescaled so that its exponent field is the format's. */
typedef struct fp8_format {
    int man, bias;
    float max;        /* largest finite value */
    float top;        /* 2^(emax + 1): where an overflowing magnitude rounds */
    float min_normal; /* 2^(1 - bias): the grid is uniform below it */
    float nan_value;  /* the value the code 0x7F (NaN) would have */
    float nan_from;   /* decoded magnitudes from here up are NaN codes */
    bool has_inf;     /* e5m2: 0x7C is inf, the value `top` */
} fp8_format;

/* A normal code's value, read as if every exponent were finite. */
static float fp8_raw_value(const fp8_format *f, unsigned code) {
    const unsigned e = code >> f->man, m = code & ((1u << f->man) - 1u);
    return ldexpf((float)((1u << f->man) + m), (int)e - f->bias - f->man);
}

/* The constants the plans use, from the dtype's layout (qg_dtype_float8_layout). */
static fp8_format fp8_format_of(qg_dtype d) {
    fp8_format f = {0};
    qg_dtype_float8_layout(d, &f.man, &f.bias, &f.has_inf);
    const unsigned top_exp = 0x7Fu >> f.man; /* all ones */
    const unsigned max_code = f.has_inf ? 0x7Fu - (1u << f.man) : 0x7Eu;
    f.max = fp8_raw_value(&f, max_code);
    f.top = ldexpf(1.0f, (int)(max_code >> f.man) + 1 - f.bias);
    f.min_normal = ldexpf(1.0f, 1 - f.bias);
    f.nan_value = fp8_raw_value(&f, 0x7F);
    f.nan_from = fp8_raw_value(&f, f.has_inf ? (top_exp << f.man) + 1u : 0x7Fu); /* the first NaN code */
    return f;
}

/* |t| rounded to the grid (top past the largest finite value), and
 * whether it stayed finite. */
static int fp8_rounded(const fp8_format *f, qg_plan *p, int t, int *fits) {
    const int a = N(E2(COPYSIGN, t, N(K(0.0f), "zero")), "magnitude");
    const int capped = N(E2(MIN_F, a, N(K(f->top), "top")), "capped");
    const int binade = N(E2(MAX_F, capped, N(K(f->min_normal), "min_normal")), "binade_of");
    const int binade_bits = N(E1(BITS_F2I, binade), "binade_bits");
    const int exponent = N(E2(AND_I, binade_bits, N(KI(0x7F800000), "exponent_field")), "exponent");
    const int offset = N(KI((23 - f->man) << 23), "grid_offset");
    const int magic = N(E1(BITS_I2F, N(E2(ADD_I, exponent, offset), "magic_bits")), "magic");
    const int r = N(E2(SUB_F, N(E2(ADD_F, capped, magic), "shifted"), magic), "rounded");
    *fits = N(E2(CMP_LE, r, N(K(f->max), "max_finite")), "fits");
    return r;
}

static void fp8_quantize(const qg_spec *sp, const fp8_format *f, qg_plan *p) {
    const int t = qg_plan_scaled(sp, p);
    int fits;
    const int r = fp8_rounded(f, p, t, &fits);
    const float over = sp->saturate ? f->max : f->has_inf ? f->top : f->nan_value;
    const int v = N(SEL(fits, r, N(K(over), "overflow_value")), "finite_or_over");
    const int ordered = N(E1(ORDERED, t), "not_nan");
    /* unchecked: a NaN gives +-0, a finite code (docs/semantics.md, "NaN inputs") */
    const int nan_value = N(K(sp->nan_policy == QG_NAN_UNCHECKED ? 0.0f : f->nan_value), "nan_value");
    const int code_value = N(SEL(ordered, v, nan_value), "code_value");
    const int exp_shift = N(K(ldexpf(1.0f, f->bias - 127)), "exponent_shift");
    const int rescaled = N(E1(BITS_F2I, N(E2(MUL_F, code_value, exp_shift), "rescaled")), "rescaled_bits");
    const int mag = N(EI(SHR_I, rescaled, 23 - f->man), "code_magnitude");
    const int sign_byte = N(EI(SHR_I, N(E1(BITS_F2I, t), "scaled_bits"), 24), "top_byte");
    const int sign = N(E2(AND_I, sign_byte, N(KI(0x80), "sign_bit")), "code_sign");
    p->out_q = N(E2(ADD_I, mag, sign), "quantized");
}

static void fp8_dequantize(const fp8_format *f, qg_plan *p) {
    const int mag = N(E2(AND_I, QG_IN_Q, N(KI(0x7F), "magnitude_bits")), "code_magnitude");
    const int moved = N(EI(SHL_I, mag, 23 - f->man), "moved_bits");
    const int exp_shift = N(K(ldexpf(1.0f, 127 - f->bias)), "exponent_shift");
    const int raw = N(E2(MUL_F, N(E1(BITS_I2F, moved), "moved"), exp_shift), "magnitude");
    int m = raw;
    if (f->has_inf) {
        const int is_inf = N(E2(CMP_GE, raw, N(K(f->top), "top")), "inf_code");
        m = N(SEL(is_inf, N(K(INFINITY), "inf"), raw), "magnitude_or_inf");
    }
    const int sign_bits = N(EI(SHL_I, QG_IN_Q, 24), "sign_bits");
    const int sign = N(E1(BITS_I2F, sign_bits), "code_sign");
    const int y = N(E2(MUL_F, N(E2(COPYSIGN, m, sign), "decoded"), QG_IN_S), "y_number");
    const int is_nan = N(E2(CMP_GE, raw, N(K(f->nan_from), "nan_from")), "nan_code");
    p->out_y = N(SEL(is_nan, N(K(NAN), "nan"), y), "y");
}

static void fp8_fake_quant(const qg_spec *sp, const fp8_format *f, qg_plan *p) {
    const int t = qg_plan_scaled(sp, p);
    int fits;
    const int r = fp8_rounded(f, p, t, &fits);
    const float over = sp->saturate ? f->max : f->has_inf ? INFINITY : 0.0f; /* e4m3fn: NaN below */
    const int v = N(SEL(fits, r, N(K(over), "overflow_value")), "finite_or_over");
    int y = N(E2(MUL_F, N(E2(COPYSIGN, v, t), "decoded"), QG_IN_S), "y_number");
    if (!sp->saturate && !f->has_inf)
        y = N(SEL(fits, y, N(K(NAN), "nan")), "y_or_overflow_nan");
    const int ordered = N(E1(ORDERED, t), "not_nan");
    p->out_y = N(SEL(ordered, y, sp->nan_policy == QG_NAN_UNCHECKED ? N(K(0.0f), "zero") : p->x), "y");
    p->out_mask = sp->saturate ? N(E2(AND_M, fits, ordered), "in_range") : ordered;
}

/* The fp8 plans; false for an op whose plan is the integer one
 * (backward, observe) or the reference (requantize). */
bool qg_plan_fp8(const qg_spec *sp, qg_kernel_op op, qg_plan *p) {
    const fp8_format f = fp8_format_of(sp->dtype);
    switch (op) {
    case QG_K_QUANTIZE: fp8_quantize(sp, &f, p); return true;
    case QG_K_DEQUANTIZE: fp8_dequantize(&f, p); return true;
    case QG_K_FAKE_QUANT: fp8_fake_quant(sp, &f, p); return true;
    default: return false;
    }
}
