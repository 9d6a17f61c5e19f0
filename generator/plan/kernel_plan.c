/* The plans of quantize, dequantize, fake_quant and its backward.
 *
 * Every plan works in the fp32 domain of r = round(x / s) and clamps r to
 * [qmin - z, qmax - z]: for 8- and 16-bit dtypes those bounds and q - z are
 * exact in fp32, so fl((q - z) * s) needs no integer round trip. Adding
 * +0.0 after rounding turns -0.0 into +0.0, as torch's integer q - z does. */
#include "kernel_plan.h"
#include "plan_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[] = {
#define QG_OPCODE_NAME(name, kind, arity, operands) #name,
    QG_PLAN_OPS(QG_OPCODE_NAME)
#undef QG_OPCODE_NAME
};
static const qg_vkind op_kinds[] = {
#define QG_OPCODE_KIND(name, kind, arity, operands) kind,
    QG_PLAN_OPS(QG_OPCODE_KIND)
#undef QG_OPCODE_KIND
};
static const int op_arities[] = {
#define QG_OPCODE_ARITY(name, kind, arity, operands) arity,
    QG_PLAN_OPS(QG_OPCODE_ARITY)
#undef QG_OPCODE_ARITY
};

static const char *const op_operands[] = {
#define QG_OPCODE_OPERANDS(name, kind, arity, operands) operands,
    QG_PLAN_OPS(QG_OPCODE_OPERANDS)
#undef QG_OPCODE_OPERANDS
};

int qg_opcode_arity(qg_opcode op) { return op < QG_OP_COUNT ? op_arities[op] : 0; }

bool qg_opcode_takes_imm(qg_opcode op) {
    return op == QG_OP_SPLAT_F || op == QG_OP_SPLAT_I || op == QG_OP_SHL_I || op == QG_OP_SHR_I;
}

qg_vkind qg_opcode_result_kind(qg_opcode op) { return op < QG_OP_COUNT ? op_kinds[op] : QG_VF; }

int qg_opcode_operand_kind(qg_opcode op, int k) {
    if (op >= QG_OP_COUNT || k < 0 || k >= (int)strlen(op_operands[op]))
        return -1;
    const char c = op_operands[op][k];
    return c == 'f' ? QG_VF : c == 'i' ? QG_VI : QG_VM;
}

const char *qg_opcode_name(qg_opcode op) { return op < QG_OP_COUNT ? op_names[op] : "?"; }

int qg_plan_emit(qg_plan *p, qg_opcode op, int a, int b, int c, float imm) {
    if (p->nsteps == QG_PLAN_MAX_STEPS) { /* reported by qg_plan_build_io; the last step is overwritten */
        p->overflowed = true;
        p->nsteps--;
        p->nvalues--;
    }
    qg_step *s = &p->steps[p->nsteps++];
    s->op = op;
    s->dst = p->nvalues;
    s->a = a;
    s->b = b;
    s->c = c;
    s->imm = imm;
    p->kind[p->nvalues] = op_kinds[op];
    for (int *v = &s->a; v <= &s->c; v++)
        if (*v >= 0 && *v < QG_IN_COUNT)
            p->uses[*v] = true;
    return p->nvalues++;
}

int qg_plan_scaled(const qg_spec *sp, qg_plan *p) {
    return N(sp->scale_op == QG_SCALE_DIV ? E2(DIV_F, p->x, QG_IN_S) : E2(MUL_F, p->x, QG_IN_INV), "scaled");
}

/* trunc(t + copysign(pred(0.5), t)) equals roundf(t) for every non-NaN
 * fp32 t (checked exhaustively): the value truncated. */
static int half_away_biased(qg_plan *p, int t) {
    int nudge = N(qg_plan_emit(p, QG_OP_COPYSIGN, N(K(0x1.fffffep-2f), "below_half"), t, -1, 0.0f), "nudge");
    return N(E2(ADD_F, t, nudge), "biased");
}

