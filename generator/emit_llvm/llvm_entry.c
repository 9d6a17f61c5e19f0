/* The LLVM backend's entry points: the op table's signatures, the channel
 * layout walk (per tensor, runs of `inner`, channels-last through a
 * parameter table), requantize's runs and the by-reference forwarders. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

/* NAME_<op>__<isa>(args) with the op table's argument types; the builder
 * is left in its body. */
static LLVMValueRef define_named(lx *x, const qg_op_info *o, const char *infix) {
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s%s__%s", x->prefix, o->name, infix, qg_isa_name(x->target->isa));
    LLVMTypeRef types[QG_OP_MAX_ARGS];
    for (int k = 0; k < o->nargs; k++)
        types[k] = o->args[k].kind == QG_ARG_N || o->args[k].kind == QG_ARG_INNER ? x->i64 : x->ptr;
    return lx_define(x, name, o->returns_status ? x->i32 : x->vd, types, (unsigned)o->nargs, false);
}

LLVMValueRef lx_define_entry(lx *x, const qg_op_info *o) { return define_named(x, o, ""); }

/* NAME_<op><infix>__<isa>: the entry itself, or (infix given) an internal
 * function whose address a forwarder hands to a runtime driver. */
LLVMValueRef lx_define_link(lx *x, const qg_op_info *o, const char *infix) {
    LLVMValueRef fn = define_named(x, o, infix);
    if (infix[0])
        LLVMSetLinkage(fn, LLVMInternalLinkage);
    return fn;
}

static LLVMValueRef spec_object(lx *x) {
    char name[QG_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s_spec", x->prefix);
    LLVMValueRef g = LLVMGetNamedGlobal(x->m, name);
    return g ? g : LLVMAddGlobal(x->m, x->i8, name);
}

/* NAME_<op><infix>__<isa>(args...) { [return] runtime_fn(&NAME_spec, [extra,] args...); } */
LLVMValueRef lx_build_forwarder(lx *x, const qg_op_info *o, const char *infix, const char *runtime_fn,
                                LLVMValueRef extra) {
    LLVMValueRef fn = lx_define_link(x, o, infix);
    LLVMTypeRef types[QG_OP_MAX_ARGS + 2] = {x->ptr, x->ptr};
    LLVMValueRef args[QG_OP_MAX_ARGS + 2] = {spec_object(x), extra};
    const unsigned first = extra ? 2 : 1;
    for (int k = 0; k < o->nargs; k++) {
        args[first + k] = LLVMGetParam(fn, (unsigned)k);
        types[first + k] = LLVMTypeOf(args[first + k]);
    }
    const unsigned n = (unsigned)o->nargs + first;
    LLVMValueRef r = lx_call(x, lx_declare(x, runtime_fn, o->returns_status ? x->i32 : x->vd, types, n), args, n);
    o->returns_status ? LLVMBuildRet(x->b, r) : LLVMBuildRetVoid(x->b);
    return fn;
}

/* Argument `kind` of entry `fn`, or a null pointer when the op has none. */
static LLVMValueRef entry_arg(lx *x, LLVMValueRef fn, const qg_op_info *o, qg_arg_kind kind) {
    const int k = qg_op_arg_index(o, kind);
    return k >= 0 ? LLVMGetParam(fn, (unsigned)k) : LLVMConstNull(x->ptr);
}

/* One channel's scalar parameters, as the C backend computes them. */
typedef struct chan_scalars {
    LLVMValueRef s, z, b;
} chan_scalars;

static LLVMValueRef bound(lx *x, long long q, LLVMValueRef z) {
    LLVMValueRef d = LLVMBuildSub(x->b, lx_i64(x, q), LLVMBuildSExt(x->b, z, x->i64, ""), "");
    return LLVMBuildSIToFP(x->b, d, x->f32, "");
}

static void splat_params(lx *x, const qg_plan *p, const chan_scalars *cs, LLVMValueRef *out) {
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++) {
        if (!p->uses[k])
            continue;
        LLVMValueRef v = NULL;
        switch (k) {
        case QG_IN_S: v = cs->s; break;
        case QG_IN_INV: v = LLVMBuildFDiv(x->b, lx_f32(x, 1.0f), cs->s, ""); break;
        case QG_IN_LO: v = bound(x, x->lp->qmin, cs->z); break;
        case QG_IN_HI: v = bound(x, x->lp->qmax, cs->z); break;
        case QG_IN_Z: v = cs->z; break;
        case QG_IN_B: v = cs->b; break;
        default: break;
        }
        out[k] = lx_splat(x, v, p->kind[k] == QG_VI ? x->vi : x->vf);
    }
}

