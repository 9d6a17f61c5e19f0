/* 16-bit float tensors in plans (docs/semantics.md, "Float types"): codes
 * widened to fp32 and fp32 narrowed to codes, by integer steps or by the
 * ISA's conversion instructions. */
#include <math.h>

#include "plan_build.h"

/* Codes travel in int32 lanes. Widening is exact; narrowing rounds
 * nearest-even and gives torch's NaN (bfloat16 0x7FC0, float16 0x7E00 with
 * the sign). */

/* bfloat16: the code is the top half of the fp32 bits. */
static int bf16_widen(qg_plan *p, int code) {
    return N(E1(BITS_I2F, N(EI(SHL_I, code, 16), "widened_bits")), "widened");
}

static int bf16_narrow(qg_plan *p, int y, bool maybe_nan) {
    const int quiet = !maybe_nan ? y : N(SEL(N(E1(ORDERED, y), "not_nan"), y, N(K(NAN), "nan")), "nan_made_quiet");
    const int bits = N(E1(BITS_F2I, quiet), "y_bits");
    const int odd = N(E2(AND_I, EI(SHR_I, bits, 16), KI(1)), "kept_lsb");
    const int biased = N(E2(ADD_I, E2(ADD_I, bits, KI(0x7FFF)), odd), "rounded_bits");
    return N(EI(SHR_I, biased, 16), "y_code");
}

/* float16 by integers: the magnitude's bits moved into fp32's exponent
 * range and scaled by 2^112 (exact, subnormals included); codes past the
 * largest finite one are inf and NaN with their payload. */
static int f16_widen(qg_plan *p, int code) {
    const int moved = N(EI(SHL_I, E2(AND_I, code, KI(0x7FFF)), 13), "magnitude_bits");
    const int scaled_up = N(E2(MUL_F, E1(BITS_I2F, moved), K(0x1p112f)), "magnitude");
    const int special = N(E2(CMP_GE, scaled_up, K(65536.0f)), "inf_or_nan");
    const int inf_nan = N(E1(BITS_I2F, E2(ADD_I, moved, KI(0x70000000))), "inf_or_nan_value");
    const int mag = N(SEL(special, inf_nan, scaled_up), "widened_magnitude");
    const int sign = N(E1(BITS_I2F, EI(SHL_I, code, 16)), "code_sign");
    return N(E2(COPYSIGN, mag, sign), "widened");
}

/* ... and narrowed: below 2^-14 adding 0.5 rounds the magnitude to the
 * subnormal grid (2^-24) in the fp32 adder; above, the bits are rebiased
 * and rounded to nearest-even on the 13 dropped bits; from 65536 up inf,
 * NaN 0x7E00; then the sign. */
static int f16_narrow(qg_plan *p, int y, bool maybe_nan) {
    const int mag = N(E2(COPYSIGN, y, K(0.0f)), "magnitude");
    const int bits = N(E1(BITS_F2I, mag), "magnitude_bits");
    const int odd = N(E2(AND_I, EI(SHR_I, bits, 13), KI(1)), "kept_lsb");
    const int rebiased = E2(ADD_I, E2(ADD_I, bits, KI((int32_t)0xC8000FFFu)), odd);
    const int normal = N(E1(BITS_I2F, EI(SHR_I, rebiased, 13)), "normal_code");
    const int sub_bits = E2(SUB_I, E1(BITS_F2I, E2(ADD_F, mag, K(0.5f))), KI(0x3F000000));
    const int sub = N(E1(BITS_I2F, sub_bits), "subnormal_code");
    const int tiny = N(E2(CMP_LE, mag, K(0x1.fffffep-15f)), "subnormal");
    int code = N(SEL(tiny, sub, normal), "finite_code");
    const int over = N(E2(CMP_GE, mag, K(65536.0f)), "overflow");
    code = N(SEL(over, E1(BITS_I2F, KI(0x7C00)), code), "code_or_inf");
    if (maybe_nan)
        code = SEL(E1(ORDERED, y), code, E1(BITS_I2F, KI(0x7E00)));
    const int sign = N(EI(SHR_I, E2(AND_I, E1(BITS_F2I, y), KI(INT32_MIN)), 16), "code_sign");
    return N(E2(ADD_I, N(E1(BITS_F2I, code), "magnitude_code"), sign), "y_code");
}

/* float16 by the ISA's instructions, a NaN made the quiet one first. */
static int f16_narrow_instructions(qg_plan *p, int y, bool maybe_nan) {
    if (!maybe_nan)
        return N(E1(CVT_F2H, y), "y_code");
    const int nan = N(E2(COPYSIGN, N(K(NAN), "nan"), y), "quiet_nan");
    const int quiet = N(SEL(N(E1(ORDERED, y), "not_nan"), y, nan), "nan_made_quiet");
    return N(E1(CVT_F2H, quiet), "y_code");
}

int qg_plan_widen(const qg_plan_io *io, qg_plan *p, int code) {
    if (io->float_type == QG_BFLOAT16)
        return bf16_widen(p, code);
    return io->float16_instructions ? N(E1(CVT_H2F, code), "widened") : f16_widen(p, code);
}

/* maybe_nan false: y is never NaN, so the NaN's canonical code needs no
 * steps. */
int qg_plan_narrow(const qg_plan_io *io, qg_plan *p, int y, bool maybe_nan) {
    if (io->float_type == QG_BFLOAT16)
        return bf16_narrow(p, y, maybe_nan);
    return io->float16_instructions ? f16_narrow_instructions(p, y, maybe_nan) : f16_narrow(p, y, maybe_nan);
}