int qg_plan_round(qg_rounding mode, qg_plan *p, int t) {
    switch (mode) {
    case QG_ROUND_HALF_UP: return E1(FLOOR, N(E2(ADD_F, t, N(K(0.5f), "half")), "biased"));
    case QG_ROUND_HALF_AWAY: return E1(TRUNC, half_away_biased(p, t));
    case QG_ROUND_HALF_EVEN:
    default: return E1(ROUND_EVEN, t);
    }
}

int qg_plan_round_to_int(qg_rounding mode, qg_plan *p, int t) {
    if (mode == QG_ROUND_HALF_AWAY) /* truncated by the conversion itself */
        return E1(TRUNC_CVT, half_away_biased(p, t));
    return mode == QG_ROUND_HALF_EVEN ? E1(ROUND_CVT, t) : E1(CVT_F2I, N(qg_plan_round(mode, p, t), "rounded"));
}

int qg_plan_unsigned_zero(qg_plan *p, int r) { return N(E2(ADD_F, r, N(K(0.0f), "zero")), "rounded"); }

/* r = round(x / s) in the spec's mode, with -0.0 made +0.0. */
static int rounded(const qg_spec *sp, qg_plan *p) {
    return qg_plan_unsigned_zero(p, N(qg_plan_round(sp->rounding, p, qg_plan_scaled(sp, p)), "rounded_signed_zero"));
}

/* clamp(v, lo, hi), the bounds relative to z. */
static int clamp_to_range(qg_plan *p, int v) {
    return N(E2(MIN_F, N(E2(MAX_F, v, QG_IN_LO), "above_lo"), QG_IN_HI), "clamped");
}

/* The masks of r clamped to c: r is in range exactly when clamping left it
 * unchanged (a NaN compares unequal whatever min/max made of it); `t` is
 * the value whose NaN-ness counts. */
static void range_masks(qg_plan *p, int c, int r, int t, int *in_range, int *ordered) {
    *in_range = N(E2(CMP_EQ, c, r), "in_range");
    *ordered = N(E1(ORDERED, t), "not_nan");
}

/* c = clamp(r, lo, hi), and 0 (q = z) for NaN, with r's masks. */
static int clamped(qg_plan *p, int r, int *in_range, int *ordered) {
    int c = clamp_to_range(p, r);
    range_masks(p, c, r, r, in_range, ordered);
    return N(SEL(*ordered, c, N(K(0.0f), "zero")), "clamped_or_zero");
}

/* Removes steps whose values no output needs (the in-range mask of
 * quantize, say), and recomputes which inputs are read. */
static void drop_dead_steps(qg_plan *p) {
    bool live[QG_PLAN_MAX_VALUES] = {false};
    if (p->out_y >= 0)
        live[p->out_y] = true;
    if (p->out_q >= 0)
        live[p->out_q] = true;
    if (p->out_mask >= 0)
        live[p->out_mask] = true;
    if (p->out_q_grouped >= 0)
        live[p->out_q_grouped] = true;
    if (p->out_ordered >= 0)
        live[p->out_ordered] = live[p->nan_value] = true;
    for (int k = p->nsteps - 1; k >= 0; k--) {
        const qg_step *s = &p->steps[k];
        if (!live[s->dst])
            continue;
        for (const int *v = &s->a; v <= &s->c; v++)
            if (*v >= 0)
                live[*v] = true;
    }
    int kept = 0;
    for (int k = 0; k < p->nsteps; k++)
        if (live[p->steps[k].dst])
            p->steps[kept++] = p->steps[k];
    p->nsteps = kept;
    for (int in = 0; in < QG_IN_COUNT; in++)
        p->uses[in] = live[in];
}

static bool needs_more_than_fp32(const qg_spec *sp) {
    return sp->dtype == QG_QINT32 || sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
}

