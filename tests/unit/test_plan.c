/* Kernel plans on their own, before any backend lowers them: a scalar
 * interpreter runs each plan step by step with the plain-C meaning of its
 * operations (templates/scalar.def), and every element must equal the
 * runtime's reference. A failure here is the plan's, not a backend's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../test_util.h"
#include "plan/kernel_loops.h"
#include "plan/kernel_plan.h"
#include "qgen/kernel_support.h"
#include "qgen/runtime.h"

typedef union val {
    float f;
    int32_t i;
    bool m;
} val;

/* ROUND_CVT as an ISA whose conversion saturates spells it (NaN to
 * INT32_MAX, QG_RNE_CONVERSIONS), as x86 spells it (NaN and
 * everything out of range to INT32_MIN, "indefinite"), as NEON does
 * (saturating, NaN to 0; its min and max then return NaN for a NaN), or,
 * by default, only on values in the int32 range. */
static enum { CVT_IN_RANGE, CVT_SATURATING, CVT_INDEFINITE, CVT_NAN_ZERO } cvt_mode;

static int32_t round_cvt(float a) {
    const bool in_range = a >= -0x1p31f && a < 0x1p31f;
    if (cvt_mode == CVT_IN_RANGE) {
        CU_ASSERT_TRUE(in_range);
        return in_range ? (int32_t)nearbyintf(a) : 0;
    }
    if (cvt_mode == CVT_INDEFINITE)
        return in_range ? (int32_t)nearbyintf(a) : INT32_MIN;
    if (cvt_mode == CVT_NAN_ZERO && a != a)
        return 0;
    if (a != a || a >= 0x1p31f)
        return INT32_MAX;
    return a < -0x1p31f ? INT32_MIN : (int32_t)nearbyintf(a);
}

static int32_t sat(int64_t v, int64_t lo, int64_t hi) { return (int32_t)(v < lo ? lo : v > hi ? hi : v); }

/* x86's grouped quantize store of one lane (qg_plan.out_q_grouped): packed
 * to 16 bits, z added there, packed to bytes, bounded by qmin, each with
 * saturation (docs/semantics.md, "Element arithmetic"). */
static int32_t grouped_store(const qg_spec *sp, int32_t q_minus_z, int32_t z) {
    const int32_t w =
        sat((int64_t)sat(q_minus_z, INT16_MIN, INT16_MAX) + sat(z, INT16_MIN, INT16_MAX), INT16_MIN, INT16_MAX);
    const int32_t b = sp->dtype == QG_QUINT8 ? sat(w, 0, 255) : sat(w, -128, 127);
    return b < sp->quant_min ? (int32_t)sp->quant_min : b;
}

/* NEON's min and max return a NaN operand (the mode that converts NaN to
 * 0 goes with them); elsewhere the plans must not care which they get. */
static bool nan_of(float a, float b, float *out) {
    if (cvt_mode != CVT_NAN_ZERO || (a == a && b == b))
        return false;
    *out = a != a ? a : b;
    return true;
}

/* One element through the plan; returns the value ids' values. */
static void run_plan(const qg_plan *p, val *v) {
    for (int k = 0; k < p->nsteps; k++) {
        const qg_step *s = &p->steps[k];
        const val a = s->a >= 0 ? v[s->a] : (val){0}, b = s->b >= 0 ? v[s->b] : (val){0},
                  c = s->c >= 0 ? v[s->c] : (val){0};
        val r = {0};
        switch (s->op) {
        case QG_OP_ADD_F: r.f = a.f + b.f; break;
        case QG_OP_SUB_F: r.f = a.f - b.f; break;
        case QG_OP_MUL_F: r.f = a.f * b.f; break;
        case QG_OP_DIV_F: r.f = a.f / b.f; break;
        case QG_OP_MIN_F: r.f = nan_of(a.f, b.f, &r.f) ? r.f : a.f < b.f ? a.f : b.f; break;
        case QG_OP_MAX_F: r.f = nan_of(a.f, b.f, &r.f) ? r.f : a.f > b.f ? a.f : b.f; break;
        case QG_OP_ROUND_EVEN: r.f = nearbyintf(a.f); break;
        case QG_OP_FLOOR: r.f = floorf(a.f); break;
        case QG_OP_TRUNC: r.f = truncf(a.f); break;
        case QG_OP_COPYSIGN: r.f = copysignf(a.f, b.f); break;
        case QG_OP_SPLAT_F: r.f = s->imm; break;
        case QG_OP_CMP_GE: r.m = a.f >= b.f; break;
        case QG_OP_CMP_LE: r.m = a.f <= b.f; break;
        case QG_OP_CMP_EQ: r.m = a.f == b.f; break;
        case QG_OP_ORDERED: r.m = a.f == a.f; break;
        case QG_OP_AND_M: r.m = a.m && b.m; break;
        case QG_OP_SELECT_F: r.f = a.m ? b.f : c.f; break;
        case QG_OP_MASK_F: r.f = a.m ? b.f : 0.0f; break;
        case QG_OP_MASKZ_MUL_F: r.f = a.m ? b.f * c.f : 0.0f; break;
        case QG_OP_CVT_F2I: r.i = (int32_t)a.f; break;
        case QG_OP_ROUND_CVT: r.i = round_cvt(a.f); break;
        case QG_OP_TRUNC_CVT: r.i = (int32_t)a.f; break;
        case QG_OP_MAX_I: r.i = a.i > b.i ? a.i : b.i; break;
        case QG_OP_MIN_I: r.i = a.i < b.i ? a.i : b.i; break;
        case QG_OP_MASKZ_I: r.i = a.m ? b.i : 0; break;
        case QG_OP_SAT_ADD_I: r.i = qg_ks_sat_add_i32(a.i, b.i); break;
        case QG_OP_CVT_I2F: r.f = (float)a.i; break;
        case QG_OP_ADD_I: r.i = a.i + b.i; break;
        case QG_OP_SUB_I: r.i = a.i - b.i; break;
        case QG_OP_SPLAT_I: r.i = s->imm_i; break;
        case QG_OP_AND_I: r.i = a.i & b.i; break;
        case QG_OP_SHL_I: r.i = (int32_t)((uint32_t)a.i << s->imm_i); break;
        case QG_OP_SHR_I: r.i = (int32_t)((uint32_t)a.i >> s->imm_i); break;
        case QG_OP_BITS_F2I: r.i = qg_ks_bits_f2i(a.f); break;
        case QG_OP_BITS_I2F: r.f = qg_ks_bits_i2f(a.i); break;
        case QG_OP_CVT_H2F: { /* the ISA's instruction: IEEE widening */
            const uint16_t code = (uint16_t)a.i;
            qg_float_type_widen(QG_FLOAT16, &code, &r.f, 1);
            break;
        }
        case QG_OP_CVT_F2H: { /* ... and nearest-even narrowing of a quiet NaN or a number */
            uint16_t code;
            CU_ASSERT_TRUE(a.f == a.f || (qg_ks_bits_f2i(a.f) & 0x7FFFFFFF) == 0x7FC00000);
            qg_float_type_narrow(QG_FLOAT16, &a.f, &code, 1);
            r.i = code;
            break;
        }
        default: CU_FAIL("unknown opcode"); break;
        }
        v[s->dst] = r;
    }
}

