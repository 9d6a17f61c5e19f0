/* The LLVM backend's observe kernel: the min/max reduction the runtime's
 * observers fold (docs/semantics.md, observers). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

/* A vector of x's values at element `at`: float32, or 16-bit codes widened
 * by the `widen` plan (qg_plan_observe_widening); `pass` fills the lanes a
 * partial load leaves (a float, or a code). */
static LLVMValueRef widened(lx *x, const qg_plan *widen, LLVMValueRef codes) {
    LLVMValueRef in[QG_IN_COUNT] = {[QG_IN_X] = LLVMBuildZExt(x->b, codes, x->vi, "")};
    return lx_lower_plan(x, widen, in, NULL, NULL);
}

static LLVMValueRef load_values(lx *x, const qg_plan *widen, LLVMValueRef xs, LLVMValueRef at, LLVMValueRef active,
                                LLVMValueRef count, LLVMValueRef pass) {
    if (!widen)
        return lx_load(x, x->vf, x->f32, 4, xs, at, active, count, pass);
    return widened(x, widen, lx_load(x, x->vh, x->i16, 2, xs, at, active, count, pass));
}

/* int minmax(const float *x, size_t len, float *mn, float *mx), len >= 1
 * (x of 16-bit codes with `widen`): `unroll` independent accumulators, then
 * a masked tail whose inactive lanes repeat x[0]. Returns 0 when x holds a
 * NaN. */
static LLVMValueRef build_minmax(lx *x, const qg_plan *widen) {
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_minmax_span__%s", x->prefix, qg_isa_name(x->target->isa));
    LLVMValueRef fn = lx_define(x, name, x->i32, (LLVMTypeRef[]){x->ptr, x->i64, x->ptr, x->ptr}, 4, false);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMValueRef xs = LLVMGetParam(fn, 0), len = LLVMGetParam(fn, 1);
    const int U = x->isa->unroll;
    LLVMValueRef pass = widen ? lx_splat(x, LLVMBuildLoad2(x->b, x->i16, xs, ""), x->vh)
                              : lx_splat(x, LLVMBuildLoad2(x->b, x->f32, xs, ""), x->vf);
    LLVMValueRef first = widen ? widened(x, widen, pass) : pass; /* x[0]'s value in every lane */
    LLVMValueRef lo[4], hi[4], ok[4];
    for (int k = 0; k < U; k++) {
        /* "no NaN yet" as all-ones int32 lanes: the compares' own form on
         * x86, so no mask narrowing in the loop */
        lo[k] = lx_alloca(x, x->vf), hi[k] = lx_alloca(x, x->vf), ok[k] = lx_alloca(x, x->vi);
        LLVMBuildStore(x->b, first, lo[k]);
        LLVMBuildStore(x->b, first, hi[k]);
        LLVMBuildStore(x->b, LLVMBuildSExt(x->b, LLVMBuildFCmp(x->b, LLVMRealORD, first, first, ""), x->vi, ""), ok[k]);
    }
    LLVMValueRef vl = lx_vl(x);
#define ACCUMULATE(k, v)                                                                                               \
    do {                                                                                                               \
        LLVMBuildStore(x->b, lx_min(x, LLVMBuildLoad2(x->b, x->vf, lo[k], ""), v), lo[k]);                             \
        LLVMBuildStore(x->b, lx_max(x, LLVMBuildLoad2(x->b, x->vf, hi[k], ""), v), hi[k]);                             \
        LLVMBuildStore(x->b,                                                                                           \
                       LLVMBuildAnd(x->b, LLVMBuildLoad2(x->b, x->vi, ok[k], ""),                                      \
                                    LLVMBuildSExt(x->b, LLVMBuildFCmp(x->b, LLVMRealORD, v, v, ""), x->vi, ""), ""),   \
                       ok[k]);                                                                                         \
    } while (0)
    LLVMValueRef i0 = lx_i64(x, 0);
    if (U > 1) {
        LLVMValueRef step = LLVMBuildMul(x->b, vl, lx_i64(x, U), "");
        lx_loop l = lx_loop_open(x, i0, "unrolled");
        LLVMValueRef i = lx_loop_value(x, &l);
        lx_loop_test(x, &l, lx_whole_steps_test(x, i, len, step));
        for (int k = 0; k < U; k++) {
            LLVMValueRef at = LLVMBuildAdd(x->b, i, LLVMBuildMul(x->b, vl, lx_i64(x, k), ""), "");
            LLVMValueRef v = load_values(x, widen, xs, at, NULL, NULL, NULL);
            ACCUMULATE(k, v);
        }
        lx_loop_close(x, &l, step);
        i0 = lx_loop_value(x, &l);
    }
    lx_loop l = lx_loop_open(x, i0, "vectors");
    LLVMValueRef i = lx_loop_value(x, &l);
    lx_loop_test(x, &l, lx_whole_steps_test(x, i, len, vl));
    LLVMValueRef v = load_values(x, widen, xs, i, NULL, NULL, NULL);
    ACCUMULATE(0, v);
    lx_loop_close(x, &l, vl);
    if (x->isa->lanes > 1 || x->isa->scalable) {
        i = lx_loop_value(x, &l);
        LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, i, len, ""));
        LLVMValueRef t = load_values(x, widen, xs, i, lx_active(x, i, len), LLVMBuildSub(x->b, len, i, ""), pass);
        ACCUMULATE(0, t);
        lx_if_close(x, join);
    }
#undef ACCUMULATE
    LLVMValueRef mn = LLVMBuildLoad2(x->b, x->vf, lo[0], ""), mx = LLVMBuildLoad2(x->b, x->vf, hi[0], "");
    LLVMValueRef all = LLVMBuildLoad2(x->b, x->vi, ok[0], "");
    for (int k = 1; k < U; k++) {
        mn = lx_min(x, mn, LLVMBuildLoad2(x->b, x->vf, lo[k], ""));
        mx = lx_max(x, mx, LLVMBuildLoad2(x->b, x->vf, hi[k], ""));
        all = LLVMBuildAnd(x->b, all, LLVMBuildLoad2(x->b, x->vi, ok[k], ""), "");
    }
    all = LLVMBuildICmp(x->b, LLVMIntNE, all, LLVMConstNull(x->vi), "");
    LLVMValueRef rmn = lx_intrinsic(x, "llvm.vector.reduce.fmin", &x->vf, 1, &mn, 1);
    LLVMValueRef rmx = lx_intrinsic(x, "llvm.vector.reduce.fmax", &x->vf, 1, &mx, 1);
    LLVMValueRef rok = lx_intrinsic(x, "llvm.vector.reduce.and", &x->vm, 1, &all, 1);
    LLVMBuildStore(x->b, rmn, LLVMGetParam(fn, 2));
    LLVMBuildStore(x->b, rmx, LLVMGetParam(fn, 3));
    LLVMBuildRet(x->b, LLVMBuildZExt(x->b, rok, x->i32, ""));
    return fn;
}
LLVMValueRef lx_build_minmax(lx *x) {
    qg_plan widening;
    const bool sixteen = qg_plan_observe_widening(x->sp, x->target->isa, &widening);
    return build_minmax(x, sixteen ? &widening : NULL);
}