bool qg_plan_block_generated(const qg_spec *sp, qg_kernel_op op) {
    const qg_block_format f = sp->block;
    const bool format = f == QG_BLOCK_Q8_0 || f == QG_BLOCK_Q8_1 || f == QG_BLOCK_Q4_0 || f == QG_BLOCK_Q4_1 ||
                        f == QG_BLOCK_Q5_0 || f == QG_BLOCK_Q5_1;
    const bool k_quant = f == QG_BLOCK_Q4_K || f == QG_BLOCK_Q6_K; /* quantize's search is the runtime's */
    return ((format && (op == QG_K_QUANTIZE || op == QG_K_DEQUANTIZE || op == QG_K_FAKE_QUANT)) ||
            ((k_quant || f == QG_BLOCK_MXFP4) && op == QG_K_DEQUANTIZE) ||
            (k_quant && (op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT)) ||
            (f == QG_BLOCK_MXFP4 && (op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT)));
}

void qg_plan_block_elements(const qg_spec *sp, qg_spec *out) {
    *out = *sp;
    /* mxfp4's codes decode to int8 values before the span */
    const bool q8 = sp->block == QG_BLOCK_Q8_0 || sp->block == QG_BLOCK_Q8_1 || sp->block == QG_BLOCK_MXFP4;
    out->dtype = q8 ? QG_QINT8 : QG_QUINT8; /* the other formats' codes: 0..31, a byte each before packing */
    out->quant_min = q8 ? -128 : 0;
    out->quant_max = q8 ? 127 : 255;
    out->qscheme = q8 ? QG_PER_TENSOR_SYMMETRIC : QG_PER_TENSOR_AFFINE;
    out->channel_len = 1;
    out->group_size = 0;
    out->rounding = QG_ROUND_HALF_AWAY;
    out->scale_op = QG_SCALE_MUL_INV;
    out->nan_policy = QG_NAN_UNCHECKED; /* a block holding a NaN goes to the reference, whole */
    out->float_type = QG_FLOAT32;       /* 16-bit rows are widened around the walk (qg_ftype_*) */
    out->compat_mask = sp->compat_mask; /* fake_quant's mask, packed or bytes */
    out->observer.type = QG_OBS_MINMAX; /* the blocks' extremes are its reduction */
}

bool qg_plan_by_reference(const qg_spec *sp, qg_kernel_op op) {
    if (op == QG_K_OBSERVE)
        return false;
    if (sp->block != QG_BLOCK_NONE)
        return !qg_plan_block_generated(sp, op);
    /* requantize to 4 bits packs in the reference */
    return needs_more_than_fp32(sp) ||
           (op == QG_K_REQUANTIZE &&
            (sp->requant == QG_REQUANT_FIXED_POINT || qg_dtype_is_packed(sp->dtype) || qg_dtype_is_float8(sp->dtype)));
}

bool qg_plan_observer_reduces(const qg_spec *sp) {
    const qg_observer_type t = sp->observer.type;
    /* per-group: the reduction serves dynamic quantization's groups */
    return qg_qscheme_is_per_group(sp->qscheme) || t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX ||
           t == QG_OBS_PER_CHANNEL_MINMAX || t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
}

