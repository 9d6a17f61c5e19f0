/* Entries, lowered once for both backends: the layout walk around an op's
 * span (docs/semantics.md, "Layouts"), each run's channel parameters, the
 * forwarders to the runtime's drivers and the by-reference entries. */
#include "kernel_builder.h"

#include <stdio.h>

#define B (b->ops)

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }

/* Channel c's scale and zero point, those the plan reads (NULL the
 * others): qp's, or the spec's fixed qparams. */
static void channel_scalars(qg_kb *b, const qg_plan *p, qg_kv *qp, qg_kv *c, qg_kv **s, qg_kv **z) {
    const qg_kernel_loops *lp = b->lp;
    const bool fixed = lp->params == QG_PARAMS_FIXED;
    *s = *z = NULL;
    if (fixed)
        B->discard(b, qp);
    if (p->uses[QG_IN_S] || p->uses[QG_IN_INV])
        *s = B->let(b, "s0",
                    fixed ? B->fimm(b, lp->fixed_scale)
                          : B->index(b, QG_KT_F32, B->field(b, qp, QG_KF_QP_SCALE), c, false));
    if (p->uses[QG_IN_LO] || p->uses[QG_IN_HI] || p->uses[QG_IN_Z])
        *z = B->let(b, "z0",
                    fixed ? B->imm(b, QG_KT_I32, lp->fixed_zero_point)
                          : B->index(b, QG_KT_I32, B->field(b, qp, QG_KF_QP_ZERO_POINT), c, false));
}

/* qmin - z or qmax - z as fp32, from 64-bit integers (exact). */
static qg_kv *bound(qg_kb *b, long long q, qg_kv *z) {
    return B->cast(b, QG_KT_F32, B->bin(b, QG_KB_SUB, B->imm(b, QG_KT_I64, q), B->cast(b, QG_KT_I64, z)));
}

void qg_lower_call_span_with(qg_kb *b, const qg_plan *p, qg_kv *span, qg_kv *const io[3], qg_kv *base, qg_kv *len,
                             qg_kv *const scalars[QG_IN_COUNT]) {
    qg_kv *args[5 + QG_IN_COUNT], *params[QG_IN_COUNT] = {0};
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            params[in] = B->param(b, (qg_plan_input)in, scalars[in]);
    B->call(b, span, NULL, NULL, args, qg_lower_span_args(b, p, io, base, len, params, args));
}

void qg_lower_call_span(qg_kb *b, const qg_plan *p, qg_kv *span, qg_kv *const io[3], qg_kv *base, qg_kv *len, qg_kv *s,
                        qg_kv *inv, qg_kv *z, qg_kv *bias) {
    qg_kv *v[QG_IN_COUNT] = {0};
    if (p->uses[QG_IN_S] || p->uses[QG_IN_INV]) {
        v[QG_IN_S] = s;
        v[QG_IN_INV] = inv ? inv : p->uses[QG_IN_INV] ? B->bin(b, QG_KB_DIV, B->fimm(b, 1.0f), s) : NULL;
    }
    if (p->uses[QG_IN_LO])
        v[QG_IN_LO] = bound(b, b->lp->qmin, z);
    if (p->uses[QG_IN_HI])
        v[QG_IN_HI] = bound(b, b->lp->qmax, z);
    v[QG_IN_Z] = z;
    v[QG_IN_B] = bias;
    qg_lower_call_span_with(b, p, span, io, base, len, v);
}

void qg_lower_clear_packed_mask(qg_kb *b, qg_kv *mask, qg_kv *n) {
    if (!b->lp->clear_mask_first)
        return;
    B->if_open(b, B->nonnull(b, mask));
    B->zero_bytes(b, mask, B->bin(b, QG_KB_DIV, B->bin(b, QG_KB_ADD, n, size(b, 7)), size(b, 8)));
    B->if_close(b);
}

/* Runs of run_len elements from 0 to n; run r in channel r % C, counted
 * along with the runs (a division per run costs more than a short run).
 * `each` gives a run's scalars from its channel. */
typedef void (*run_scalars)(qg_kb *b, const qg_plan *p, qg_kv *src, qg_kv *c, qg_kv **s, qg_kv **z, qg_kv **bias);