static const float edge[] = {0.0f, -0.0f, 0.05f, 0.075f, -0.075f, 0.125f, 1.0f, -1.0f, 6.35f, -6.45f, 12.7f, -12.8f,
                             1e-40f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN, 0.0249999f, 0.025f, 0.0250001f, -0.025f,
                             /* x / 0.05 beside +-2^31 */
                             107374176.0f, 107374184.0f, -107374176.0f, -107374184.0f,
                             /* x / 0.05 beside +-2^22, -1.5 * 2^23 and 2^23 (the magic add's edges) */
                             209715.17f, 209715.2f, 209715.23f, -209715.17f, -209715.2f, -209715.23f, -629145.5f,
                             -629145.6f, -629145.7f, 419430.4f, -419430.4f};

/* Every element of fake_quant, quantize, dequantize and backward through
 * the plan equals the reference, for one spec. */
/* A main loop that tests for NaN once (qg_plan.out_ordered) stores the
 * ordered result where the tested value is not NaN: it must be the
 * result's bits. */
static bool ordered_result_holds(const qg_plan *p, const val *v) {
    if (p->out_ordered < 0 || v[p->nan_value].f != v[p->nan_value].f)
        return true;
    const int result = p->out_q_grouped >= 0 ? p->out_q_grouped : p->out_y;
    return memcmp(&v[p->out_ordered], &v[result], sizeof v[0]) == 0;
}

/* `nan: unchecked` where the clamp sends NaN to a bound: no NaN mask or
 * select in fake_quant's and quantize's plans. */
static bool has_nan_masks(const qg_plan *p) {
    for (int k = 0; k < p->nsteps; k++)
        if (p->steps[k].op == QG_OP_MASKZ_MUL_F || p->steps[k].op == QG_OP_MASKZ_I || p->steps[k].op == QG_OP_SELECT_F)
            return true;
    return p->out_ordered >= 0;
}

/* ... and a NaN still gives a code in [qmin, qmax] (grouped store too)
 * and a fake_quant value (q - z) * s for such a code (docs/semantics.md,
 * "NaN inputs"). */
static size_t unchecked_nan_bad(const qg_spec *sp, const qg_plan *plan, val *v, int32_t z, float s) {
    size_t bad = 0;
    run_plan(&plan[QG_K_FAKE_QUANT], v);
    const float y = v[plan[QG_K_FAKE_QUANT].out_y].f, k = nearbyintf(y / s);
    bad += !(k >= (float)(sp->quant_min - z) && k <= (float)(sp->quant_max - z) && k * s == y);
    run_plan(&plan[QG_K_QUANTIZE], v);
    const int32_t q = v[plan[QG_K_QUANTIZE].out_q].i;
    bad += q < sp->quant_min || q > sp->quant_max;
    if (plan[QG_K_QUANTIZE].out_q_grouped >= 0) {
        const int32_t g = grouped_store(sp, v[plan[QG_K_QUANTIZE].out_q_grouped].i, z);
        bad += g < sp->quant_min || g > sp->quant_max;
    }
    return bad;
}

