/* The LLVM backend's gradient masks: packed bits on fixed-width ISAs
 * inline (at most three bytes per vector), the runtime's helpers on
 * scalable ones, AVX2's byte masks through pdep. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

LLVMValueRef lx_mask_helper(lx *x, bool pack) {
    LLVMTypeRef p[4] = {x->ptr, pack ? x->i64 : x->ptr, pack ? x->ptr : x->i64, x->i64};
    if (pack) /* (packed, pos, lanes, count) */
        p[1] = x->i64, p[2] = x->ptr;
    return lx_declare(x, pack ? "qg_mask_pack_bits" : "qg_mask_unpack_bits", x->vd, p, 4);
}

/* Packed masks on fixed-width ISAs, inline: a vector's lanes are at most
 * 16 bits, which with the bit offset span at most three bytes; only the
 * bytes holding one of the `count` bits are read or written. */
static LLVMValueRef byte_needed(lx *x, LLVMValueRef sh, LLVMValueRef count, int k) {
    LLVMValueRef end = LLVMBuildAdd(x->b, LLVMBuildZExt(x->b, sh, x->i64, ""), count, "");
    return LLVMBuildICmp(x->b, LLVMIntUGT, end, lx_i64(x, 8 * k), "");
}

/* A full vector starting at a byte boundary: its bits are whole bytes. */
static LLVMValueRef whole_bytes(lx *x, LLVMValueRef sh, LLVMValueRef count) {
    return LLVMBuildAnd(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, sh, lx_i32(x, 0), ""),
                        LLVMBuildICmp(x->b, LLVMIntEQ, count, lx_i64(x, x->isa->lanes), ""), "");
}

/* Where the lanes fill whole bytes: branches to a block of its own when
 * the `count` bits at bit offset `sh` are whole bytes (a full vector at a
 * byte boundary), leaving the builder there, and returns true; the other
 * case goes on in `general`. */
static bool open_whole_bytes(lx *x, LLVMValueRef sh, LLVMValueRef count, LLVMBasicBlockRef general) {
    if (x->isa->lanes % 8) {
        LLVMBuildBr(x->b, general);
        return false;
    }
    LLVMBasicBlockRef whole = lx_block(x, "bits_whole");
    LLVMBuildCondBr(x->b, whole_bytes(x, sh, count), whole, general);
    LLVMPositionBuilderAtEnd(x->b, whole);
    return true;
}

static LLVMValueRef low_bits(lx *x, LLVMValueRef count) {
    LLVMValueRef c32 = LLVMBuildTrunc(x->b, count, x->i32, "");
    return LLVMBuildSub(x->b, LLVMBuildShl(x->b, lx_i32(x, 1), c32, ""), lx_i32(x, 1), "");
}

void lx_pack_bits_inline(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
    LLVMValueRef bits = LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, iL, ""), x->i32, "");
    bits = LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_i64(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_i64(x, 7), ""), x->i32, "");
    LLVMValueRef word = LLVMBuildShl(x->b, bits, sh, "");
    LLVMBasicBlockRef general = lx_block(x, "bits_any"), done = lx_block(x, "bits_done");
    if (open_whole_bytes(x, sh, count, general)) { /* one store, the mask being zeroed at entry */
        LLVMSetAlignment(LLVMBuildStore(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), lx_gep(x, x->i8, packed, byte)), 1);
        LLVMBuildBr(x->b, done);
    }
    LLVMPositionBuilderAtEnd(x->b, general);
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = lx_if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_i64(x, k), ""));
        LLVMValueRef part = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, lx_i32(x, 8 * k), ""), x->i8, "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), part, ""), p);
        lx_if_close(x, join);
    }
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, done);
}

