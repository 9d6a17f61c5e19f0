/* Building a plan step by step, for the files of plan/ that write plans:
 * each helper appends steps and returns the index of the value it made. */
#ifndef QGEN_PLAN_BUILD_H
#define QGEN_PLAN_BUILD_H

#include "kernel_plan.h"

/* Appends op(a, b, c) (-1: no operand) with the float immediate imm. */
int qg_plan_emit(qg_plan *p, qg_opcode op, int a, int b, int c, float imm);

/* Names value v after what it holds (qg_plan.name) and returns it. */
static inline int qg_plan_named(qg_plan *p, int v, const char *name) {
    p->name[v] = name;
    return v;
}

/* A step with an integer immediate: SPLAT_I's value or a shift's count. */
static inline int qg_plan_emit_imm(qg_plan *p, qg_opcode op, int a, int32_t imm) {
    const int v = qg_plan_emit(p, op, a, -1, -1, 0.0f);
    p->steps[p->nsteps - 1].imm_i = imm;
    return v;
}

/* round(t) in `mode`, a zero keeping the sign rounding gives it; and r
 * with -0.0 made +0.0 (an integer code's zero). */
int qg_plan_round(qg_rounding mode, qg_plan *p, int t);
int qg_plan_unsigned_zero(qg_plan *p, int r);
/* round(t) in `mode` as an int32, for t whose rounding int32 holds. */
int qg_plan_round_to_int(qg_rounding mode, qg_plan *p, int t);

/* t = x / s or x * inv, as the spec's scale_op says. */
int qg_plan_scaled(const qg_spec *sp, qg_plan *p);

/* The fp8 plans of quantize, dequantize and fake_quant; false for the
 * ops whose plan is the integer one. */
bool qg_plan_fp8(const qg_spec *sp, qg_kernel_op op, qg_plan *p);

/* The plans of ggml's 4- and 5-bit block formats' quantize and dequantize
 * (spec->block); false for the others. */
bool qg_plan_blocks(const qg_spec *sp, qg_kernel_op op, qg_plan *p);

/* A 16-bit float code widened to fp32, and fp32 narrowed to a code
 * (maybe_nan false: y is never NaN, so the canonical NaN needs no steps). */
int qg_plan_widen(const qg_plan_io *io, qg_plan *p, int code);
int qg_plan_narrow(const qg_plan_io *io, qg_plan *p, int y, bool maybe_nan);

/* Shorthands inside a function whose plan is `p`. */
#define N(v, name) qg_plan_named(p, v, name)
#define E1(op, a) qg_plan_emit(p, QG_OP_##op, a, -1, -1, 0.0f)
#define E2(op, a, b) qg_plan_emit(p, QG_OP_##op, a, b, -1, 0.0f)
#define EI(op, a, imm) qg_plan_emit_imm(p, QG_OP_##op, a, imm)
#define SEL(m, a, b) qg_plan_emit(p, QG_OP_SELECT_F, m, a, b, 0.0f)
#define K(v) qg_plan_emit(p, QG_OP_SPLAT_F, -1, -1, -1, v)
#define KI(v) qg_plan_emit_imm(p, QG_OP_SPLAT_I, -1, v)

#endif