static size_t check_spec_at(const qg_spec *sp, const qg_plan_io *io, int32_t z) {
    const float s = 0.05f;
    const qg_qparams qp = {&s, &z, NULL, 1, 1};
    size_t bad = 0;
    qg_plan plan[4];
    qg_error err;
    for (int op = 0; op < 4; op++)
        CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(sp, (qg_kernel_op)op, io, &plan[op], &err), QG_OK);
    CU_ASSERT_TRUE(plan[QG_K_FAKE_QUANT].out_mask >= 0 && plan[QG_K_QUANTIZE].out_mask < 0);
    const bool unchecked = sp->nan_policy == QG_NAN_UNCHECKED && io->clamp_sends_nan_to_bound;
    if (unchecked)
        CU_ASSERT_FALSE(has_nan_masks(&plan[QG_K_FAKE_QUANT]) || has_nan_masks(&plan[QG_K_QUANTIZE]));
    /* the NaN test once per main loop: fake_quant always, quantize where it stores grouped and masks NaN */
    CU_ASSERT_EQUAL(plan[QG_K_FAKE_QUANT].out_ordered >= 0, io->nan_check_per_iteration && !unchecked);
    CU_ASSERT_EQUAL(plan[QG_K_QUANTIZE].out_ordered >= 0, io->nan_check_per_iteration &&
                                                              plan[QG_K_QUANTIZE].out_q_grouped >= 0 &&
                                                              !io->round_cvt_nan_zero && !unchecked);
    cvt_mode = io->round_cvt_nan_zero                 ? CVT_NAN_ZERO
               : io->grouped_store_adds_z             ? CVT_INDEFINITE
               : io->round_even == QG_RNE_CONVERSIONS ? CVT_SATURATING
                                                      : CVT_IN_RANGE;
    if (io->round_even != QG_RNE_INSTRUCTION && sp->rounding == QG_ROUND_HALF_EVEN) /* rounds by converting or adding */
        for (int k = 0; k < plan[QG_K_FAKE_QUANT].nsteps; k++)
            CU_ASSERT_NOT_EQUAL(plan[QG_K_FAKE_QUANT].steps[k].op, QG_OP_ROUND_EVEN);
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        val v[QG_PLAN_MAX_VALUES] = {{0}};
        v[QG_IN_X].f = edge[i];
        v[QG_IN_S].f = s;
        v[QG_IN_INV].f = 1.0f / s;
        v[QG_IN_LO].f = (float)(sp->quant_min - z);
        v[QG_IN_HI].f = (float)(sp->quant_max - z);
        v[QG_IN_Z].i = z;
        if (unchecked && edge[i] != edge[i]) {
            bad += unchecked_nan_bad(sp, plan, v, z, s);
            continue;
        }
        /* fake_quant: value and mask */
        float y;
        uint8_t m = 0;
        qg_spec byte_mask = *sp;
        byte_mask.compat_mask = false;
        qg_ref_fake_quant(&byte_mask, &edge[i], &y, &m, 1, &qp);
        run_plan(&plan[QG_K_FAKE_QUANT], v);
        bad += memcmp(&v[plan[QG_K_FAKE_QUANT].out_y].f, &y, 4) != 0;
        bad += v[plan[QG_K_FAKE_QUANT].out_mask].m != (m != 0);
        bad += !ordered_result_holds(&plan[QG_K_FAKE_QUANT], v);
        /* quantize */
        int32_t q32 = 0;
        union {
            int8_t i8;
            uint8_t u8;
            int16_t i16;
        } q;
        qg_ref_quantize(sp, &edge[i], &q, 1, &qp);
        q32 = sp->dtype == QG_QINT8 ? q.i8 : sp->dtype == QG_QUINT8 ? q.u8 : q.i16;
        run_plan(&plan[QG_K_QUANTIZE], v);
        bad += v[plan[QG_K_QUANTIZE].out_q].i != q32;
        if (plan[QG_K_QUANTIZE].out_q_grouped >= 0)
            bad += grouped_store(sp, v[plan[QG_K_QUANTIZE].out_q_grouped].i, z) != q32;
        bad += !ordered_result_holds(&plan[QG_K_QUANTIZE], v);
        /* dequantize of that q, and backward of dy = x with the mask */
        v[QG_IN_Q].i = q32;
        float d;
        qg_ref_dequantize(sp, &q, &d, 1, &qp);
        run_plan(&plan[QG_K_DEQUANTIZE], v);
        bad += memcmp(&v[plan[QG_K_DEQUANTIZE].out_y].f, &d, 4) != 0;
        v[QG_IN_DY].f = edge[i];
        v[QG_IN_MASK].m = m != 0;
        float dx;
        qg_ref_fake_quant_backward(&byte_mask, &edge[i], &m, &dx, 1);
        run_plan(&plan[QG_K_FAKE_QUANT_BACKWARD], v);
        bad += memcmp(&v[plan[QG_K_FAKE_QUANT_BACKWARD].out_y].f, &dx, 4) != 0;
    }
    return bad;
}

/* ... at zero points inside the range and at both of its ends. */
static size_t check_spec(const qg_spec *sp, const qg_plan_io *io) {
    if (sp->qscheme == QG_PER_TENSOR_SYMMETRIC)
        return check_spec_at(sp, io, 0);
    const int32_t zs[] = {(int32_t)(sp->quant_min + 3), (int32_t)sp->quant_min, (int32_t)sp->quant_max};
    size_t bad = 0;
    for (size_t k = 0; k < sizeof zs / sizeof zs[0]; k++)
        bad += check_spec_at(sp, io, zs[k]);
    return bad;
}