static void channel_runs(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *n, qg_kv *run_len, qg_kv *C,
                         run_scalars each, qg_kv *src) {
    qg_kvar *c = B->var(b, "c", QG_KT_SIZE, size(b, 0));
    qg_kvar *base = B->var(b, "base", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "runs", base, QG_KTEST_LT, n, run_len);
    qg_kv *at = B->get(b, base), *ch = B->get(b, c);
    qg_kv *left = B->bin(b, QG_KB_SUB, n, at);
    qg_kv *m = B->let(b, "m", B->select(b, B->bin(b, QG_KB_LT, left, run_len), left, run_len));
    qg_kv *s, *z, *bias = NULL;
    each(b, p, src, ch, &s, &z, &bias);
    qg_lower_call_span(b, p, B->span_ref(b, ""), io, at, m, s, NULL, z, bias);
    qg_kv *next = B->bin(b, QG_KB_ADD, ch, size(b, 1));
    B->set(b, c, B->select(b, B->bin(b, QG_KB_EQ, next, C), size(b, 0), next));
    B->loop_close(b);
}

static void qparams_run(qg_kb *b, const qg_plan *p, qg_kv *qp, qg_kv *c, qg_kv **s, qg_kv **z, qg_kv **bias) {
    channel_scalars(b, p, qp, c, s, z);
    *bias = NULL;
}

/* requantize: m = fl(fl(s_in * s_w[c]) / s_out), bias_q[c] (0 without), z_out. */
static void requant_run(qg_kb *b, const qg_plan *p, qg_kv *rp, qg_kv *c, qg_kv **s, qg_kv **z, qg_kv **bias) {
    (void)p; /* requantize's plan reads all three */
    qg_kv *w = B->index(b, QG_KT_F32, B->field(b, rp, QG_KF_RP_S_W), c, false);
    qg_kv *sw = B->bin(b, QG_KB_MUL, B->field(b, rp, QG_KF_RP_S_IN), w);
    *s = B->let(b, "s0", B->bin(b, QG_KB_DIV, sw, B->field(b, rp, QG_KF_RP_S_OUT)));
    *bias = B->let(b, "b0", B->index(b, QG_KT_I32, B->field(b, rp, QG_KF_RP_BIAS_Q), c, true));
    *z = B->let(b, "z0", B->field(b, rp, QG_KF_RP_Z_OUT));
}

/* v, or 1 where v is 0 */
static qg_kv *at_least_one(qg_kb *b, qg_kv *v) {
    return B->select(b, B->bin(b, QG_KB_EQ, v, size(b, 0)), size(b, 1), v);
}

/* Returns where `cond` holds. */
static void refuse_if(qg_kb *b, qg_kv *cond) {
    B->if_open(b, cond);
    B->ret(b);
    B->if_close(b);
}

static qg_kv *is_null(qg_kb *b, qg_kv *p) { return B->bin(b, QG_KB_EQ, p, B->imm(b, QG_KT_PTR, 0)); }

/* The reference's argument check (runtime/arg_check.h): a missing tensor
 * at n > 0, or missing parameters, leave every output as it was. */
static void check_args(qg_kb *b, qg_kv *const io[3], qg_kv *n, qg_kv *params, bool mask_needed) {
    if (params)
        refuse_if(b, is_null(b, params));
    qg_kv *missing = B->bin(b, QG_KB_OR, is_null(b, io[0]), is_null(b, io[1]));
    if (mask_needed)
        missing = B->bin(b, QG_KB_OR, missing, is_null(b, io[2]));
    refuse_if(b, B->bin(b, QG_KB_AND, B->bin(b, QG_KB_NE, n, size(b, 0)), missing));
}

/* The walk of the open link over the tensor. */
static void walk(qg_kb *b, const qg_plan *p) {
    const qg_kernel_loops *lp = b->lp;
    const qg_op_info *o = qg_op_info_of(p->op);
    const bool has_mask = qg_kernel_loops_masked(lp);
    qg_kv *io[3] = {B->arg(b, o->args[qg_op_data_in(o)].kind), B->arg(b, o->args[qg_op_data_out(o)].kind),
                    has_mask ? B->arg(b, lp->mask_in != QG_MASK_NONE ? QG_ARG_MASK_IN : QG_ARG_MASK_OUT) : NULL};
    qg_kv *n = B->arg(b, QG_ARG_N), *qp = B->arg(b, QG_ARG_QPARAMS);
    /* backward reads its mask; fake_quant's may be NULL */
    check_args(b, io, n, lp->params == QG_PARAMS_NONE ? NULL : qp, lp->mask_in != QG_MASK_NONE);
    qg_lower_clear_packed_mask(b, io[2], n);
    if (lp->params == QG_PARAMS_NONE) {
        qg_lower_call_span(b, p, B->span_ref(b, ""), io, size(b, 0), n, NULL, NULL, NULL, NULL);
        return;
    }
    if (lp->walk == QG_WALK_WHOLE) {
        qg_kv *s, *z;
        channel_scalars(b, p, qp, size(b, 0), &s, &z);
        qg_lower_call_span(b, p, B->span_ref(b, ""), io, size(b, 0), n, s, NULL, z, NULL);
        return;
    }
    /* the spec's channel count, or the caller's (per-group blocks) */
    qg_kv *C = B->let(b, "C", lp->channels ? size(b, (long long)lp->channels) : B->field(b, qp, QG_KF_QP_CHANNELS));
    qg_kv *inner = B->let(b, "inner", B->field(b, qp, QG_KF_QP_INNER));
    if (lp->channels_last_table) {
        B->if_open(b, B->bin(b, QG_KB_EQ, inner, size(b, 1)));
        qg_lower_channels_last(b, p, io, n, qp, C);
        B->if_close(b);
    }
    qg_kv *run_len = B->let(b, "run_len", at_least_one(b, inner));
    channel_runs(b, p, io, n, run_len, C, qparams_run, qp);
}