static LLVMValueRef call_span(lx *x, LLVMValueRef span, const qg_plan *p, LLVMValueRef in, LLVMValueRef out,
                              LLVMValueRef mask, LLVMValueRef base, LLVMValueRef len, LLVMValueRef *params) {
    LLVMValueRef args[5 + QG_IN_COUNT] = {in, out, mask, base, len};
    unsigned n = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            args[n++] = params[k];
    return lx_call(x, span, args, n);
}

/* qp->scale[c] and qp->zero_point[c], or the spec's fixed qparams. */
static chan_scalars chan_of(lx *x, LLVMValueRef qp, LLVMValueRef c) {
    const qg_kernel_loops *lp = x->lp;
    if (lp->params == QG_PARAMS_FIXED)
        return (chan_scalars){lx_f32(x, lp->fixed_scale), lx_i32(x, lp->fixed_zero_point), NULL};
    LLVMValueRef sptr = lx_field(x, x->ptr, qp, offsetof(qg_qparams, scale));
    LLVMValueRef zptr = lx_field(x, x->ptr, qp, offsetof(qg_qparams, zero_point));
    LLVMValueRef s = LLVMBuildLoad2(x->b, x->f32, lx_gep(x, x->f32, sptr, c), "");
    LLVMValueRef z = LLVMBuildLoad2(x->b, x->i32, lx_gep(x, x->i32, zptr, c), "");
    return (chan_scalars){s, z, NULL};
}

/* The vector of the channels-last walk at column j of the row from r0:
 * cnt channels (on SVE the channels left, which the span's predicate
 * cuts to a vector), its parameters from the padded table. */
static void channels_last_vector(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                                 LLVMValueRef mask, LLVMValueRef *row_ptr, LLVMValueRef r0, LLVMValueRef j,
                                 LLVMValueRef cnt) {
    LLVMValueRef params[QG_IN_COUNT] = {0};
    /* an RVV strip reads its cnt parameters only: it may start off the vector grid */
    LLVMValueRef strip = x->isa->tail == LX_TAIL_EVL ? LLVMConstAllOnes(x->vm) : NULL;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++) {
        if (!p->uses[k])
            continue;
        const bool is_int = p->kind[k] == QG_VI;
        params[k] = lx_load(x, is_int ? x->vi : x->vf, is_int ? x->i32 : x->f32, 4, row_ptr[k], j, strip, cnt, NULL);
    }
    call_span(x, span, p, in, out, mask, LLVMBuildAdd(x->b, r0, j, ""), cnt, params);
}

/* One row of the channels-last walk: m channels from element r0. Fixed-
 * width vectors go whole, then one partial (so a whole row of a constant
 * channel count has no partial vector to test for); scalable ones go in
 * predicated strips. */
static void channels_last_row(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                              LLVMValueRef mask, LLVMValueRef *row_ptr, LLVMValueRef r0, LLVMValueRef m) {
    LLVMValueRef vl = lx_vl(x);
    const unsigned long long cm = LLVMIsAConstantInt(m) ? LLVMConstIntGetZExtValue(m) : 0;
    const unsigned L = (unsigned)x->isa->lanes;
    if (x->lp->row_written_out && cm) {
        /* a whole row, its columns one after another (kernel_loops.h) */
        unsigned long long k = 0;
        for (; k + L <= cm; k += L)
            channels_last_vector(x, p, span, in, out, mask, row_ptr, r0, lx_i64(x, (long long)k), vl);
        if (k < cm)
            channels_last_vector(x, p, span, in, out, mask, row_ptr, r0, lx_i64(x, (long long)k),
                                 lx_i64(x, (long long)(cm - k)));
        return;
    }
    lx_loop col = lx_loop_open(x, lx_i64(x, 0), "columns");
    LLVMValueRef j = lx_loop_value(x, &col);
    if (x->isa->scalable) {
        /* RVV: strips as long as vsetvli makes them (its own minimum, no
         * branch); SVE: whole vectors' steps, so that the next column does
         * not wait on this one's count, and the channels left as the
         * strip's length (its whilelo saturates at a vector) */
        lx_loop_test(x, &col, LLVMBuildICmp(x->b, LLVMIntULT, j, m, ""));
        LLVMValueRef left = LLVMBuildSub(x->b, m, j, "");
        const bool evl = x->isa->tail == LX_TAIL_EVL;
        LLVMValueRef cnt = evl ? LLVMBuildZExt(x->b, lx_strip_length(x, left), x->i64, "") : left;
        channels_last_vector(x, p, span, in, out, mask, row_ptr, r0, j, cnt);
        lx_loop_close(x, &col, evl ? cnt : vl);
        return;
    }
    lx_loop_test(x, &col, lx_whole_steps_test(x, j, m, vl));
    channels_last_vector(x, p, span, in, out, mask, row_ptr, r0, j, vl);
    lx_loop_close(x, &col, vl);
    j = lx_loop_value(x, &col);
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, j, m, ""));
    channels_last_vector(x, p, span, in, out, mask, row_ptr, r0, j, LLVMBuildSub(x->b, m, j, ""));
    lx_if_close(x, join);
}