static void test_plans_match_reference(void) {
    static const char *const dtypes[] = {"qint8", "quint8", "qint16"};
    static const char *const roundings[] = {"half_even", "half_up", "half_away"};
    static const char *const scale_ops[] = {"mul_inv", "div"};
    size_t specs = 0, bad = 0;
    for (int d = 0; d < 3; d++)
        for (int r = 0; r < 3; r++)
            for (int o = 0; o < 2; o++)
                for (int v = 0; v < 6; v++) {
                    char json[300];
                    snprintf(json, sizeof json,
                             "{\"name\": \"p\", \"dtype\": \"%s\", \"rounding\": \"%s\", \"scale_op\": \"%s\", "
                             "\"nan\": \"%s\", \"saturate\": %s, \"qscheme\": \"%s\"}",
                             dtypes[d], roundings[r], scale_ops[o],
                             v >= 4  ? "unchecked"
                             : v & 1 ? "propagate"
                                     : "zero_point",
                             v & 2 ? "false" : "true", v == 3 || v == 5 ? "per_tensor_symmetric" : "per_tensor_affine");
                    qg_spec sp;
                    qg_error err;
                    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(json, "p", NULL, 0, &sp, &err), QG_OK);
                    /* as generic, with RVV's saturating conversion, with x86's grouped
                     * store, with NEON's conversion (NaN to 0), alone and grouped, and
                     * rounding by the magic add as x86 and NEON do, and as scalar code
                     * does, whose quantize also rounds by it (no rounding conversion) */
                    static const char *const modes[] = {"",
                                                        " (saturating round_cvt)",
                                                        " (grouped store)",
                                                        " (round_cvt NaN to 0)",
                                                        " (NaN to 0, grouped store)",
                                                        " (magic add, x86)",
                                                        " (magic add, NEON)",
                                                        " (magic add, scalar)"};
                    for (int mode = 0; mode < 8; mode++) {
                        const bool grouped = (mode == 2 || (mode >= 4 && mode <= 6)) && sp.dtype != QG_QINT16 &&
                                             sp.rounding == QG_ROUND_HALF_EVEN;
                        if ((mode == 2 || mode == 4) && !grouped)
                            continue;
                        const qg_round_even_way rne = mode == 1   ? QG_RNE_CONVERSIONS
                                                      : mode >= 5 ? QG_RNE_MAGIC_ADD
                                                                  : QG_RNE_INSTRUCTION;
                        const qg_plan_io io = {QG_FLOAT32,
                                               false,
                                               rne,
                                               grouped,
                                               mode == 3 || mode == 4 || mode == 6,
                                               mode == 7,
                                               mode == 5,
                                               mode != 3 && mode != 4 && mode != 6};
                        size_t b = check_spec(&sp, &io);
                        if (mode == 7 && sp.rounding == QG_ROUND_HALF_EVEN) {
                            qg_plan q;
                            CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&sp, QG_K_QUANTIZE, &io, &q, &err), QG_OK);
                            for (int k = 0; k < q.nsteps; k++)
                                CU_ASSERT_NOT_EQUAL(q.steps[k].op, QG_OP_ROUND_CVT);
                        }
                        if (b)
                            fprintf(stderr, "\n  plan%s differs from the reference on %zu values: %s\n", modes[mode], b,
                                    json);
                        bad += b;
                        specs++;
                    }
                }
    cvt_mode = CVT_IN_RANGE;
    CU_ASSERT_EQUAL(specs, 696);
    /* the magic add holds for ranges narrower than 2^22 only: qint32's rounds by the instruction */
    qg_spec wide;
    qg_error err;
    qg_plan plan;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string("{\"name\": \"w\", \"dtype\": \"qint32\"}", "w", NULL, 0, &wide, &err),
                          QG_OK);
    const qg_plan_io magic = {QG_FLOAT32, false, QG_RNE_MAGIC_ADD, false, false, true, false, false};
    CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&wide, QG_K_FAKE_QUANT, &magic, &plan, &err), QG_OK);
    size_t rounds = 0;
    for (int k = 0; k < plan.nsteps; k++)
        rounds += plan.steps[k].op == QG_OP_ROUND_EVEN;
    CU_ASSERT_EQUAL(rounds, 1);
    CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&wide, QG_K_QUANTIZE, &magic, &plan, &err), QG_OK);
    rounds = 0;
    for (int k = 0; k < plan.nsteps; k++)
        rounds += plan.steps[k].op == QG_OP_ROUND_CVT;
    CU_ASSERT_EQUAL(rounds, 1);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The fp8 values worth testing at scale s: every code's value, the
 * midpoints between neighbours (ties) and the floats just beside both,
 * past the largest finite value, and the edge list; returns the count. */
static size_t fp8_probe_values(qg_dtype d, float s, float *out) {
    size_t n = 0;
    for (int c = 0; c < 256; c++) {
        const float v = qg_fp8_decode(d, (uint8_t)c), w = qg_fp8_decode(d, (uint8_t)(c + 1));
        out[n++] = v * s;
        if (isfinite(v) && isfinite(w) && (c & 0x7F) != 0x7F && signbit(v) == signbit(w)) {
            const float mid = (float)(((double)v + (double)w) / 2 * s);
            out[n++] = mid;
            out[n++] = nextafterf(mid, 0.0f);
            out[n++] = nextafterf(mid, INFINITY);
        }
    }
    const float big = d == QG_FP8_E5M2 ? 61440.0f : 464.0f; /* the tie above max finite */
    const float more[] = {big, nextafterf(big, 0.0f), nextafterf(big, INFINITY), 1e30f, INFINITY, NAN};
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
        out[n++] = more[k] * s;
        out[n++] = -more[k] * s;
    }
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++)
        out[n++] = edge[k];
    return n;
}

/* fp8 plans against the reference's search over the codes (runtime/fp8.c):
 * every code decoded, and quantize and fake_quant of the values above. */