/* A link of op `o` that calls runtime function `fn` with the spec, `extra`
 * where given, and its own arguments, and returns what fn returns. */
static void forward(qg_kb *b, const qg_op_info *o, const char *infix, const char *fn, qg_kv *extra) {
    B->open_link(b, o, infix);
    qg_kv *args[QG_OP_MAX_ARGS + 2] = {B->spec_ref(b), extra};
    int n = extra ? 2 : 1;
    for (int k = 0; k < o->nargs; k++)
        args[n++] = B->arg(b, o->args[k].kind);
    const qg_kt status = QG_KT_I32;
    B->close_fn(b, B->call(b, NULL, fn, o->returns_status ? &status : NULL, args, n));
}

void qg_lower_forwarders(qg_kb *b, const qg_op_info *o, const qg_entry_chain *ch) {
    for (int f = 0; f < ch->forwarders; f++)
        forward(b, o, ch->name[f], qg_op_driver(o, ch->driver[f]), B->link_ref(b, o, ch->inner[f]));
}

void qg_lower_entry(qg_kb *b, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(p->op);
    qg_entry_chain ch;
    qg_entry_chain_of(b->lp, &ch);
    B->open_link(b, o, ch.walk);
    walk(b, p);
    B->close_fn(b, NULL);
    qg_lower_forwarders(b, o, &ch);
}

void qg_lower_requantize_entry(qg_kb *b, const qg_plan *p) {
    const qg_op_info *o = qg_op_info_of(QG_K_REQUANTIZE);
    B->open_link(b, o, "");
    qg_kv *io[3] = {B->arg(b, QG_ARG_ACC_IN), B->arg(b, QG_ARG_Q_OUT), NULL};
    qg_kv *n = B->arg(b, QG_ARG_N), *rp = B->arg(b, QG_ARG_REQUANT);
    check_args(b, io, n, rp, false);
    refuse_if(b, is_null(b, B->field(b, rp, QG_KF_RP_S_W)));
    qg_kv *C = B->let(b, "C", at_least_one(b, B->field(b, rp, QG_KF_RP_CHANNELS)));
    /* one channel: the whole tensor is one run */
    qg_kv *inner = at_least_one(b, B->field(b, rp, QG_KF_RP_INNER));
    qg_kv *run_len = B->let(b, "run_len", B->select(b, B->bin(b, QG_KB_EQ, C, size(b, 1)), at_least_one(b, n), inner));
    channel_runs(b, p, io, n, run_len, C, requant_run, rp);
    B->close_fn(b, NULL);
}

void qg_lower_by_reference(qg_kb *b, const qg_spec *sp, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    const char *ftype = qg_op_driver(o, "ftype"); /* 16-bit rows of a block spec: widened around the reference */
    if (sp->block != QG_BLOCK_NONE && sp->float_type != QG_FLOAT32 && ftype)
        forward(b, o, "", ftype, B->imm(b, QG_KT_PTR, 0));
    else
        forward(b, o, "", o->reference, NULL);
}

static bool sixteen_bit_blocks(const qg_spec *sp) { return sp->block != QG_BLOCK_NONE && sp->float_type != QG_FLOAT32; }