/* The rows of the channel table, in memory order: s, inv, lo, hi (fp32) and z (int32). */
static const int chan_table_rows[5] = {QG_IN_S, QG_IN_INV, QG_IN_LO, QG_IN_HI, QG_IN_Z};

/* C rounded up to whole vectors. */
static LLVMValueRef padded_channels(lx *x, LLVMValueRef C) {
    LLVMValueRef vl = lx_vl(x);
    LLVMValueRef sum = LLVMBuildAdd(x->b, C, LLVMBuildSub(x->b, vl, lx_i64(x, 1), ""), "");
    return LLVMBuildMul(x->b, LLVMBuildUDiv(x->b, sum, vl, ""), vl, "");
}

/* <prefix>_chan_table(qp, C): every channel's parameters in rows of
 * `padded` (C rounded up to whole vectors), filled by the runtime's
 * qg_chan_table_fill; NULL without memory. Out of line, shared by the
 * entries: per-call set-up, not the steady state (qgen compare's loop
 * search then sees only the walk). */
static LLVMValueRef chan_table_function(lx *x) {
    LLVMValueRef fn;
    lx_resume caller;
    if (!lx_group_helper_open(x, "_chan_table", x->ptr, (LLVMTypeRef[]){x->ptr, x->i64}, 2, &fn, &caller))
        return fn;
    /* a fresh object: the rows' stores cannot reach it, so its loads leave the loops */
    const unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(x->c, noalias, 0));
    LLVMValueRef qp = LLVMGetParam(fn, 0), C = LLVMGetParam(fn, 1);
    LLVMTypeRef sz = x->i64;
    LLVMValueRef padded = padded_channels(x, C);
    LLVMValueRef size = LLVMBuildMul(x->b, padded, lx_i64(x, 20), ""); /* four float rows, one int32 */
    LLVMValueRef tbl = lx_call(x, lx_declare(x, "malloc", x->ptr, &sz, 1), &size, 1);
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, tbl, ""));
    LLVMTypeRef fill_t[6] = {x->ptr, x->i64, x->ptr, x->i64, x->i64, x->i64};
    LLVMValueRef fill_args[6] = {tbl, padded, qp, C, lx_i64(x, x->lp->qmin), lx_i64(x, x->lp->qmax)};
    lx_call(x, lx_declare(x, "qg_chan_table_fill", x->vd, fill_t, 6), fill_args, 6);
    lx_if_close(x, join);
    LLVMBuildRet(x->b, tbl);
    lx_helper_close(x, &caller);
    return fn;
}

/* <prefix>_<op>_rows(in, out, mask, n, table, C): the channels-last rows,
 * out of line so that qgen compare's loop search reads this walk alone
 * (docs/compare.md). The table is a noalias argument, as the fresh
 * allocation made it in the entry, so the column parameters still leave
 * the row loop. */