static size_t check_fp8_spec(const qg_spec *sp, float s) {
    const int32_t z = 0;
    const qg_qparams qp = {&s, &z, NULL, 1, 1};
    qg_plan plan[3];
    qg_error err;
    for (int op = 0; op < 3; op++)
        CU_ASSERT_EQUAL_FATAL(qg_plan_build(sp, (qg_kernel_op)op, &plan[op], &err), QG_OK);
    size_t bad = 0;
    float xs[256 * 4 + 64];
    const size_t n = fp8_probe_values(sp->dtype, s, xs);
    for (size_t i = 0; i < n; i++) {
        val v[QG_PLAN_MAX_VALUES] = {{0}};
        v[QG_IN_X].f = xs[i];
        v[QG_IN_S].f = s;
        v[QG_IN_INV].f = 1.0f / s;
        uint8_t q, m;
        float y;
        qg_ref_quantize(sp, &xs[i], &q, 1, &qp);
        run_plan(&plan[QG_K_QUANTIZE], v);
        bad += v[plan[QG_K_QUANTIZE].out_q].i != q;
        qg_ref_fake_quant(sp, &xs[i], &y, &m, 1, &qp);
        run_plan(&plan[QG_K_FAKE_QUANT], v);
        bad += memcmp(&v[plan[QG_K_FAKE_QUANT].out_y].f, &y, 4) != 0;
        bad += v[plan[QG_K_FAKE_QUANT].out_mask].m != (m != 0);
        bad += !ordered_result_holds(&plan[QG_K_FAKE_QUANT], v);
        if (i < 256) {
            q = (uint8_t)i;
            v[QG_IN_Q].i = q;
            qg_ref_dequantize(sp, &q, &y, 1, &qp);
            run_plan(&plan[QG_K_DEQUANTIZE], v);
            bad += memcmp(&v[plan[QG_K_DEQUANTIZE].out_y].f, &y, 4) != 0;
        }
    }
    return bad;
}

static void test_fp8_plans_match_reference(void) {
    static const char *const dtypes[] = {"fp8_e4m3fn", "fp8_e5m2"};
    static const float scales[] = {1.0f, 0.25f, 0.05f, 3e-3f};
    size_t bad = 0;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 8; k++) {
            char json[200];
            snprintf(json, sizeof json,
                     "{\"name\": \"p\", \"dtype\": \"%s\", \"qscheme\": \"per_tensor_symmetric\", \"saturate\": %s, "
                     "\"scale_op\": \"%s\"}",
                     dtypes[d], k & 1 ? "false" : "true", k & 2 ? "mul_inv" : "div");
            qg_spec sp;
            qg_error err;
            CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(json, "p", NULL, 0, &sp, &err), QG_OK);
            const size_t b = check_fp8_spec(&sp, scales[k / 2]);
            if (b)
                fprintf(stderr, "\n  fp8 plan differs from the reference on %zu values: %s, s=%g\n", b, json,
                        (double)scales[k / 2]);
            bad += b;
        }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Every step a plan keeps feeds an output: dead steps are dropped. */
static void test_no_dead_steps(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string("{\"name\": \"p\", \"rounding\": \"half_up\"}", "p", NULL, 0, &sp, &err),
                          QG_OK);
    for (int op = 0; op < QG_K_OP_COUNT; op++) {
        qg_plan p;
        CU_ASSERT_EQUAL_FATAL(qg_plan_build(&sp, (qg_kernel_op)op, &p, &err), QG_OK);
        bool used[QG_PLAN_MAX_VALUES] = {false};
        for (int k = 0; k < p.nsteps; k++) {
            int operands = 0;
            for (const int *a = &p.steps[k].a; a <= &p.steps[k].c; a++) {
                if (*a < 0)
                    continue;
                /* of the kinds the operation takes */
                CU_ASSERT_EQUAL((int)p.kind[*a], qg_opcode_operand_kind(p.steps[k].op, operands));
                used[*a] = true, operands++;
            }
            /* each step has the operands its operation is spelled with (a
             * splat's one is its immediate) */
            CU_ASSERT_EQUAL(operands + qg_opcode_takes_imm(p.steps[k].op), qg_opcode_arity(p.steps[k].op));
        }
        for (int k = 0; k < p.nsteps; k++) {
            const int dst = p.steps[k].dst;
            CU_ASSERT_TRUE(used[dst] || dst == p.out_y || dst == p.out_q || dst == p.out_mask);
        }
    }
}

static qg_kernel_loops loops(const char *json, qg_isa isa, qg_kernel_op op) {
    qg_spec sp;
    qg_error err;
    qg_kernel_loops lp;
    memset(&lp, 0xA5, sizeof lp);
    if (qg_spec_load_string(json, "p", NULL, 0, &sp, &err) != QG_OK) {
        CU_FAIL(err.message);
        return lp;
    }
    qg_kernel_loops_of(&sp, isa, op, &lp);
    return lp;
}

/* The loops around the plans, spec class by spec class: the walk, where the
 * parameters come from, the span's shape per ISA, the masks. */