void qg_lower_observe_entry(qg_kb *b, const qg_spec *spec) {
    const qg_op_info *o = qg_op_info_of(QG_K_OBSERVE);
    qg_entry_chain ch;
    qg_entry_chain_of(b->lp, &ch);
    B->open_link(b, o, ch.walk);
    /* a block spec's min/max span is its blocks' float32 one: 16-bit rows
     * take the reference's scan */
    const bool reduces = qg_plan_observer_reduces(spec) && !sixteen_bit_blocks(spec);
    if (sixteen_bit_blocks(spec)) {
        B->comment(b, "16-bit rows of a block format: the runtime's min/max scan");
    } else if (!reduces) {
        char text[96];
        snprintf(text, sizeof text, "%s observers keep no min/max to vectorize",
                 qg_observer_type_name(spec->observer.type));
        B->comment(b, text);
    }
    qg_kv *args[6] = {B->arg(b, QG_ARG_OBSERVER),
                      B->arg(b, QG_ARG_F32_IN),
                      B->arg(b, QG_ARG_N),
                      B->arg(b, QG_ARG_INNER),
                      reduces ? B->minmax_ref(b) : B->imm(b, QG_KT_PTR, 0),
                      B->arg(b, QG_ARG_ERROR)};
    const qg_kt status = QG_KT_I32;
    const char *with = b->lp->float_io == QG_FLOAT32 ? "qg_observe_with" : "qg_observe16_with";
    B->close_fn(b, B->call(b, NULL, with, &status, args, 6));
    qg_lower_forwarders(b, o, &ch);
}

/* Why a spec's op runs on the runtime's reference (qg_plan_by_reference). */
static const char *by_reference_reason(const qg_spec *sp, qg_kernel_op op) {
    if (sp->block != QG_BLOCK_NONE)
        return "The runtime's reference serves it: this op of this block format is not generated yet.";
    return op == QG_K_REQUANTIZE
               ? "The runtime's reference serves it: fixed-point products, or 4-bit or fp8 output."
               : "The runtime's reference serves it: qint32 or float zero points need more than fp32.";
}

/* Observe's min/max reduction, once per file: observe's entry and the
 * block formats' quantize call it. */
static void minmax_once(qg_kb *b, const qg_spec *sp, qg_isa isa, bool *done) {
    if (*done)
        return;
    *done = true;
    qg_kernel_loops lp;
    qg_kernel_loops_of(sp, isa, QG_K_OBSERVE, &lp);
    b->lp = &lp;
    B->op_begin(b, NULL);
    qg_lower_minmax(b, sp, isa);
    B->op_end(b);
    b->lp = NULL;
}

qg_status qg_lower_kernels(qg_kb *b, const qg_spec *sp, qg_isa isa, unsigned ops, qg_error *err) {
    qg_status st = qg_plan_check_isa(sp, isa, err);
    static const qg_kernel_op order[] = {QG_K_QUANTIZE,   QG_K_DEQUANTIZE, QG_K_FAKE_QUANT, QG_K_FAKE_QUANT_BACKWARD,
                                         QG_K_REQUANTIZE, QG_K_OBSERVE};
    bool minmax_done = false;
    for (size_t k = 0; k < sizeof order / sizeof order[0] && !st; k++) {
        const qg_kernel_op op = order[k];
        if (!(ops & (1u << op)))
            continue;
        B->section(b, qg_kernel_op_name(op));
        if (qg_plan_by_reference(sp, op)) {
            B->comment(b, by_reference_reason(sp, op));
            qg_lower_by_reference(b, sp, op);
            continue;
        }
        /* a block format's ops run the span of its blocks' elements */
        qg_spec elements;
        const bool block = sp->block != QG_BLOCK_NONE && op != QG_K_OBSERVE;
        if (block)
            qg_plan_block_elements(sp, &elements);
        const qg_spec *esp = block ? &elements : sp;
        if ((op == QG_K_OBSERVE && !sixteen_bit_blocks(sp)) || (block && qg_lower_block_reads_extremes(sp->block, op)))
            minmax_once(b, esp, isa, &minmax_done);
        qg_kernel_loops lp;
        qg_plan plan;
        qg_kernel_loops_of(esp, isa, op, &lp);
        lp.align_head = lp.align_head && !block; /* a block's 32 elements stay one span */
        lp.ftype_driver = block && sixteen_bit_blocks(sp);
        b->lp = &lp;
        if (op != QG_K_OBSERVE && (st = qg_plan_build_for(esp, isa, op, &plan, err)))
            break;
        B->op_begin(b, op == QG_K_OBSERVE ? NULL : &plan);
        if (op != QG_K_OBSERVE)
            qg_lower_span(b, &plan);
        if (op != QG_K_OBSERVE && qg_lower_has_rows(&lp))
            qg_lower_rows(b, &plan);
        if (op == QG_K_OBSERVE)
            qg_lower_observe_entry(b, sp);
        else if (block)
            qg_lower_block_entry(b, &plan, sp->block);
        else if (op == QG_K_REQUANTIZE)
            qg_lower_requantize_entry(b, &plan);
        else
            qg_lower_entry(b, &plan);
        B->op_end(b);
        b->lp = NULL;
    }
    return st;
}
