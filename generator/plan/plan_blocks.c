/* The element arithmetic of ggml's 4- and 5-bit block formats
 * (docs/semantics.md, "Block formats"), the span a block's walk
 * (lower/lower_blocks.c) calls with the block's scalars: S = d, INV = its
 * 1/d as the format takes it, Z = the codes' offset (q4_0: 8, q5_0: 16),
 * LO = the block's min (quantize) or m (dequantize). The K-quants'
 * dequantize takes a sub-block's scalars: q4_K's S = d·scale and LO =
 * dmin·min, q6_K's S = d·scale and Z = 32. Q8's codes are the integer
 * plan's (a per-tensor symmetric qint8 spec). */
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