static LLVMValueRef rows_function(lx *x, const qg_plan *p, LLVMValueRef span) {
    char suffix[48];
    snprintf(suffix, sizeof suffix, "_%s_rows", qg_kernel_op_name(p->op));
    LLVMValueRef fn;
    lx_resume caller;
    LLVMTypeRef params[6] = {x->ptr, x->ptr, x->ptr, x->i64, x->ptr, x->i64};
    if (!lx_helper_open(x, suffix, x->vd, params, 6, &fn, &caller))
        return fn;
    const unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, 5, LLVMCreateEnumAttribute(x->c, noalias, 0));
    LLVMValueRef in = LLVMGetParam(fn, 0), out = LLVMGetParam(fn, 1), mask = LLVMGetParam(fn, 2);
    LLVMValueRef n = LLVMGetParam(fn, 3), tbl = LLVMGetParam(fn, 4);
    LLVMValueRef C = x->lp->channels ? lx_i64(x, (long long)x->lp->channels) : LLVMGetParam(fn, 5);
    LLVMValueRef row_bytes = LLVMBuildMul(x->b, padded_channels(x, C), lx_i64(x, 4), "");
    LLVMValueRef row_ptr[QG_IN_COUNT] = {0};
    for (int r = 0; r < 5; r++)
        row_ptr[chan_table_rows[r]] = lx_gep(x, x->i8, tbl, LLVMBuildMul(x->b, row_bytes, lx_i64(x, r), ""));
    /* whole rows, where the columns' trip count is the channel count (a
     * constant when the spec fixes it, so the column loop unrolls and its
     * parameter loads leave the row loop), then the last partial row */
    lx_loop row = lx_loop_open(x, lx_i64(x, 0), "rows");
    LLVMValueRef r0 = lx_loop_value(x, &row);
    lx_loop_test(x, &row, lx_whole_steps_test(x, r0, n, C));
    channels_last_row(x, p, span, in, out, mask, row_ptr, r0, C);
    lx_loop_close(x, &row, C);
    LLVMValueRef r1 = lx_loop_value(x, &row);
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, r1, n, ""));
    channels_last_row(x, p, span, in, out, mask, row_ptr, r1, LLVMBuildSub(x->b, n, r1, ""));
    LLVMBuildBr(x->b, join);
    LLVMPositionBuilderAtEnd(x->b, join);
    LLVMBuildRetVoid(x->b);
    lx_helper_close(x, &caller);
    return fn;
}

/* Channels-last (inner == 1): the parameter table, then its rows. */
static void channels_last(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                          LLVMValueRef mask, LLVMValueRef n, LLVMValueRef qp, LLVMValueRef C,
                          LLVMBasicBlockRef fallback) {
    LLVMValueRef free_fn = lx_declare(x, "free", x->vd, &x->ptr, 1);
    LLVMValueRef tbl = lx_call(x, chan_table_function(x), (LLVMValueRef[]){qp, C}, 2);
    LLVMBasicBlockRef have = lx_block(x, "table");
    LLVMBuildCondBr(x->b, LLVMBuildIsNull(x->b, tbl, ""), fallback, have);
    LLVMPositionBuilderAtEnd(x->b, have);
    lx_call(x, rows_function(x, p, span), (LLVMValueRef[]){in, out, mask, n, tbl, C}, 6);
    lx_call(x, free_fn, &tbl, 1);
    LLVMBuildRetVoid(x->b);
}

/* Runs of `run_len` elements; run r uses channel r % C, counted along with
 * the runs (a division per run costs more than a short run). */
static void channel_runs(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                         LLVMValueRef mask, LLVMValueRef n, LLVMValueRef run_len, LLVMValueRef C,
                         chan_scalars (*chan)(lx *, LLVMValueRef, LLVMValueRef), LLVMValueRef src) {
    LLVMValueRef run = lx_alloca(x, x->i64);
    LLVMBuildStore(x->b, lx_i64(x, 0), run);
    lx_loop l = lx_loop_open(x, lx_i64(x, 0), "runs");
    LLVMValueRef base = lx_loop_value(x, &l);
    lx_loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULT, base, n, ""));
    LLVMValueRef c = LLVMBuildLoad2(x->b, x->i64, run, "");
    LLVMValueRef next = LLVMBuildAdd(x->b, c, lx_i64(x, 1), "");
    LLVMValueRef wrap = LLVMBuildICmp(x->b, LLVMIntEQ, next, C, "");
    LLVMBuildStore(x->b, LLVMBuildSelect(x->b, wrap, lx_i64(x, 0), next, ""), run);
    LLVMValueRef m = lx_umin(x, LLVMBuildSub(x->b, n, base, ""), run_len);
    chan_scalars cs = chan(x, src, c);
    LLVMValueRef params[QG_IN_COUNT] = {0};
    splat_params(x, p, &cs, params);
    call_span(x, span, p, in, out, mask, base, m, params);
    lx_loop_close(x, &l, run_len);
}

