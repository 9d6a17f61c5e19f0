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
        types[k] = o->args[k].kind == QG_ARG_N || o->args[k].kind == QG_ARG_INNER ? x->isz : x->ptr;
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

/* <prefix>_<op>_rows(in, out, [mask,] n, the table's rows..., [C]) { --
 * the rows themselves are lowered (lower/lower_rows.c). The rows are
 * noalias arguments, as the fresh allocation made them in the entry, so
 * the column parameters still leave the row loop. */
void lx_rows_name(lx *x, qg_kernel_op op, char *name, size_t cap) {
    snprintf(name, cap, "%s_%s_rows", x->prefix, qg_kernel_op_name(op));
}

void lx_rows_open(lx *x, const qg_plan *p, LLVMValueRef args[5], LLVMValueRef rows[QG_IN_COUNT]) {
    const bool masked = qg_kernel_loops_masked(x->lp);
    LLVMTypeRef params[5 + QG_IN_COUNT] = {x->ptr, x->ptr, x->ptr, x->isz};
    unsigned np = masked ? 4 : 3;
    params[np - 1] = x->isz;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[np++] = x->ptr;
    if (!x->lp->channels)
        params[np++] = x->isz;
    char name[QG_NAME_MAX + 48];
    lx_rows_name(x, p->op, name, sizeof name);
    LLVMValueRef fn = lx_define(x, name, x->vd, params, np, false);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    const unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    const unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->c, noinline, 0));
    args[0] = LLVMGetParam(fn, 0);
    args[1] = LLVMGetParam(fn, 1);
    args[2] = masked ? LLVMGetParam(fn, 2) : LLVMConstNull(x->ptr);
    args[3] = LLVMGetParam(fn, masked ? 3 : 2);
    for (unsigned k = QG_IN_S, a = masked ? 4 : 3; k < QG_IN_COUNT; k++) {
        rows[k] = p->uses[k] ? LLVMGetParam(fn, a) : NULL;
        if (p->uses[k])
            LLVMAddAttributeAtIndex(fn, ++a, LLVMCreateEnumAttribute(x->c, noalias, 0));
    }
    args[4] = x->lp->channels ? lx_isz(x, (long long)x->lp->channels) : LLVMGetParam(fn, np - 1);
}

qg_status lx_build_kernels(lx *x, qg_error *err) {
    lx_kb k;
    lx_kb_init(&k, x);
    return qg_lower_kernels(&k.kb, x->sp, x->target->isa, x->ops, err);
}
