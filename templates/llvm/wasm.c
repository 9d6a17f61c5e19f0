/* WebAssembly SIMD128's LLVM spellings. */
#include "spellings.h"

/* pmin(b, a) is a < b ? a : b, pmax(b, a) is b < a ? a : b; LLVM 19 does
 * not match the portable compare-and-select to both. */
LLVMValueRef lx_wasm_pminmax(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    LLVMTypeRef t = LLVMTypeOf(a);
    if (t != x->vf)
        return NULL;
    return lx_intrinsic(x, x->isa->intr[is_max ? LX_I_MAX : LX_I_MIN], &t, 1, (LLVMValueRef[]){b, a}, 2);
}

/* f32x4.nearest, then i32x4.trunc_sat_f32x4_s: saturating, NaN -> 0 */
LLVMValueRef lx_wasm_trunc_sat(lx *x, LLVMValueRef a) {
    LLVMTypeRef ov[2] = {x->vi, x->vf};
    LLVMValueRef r = lx_unary(x, "llvm.roundeven", a);
    return lx_intrinsic(x, "llvm.fptosi.sat", ov, 2, &r, 1);
}

/* A mask's bitmask, its lanes widened to 128 bits (LLVM 19 takes a wasm
 * mask's bits apart lane by lane). */
LLVMValueRef lx_wasm_lane_bits(lx *x, LLVMValueRef m, unsigned lanes) {
    if (128 % lanes != 0 || lanes < 4)
        return NULL;
    LLVMTypeRef v = LLVMVectorType(LLVMIntTypeInContext(x->c, 128 / lanes), lanes);
    return lx_intrinsic(x, x->isa->intr[LX_I_BITMASK], &v, 1, (LLVMValueRef[]){LLVMBuildSExt(x->b, m, v, "")}, 1);
}

/* The four masks as all-ones lanes narrowed to 16 bytes (two rounds of
 * saturating narrow, as the C spelling does), then their bitmask or the
 * bytes themselves; shuffles of i1 vectors are taken apart lane by lane. */
bool lx_wasm_store_four_masks(lx *x, LLVMValueRef m[4], LLVMValueRef mask, LLVMValueRef at) {
    if (x->isa->lanes != 4)
        return false;
    LLVMValueRef w[4];
    for (int k = 0; k < 4; k++)
        w[k] = LLVMBuildSExt(x->b, m[k], x->vi, "");
    LLVMValueRef bytes = lx_narrow_four(x, w, false, NULL);
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, mask, ""));
    if (lx_packed_mask(x)) {
        LLVMTypeRef v16 = LLVMTypeOf(bytes);
        LLVMValueRef bits = lx_intrinsic(x, x->isa->intr[LX_I_BITMASK], &v16, 1, &bytes, 1);
        lx_pack_bits_value(x, bits, 16, mask, at, lx_isz(x, 16));
    } else {
        LLVMValueRef one[16];
        for (int k = 0; k < 16; k++)
            one[k] = LLVMConstInt(x->i8, 1, 0);
        LLVMValueRef ones = LLVMBuildAnd(x->b, bytes, LLVMConstVector(one, 16), "");
        LLVMSetAlignment(LLVMBuildStore(x->b, ones, lx_gep(x, x->i8, mask, at)), 1);
    }
    lx_if_close(x, join);
    return true;
}