static void test_loops(void) {
    const char *act = "{\"name\": \"a\", \"base\": \"torch.fbgemm.activation\"}";
    qg_kernel_loops lp = loops(act, QG_ISA_AVX2, QG_K_FAKE_QUANT);
    CU_ASSERT_TRUE(lp.walk == QG_WALK_WHOLE && lp.params == QG_PARAMS_QPARAMS && !lp.channels_last_table);
    CU_ASSERT_TRUE(lp.mask_out == QG_MASK_BYTES && lp.mask_in == QG_MASK_NONE && !lp.clear_mask_first);
    CU_ASSERT_TRUE(lp.lanes == 8 && lp.unroll == 4 && lp.tail && !lp.group_store);
    CU_ASSERT_TRUE(lp.qmin == 0 && lp.qmax == 127);
    /* narrow outputs of four vectors go out together where the ISA spells it */
    CU_ASSERT_TRUE(loops(act, QG_ISA_AVX2, QG_K_QUANTIZE).group_store);
    CU_ASSERT_TRUE(loops(act, QG_ISA_AVX512, QG_K_REQUANTIZE).group_store);
    CU_ASSERT_TRUE(loops(act, QG_ISA_NEON, QG_K_QUANTIZE).group_store);
    /* ... quantize's with the zero point added there, at half_even */
    CU_ASSERT_TRUE(loops(act, QG_ISA_NEON, QG_K_QUANTIZE).group_store_adds_z);
    CU_ASSERT_FALSE(loops(act, QG_ISA_AVX512, QG_K_REQUANTIZE).group_store_adds_z);
    CU_ASSERT_FALSE(
        loops("{\"name\": \"a\", \"rounding\": \"half_up\"}", QG_ISA_AVX2, QG_K_QUANTIZE).group_store_adds_z);
    CU_ASSERT_FALSE(loops(act, QG_ISA_AVX2, QG_K_DEQUANTIZE).group_store);
    /* scalable ISAs: strips; scalar: one lane, no partial vector */
    lp = loops(act, QG_ISA_RVV, QG_K_QUANTIZE);
    CU_ASSERT_TRUE(lp.lanes == 0 && lp.unroll == 1 && lp.tail && !lp.group_store);
    CU_ASSERT_TRUE(loops(act, QG_ISA_SVE, QG_K_FAKE_QUANT).lanes == 0);
    lp = loops(act, QG_ISA_SCALAR, QG_K_FAKE_QUANT);
    CU_ASSERT_TRUE(lp.lanes == 1 && !lp.tail);
    /* backward: no parameters, one span; packed masks are read, not cleared */
    lp = loops("{\"name\": \"a\", \"compat_mask\": true}", QG_ISA_AVX512, QG_K_FAKE_QUANT_BACKWARD);
    CU_ASSERT_TRUE(lp.walk == QG_WALK_WHOLE && lp.params == QG_PARAMS_NONE);
    CU_ASSERT_TRUE(lp.mask_in == QG_MASK_BITS && lp.mask_out == QG_MASK_NONE && !lp.clear_mask_first);
    lp = loops("{\"name\": \"a\", \"compat_mask\": true}", QG_ISA_AVX512, QG_K_FAKE_QUANT);
    CU_ASSERT_TRUE(lp.mask_out == QG_MASK_BITS && lp.clear_mask_first);
    /* packed bits of vectors narrower than a byte (NEON) go out and come in four vectors at a time */
    const char *packed = "{\"name\": \"a\", \"compat_mask\": true}";
    CU_ASSERT_FALSE(lp.group_mask);
    CU_ASSERT_TRUE(loops(packed, QG_ISA_NEON, QG_K_FAKE_QUANT).group_mask);
    CU_ASSERT_TRUE(loops(packed, QG_ISA_NEON, QG_K_FAKE_QUANT_BACKWARD).group_mask); /* read four at a time */
    CU_ASSERT_FALSE(loops(packed, QG_ISA_NEON, QG_K_QUANTIZE).group_mask);           /* no mask */
    CU_ASSERT_TRUE(loops(act, QG_ISA_NEON, QG_K_FAKE_QUANT).group_mask);             /* 16 bytes stored at once */
    CU_ASSERT_FALSE(loops(act, QG_ISA_NEON, QG_K_FAKE_QUANT_BACKWARD).group_mask);   /* byte masks read per vector */
    CU_ASSERT_FALSE(loops(packed, QG_ISA_AVX2, QG_K_FAKE_QUANT).group_mask);
    /* per-channel: runs of `inner`, channels-last through the table when C > 1 */
    const char *w = "{\"name\": \"w\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 64}";
    lp = loops(w, QG_ISA_NEON, QG_K_QUANTIZE);
    CU_ASSERT_TRUE(lp.walk == QG_WALK_CHANNEL_RUNS && lp.channels == 64 && lp.channels_last_table);
    lp = loops("{\"name\": \"w\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 1}", QG_ISA_NEON, QG_K_QUANTIZE);
    CU_ASSERT_TRUE(lp.walk == QG_WALK_CHANNEL_RUNS && lp.channels == 1 && !lp.channels_last_table);
    /* fixed qparams come from the spec; requantize from its own parameters */
    lp = loops("{\"name\": \"f\", \"observer\": {\"type\": \"fixed_qparams\", \"scale\": 0.0078125, "
               "\"zero_point\": 128}}",
               QG_ISA_AVX2, QG_K_DEQUANTIZE);
    CU_ASSERT_TRUE(lp.params == QG_PARAMS_FIXED && lp.fixed_scale == 0.0078125f && lp.fixed_zero_point == 128);
    lp = loops(act, QG_ISA_AVX2, QG_K_REQUANTIZE);
    CU_ASSERT_TRUE(lp.walk == QG_WALK_REQUANT_RUNS && lp.params == QG_PARAMS_REQUANT);
    /* 16-bit float tensors convert inside the kernels (observe's min/max
     * span widens the codes), also those the per-group and 4-bit drivers
     * call; requantize has no float tensor */
    const char *bf = "{\"name\": \"h\", \"float_type\": \"bfloat16\"}";
    CU_ASSERT_TRUE(loops(bf, QG_ISA_NEON, QG_K_FAKE_QUANT).float_io == QG_BFLOAT16);
    CU_ASSERT_TRUE(loops(bf, QG_ISA_NEON, QG_K_OBSERVE).float_io == QG_BFLOAT16);
    CU_ASSERT_TRUE(loops(bf, QG_ISA_NEON, QG_K_REQUANTIZE).float_io == QG_FLOAT32);
    qg_plan widening;
    qg_spec bf_spec;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(bf, "h", NULL, 0, &bf_spec, &err), QG_OK);
    CU_ASSERT_TRUE(qg_plan_observe_widening(&bf_spec, QG_ISA_SVE, &widening) && widening.out_y >= 0 &&
                   widening.kind[widening.out_y] == QG_VF && widening.uses[QG_IN_X]);
    qg_spec f32_spec;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(act, "a", NULL, 0, &f32_spec, &err), QG_OK);
    CU_ASSERT_FALSE(qg_plan_observe_widening(&f32_spec, QG_ISA_SVE, &widening));
    const char *h4 = "{\"name\": \"h\", \"float_type\": \"float16\", \"dtype\": \"qint4\", "
                     "\"qscheme\": \"per_group_symmetric\", \"group_size\": 32}";
    lp = loops(h4, QG_ISA_AVX2, QG_K_QUANTIZE);
    CU_ASSERT_TRUE(lp.float_io == QG_FLOAT16 && lp.pack4 && lp.group_driver);
    qg_entry_chain ch;
    qg_entry_chain_of(&lp, &ch); /* blocks <- qg_group_quantize <- bytes <- qg_pack4_quantize <- entry */
    CU_ASSERT_TRUE(ch.forwarders == 2 && !strcmp(ch.walk, "_blocks") && !strcmp(ch.driver[0], "group") &&
                   !strcmp(ch.name[0], "_bytes") && !strcmp(ch.driver[1], "pack4") && !strcmp(ch.name[1], "") &&
                   !strcmp(ch.inner[1], "_bytes"));
    lp = loops(h4, QG_ISA_AVX2, QG_K_FAKE_QUANT);
    CU_ASSERT_TRUE(lp.float_io == QG_FLOAT16 && !lp.pack4 && lp.group_driver);
    /* spans reach their float tensor's vector boundary first where vectors
     * pass 16 bytes: the output's, quantize's input's; not with packed masks */
    lp = loops(act, QG_ISA_AVX512, QG_K_FAKE_QUANT);
    CU_ASSERT_TRUE(lp.align_head && lp.align_out && lp.align_bytes == 64 && lp.align_min == 128);
    lp = loops(act, QG_ISA_AVX2, QG_K_QUANTIZE);
    CU_ASSERT_TRUE(lp.align_head && !lp.align_out && lp.align_bytes == 32);
    CU_ASSERT_TRUE(loops(act, QG_ISA_AVX512, QG_K_DEQUANTIZE).align_out);
    CU_ASSERT_EQUAL(loops(h4, QG_ISA_AVX512, QG_K_FAKE_QUANT).align_bytes, 32); /* 16-bit codes */
    CU_ASSERT_FALSE(loops(packed, QG_ISA_AVX512, QG_K_FAKE_QUANT).align_head);
    CU_ASSERT_FALSE(loops(act, QG_ISA_NEON, QG_K_FAKE_QUANT).align_head);
    CU_ASSERT_FALSE(loops(act, QG_ISA_SVE, QG_K_FAKE_QUANT).align_head);
    CU_ASSERT_FALSE(loops(act, QG_ISA_AVX512, QG_K_OBSERVE).align_head);
    CU_ASSERT_TRUE(loops(act, QG_ISA_AVX2, QG_K_FAKE_QUANT).float_io == QG_FLOAT32);
}

