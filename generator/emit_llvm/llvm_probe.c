/* One plan step on one vector of each operand, as a function of its own:
 * the unit tests run every opcode's lowering alone through it, so a wrong
 * spelling shows as that opcode on that ISA rather than as a kernel. */
#include <stdio.h>

#include "llvm_kernel.h"

static LLVMTypeRef lanes_of(const lx *x, qg_vkind k) { return k == QG_VF ? x->vf : x->vi; }

/* void <prefix>_probe(const void *a, const void *b, const void *c, void *out):
 * lane masks travel as int32 lanes, nonzero in and -1 out for set lanes. */
qg_status lx_build_probe(lx *x, qg_error *err) {
    (void)err;
    const qg_plan *p = x->probe;
    LLVMTypeRef params[4] = {x->ptr, x->ptr, x->ptr, x->ptr};
    char name[QG_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s_probe", x->prefix);
    LLVMValueRef fn = lx_define(x, name, x->vd, params, 4, false);
    LLVMValueRef in[QG_IN_COUNT] = {0};
    for (unsigned k = 0; k < 3; k++) {
        const qg_vkind kind = p->kind[k];
        LLVMValueRef v = lx_load(x, lanes_of(x, kind), kind == QG_VF ? x->f32 : x->i32, 4, LLVMGetParam(fn, k),
                                 lx_isz(x, 0), NULL, NULL, NULL);
        in[k] = kind == QG_VM ? LLVMBuildICmp(x->b, LLVMIntNE, v, LLVMConstNull(x->vi), "") : v;
    }
    const int out = p->out_q >= 0 ? p->out_q : p->out_y;
    LLVMValueRef r = lx_lower_plan(x, p, in, NULL, NULL);
    if (p->kind[out] == QG_VM)
        r = LLVMBuildSExt(x->b, r, x->vi, "");
    lx_store(x, r, p->kind[out] == QG_VF ? x->f32 : x->i32, 4, LLVMGetParam(fn, 3), lx_isz(x, 0), NULL, NULL);
    LLVMBuildRetVoid(x->b);
    return QG_OK;
}
