/* The plans of quantize, dequantize, fake_quant and its backward.
 *
 * Every plan works in the fp32 domain of r = round(x / s) and clamps r to
 * [qmin - z, qmax - z]: for 8- and 16-bit dtypes those bounds and q - z are
 * exact in fp32, so fl((q - z) * s) needs no integer round trip. Adding
 * +0.0 after rounding turns -0.0 into +0.0, as torch's integer q - z does. */
#include "kernel_plan.h"

#include <string.h>

static const char *const op_names[] = {
#define QG_OPCODE_NAME(name, kind) #name,
    QG_PLAN_OPS(QG_OPCODE_NAME)
#undef QG_OPCODE_NAME
};
static const qg_vkind op_kinds[] = {
#define QG_OPCODE_KIND(name, kind) kind,
    QG_PLAN_OPS(QG_OPCODE_KIND)
#undef QG_OPCODE_KIND
};

const char *qg_opcode_name(qg_opcode op) { return op < QG_OP_COUNT ? op_names[op] : "?"; }

const char *qg_kernel_op_name(qg_kernel_op op) {
    static const char *const names[] = {"quantize", "dequantize", "fake_quant", "fake_quant_backward",
                                        "observe",  "requantize"};
    return op < QG_K_OP_COUNT ? names[op] : "?";
}

