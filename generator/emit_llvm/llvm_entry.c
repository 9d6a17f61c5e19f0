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

/* NAME_<op><infix>__<isa>: the entry itself, or (infix given) an internal
 * function whose address a forwarder hands to a runtime driver. */
LLVMValueRef lx_define_link(lx *x, const qg_op_info *o, const char *infix) {
    LLVMValueRef fn = define_named(x, o, infix);
    if (infix[0])
        LLVMSetLinkage(fn, LLVMInternalLinkage);
    return fn;
}

static LLVMValueRef call_span(lx *x, LLVMValueRef span, const qg_plan *p, LLVMValueRef in, LLVMValueRef out,
                              LLVMValueRef mask, LLVMValueRef base, LLVMValueRef len, LLVMValueRef *params) {
    LLVMValueRef args[5 + QG_IN_COUNT] = {in, out};
    unsigned n = 2;
    if (x->lp->mask_in != QG_MASK_NONE || x->lp->mask_out != QG_MASK_NONE) /* spans of ops with a mask take it */
        args[n++] = mask;
    args[n++] = base;
    args[n++] = len;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            args[n++] = params[k];
    return lx_call(x, span, args, n);
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
void lx_channels_last(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out, LLVMValueRef mask,
                      LLVMValueRef n, LLVMValueRef qp, LLVMValueRef C, LLVMBasicBlockRef fallback) {
    if (!mask)
        mask = LLVMConstNull(x->ptr);
    LLVMValueRef free_fn = lx_declare(x, "free", x->vd, &x->ptr, 1);
    LLVMValueRef tbl = lx_call(x, chan_table_function(x), (LLVMValueRef[]){qp, C}, 2);
    LLVMBasicBlockRef have = lx_block(x, "table");
    LLVMBuildCondBr(x->b, LLVMBuildIsNull(x->b, tbl, ""), fallback, have);
    LLVMPositionBuilderAtEnd(x->b, have);
    lx_call(x, rows_function(x, p, span), (LLVMValueRef[]){in, out, mask, n, tbl, C}, 6);
    lx_call(x, free_fn, &tbl, 1);
    LLVMBuildRetVoid(x->b);
}

qg_status lx_build_kernels(lx *x, qg_error *err) {
    lx_kb k;
    lx_kb_init(&k, x);
    return qg_lower_kernels(&k.kb, x->sp, x->target->isa, x->ops, err);
}
