/* RISC-V V's LLVM spellings. */
#include "spellings.h"

/* vfcvt.x.f.v with its explicit rounding mode 0 = RNE, set through frm
 * (never .rtz) */
LLVMValueRef lx_riscv_vfcvt(lx *x, LLVMValueRef a) {
    LLVMTypeRef ov[3] = {x->vi, x->vf, x->i64};
    LLVMValueRef vl = x->evl ? LLVMBuildZExt(x->b, x->evl, x->i64, "") : lx_i64(x, -1);
    LLVMValueRef args[4] = {LLVMGetPoison(x->vi), a, lx_i64(x, 0), vl};
    return lx_intrinsic(x, x->isa->intr[LX_I_ROUND_CVT], ov, 3, args, 4);
}

/* Packed masks (llvm_mask_bits "riscv_vsm"): a strip that starts and ends on a byte
 * is one vsm.v or vlm.v; the others (a run's first strip, the last one)
 * go out of line, so the loop keeps no scalar work and no vector register
 * is spilled around it. There the strip's bits pass through whole bytes on
 * the stack, as many as a strip has lanes at any VLEN and LMUL. */
static LLVMValueRef on_byte_grid(lx *x, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef odd = LLVMBuildAnd(x->b, LLVMBuildOr(x->b, at, count, ""), lx_i64(x, 7), "");
    return LLVMBuildICmp(x->b, LLVMIntEQ, odd, lx_i64(x, 0), "");
}

enum { STRIP_BYTES_MAX = 2048 }; /* 8 registers of 65536 bits, one bit per 32-bit lane */

/* Bits k .. k+7 of a strip (fewer at its end): their count. */
static LLVMValueRef byte_bits(lx *x, LLVMValueRef k, LLVMValueRef count) {
    return lx_umin(x, LLVMBuildSub(x->b, count, k, ""), lx_i64(x, 8));
}

static LLVMValueRef byte_of(lx *x, LLVMValueRef buf, LLVMValueRef k) {
    return lx_gep(x, x->i8, buf, LLVMBuildLShr(x->b, k, lx_i64(x, 3), ""));
}

/* Each byte of the strip's bits goes to the packed mask as a vector of 8
 * lanes would (lx_pack_bits_inline: the register's tail past the strip
 * dropped, the mask cleared at entry). */
static LLVMValueRef put_bits_function(lx *x) {
    LLVMValueRef fn;
    lx_resume caller;
    LLVMTypeRef params[4] = {x->ptr, x->vm, x->i64, x->i64};
    if (!lx_group_helper_open(x, "_put_bits", x->vd, params, 4, &fn, &caller))
        return fn;
    LLVMValueRef packed = LLVMGetParam(fn, 0), at = LLVMGetParam(fn, 2), count = LLVMGetParam(fn, 3);
    LLVMValueRef buf = lx_alloca(x, LLVMArrayType(x->i8, STRIP_BYTES_MAX));
    lx_intrinsic(x, x->isa->intr[LX_I_STORE_BITS], (LLVMTypeRef[]){x->vm, x->i64}, 2,
                 (LLVMValueRef[]){LLVMGetParam(fn, 1), buf, count}, 3);
    lx_loop l = lx_loop_open(x, lx_i64(x, 0), "strip_bytes");
    LLVMValueRef k = lx_loop_value(x, &l);
    lx_loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULT, k, count, ""));
    LLVMValueRef bits = LLVMBuildLoad2(x->b, x->i8, byte_of(x, buf, k), "");
    LLVMValueRef lanes8 = LLVMBuildBitCast(x->b, bits, LLVMVectorType(x->i1, 8), "");
    lx_pack_bits_inline(x, lanes8, packed, LLVMBuildAdd(x->b, at, k, ""), byte_bits(x, k, count));
    lx_loop_close(x, &l, lx_i64(x, 8));
    LLVMBuildRetVoid(x->b);
    lx_helper_close(x, &caller);
    return fn;
}

/* ... and each byte comes from it as 8 lanes would (lx_get_bits_inline). */
static LLVMValueRef get_bits_function(lx *x) {
    LLVMValueRef fn;
    lx_resume caller;
    LLVMTypeRef params[3] = {x->ptr, x->i64, x->i64};
    if (!lx_group_helper_open(x, "_get_bits", x->vm, params, 3, &fn, &caller))
        return fn;
    LLVMValueRef packed = LLVMGetParam(fn, 0), at = LLVMGetParam(fn, 1), count = LLVMGetParam(fn, 2);
    LLVMValueRef buf = lx_alloca(x, LLVMArrayType(x->i8, STRIP_BYTES_MAX));
    lx_loop l = lx_loop_open(x, lx_i64(x, 0), "strip_bytes");
    LLVMValueRef k = lx_loop_value(x, &l);
    lx_loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULT, k, count, ""));
    LLVMValueRef bits = lx_get_bits_inline(x, packed, LLVMBuildAdd(x->b, at, k, ""), byte_bits(x, k, count), 8);
    LLVMBuildStore(x->b, LLVMBuildTrunc(x->b, bits, x->i8, ""), byte_of(x, buf, k));
    lx_loop_close(x, &l, lx_i64(x, 8));
    LLVMBuildRet(x->b, lx_intrinsic(x, x->isa->intr[LX_I_LOAD_BITS], (LLVMTypeRef[]){x->vm, x->i64}, 2,
                                    (LLVMValueRef[]){buf, count}, 2));
    lx_helper_close(x, &caller);
    return fn;
}

void lx_riscv_store_bits_vsm(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count) {
    LLVMBasicBlockRef join = lx_if_open(x, on_byte_grid(x, at, count));
    LLVMValueRef ptr = lx_gep(x, x->i8, packed, LLVMBuildLShr(x->b, at, lx_i64(x, 3), ""));
    lx_intrinsic(x, x->isa->intr[LX_I_STORE_BITS], (LLVMTypeRef[]){x->vm, x->i64}, 2, (LLVMValueRef[]){m, ptr, count},
                 3);
    join = lx_else(x, join);
    lx_call(x, put_bits_function(x), (LLVMValueRef[]){packed, m, at, count}, 4);
    lx_if_close(x, join);
}

LLVMValueRef lx_riscv_load_bits_vlm(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef m = lx_alloca(x, x->vm); /* mem2reg makes it the two branches' phi */
    LLVMBasicBlockRef join = lx_if_open(x, on_byte_grid(x, at, count));
    LLVMValueRef ptr = lx_gep(x, x->i8, packed, LLVMBuildLShr(x->b, at, lx_i64(x, 3), ""));
    LLVMBuildStore(x->b,
                   lx_intrinsic(x, x->isa->intr[LX_I_LOAD_BITS], (LLVMTypeRef[]){x->vm, x->i64}, 2,
                                (LLVMValueRef[]){ptr, count}, 2),
                   m);
    join = lx_else(x, join);
    LLVMBuildStore(x->b, lx_call(x, get_bits_function(x), (LLVMValueRef[]){packed, at, count}, 3), m);
    lx_if_close(x, join);
    return LLVMBuildLoad2(x->b, x->vm, m, "");
}