static int emit(qg_plan *p, qg_opcode op, int a, int b, int c, float imm) {
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

#define E2(op, a, b) emit(p, QG_OP_##op, a, b, -1, 0.0f)
#define E1(op, a) emit(p, QG_OP_##op, a, -1, -1, 0.0f)
#define K(v) emit(p, QG_OP_SPLAT_F, -1, -1, -1, v)

/* r = round(x / s) in the spec's mode, with -0.0 made +0.0. */
static int rounded(const qg_spec *sp, qg_plan *p) {
    int t = sp->scale_op == QG_SCALE_DIV ? E2(DIV_F, QG_IN_X, QG_IN_S) : E2(MUL_F, QG_IN_X, QG_IN_INV);
    int r;
    switch (sp->rounding) {
    case QG_ROUND_HALF_UP: r = E1(FLOOR, E2(ADD_F, t, K(0.5f))); break;
    case QG_ROUND_HALF_AWAY:
        /* trunc(t + copysign(pred(0.5), t)) equals roundf(t) for every
         * non-NaN fp32 t (checked exhaustively). */
        r = E1(TRUNC, E2(ADD_F, t, emit(p, QG_OP_COPYSIGN, K(0x1.fffffep-2f), t, -1, 0.0f)));
        break;
    case QG_ROUND_HALF_EVEN:
    default: r = E1(ROUND_EVEN, t); break;
    }
    return E2(ADD_F, r, K(0.0f));
}

/* c = clamp(r, lo, hi), and 0 (q = z) for NaN. *in_range and *ordered
 * receive the mask values: r is in range exactly when clamping left it
 * unchanged (a NaN compares unequal whatever min/max made of it). */
static int clamped(qg_plan *p, int r, int *in_range, int *ordered) {
    int c = E2(MIN_F, E2(MAX_F, r, QG_IN_LO), QG_IN_HI);
    *in_range = E2(CMP_EQ, c, r);
    *ordered = E1(ORDERED, r);
    return emit(p, QG_OP_SELECT_F, *ordered, c, K(0.0f), 0.0f);
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

bool qg_plan_by_reference(const qg_spec *sp, qg_kernel_op op) {
    if (op == QG_K_OBSERVE)
        return false;
    return needs_more_than_fp32(sp) || (op == QG_K_REQUANTIZE && sp->requant == QG_REQUANT_FIXED_POINT);
}

bool qg_plan_observer_reduces(const qg_spec *sp) {
    const qg_observer_type t = sp->observer.type;
    return t == QG_OBS_MINMAX || t == QG_OBS_MOVING_AVERAGE_MINMAX || t == QG_OBS_PER_CHANNEL_MINMAX ||
           t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
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

qg_status qg_plan_build(const qg_spec *sp, qg_kernel_op op, qg_plan *p, qg_error *err) {
    memset(p, 0, sizeof *p);
    p->op = op;
    p->nvalues = QG_IN_COUNT;
    p->kind[QG_IN_X] = p->kind[QG_IN_DY] = p->kind[QG_IN_S] = p->kind[QG_IN_INV] = QG_VF;
    p->kind[QG_IN_LO] = p->kind[QG_IN_HI] = QG_VF;
    p->kind[QG_IN_Q] = p->kind[QG_IN_Z] = p->kind[QG_IN_B] = QG_VI;
    p->kind[QG_IN_MASK] = QG_VM;
    p->out_y = p->out_q = p->out_mask = -1;
    int in_range, ordered;
    switch (op) {
    case QG_K_FAKE_QUANT: {
        /* y = (ordered ? c : 0) * s, as one masked multiply */
        int r = rounded(sp, p);
        int c = E2(MIN_F, E2(MAX_F, r, QG_IN_LO), QG_IN_HI);
        in_range = E2(CMP_EQ, c, r);
        ordered = E1(ORDERED, r);
        int y = emit(p, QG_OP_MASKZ_MUL_F, ordered, c, QG_IN_S, 0.0f);
        if (sp->nan_policy == QG_NAN_PROPAGATE)
            y = emit(p, QG_OP_SELECT_F, ordered, y, QG_IN_X, 0.0f);
        p->out_y = y;
        p->out_mask = sp->saturate ? in_range : ordered;
        break;
    }
    case QG_K_QUANTIZE: {
        if (sp->rounding == QG_ROUND_HALF_EVEN) {
            /* Clamping before rounding is the same for integral bounds, and
             * lets one round-to-nearest-even conversion do both; NaN lanes
             * become 0, so q = z. */
            int t = sp->scale_op == QG_SCALE_DIV ? E2(DIV_F, QG_IN_X, QG_IN_S) : E2(MUL_F, QG_IN_X, QG_IN_INV);
            int c = E2(MIN_F, E2(MAX_F, t, QG_IN_LO), QG_IN_HI);
            int qi = E2(MASKZ_I, E1(ORDERED, t), E1(ROUND_CVT, c));
            p->out_q = E2(ADD_I, qi, QG_IN_Z);
            break;
        }
        int c = clamped(p, rounded(sp, p), &in_range, &ordered);
        p->out_q = E2(ADD_I, E1(CVT_F2I, c), QG_IN_Z);
        break;
    }
    case QG_K_DEQUANTIZE: p->out_y = E2(MUL_F, E1(CVT_I2F, E2(SUB_I, QG_IN_Q, QG_IN_Z)), QG_IN_S); break;
    case QG_K_FAKE_QUANT_BACKWARD:
        p->out_y = E2(MASK_F, QG_IN_MASK, QG_IN_DY); /* mask ? dy : +0.0 */
        break;
    case QG_K_OBSERVE: break;
    case QG_K_REQUANTIZE: {
        /* fp32 scheme: y = clamp(round(float(sat(acc + bq)) * m) + z_out),
         * with m in the scale slot and the bounds relative to z_out. */
        int t = E2(MUL_F, E1(CVT_I2F, E2(SAT_ADD_I, QG_IN_Q, QG_IN_B)), QG_IN_S);
        if (sp->rounding == QG_ROUND_HALF_EVEN) {
            p->out_q = E2(ADD_I, E1(ROUND_CVT, E2(MIN_F, E2(MAX_F, t, QG_IN_LO), QG_IN_HI)), QG_IN_Z);
            break;
        }
        int r;
        if (sp->rounding == QG_ROUND_HALF_UP)
            r = E1(FLOOR, E2(ADD_F, t, K(0.5f)));
        else
            r = E1(TRUNC, E2(ADD_F, t, emit(p, QG_OP_COPYSIGN, K(0x1.fffffep-2f), t, -1, 0.0f)));
        p->out_q = E2(ADD_I, E1(CVT_F2I, E2(MIN_F, E2(MAX_F, r, QG_IN_LO), QG_IN_HI)), QG_IN_Z);
        break;
    }
    default: return qg_error_set(err, QG_ERR_INVALID, "plan: unknown op %d", (int)op);
    }
    if (p->nsteps > QG_PLAN_MAX_STEPS)
        return qg_error_set(err, QG_ERR_INVALID, "plan: too many steps");
    drop_dead_steps(p);
    return QG_OK;
}