/* The plans' 16-bit float conversions (bfloat16; float16 by integers and
 * by the instructions) against the runtime's: every code widened, and
 * narrowed back; fp32 values at each pair of neighbouring codes' midpoint
 * (a tie), one fp32 ulp either side, a stride over all fp32 bit patterns. */
static bool narrows_wrong(const qg_plan *narrow, qg_float_type type, float f) {
    uint16_t want;
    qg_float_type_narrow(type, &f, &want, 1);
    val v[QG_PLAN_MAX_VALUES] = {{0}};
    v[QG_IN_X].f = f;
    run_plan(narrow, v);
    return v[narrow->out_q].i != (int32_t)want;
}

static size_t check_conversions(const qg_plan_io *io) {
    qg_plan widen, narrow;
    qg_plan_build_conversion(io, false, &widen);
    qg_plan_build_conversion(io, true, &narrow);
    CU_ASSERT_TRUE(widen.kind[QG_IN_X] == QG_VI && narrow.kind[QG_IN_X] == QG_VF);
    CU_ASSERT_TRUE(widen.out_y >= 0 && narrow.out_q >= 0);
    size_t bad = 0;
    val v[QG_PLAN_MAX_VALUES];
    for (uint32_t code = 0; code <= 0xFFFF; code++) {
        const uint16_t c16 = (uint16_t)code, next = (uint16_t)(code + 1);
        float want, up;
        qg_float_type_widen(io->float_type, &c16, &want, 1);
        qg_float_type_widen(io->float_type, &next, &up, 1);
        v[QG_IN_X].i = (int32_t)code;
        run_plan(&widen, v);
        /* a signalling NaN code may come out quiet (the instructions); any NaN narrows to torch's */
        bad += want == want ? qg_ks_bits_f2i(v[widen.out_y].f) != qg_ks_bits_f2i(want)
                            : v[widen.out_y].f == v[widen.out_y].f;
        bad += narrows_wrong(&narrow, io->float_type, want);
        if (want == want && up == up && (code & 0x7FFF) < 0x7F00 && code != 0x7FFF) {
            const float mid = want + (up - want) / 2; /* exact: two codes' midpoint needs one more bit */
            bad += narrows_wrong(&narrow, io->float_type, mid);
            bad += narrows_wrong(&narrow, io->float_type, nextafterf(mid, INFINITY));
            bad += narrows_wrong(&narrow, io->float_type, nextafterf(mid, -INFINITY));
        }
    }
    for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099)
        bad += narrows_wrong(&narrow, io->float_type, qg_ks_bits_i2f((int32_t)(uint32_t)bits));
    bad += narrows_wrong(&narrow, io->float_type, 65520.0f);
    bad += narrows_wrong(&narrow, io->float_type, nextafterf(65520.0f, 0.0f));
    bad += narrows_wrong(&narrow, io->float_type, 0x1p-25f);
    bad += narrows_wrong(&narrow, io->float_type, nextafterf(0x1p-25f, 1.0f));
    bad += narrows_wrong(&narrow, io->float_type, -0.0f);
    bad +=
        narrows_wrong(&narrow, io->float_type, qg_ks_bits_i2f((int32_t)0xFFFFFFFFu)); /* a NaN with every payload bit */
    return bad;
}

