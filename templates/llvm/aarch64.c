/* AArch64's LLVM spellings (NEON, SVE). */
#include "spellings.h"

LLVMValueRef lx_aarch64_fcvtns(lx *x, LLVMValueRef a) {
    LLVMTypeRef ov[2] = {x->vi, x->vf};
    return lx_intrinsic(x, x->isa->intr[LX_I_ROUND_CVT], ov, 2, &a, 1);
}

/* frintn, then SVE's fcvtzs: saturating, NaN -> 0 (fptosi would be poison there) */
LLVMValueRef lx_aarch64_sve_fcvtzs(lx *x, LLVMValueRef a) {
    LLVMTypeRef ov[2] = {x->vi, x->vf};
    LLVMValueRef args[3] = {LLVMGetPoison(x->vi), LLVMConstAllOnes(x->vm), lx_unary(x, "llvm.roundeven", a)};
    return lx_intrinsic(x, x->isa->intr[LX_I_ROUND_CVT], ov, 2, args, 3);
}

/* NEON: four int32x4 vectors to 16 bytes in one store, as the C backend's
 * qg_neon_store4 helpers do: plain narrows (xtn) of values in range, or,
 * with z16, saturating ones (sqxtn, sqxtun) around the zero point's add. */
void lx_aarch64_store_four_q8(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at) {
    LLVMTypeRef h4 = LLVMVectorType(x->i16, 4), b8 = LLVMVectorType(x->i8, 8);
    LLVMValueRef half[4];
    for (int k = 0; k < 4; k++)
        half[k] =
            z16 ? lx_intrinsic(x, x->isa->intr[LX_I_NARROW16], &h4, 1, &r[k], 1) : LLVMBuildTrunc(x->b, r[k], h4, "");
    LLVMValueRef ab = lx_concat(x, half[0], half[1]), cd = lx_concat(x, half[2], half[3]), v;
    if (z16) {
        lx_add_zero_point(x, z16, &ab, &cd);
        const char *to8 = x->isa->intr[lx_is_signed_q(x) ? LX_I_NARROW8 : LX_I_NARROW8U];
        v = lx_bound_below(x, lx_concat(x, lx_intrinsic(x, to8, &b8, 1, &ab, 1), lx_intrinsic(x, to8, &b8, 1, &cd, 1)));
    } else {
        v = LLVMBuildTrunc(x->b, lx_concat(x, ab, cd), LLVMVectorType(x->i8, 16), "");
    }
    LLVMSetAlignment(LLVMBuildStore(x->b, v, lx_gep(x, x->i8, out, at)), 1);
}
