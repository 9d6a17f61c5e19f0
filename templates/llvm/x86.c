/* x86's LLVM spellings (AVX2, AVX-512): the instructions themselves where
 * LLVM's portable forms lower to something slower. */
#include "spellings.h"

/* min/max: a compare-and-select would do, but LLVM rewrites it around
 * neighbouring adds of +0.0 into a blend. */
LLVMValueRef lx_x86_minmax_256(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    if (LLVMTypeOf(a) != x->vf)
        return NULL;
    return lx_intrinsic(x, x->isa->intr[is_max ? LX_I_MAX : LX_I_MIN], NULL, 0, (LLVMValueRef[]){a, b}, 2);
}

/* ... AVX-512's, with the rounding operand: the current direction */
LLVMValueRef lx_x86_minmax_512(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    if (LLVMTypeOf(a) != x->vf)
        return NULL;
    return lx_intrinsic(x, x->isa->intr[is_max ? LX_I_MAX : LX_I_MIN], NULL, 0, (LLVMValueRef[]){a, b, lx_i32(x, 4)},
                        3);
}

LLVMValueRef lx_x86_cvtps2dq_256(lx *x, LLVMValueRef a) {
    return lx_intrinsic(x, x->isa->intr[LX_I_ROUND_CVT], NULL, 0, &a, 1);
}

LLVMValueRef lx_x86_cvtps2dq_512(lx *x, LLVMValueRef a) {
    LLVMValueRef args[4] = {a, LLVMGetPoison(x->vi), LLVMConstInt(x->i16, 0xFFFF, 0), lx_i32(x, 4)};
    return lx_intrinsic(x, x->isa->intr[LX_I_ROUND_CVT], NULL, 0, args, 4);
}

/* AVX2 lowers a plain truncation to byte shuffles (two pshufb and an unpack
 * after the lane extract); clamped to the q type's range first, which
 * changes no value here, it becomes the two saturating packs the C
 * backend's store helper uses. */
LLVMValueRef lx_x86_clamp_before_narrow(lx *x, LLVMValueRef r) {
    const unsigned bits = LLVMGetIntTypeWidth(LLVMGetElementType(x->vq));
    if (bits >= 32)
        return r;
    const bool is_signed = lx_is_signed_q(x);
    const long long lo = is_signed ? -(1LL << (bits - 1)) : 0;
    const long long hi = is_signed ? (1LL << (bits - 1)) - 1 : (1LL << bits) - 1;
    LLVMTypeRef t = LLVMTypeOf(r);
    LLVMValueRef above[2] = {r, lx_splat(x, lx_i32(x, lo), t)};
    LLVMValueRef below[2] = {lx_intrinsic(x, "llvm.smax", &t, 1, above, 2), lx_splat(x, lx_i32(x, hi), t)};
    return lx_intrinsic(x, "llvm.smin", &t, 1, below, 2);
}

/* x86_pdep: a full vector's lane mask as bytes through its bits and BMI2's pdep. */
void lx_x86_store_mask_bytes_pdep(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at) {
    LLVMValueRef bits = LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, x->i8, ""), x->i64, "");
    LLVMValueRef args[2] = {bits, LLVMConstInt(x->i64, 0x0101010101010101ull, 0)};
    LLVMValueRef bytes = lx_intrinsic(x, x->isa->intr[LX_I_PDEP], NULL, 0, args, 2);
    LLVMSetAlignment(LLVMBuildStore(x->b, bytes, lx_gep(x, x->i8, out, at)), 1);
}