/* The walk of function `fn` over the tensor. */
static void build_walk(lx *x, const qg_plan *p, const io_t *io, LLVMValueRef fn, LLVMValueRef span,
                       LLVMValueRef span1) {
    const qg_op_info *o = qg_op_info_of(p->op);
    LLVMValueRef in = LLVMGetParam(fn, (unsigned)qg_op_data_in(o)), out = LLVMGetParam(fn, (unsigned)qg_op_data_out(o));
    LLVMValueRef mask = entry_arg(x, fn, o, io->mask_in ? QG_ARG_MASK_IN : QG_ARG_MASK_OUT);
    LLVMValueRef n = entry_arg(x, fn, o, QG_ARG_N), qp = entry_arg(x, fn, o, QG_ARG_QPARAMS);
    if (x->lp->clear_mask_first) {
        LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, mask, ""));
        LLVMValueRef bytes = LLVMBuildUDiv(x->b, LLVMBuildAdd(x->b, n, lx_i64(x, 7), ""), lx_i64(x, 8), "");
        LLVMBuildMemSet(x->b, mask, LLVMConstInt(x->i8, 0, 0), bytes, 1);
        lx_if_close(x, join);
    }
    if (x->lp->params == QG_PARAMS_NONE) {
        LLVMValueRef none[QG_IN_COUNT] = {0};
        call_span(x, span, p, in, out, mask, lx_i64(x, 0), n, none);
        LLVMBuildRetVoid(x->b);
        return;
    }
    if (x->lp->walk == QG_WALK_WHOLE) {
        chan_scalars cs = chan_of(x, qp, lx_i64(x, 0));
        LLVMValueRef pv[QG_IN_COUNT] = {0};
        splat_params(x, p, &cs, pv);
        call_span(x, span, p, in, out, mask, lx_i64(x, 0), n, pv);
        LLVMBuildRetVoid(x->b);
        return;
    }
    /* the spec's channel count, or the caller's (per-group blocks) */
    LLVMValueRef C = x->lp->channels ? lx_i64(x, (long long)x->lp->channels)
                                     : lx_field(x, x->i64, qp, offsetof(qg_qparams, channels));
    LLVMValueRef inner = lx_field(x, x->i64, qp, offsetof(qg_qparams, inner));
    LLVMBasicBlockRef runs = lx_block(x, "runs_layout");
    if (x->lp->channels_last_table) {
        LLVMBasicBlockRef last = lx_block(x, "channels_last");
        LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 1), ""), last, runs);
        LLVMPositionBuilderAtEnd(x->b, last);
        channels_last(x, p, span1, in, out, mask, n, qp, C, runs);
    } else {
        LLVMBuildBr(x->b, runs);
    }
    LLVMPositionBuilderAtEnd(x->b, runs);
    LLVMValueRef is0 = LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 0), "");
    LLVMValueRef run_len = LLVMBuildSelect(x->b, is0, lx_i64(x, 1), inner, "");
    channel_runs(x, p, span, in, out, mask, n, run_len, C, chan_of, qp);
    LLVMBuildRetVoid(x->b);
}

void lx_build_forwarders(lx *x, const qg_op_info *o, const qg_entry_chain *ch, LLVMValueRef walk) {
    LLVMValueRef fn = walk;
    for (int f = 0; f < ch->forwarders; f++) {
        char driver[64];
        snprintf(driver, sizeof driver, "qg_%s_%s", ch->driver[f], o->driver_stem);
        fn = lx_build_forwarder(x, o, ch->name[f], driver, fn);
    }
}

/* The walk, and the forwarders to the runtime's drivers around it. */
static void build_entry(lx *x, const qg_plan *p, const io_t *io, LLVMValueRef span, LLVMValueRef span1) {
    const qg_op_info *o = qg_op_info_of(p->op);
    qg_entry_chain ch;
    qg_entry_chain_of(x->lp, &ch);
    LLVMValueRef fn = lx_define_link(x, o, ch.walk);
    build_walk(x, p, io, fn, span, span1);
    lx_build_forwarders(x, o, &ch, fn);
}