LLVMValueRef lx_unpack_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_i64(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_i64(x, 7), ""), x->i32, "");
    LLVMValueRef word = lx_alloca(x, x->i32);
    LLVMBuildStore(x->b, lx_i32(x, 0), word);
    LLVMBasicBlockRef general = lx_block(x, "bits_any"), done = lx_block(x, "bits_done");
    if (open_whole_bytes(x, sh, count, general)) { /* one load */
        LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
        LLVMValueRef v = LLVMBuildLoad2(x->b, iL, lx_gep(x, x->i8, packed, byte), "");
        LLVMSetAlignment(v, 1);
        LLVMBuildStore(x->b, LLVMBuildZExt(x->b, v, x->i32, ""), word);
        LLVMBuildBr(x->b, done);
    }
    LLVMPositionBuilderAtEnd(x->b, general);
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = lx_if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_i64(x, k), ""));
        LLVMValueRef part = LLVMBuildShl(x->b, LLVMBuildZExt(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), x->i32, ""),
                                         lx_i32(x, 8 * k), "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), part, ""), word);
        lx_if_close(x, join);
    }
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, done);
    LLVMValueRef bits = LLVMBuildLShr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), sh, "");
    bits = LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
    return LLVMBuildBitCast(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), x->vm, "");
}

/* x86_pdep: a full vector's lane mask as bytes through its bits and BMI2's pdep. */
void lx_store_mask_bytes_pdep(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at) {
    LLVMValueRef bits = LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, x->i8, ""), x->i64, "");
    LLVMValueRef args[2] = {bits, LLVMConstInt(x->i64, 0x0101010101010101ull, 0)};
    LLVMValueRef bytes = lx_intrinsic(x, "llvm.x86.bmi.pdep.64", NULL, 0, args, 2);
    LLVMSetAlignment(LLVMBuildStore(x->b, bytes, lx_gep(x, x->i8, out, at)), 1);
}

/* <prefix>_mask_bits(mask, at, m, count): the lane mask m of `count` lanes
 * into the packed mask at bit `at`, through lane bytes and the runtime's
 * helper; out of line (a strip off the byte grid is rare), so a loop that
 * calls it keeps no bit-by-bit code or scratch of its own. */
static LLVMValueRef mask_bits_function(lx *x) {
    LLVMValueRef fn;
    lx_resume caller;
    LLVMTypeRef params[4] = {x->ptr, x->i64, x->vm, x->i64};
    if (!lx_helper_open(x, "_mask_bits", x->vd, params, 4, &fn, &caller))
        return fn;
    LLVMValueRef lane_bytes = lx_alloca(x, x->vb);
    lx_store(x, LLVMBuildZExt(x->b, LLVMGetParam(fn, 2), x->vb, ""), x->i8, 1, lane_bytes, lx_i64(x, 0), NULL, NULL);
    LLVMValueRef args[4] = {LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), lane_bytes, LLVMGetParam(fn, 3)};
    lx_call(x, lx_mask_helper(x, true), args, 4);
    LLVMBuildRetVoid(x->b);
    lx_helper_close(x, &caller);
    return fn;
}

/* A scalable strip's lane mask into the packed mask at bit `at`; where the
 * ISA stores mask registers as bits (llvm_mask_bits), a strip that starts
 * and ends on a byte is one store, and only a run's first strip or the
 * last one takes the out-of-line way. */
void lx_store_mask_bits_scalable(lx *x, const span_args *s, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef args[4] = {s->mask, at, m, count};
    if (x->isa->mask_bits != LX_MASK_BITS_RISCV_VSM) {
        lx_call(x, mask_bits_function(x), args, 4);
        return;
    }
    LLVMValueRef odd = LLVMBuildAnd(x->b, LLVMBuildOr(x->b, at, count, ""), lx_i64(x, 7), "");
    LLVMBasicBlockRef whole = lx_block(x, "mask_whole_bytes"), bits = lx_block(x, "mask_bits");
    LLVMBasicBlockRef done = lx_block(x, "mask_stored");
    LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, odd, lx_i64(x, 0), ""), whole, bits);
    LLVMPositionBuilderAtEnd(x->b, whole);
    LLVMValueRef ptr = lx_gep(x, x->i8, s->mask, LLVMBuildLShr(x->b, at, lx_i64(x, 3), ""));
    lx_intrinsic(x, "llvm.riscv.vsm", (LLVMTypeRef[]){x->vm, x->i64}, 2, (LLVMValueRef[]){m, ptr, count}, 3);
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, bits);
    lx_call(x, mask_bits_function(x), args, 4);
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, done);
}
