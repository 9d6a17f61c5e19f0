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
    if (qg_kernel_loops_masked(x->lp))
        args[n++] = mask;
    args[n++] = base;
    args[n++] = len;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            args[n++] = params[k];
    return lx_call(x, span, args, n);
}

/* A column of the channels-last rows (lower/lower_rows.c): channels j..
 * of the row from r0, cnt of them, their parameters from the padded
 * table's rows, through the one-vector span. */
void lx_rows_column(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef const io[3], LLVMValueRef const *row_ptr,
                    LLVMValueRef r0, LLVMValueRef j, LLVMValueRef cnt, bool partial) {
    LLVMValueRef params[QG_IN_COUNT] = {0};
    /* a partial RVV strip reads its cnt parameters only */
    LLVMValueRef strip = partial && x->isa->tail == LX_TAIL_EVL ? LLVMConstAllOnes(x->vm) : NULL;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++) {
        if (!p->uses[k])
            continue;
        const bool is_int = p->kind[k] == QG_VI;
        params[k] = lx_load(x, is_int ? x->vi : x->vf, is_int ? x->i32 : x->f32, 4, row_ptr[k], j, strip, cnt, NULL);
    }
    call_span(x, span, p, io[0], io[1], io[2], LLVMBuildAdd(x->b, r0, j, ""), cnt, params);
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

/* <prefix>_<op>_rows(in, out, mask, n, the table's rows..., C) { -- the
 * rows themselves are lowered (lower/lower_rows.c). The rows are noalias
 * arguments, as the fresh allocation made them in the entry, so the column
 * parameters still leave the row loop. */
static void rows_name(lx *x, const qg_plan *p, char *name, size_t cap) {
    snprintf(name, cap, "%s_%s_rows", x->prefix, qg_kernel_op_name(p->op));
}

void lx_rows_open(lx *x, const qg_plan *p, LLVMValueRef args[5], LLVMValueRef rows[QG_IN_COUNT]) {
    LLVMTypeRef params[5 + QG_IN_COUNT] = {x->ptr, x->ptr, x->ptr, x->i64};
    unsigned np = 4;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[np++] = x->ptr;
    params[np++] = x->i64;
    char name[QG_NAME_MAX + 48];
    rows_name(x, p, name, sizeof name);
    LLVMValueRef fn = lx_define(x, name, x->vd, params, np, false);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    const unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    const unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->c, noinline, 0));
    for (unsigned a = 0; a < 4; a++)
        args[a] = LLVMGetParam(fn, a);
    for (unsigned k = QG_IN_S, a = 4; k < QG_IN_COUNT; k++) {
        rows[k] = p->uses[k] ? LLVMGetParam(fn, a) : NULL;
        if (p->uses[k])
            LLVMAddAttributeAtIndex(fn, ++a, LLVMCreateEnumAttribute(x->c, noalias, 0));
    }
    args[4] = x->lp->channels ? lx_i64(x, (long long)x->lp->channels) : LLVMGetParam(fn, np - 1);
}

/* Channels-last (inner == 1): the parameter table, then its rows. */
void lx_channels_last(lx *x, const qg_plan *p, LLVMValueRef in, LLVMValueRef out, LLVMValueRef mask, LLVMValueRef n,
                      LLVMValueRef qp, LLVMValueRef C, LLVMBasicBlockRef fallback) {
    if (!mask)
        mask = LLVMConstNull(x->ptr);
    LLVMValueRef free_fn = lx_declare(x, "free", x->vd, &x->ptr, 1);
    LLVMValueRef tbl = lx_call(x, chan_table_function(x), (LLVMValueRef[]){qp, C}, 2);
    LLVMBasicBlockRef have = lx_block(x, "table");
    LLVMBuildCondBr(x->b, LLVMBuildIsNull(x->b, tbl, ""), fallback, have);
    LLVMPositionBuilderAtEnd(x->b, have);
    LLVMValueRef row_bytes = LLVMBuildMul(x->b, padded_channels(x, C), lx_i64(x, 4), "");
    LLVMValueRef args[5 + QG_IN_COUNT] = {in, out, mask, n};
    unsigned na = 4;
    for (int r = 0; r < 5; r++)
        if (p->uses[chan_table_rows[r]])
            args[na++] = lx_gep(x, x->i8, tbl, LLVMBuildMul(x->b, row_bytes, lx_i64(x, r), ""));
    args[na++] = C;
    char name[QG_NAME_MAX + 48];
    rows_name(x, p, name, sizeof name);
    lx_call(x, LLVMGetNamedFunction(x->m, name), args, na);
    lx_call(x, free_fn, &tbl, 1);
    LLVMBuildRetVoid(x->b);
}

qg_status lx_build_kernels(lx *x, qg_error *err) {
    lx_kb k;
    lx_kb_init(&k, x);
    return qg_lower_kernels(&k.kb, x->sp, x->target->isa, x->ops, err);
}