/* requantize: m = fl(fl(s_in * s_w[c]) / s_out), bias and z_out per run. */
static chan_scalars requant_chan(lx *x, LLVMValueRef rp, LLVMValueRef c) {
    LLVMValueRef s_in = lx_field(x, x->f32, rp, offsetof(qg_requant_params, s_in));
    LLVMValueRef s_out = lx_field(x, x->f32, rp, offsetof(qg_requant_params, s_out));
    LLVMValueRef s_w = lx_field(x, x->ptr, rp, offsetof(qg_requant_params, s_w));
    LLVMValueRef w = LLVMBuildLoad2(x->b, x->f32, lx_gep(x, x->f32, s_w, c), "");
    LLVMValueRef m = LLVMBuildFDiv(x->b, LLVMBuildFMul(x->b, s_in, w, ""), s_out, "");
    LLVMValueRef z = lx_field(x, x->i32, rp, offsetof(qg_requant_params, z_out));
    LLVMValueRef bias = lx_field(x, x->ptr, rp, offsetof(qg_requant_params, bias_q));
    /* bias_q may be NULL: read a zero instead */
    LLVMValueRef zero = lx_alloca(x, x->i32);
    LLVMBuildStore(x->b, lx_i32(x, 0), zero);
    LLVMValueRef has = LLVMBuildIsNotNull(x->b, bias, "");
    LLVMValueRef bp = LLVMBuildSelect(x->b, has, lx_gep(x, x->i32, bias, c), zero, "");
    LLVMValueRef b = LLVMBuildLoad2(x->b, x->i32, bp, "");
    return (chan_scalars){m, z, b};
}

static void build_requantize_entry(lx *x, const qg_plan *p, LLVMValueRef span) {
    LLVMValueRef fn = lx_define_entry(x, qg_op_info_of(QG_K_REQUANTIZE));
    LLVMValueRef acc = LLVMGetParam(fn, 0), q = LLVMGetParam(fn, 1), n = LLVMGetParam(fn, 2), rp = LLVMGetParam(fn, 3);
    LLVMValueRef ch = lx_field(x, x->i64, rp, offsetof(qg_requant_params, channels));
    LLVMValueRef C = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, ch, lx_i64(x, 0), ""), lx_i64(x, 1), ch, "");
    LLVMValueRef inner = lx_field(x, x->i64, rp, offsetof(qg_requant_params, inner));
    LLVMValueRef one = lx_i64(x, 1);
    LLVMValueRef inner1 =
        LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 0), ""), one, inner, "");
    LLVMValueRef n1 = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, n, lx_i64(x, 0), ""), one, n, "");
    LLVMValueRef run_len = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, C, one, ""), n1, inner1, "");
    channel_runs(x, p, span, acc, q, LLVMConstNull(x->ptr), n, run_len, C, requant_chan, rp);
    LLVMBuildRetVoid(x->b);
}

/* NAME_<op>__<isa>(args...) { ref(&NAME_spec, args...); } */
static void build_forward(lx *x, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    lx_build_forwarder(x, o, "", o->reference, NULL);
}

/* The plan and loops of `op`, the loops made the builder's current ones. */
static qg_status prepare(lx *x, qg_kernel_op op, qg_plan *plan, qg_kernel_loops *lp, qg_error *err) {
    qg_kernel_loops_of(x->sp, x->target->isa, op, lp);
    x->lp = lp;
    lx_use_group(x, op);
    return qg_plan_build_for(x->sp, x->target->isa, op, plan, err);
}

qg_status lx_build_kernels(lx *x, qg_error *err) {
    const qg_spec *sp = x->sp;
    qg_status st = qg_plan_check_isa(sp, x->target->isa, err);
    if (st)
        return st;
    qg_plan plan;
    qg_kernel_loops lp;
    for (qg_kernel_op op = QG_K_QUANTIZE; op <= QG_K_FAKE_QUANT_BACKWARD; op++) {
        if (!(x->ops & (1u << op)))
            continue;
        if (qg_plan_by_reference(sp, op)) {
            build_forward(x, op);
            continue;
        }
        if ((st = prepare(x, op, &plan, &lp, err)))
            return st;
        io_t io = lx_io_of(x);
        LLVMValueRef span = lx_build_span(x, &plan, &io, false);
        LLVMValueRef span1 = lp.channels_last_table ? lx_build_span(x, &plan, &io, true) : NULL;
        build_entry(x, &plan, &io, span, span1);
    }
    if (x->ops & (1u << QG_K_REQUANTIZE)) {
        if (qg_plan_by_reference(sp, QG_K_REQUANTIZE)) {
            build_forward(x, QG_K_REQUANTIZE);
        } else {
            if ((st = prepare(x, QG_K_REQUANTIZE, &plan, &lp, err)))
                return st;
            io_t io = lx_io_of(x);
            build_requantize_entry(x, &plan, lx_build_span(x, &plan, &io, false));
        }
    }
    x->lp = NULL;
    if (x->ops & (1u << QG_K_OBSERVE)) {
        lx_use_group(x, QG_K_OBSERVE);
        lx_build_observe(x);
    }
    return QG_OK;
}