qg_status qg_plan_check_isa(const qg_spec *sp, qg_isa isa, qg_error *err) {
    if (isa == QG_ISA_SCALAR)
        return QG_OK;
    if (sp->dtype == QG_QINT32)
        return qg_error_set(err, QG_ERR_INVALID,
                            "targets: %s cannot serve dtype qint32 (q - z is not exact in fp32 lanes); expected "
                            "targets [\"scalar\"] for qint32 specs",
                            qg_isa_name(isa));
    if (sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        return qg_error_set(err, QG_ERR_INVALID,
                            "targets: %s cannot serve qscheme per_channel_affine_float_qparams (its fake-quant "
                            "product is evaluated in double); expected targets [\"scalar\"]",
                            qg_isa_name(isa));
    return QG_OK;
}

/* `nan: unchecked` where clamping sends a NaN to a bound: the plans keep
 * no NaN mask, and a NaN lane gives the code or value of that bound
 * (docs/semantics.md, "NaN inputs"). Elsewhere the masks stay. */
static bool nan_unchecked(const qg_spec *sp, const qg_plan_io *io) {
    return sp->nan_policy == QG_NAN_UNCHECKED && io->clamp_sends_nan_to_bound;
}

/* The op's formula for this spec, in docs/semantics.md's notation. */
static void describe(const qg_spec *sp, const qg_plan_io *io, qg_plan *p) {
    static const char *const round_names[] = {
        [QG_ROUND_HALF_EVEN] = "rne", [QG_ROUND_HALF_UP] = "round_half_up", [QG_ROUND_HALF_AWAY] = "round_half_away"};
    const char *rnd = round_names[sp->rounding];
    const char *t = sp->scale_op == QG_SCALE_DIV ? "fl(x / s)" : "fl(x * fl(1 / s))";
    const size_t cap = sizeof p->formula;
    const bool unchecked = sp->nan_policy == QG_NAN_UNCHECKED;
    if (p->formula[0]) /* the plan's own (a block format's) */
        return;
    if (qg_dtype_is_float8(sp->dtype) && p->op != QG_K_FAKE_QUANT_BACKWARD) {
        const char *dt = qg_dtype_name(sp->dtype), *over = sp->saturate ? "+-max finite" : "NaN or +-inf";
        if (p->op == QG_K_QUANTIZE)
            snprintf(p->formula, cap, "q = %s bits of rne_%s(%s), overflow -> %s, NaN -> %s", dt, dt, t, over,
                     unchecked ? "+-0 (unchecked)" : "0x7F");
        else if (p->op == QG_K_DEQUANTIZE)
            snprintf(p->formula, cap, "y = fl(%s(q) * s), NaN codes -> NaN", dt);
        else if (p->op == QG_K_FAKE_QUANT)
            snprintf(p->formula, cap, "y = fl(rne_%s(%s) * s), overflow -> %s, NaN -> %s; mask: %s", dt, t, over,
                     unchecked ? "0 (unchecked)" : "x", sp->saturate ? "no overflow, x not NaN" : "x not NaN");
        return;
    }
    switch (p->op) {
    case QG_K_FAKE_QUANT:
        snprintf(p->formula, cap, "y = fl(clamp(%s(%s), qmin - z, qmax - z) * s), NaN -> %s; mask: %s", rnd, t,
                 sp->nan_policy == QG_NAN_PROPAGATE ? "x"
                 : nan_unchecked(sp, io)            ? "a bound's value (unchecked, no NaN test)"
                                                    : "0",
                 sp->saturate ? "r in range" : "x not NaN");
        break;
    case QG_K_QUANTIZE:
        snprintf(p->formula, cap, "q = clamp(%s(%s), qmin - z, qmax - z) + z, NaN -> %s%s", rnd, t,
                 nan_unchecked(sp, io) ? "a bound (unchecked, no NaN test)" : "z",
                 p->out_q_grouped >= 0 ? "; the main loop adds z after narrowing" : "");
        break;
    case QG_K_DEQUANTIZE: snprintf(p->formula, cap, "y = fl(float(q - z) * s)"); break;
    case QG_K_FAKE_QUANT_BACKWARD: snprintf(p->formula, cap, "dx = mask ? dy : +0.0"); break;
    case QG_K_REQUANTIZE:
        snprintf(p->formula, cap,
                 "q = clamp(%s(fl(float(sat(acc + bias)) * m)), qmin - z, qmax - z) + z, "
                 "m = fl(fl(s_in * s_w) / s_out)",
                 rnd);
        break;
    default: break;
    }
}

/* fake_quant's r where the ISA's rounding conversion saturates and sends
 * NaN to INT32_MAX (QG_RNE_CONVERSIONS): float(rne_sat(t))
 * equals rne(t) + 0.0 wherever |t| < 2^31, and past that (NaN included) it
 * is +-2^31, which clamps to the same bound and is out of range as t is;
 * NaN-ness is then t's. Two conversions replace an emulated
 * round-to-integral (docs/semantics.md, "Element arithmetic"). */
static int rounded_by_conversion(const qg_spec *sp, qg_plan *p, int *t) {
    *t = qg_plan_scaled(sp, p);
    return N(E1(CVT_I2F, N(E1(ROUND_CVT, *t), "rounded_int")), "rounded");
}

/* fake_quant's r as fl(fl(t + M) - M), M = 1.5 * 2^23 (QG_RNE_MAGIC_ADD):
 * for |t| <= 2^22 the sum lies in [2^23, 2^24], where fp32 steps by 1, so
 * the add rounds t nearest-even (M is even) and the subtraction is exact,
 * giving +0.0 for a zero; past that r stays beyond +-2^22 (inf stays inf,
 * NaN NaN), outside every range narrower than 2^22, and clamps to the
 * same bound as t with the mask 0 (docs/semantics.md, "Element
 * arithmetic"). */
static int magic_add(qg_plan *p, int v, const char *biased, const char *rounded) {
    const int m = N(K(0x1.8p23f), "round_magic");
    return N(E2(SUB_F, N(E2(ADD_F, v, m), biased), m), rounded);
}

static int rounded_by_magic_add(const qg_spec *sp, qg_plan *p, int *t) {
    *t = qg_plan_scaled(sp, p);
    return magic_add(p, *t, "rounded_biased", "rounded");
}

/* Which way fake_quant rounds: the ISA's, where it holds for the spec. */
static qg_round_even_way round_even_way(const qg_spec *sp, const qg_plan_io *io) {
    if (sp->rounding != QG_ROUND_HALF_EVEN)
        return QG_RNE_INSTRUCTION;
    if (io->round_even == QG_RNE_MAGIC_ADD && sp->quant_max - sp->quant_min >= (1LL << 22))
        return QG_RNE_INSTRUCTION;
    return io->round_even;
}

/* The int32 value of rne(c) for a clamped c: by two adds and a truncating
 * conversion where the ISA's rounding conversion is a call. */
static int rounded_int(const qg_spec *sp, const qg_plan_io *io, qg_plan *p, int c, const char *name) {
    if (!io->round_cvt_by_call || round_even_way(sp, io) != QG_RNE_MAGIC_ADD)
        return N(E1(ROUND_CVT, c), name);
    return N(E1(CVT_F2I, magic_add(p, c, "clamped_biased", "clamped_rounded")), name);
}

/* q - z for a store that adds z with saturation and bounds below by qmin
 * itself: rne(min(t, hi)), NaN -> 0. A t below -2^31 converts to INT32_MIN
 * or a saturated value (targets/<isa>.json's round_cvt is never "in_range"
 * there), which the store saturates to qmin all the same. */
static int below_hi_only(bool maskless, qg_plan *p, int t, int not_nan, int *unmasked) {
    const int upper = N(E2(MIN_F, t, QG_IN_HI), "below_hi");
    *unmasked = -1;
    if (maskless) /* NaN converts to 0, or (unchecked) the min sent it to hi */
        return N(E1(ROUND_CVT, upper), "q_minus_z_below_hi");
    *unmasked = N(E1(ROUND_CVT, upper), "rounded_below_hi");
    return N(E2(MASKZ_I, not_nan, *unmasked), "q_minus_z_below_hi");
}

/* Where the main loop tests NaN once (qg_plan_io.nan_check_per_iteration;
 * float32 tensors, whose results are what it stores): its result as it is
 * without NaN lanes, `unmasked` (-1: none), and t, whose NaN-ness counts.
 * Elsewhere `unmasked` is dead and dropped with the other dead steps. */
static void test_nan_once(const qg_plan_io *io, qg_plan *p, int unmasked, int t) {
    if (!io->nan_check_per_iteration || io->float_type != QG_FLOAT32 || unmasked < 0)
        return;
    p->out_ordered = unmasked;
    p->nan_value = t;
}

/* The plans of the integer dtypes. */
static qg_status integer_plan(const qg_spec *sp, qg_kernel_op op, const qg_plan_io *io, qg_plan *p, qg_error *err) {
    int in_range, ordered;
    switch (op) {
    case QG_K_FAKE_QUANT: {
        /* y = (ordered ? c : 0) * s, as one masked multiply */
        int t = -1, r;
        switch (round_even_way(sp, io)) {
        case QG_RNE_CONVERSIONS: r = rounded_by_conversion(sp, p, &t); break;
        case QG_RNE_MAGIC_ADD: r = rounded_by_magic_add(sp, p, &t); break;
        default: t = r = rounded(sp, p); break;
        }
        int c = clamp_to_range(p, r);
        range_masks(p, c, r, t, &in_range, &ordered);
        p->out_mask = sp->saturate ? in_range : ordered;
        if (nan_unchecked(sp, io)) {
            p->out_y = N(E2(MUL_F, c, QG_IN_S), "y");
            break;
        }
        int y = N(qg_plan_emit(p, QG_OP_MASKZ_MUL_F, ordered, c, QG_IN_S, 0.0f), "y");
        test_nan_once(io, p, N(E2(MUL_F, c, QG_IN_S), "y_if_ordered"), t);
        if (sp->nan_policy == QG_NAN_PROPAGATE)
            y = N(SEL(ordered, y, p->x), "y_or_nan");
        p->out_y = y;
        break;
    }
    case QG_K_QUANTIZE: {
        if (sp->rounding == QG_ROUND_HALF_EVEN) {
            /* Clamping before rounding is the same for integral bounds, and
             * lets one round-to-nearest-even conversion do both; NaN lanes
             * become 0, so q = z. */
            int t = qg_plan_scaled(sp, p);
            int c = clamp_to_range(p, t);
            ordered = N(E1(ORDERED, t), "not_nan");
            /* a NaN t stays NaN through the clamp and converts to 0, or
             * unchecked, clamps to a bound */
            const bool maskless = io->round_cvt_nan_zero || nan_unchecked(sp, io);
            int qi = maskless ? rounded_int(sp, io, p, c, "q_minus_z")
                              : N(E2(MASKZ_I, ordered, rounded_int(sp, io, p, c, "rounded")), "q_minus_z");
            p->out_q = N(E2(ADD_I, qi, QG_IN_Z), "quantized");
            int unmasked = -1;
            if (io->grouped_store_adds_z)
                p->out_q_grouped = below_hi_only(maskless, p, t, ordered, &unmasked);
            test_nan_once(io, p, unmasked, t);
            break;
        }
        /* the conversion makes -0.0 the integer 0: no +0.0 to add */
        const int r = N(qg_plan_round(sp->rounding, p, qg_plan_scaled(sp, p)), "rounded");
        int c = nan_unchecked(sp, io) ? clamp_to_range(p, r) : clamped(p, r, &in_range, &ordered);
        p->out_q = N(E2(ADD_I, N(E1(CVT_F2I, c), "q_minus_z"), QG_IN_Z), "quantized");
        break;
    }
    case QG_K_DEQUANTIZE: {
        int d = N(E1(CVT_I2F, N(E2(SUB_I, QG_IN_Q, QG_IN_Z), "q_minus_z")), "q_minus_z_f");
        p->out_y = N(E2(MUL_F, d, QG_IN_S), "y");
        break;
    }
    case QG_K_FAKE_QUANT_BACKWARD:
        p->out_y = N(E2(MASK_F, QG_IN_MASK, p->dy), "dx"); /* mask ? dy : +0.0 */
        break;
    case QG_K_OBSERVE: break;
    case QG_K_REQUANTIZE: {
        /* fp32 scheme: y = clamp(round(float(sat(acc + bq)) * m) + z_out),
         * with m in the scale slot and the bounds relative to z_out. */
        int acc = N(E1(CVT_I2F, N(E2(SAT_ADD_I, QG_IN_Q, QG_IN_B), "acc_plus_bias")), "acc_f");
        int t = N(E2(MUL_F, acc, QG_IN_S), "scaled");
        if (sp->rounding == QG_ROUND_HALF_EVEN) {
            int c = clamp_to_range(p, t);
            p->out_q = N(E2(ADD_I, rounded_int(sp, io, p, c, "q_minus_z"), QG_IN_Z), "quantized");
            break;
        }
        int r = N(qg_plan_round(sp->rounding, p, t), "rounded");
        int c = clamp_to_range(p, r);
        p->out_q = N(E2(ADD_I, N(E1(CVT_F2I, c), "q_minus_z"), QG_IN_Z), "quantized");
        break;
    }
    default: return qg_error_set(err, QG_ERR_INVALID, "plan: unknown op %d", (int)op);
    }
    return QG_OK;
}

/* Whether the op's float result can be NaN. The integer dtypes' fake_quant
 * (NaN -> 0) and dequantize multiply a finite integral value by the scale,
 * which valid qparams keep finite and > 0 (qg_qparams_validate); fp8 codes,
 * NaN propagation and the backward's dy pass NaN through. */
static bool may_give_nan(const qg_spec *sp, qg_kernel_op op) {
    if (!sp || qg_dtype_is_float8(sp->dtype))
        return true;
    if (op == QG_K_DEQUANTIZE)
        return false;
    return op != QG_K_FAKE_QUANT || sp->nan_policy == QG_NAN_PROPAGATE; /* unchecked: a bound's value, or 0 */
}

static void plan_open(qg_plan *p, qg_kernel_op op, const qg_plan_io *io) {
    memset(p, 0, sizeof *p);
    p->op = op;
    p->nvalues = QG_IN_COUNT;
    const qg_vkind float_kind = io->float_type == QG_FLOAT32 ? QG_VF : QG_VI;
    p->kind[QG_IN_X] = p->kind[QG_IN_DY] = float_kind;
    p->kind[QG_IN_S] = p->kind[QG_IN_INV] = p->kind[QG_IN_LO] = p->kind[QG_IN_HI] = QG_VF;
    p->kind[QG_IN_Q] = p->kind[QG_IN_Z] = p->kind[QG_IN_B] = QG_VI;
    p->kind[QG_IN_MASK] = QG_VM;
    p->out_y = p->out_q = p->out_mask = p->out_q_grouped = p->out_ordered = p->nan_value = -1;
    p->x = QG_IN_X;
    p->dy = QG_IN_DY;
    if (io->float_type != QG_FLOAT32) { /* dead ones are dropped at the end */
        p->x = N(qg_plan_widen(io, p, QG_IN_X), "x_value");
        p->dy = N(qg_plan_widen(io, p, QG_IN_DY), "dy_value");
    }
}

static qg_status plan_close(const qg_spec *sp, const qg_plan_io *io, qg_plan *p, qg_error *err) {
    if (io->float_type != QG_FLOAT32 && p->out_y >= 0)
        p->out_y = qg_plan_narrow(io, p, p->out_y, may_give_nan(sp, p->op));
    if (p->overflowed)
        return qg_error_set(err, QG_ERR_INVALID, "plan: more than %d steps", QG_PLAN_MAX_STEPS);
    drop_dead_steps(p);
    if (sp)
        describe(sp, io, p);
    return QG_OK;
}

qg_status qg_plan_build_io(const qg_spec *sp, qg_kernel_op op, const qg_plan_io *io, qg_plan *p, qg_error *err) {
    plan_open(p, op, io);
    qg_status st = QG_OK;
    if (!(qg_dtype_is_float8(sp->dtype) && qg_plan_fp8(sp, op, p)) &&
        !(sp->block != QG_BLOCK_NONE && qg_plan_blocks(sp, op, p)))
        st = integer_plan(sp, op, io, p, err);
    return st ? st : plan_close(sp, io, p, err);
}

qg_status qg_plan_build(const qg_spec *sp, qg_kernel_op op, qg_plan *p, qg_error *err) {
    const qg_plan_io io = {QG_FLOAT32, false, QG_RNE_INSTRUCTION, false, false, false, false, false};
    return qg_plan_build_io(sp, op, &io, p, err);
}

void qg_plan_build_conversion(const qg_plan_io *io, bool narrow_it, qg_plan *p) {
    const qg_plan_io f32 = {QG_FLOAT32, false, QG_RNE_INSTRUCTION, false, false, false, false, false};
    plan_open(p, QG_K_DEQUANTIZE, narrow_it ? &f32 : io);
    if (narrow_it)
        p->out_q = qg_plan_narrow(io, p, QG_IN_X, true);
    else
        p->out_y = p->x;
    plan_close(NULL, &f32, p, NULL);
}