static void test_float_conversions(void) {
    const qg_plan_io ios[] = {{QG_BFLOAT16, false, false, false, false, false, false, false},
                              {QG_FLOAT16, false, false, false, false, false, false, false},
                              {QG_FLOAT16, true, false, false, false, false, false, false}};
    for (size_t k = 0; k < sizeof ios / sizeof ios[0]; k++) {
        const size_t bad = check_conversions(&ios[k]);
        if (bad)
            fprintf(stderr, "\n  %s (%s): %zu values differ", qg_float_type_name(ios[k].float_type),
                    ios[k].float16_instructions ? "instructions" : "integers", bad);
        CU_ASSERT_EQUAL(bad, 0);
    }
    /* the instructions' plan uses them, the integers' plan does not */
    qg_plan p;
    qg_plan_build_conversion(&ios[1], true, &p);
    for (int k = 0; k < p.nsteps; k++)
        CU_ASSERT_TRUE(p.steps[k].op != QG_OP_CVT_F2H && p.steps[k].op != QG_OP_CVT_H2F);
    qg_plan_build_conversion(&ios[2], true, &p);
    CU_ASSERT_EQUAL(p.steps[p.nsteps - 1].op, QG_OP_CVT_F2H);
}

/* Plans of a 16-bit spec: x, dy and y are codes, and every op equals the
 * reference on the widened input with its float output narrowed. */
static void test_sixteen_bit_plans(void) {
    static const char *const specs[] = {
        "{\"name\": \"h\", \"float_type\": \"bfloat16\"}",
        "{\"name\": \"h\", \"float_type\": \"float16\", \"dtype\": \"qint8\", \"qscheme\": "
        "\"per_tensor_symmetric\", \"nan\": \"propagate\"}",
        "{\"name\": \"h\", \"float_type\": \"float16\", \"dtype\": \"fp8_e4m3fn\", \"qscheme\": "
        "\"per_tensor_symmetric\"}",
    };
    size_t bad = 0, checked = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        qg_spec sp;
        qg_error err;
        CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(specs[k], "h", NULL, 0, &sp, &err), QG_OK);
        for (int hw = 0; hw < 2; hw++) {
            const qg_plan_io io = {sp.float_type, hw == 1, QG_RNE_INSTRUCTION, false, false, false, false, false};
            qg_plan fq, bw, dq;
            CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&sp, QG_K_FAKE_QUANT, &io, &fq, &err), QG_OK);
            CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&sp, QG_K_FAKE_QUANT_BACKWARD, &io, &bw, &err), QG_OK);
            CU_ASSERT_EQUAL_FATAL(qg_plan_build_io(&sp, QG_K_DEQUANTIZE, &io, &dq, &err), QG_OK);
            CU_ASSERT_TRUE(fq.kind[QG_IN_X] == QG_VI && fq.kind[fq.out_y] == QG_VI && dq.kind[dq.out_y] == QG_VI);
            const float s = 0.37f;
            const int32_t z = 0;
            const qg_qparams qp = {&s, &z, NULL, 1, 1};
            for (uint32_t code = 0; code <= 0xFFFF; code += 7) {
                const uint16_t c16 = (uint16_t)code;
                uint16_t want_y, want_dx;
                uint8_t m = 0;
                qg_spec bytes = sp;
                bytes.compat_mask = false;
                val v[QG_PLAN_MAX_VALUES] = {{0}};
                v[QG_IN_X].i = v[QG_IN_DY].i = (int32_t)code;
                v[QG_IN_S].f = s;
                v[QG_IN_INV].f = 1.0f / s;
                v[QG_IN_LO].f = (float)(sp.quant_min - z);
                v[QG_IN_HI].f = (float)(sp.quant_max - z);
                v[QG_IN_Z].i = z;
                float x, y, dx;
                qg_float_type_widen(sp.float_type, &c16, &x, 1);
                qg_ref_fake_quant(&bytes, &x, &y, &m, 1, &qp);
                qg_float_type_narrow(sp.float_type, &y, &want_y, 1);
                run_plan(&fq, v);
                bad += v[fq.out_y].i != want_y || v[fq.out_mask].m != (m != 0);
                v[QG_IN_MASK].m = m != 0;
                qg_ref_fake_quant_backward(&bytes, &x, &m, &dx, 1);
                qg_float_type_narrow(sp.float_type, &dx, &want_dx, 1);
                run_plan(&bw, v);
                bad += v[bw.out_y].i != want_dx;
                checked += 2;
            }
        }
    }
    CU_ASSERT_TRUE(checked > 50000);
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void) {
    static const qg_test tests[] = {
        {"every plan equals the reference, element by element", test_plans_match_reference},
        {"fp8 plans equal the reference on every code, tie and overflow", test_fp8_plans_match_reference},
        {"no dead steps; operands as each operation takes", test_no_dead_steps},
        {"the loops around the plans", test_loops},
        {"16-bit float conversions equal the runtime's on every code and tie", test_float_conversions},
        {"plans of 16-bit specs convert x, dy and y inside", test_sixteen_bit_plans},
    };
    return QG_RUN("plan", tests);
}
