/* The four-vector narrowing of ISAs whose instructions pack two vectors
 * into one of half-width lanes with saturation: x86's packs, wasm's narrow. */
#include <string.h>

#include "spellings.h"

/* Two vectors' saturating pack into one of half-width lanes: x86's packs
 * (one type each) or WebAssembly's narrow (overloaded on both types). */
static LLVMValueRef pack2(lx *x, const char *name, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef at = LLVMTypeOf(a), et = LLVMGetElementType(at);
    LLVMTypeRef ov[2] = {
        LLVMVectorType(LLVMIntTypeInContext(x->c, LLVMGetIntTypeWidth(et) / 2), 2 * LLVMGetVectorSize(at)), at};
    const bool overloaded = LLVMIntrinsicIsOverloaded(LLVMLookupIntrinsicID(name, strlen(name)));
    return lx_intrinsic(x, name, overloaded ? ov : NULL, overloaded ? 2 : 0, (LLVMValueRef[]){a, b}, 2);
}

/* Four int32 vectors to bytes in two rounds of saturating packs (within
 * 128-bit lanes), signed or unsigned at the second; with z16 the zero
 * point is added between them. */
LLVMValueRef lx_narrow_four(lx *x, LLVMValueRef r[4], bool to_unsigned, LLVMValueRef z16) {
    const char *dw = x->isa->intr[LX_I_NARROW16], *wb = x->isa->intr[to_unsigned ? LX_I_NARROW8U : LX_I_NARROW8];
    LLVMValueRef ab = pack2(x, dw, r[0], r[1]), cd = pack2(x, dw, r[2], r[3]);
    if (z16)
        lx_add_zero_point(x, z16, &ab, &cd);
    return pack2(x, wb, ab, cd);
}

/* x86's and wasm's four-vector store (llvm_narrow4 "x86_packs_256",
 * "x86_packs_512", "wasm_narrow"): two rounds of saturating packs, then one
 * permutation putting each vector's bytes back together, as the C
 * backend's store4 helpers do; the zero point is added between the rounds. */
void lx_store_four_q8_packs(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at) {
    LLVMValueRef v = lx_narrow_four(x, r, !lx_is_signed_q(x), z16);
    if (z16)
        v = lx_bound_below(x, v);
    /* the packs work within 128-bit lanes: put each vector's dwords back together */
    const unsigned L = x->isa->lanes, lanes128 = L / 4;
    LLVMValueRef idx[16];
    for (unsigned m = 0; m < L; m++)
        idx[m] = lx_i32(x, (long long)((m % lanes128) * 4 + m / lanes128));
    LLVMValueRef dwords = LLVMBuildBitCast(x->b, v, x->vi, "");
    LLVMValueRef perm = LLVMBuildShuffleVector(x->b, dwords, LLVMGetPoison(x->vi), LLVMConstVector(idx, L), "");
    LLVMSetAlignment(LLVMBuildStore(x->b, perm, lx_gep(x, x->i8, out, at)), 1);
}
