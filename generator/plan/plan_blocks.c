/* The element arithmetic of ggml's 4- and 5-bit block formats
 * (docs/semantics.md, "Block formats"), the span a block's walk
 * (lower/lower_blocks.c) calls with the block's scalars: S = d, INV = its
 * 1/d as the format takes it, Z = the codes' offset (q4_0: 8, q5_0: 16),
 * LO = the block's min (quantize) or m (dequantize). The K-quants'
 * dequantize takes a sub-block's scalars: q4_K's S = d·scale and LO =
 * dmin·min, q6_K's S = d·scale and Z = 32. Q8's quantize and fake_quant
 * take S = d (fake_quant: the fp16 d) and INV = 1/d; their dequantize is the
 * integer plan's (a per-tensor symmetric qint8 spec). */
#include <stdio.h>

#include "plan_build.h"

bool qg_plan_blocks(const qg_spec *sp, qg_kernel_op op, qg_plan *p) {
    const qg_block_format f = sp->block;
    const size_t cap = sizeof p->formula;
    if (op == QG_K_DEQUANTIZE && f == QG_BLOCK_Q4_K) { /* ggml's d1 * q - m1 */
        int y = N(E2(MUL_F, N(E1(CVT_I2F, QG_IN_Q), "code_f"), QG_IN_S), "scaled");
        p->out_y = N(E2(SUB_F, y, QG_IN_LO), "y");
        snprintf(p->formula, cap, "y = fl(fl(float(q) * d*scale) - dmin*min)");
        return true;
    }
    if (op == QG_K_DEQUANTIZE && f == QG_BLOCK_Q6_K) {
        int d = N(E1(CVT_I2F, N(E2(SUB_I, QG_IN_Q, QG_IN_Z), "q_minus_offset")), "q_minus_offset_f");
        p->out_y = N(E2(MUL_F, d, QG_IN_S), "y");
        snprintf(p->formula, cap, "y = fl(float(q - 32) * fl(d * scale))");
        return true;
    }
    if ((op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT) && (f == QG_BLOCK_Q8_0 || f == QG_BLOCK_Q8_1)) {
        /* roundf(x·id), ties away, and no clamp: in a block the walk takes,
         * |x·id| <= 127·(1 + 2^-21) < 127.5 (docs/semantics.md), so the code
         * is in [-127, 127] as it stands */
        const int scaled = N(E2(MUL_F, p->x, QG_IN_INV), "scaled");
        if (op == QG_K_QUANTIZE) {
            p->out_q = N(qg_plan_round_to_int(QG_ROUND_HALF_AWAY, p, scaled), "code");
            snprintf(p->formula, cap, "q = roundf(fl(x * id))");
            return true;
        }
        const int r = N(qg_plan_round(QG_ROUND_HALF_AWAY, p, scaled), "rounded");
        p->out_y = N(E2(MUL_F, qg_plan_unsigned_zero(p, r), QG_IN_S), "y");
        p->out_mask = N(E1(ORDERED, p->x), "finite");
        snprintf(p->formula, cap, "q = roundf(fl(x * id)); y = fl(float(q) * d16)");
        return true;
    }
    if ((op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT) && (f == QG_BLOCK_Q4_K || f == QG_BLOCK_Q6_K)) {
        /* the element loop after the runtime's search: ggml's nearest_int
         * is round-half-even on the values the search lets through
         * (|v| <= 4194303), clamped; q4_K's v = (x + dm) / d, codes 0..15,
         * q6_K's v = x / d, codes -32..31 stored 32 above. fake_quant
         * decodes them as dequantize does, S being the stored d·sc (and LO
         * dmin·m) that dequantize computes */
        const bool q4 = f == QG_BLOCK_Q4_K;
        const int above = q4 ? N(E2(ADD_F, p->x, QG_IN_LO), "plus_min") : p->x;
        int r = N(qg_plan_round(QG_ROUND_HALF_EVEN, p, N(E2(DIV_F, above, QG_IN_S), "scaled")), "nearest");
        if (op == QG_K_FAKE_QUANT) /* decoded: a code 0 is +0, as ggml's integer code converts */
            r = qg_plan_unsigned_zero(p, r);
        const int c = N(E2(MIN_F, N(E2(MAX_F, r, N(K(q4 ? 0.0f : -32.0f), "lowest")), "above_lowest"),
                           N(K(q4 ? 15.0f : 31.0f), "top")),
                        "clamped");
        const char *quantized = q4 ? "q = clamp(rne(fl(fl(x + dmin*min) / d*scale)), 0, 15)"
                                   : "q = clamp(rne(fl(x / d*scale)), -32, 31) + 32";
        if (op == QG_K_QUANTIZE) {
            p->out_q = N(E1(CVT_F2I, q4 ? c : N(E2(ADD_F, c, N(K(32.0f), "offset")), "code_f")), "code");
            snprintf(p->formula, cap, "%s", quantized);
            return true;
        }
        const int scaled_back = N(E2(MUL_F, c, QG_IN_S), q4 ? "scaled_back" : "y");
        p->out_y = q4 ? N(E2(SUB_F, scaled_back, QG_IN_LO), "y") : scaled_back;
        p->out_mask = N(E1(ORDERED, p->x), "finite");
        snprintf(p->formula, cap, "%s; y = %s", quantized,
                 q4 ? "fl(fl(float(q) * d*scale) - dmin*min)" : "fl(float(q - 32) * d*scale)");
        return true;
    }
    if ((op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT) && f == QG_BLOCK_MXFP4) {
        /* the reference's nearest of 16 values, lowest code on a tie: near
         * a value the errors are exact (Sterbenz), so the code of |x| is
         * the count of midpoints mu*d it exceeds, and a negative x's
         * nonzero code is 8 above it (docs/semantics.md) */
        static const float mu[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.0f, 7.0f, 10.0f};
        const int one = N(K(1.0f), "one"), zero = N(K(0.0f), "zero");
        const int a = N(E2(COPYSIGN, p->x, one), "magnitude");
        int count = -1, first = -1;
        for (int j = 0; j < 7; j++) {
            const int below = N(E2(CMP_LE, a, N(E2(MUL_F, N(K(mu[j]), "midpoint"), QG_IN_S), "midpoint_d")), "below");
            const int step = N(SEL(below, zero, one), "past");
            count = j ? N(E2(ADD_F, count, step), "count") : step;
            if (!j)
                first = below;
        }
        const int nonnegative = N(E2(CMP_GE, p->x, zero), "nonnegative");
        if (op == QG_K_QUANTIZE) {
            const int negative = N(SEL(nonnegative, zero, SEL(first, zero, N(K(8.0f), "eight"))), "sign_code");
            p->out_q = N(E1(CVT_F2I, N(E2(ADD_F, count, negative), "code_f")), "code");
            snprintf(p->formula, cap,
                     "q = #{mu in 0.5, 1.5, 2.5, 3.5, 5, 7, 10: |x| > mu * d} (+ 8 where x < 0 and q > 0)");
            return true;
        }
        /* the doubled E2M1 value of the count k: k to 4, then 6, 8, 12;
         * negative for a negative x (k = 0 then gives +0, code 0's) */
        const int k = count, two_k = N(E2(ADD_F, k, k), "two_k");
        const int upper = N(SEL(N(E2(CMP_GE, k, N(K(7.0f), "seven")), "top"), N(K(12.0f), "twelve"),
                                N(E2(SUB_F, two_k, N(K(4.0f), "four")), "two_k_minus_4")),
                            "upper_value");
        const int v = N(SEL(N(E2(CMP_LE, k, N(K(4.0f), "four")), "small"), k, upper), "value");
        const int signed_v = N(SEL(nonnegative, v, N(E2(SUB_F, zero, v), "negated")), "signed_value");
        p->out_y = N(E2(MUL_F, signed_v, QG_IN_S), "y");
        p->out_mask = N(E1(ORDERED, p->x), "finite");
        snprintf(p->formula, cap, "y = fl(v[q] * d), q as quantize takes it");
        return true;
    }
    if (f != QG_BLOCK_Q4_0 && f != QG_BLOCK_Q4_1 && f != QG_BLOCK_Q5_0 && f != QG_BLOCK_Q5_1)
        return false;
    const bool with_min = f == QG_BLOCK_Q4_1 || f == QG_BLOCK_Q5_1;
    const int top = f == QG_BLOCK_Q4_0 || f == QG_BLOCK_Q4_1 ? 15 : 31;
    if (op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT) {
        /* ggml's (int8_t)(t + bias) truncates a value in [0, top + 1.5);
         * clamping to top first is the same and keeps the cast exact */
        int t = with_min ? E2(MUL_F, N(E2(SUB_F, p->x, QG_IN_LO), "above_min"), QG_IN_INV) : E2(MUL_F, p->x, QG_IN_INV);
        const float bias = with_min ? 0.5f : (float)(top + 1) / 2 + 0.5f;
        int v = N(E2(ADD_F, N(t, "scaled"), N(K(bias), "bias")), "biased");
        if (f != QG_BLOCK_Q5_1) /* q5_1's value stays below 32 */
            v = N(E2(MIN_F, v, N(K((float)top), "top")), "below_top");
        const int code = N(E1(CVT_F2I, N(E1(TRUNC, v), "truncated")), "code");
        const int n = snprintf(p->formula, cap, "q = %strunc(fl(fl(%s * id) + %g))%s", f != QG_BLOCK_Q5_1 ? "min(" : "",
                               with_min ? "fl(x - min)" : "x", (double)bias,
                               f != QG_BLOCK_Q5_1 ? (top == 15 ? ", 15)" : ", 31)") : "");
        if (op == QG_K_QUANTIZE) {
            p->out_q = code;
            return true;
        }
        /* fake_quant: decoded as dequantize decodes the stored block, with
         * S the fp16 d and HI the fp16 m; a block's values are finite here
         * (the walk leaves the others to the reference) */
        if (with_min)
            p->out_y =
                N(E2(ADD_F, N(E2(MUL_F, N(E1(CVT_I2F, code), "code_f"), QG_IN_S), "scaled_back"), QG_IN_HI), "y");
        else
            p->out_y =
                N(E2(MUL_F, N(E1(CVT_I2F, N(E2(SUB_I, code, QG_IN_Z), "q_minus_offset")), "q_minus_offset_f"), QG_IN_S),
                  "y");
        p->out_mask = N(E1(ORDERED, p->x), "finite");
        if (n > 0 && (size_t)n < cap)
            snprintf(p->formula + n, cap - (size_t)n, "; y = %s",
                     with_min ? "fl(fl(float(q) * d16) + m16)" : "fl(float(q - offset) * d16)");
        return true;
    }
    if (op == QG_K_DEQUANTIZE) {
        if (with_min) {
            int y = N(E2(MUL_F, N(E1(CVT_I2F, QG_IN_Q), "code_f"), QG_IN_S), "scaled");
            p->out_y = N(E2(ADD_F, y, QG_IN_LO), "y");
            snprintf(p->formula, cap, "y = fl(fl(float(q) * d) + m)");
        } else {
            int d = N(E1(CVT_I2F, N(E2(SUB_I, QG_IN_Q, QG_IN_Z), "q_minus_offset")), "q_minus_offset_f");
            p->out_y = N(E2(MUL_F, d, QG_IN_S), "y");
            snprintf(p->formula, cap, "y = fl(float(q - %d) * d)", (top + 1) / 2);
        }
        return true;
    }
    return false;
}
