/* The LLVM backend's gradient masks: packed bits inline (at most three
 * bytes per vector on fixed-width ISAs, nine on scalable ones); an ISA's
 * own ways of moving mask bits are its spellings (llvm_spelling.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

/* Packed masks on fixed-width ISAs, inline: a vector's lanes are at most
 * 16 bits, which with the bit offset span at most three bytes; only the
 * bytes holding one of the `count` bits are read or written. */
static LLVMValueRef byte_needed(lx *x, LLVMValueRef sh, LLVMValueRef count, int k) {
    LLVMValueRef end = LLVMBuildAdd(x->b, LLVMBuildZExt(x->b, sh, x->isz, ""), count, "");
    return LLVMBuildICmp(x->b, LLVMIntUGT, end, lx_isz(x, 8 * k), "");
}

/* A full vector starting at a byte boundary: its bits are whole bytes. */
static LLVMValueRef whole_bytes(lx *x, LLVMValueRef sh, LLVMValueRef count, unsigned lanes) {
    return LLVMBuildAnd(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, sh, lx_i32(x, 0), ""),
                        LLVMBuildICmp(x->b, LLVMIntEQ, count, lx_isz(x, lanes), ""), "");
}

/* Where the lanes can fill whole bytes: if (the `count` bits at bit
 * offset `sh` are whole bytes, a full vector at a byte boundary) { --
 * its join, or NULL where they cannot. */
static LLVMBasicBlockRef open_whole_bytes(lx *x, LLVMValueRef sh, LLVMValueRef count, unsigned lanes) {
    return lanes % 8 ? NULL : lx_if_open(x, whole_bytes(x, sh, count, lanes));
}

static LLVMValueRef low_bits(lx *x, LLVMValueRef count) {
    LLVMValueRef c32 = LLVMBuildTrunc(x->b, count, x->i32, "");
    return LLVMBuildSub(x->b, LLVMBuildShl(x->b, lx_i32(x, 1), c32, ""), lx_i32(x, 1), "");
}

/* The lanes of m as the low bits of an i32. */
static LLVMValueRef mask_bits(lx *x, LLVMValueRef m, unsigned lanes) {
    LLVMValueRef bits = x->isa->sp.lane_bits ? x->isa->sp.lane_bits(x, m, lanes) : NULL;
    if (bits)
        return bits;
    return LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, LLVMIntTypeInContext(x->c, lanes), ""), x->i32, "");
}

void lx_pack_bits_inline(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    const unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(m)); /* a vector's, or group_mask's 16 */
    lx_pack_bits_value(x, mask_bits(x, m, lanes), lanes, packed, at, count);
}

void lx_pack_bits_value(lx *x, LLVMValueRef bits, unsigned lanes, LLVMValueRef packed, LLVMValueRef at,
                        LLVMValueRef count) {
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, lanes);
    bits = LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_isz(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_isz(x, 7), ""), x->i32, "");
    LLVMValueRef word = LLVMBuildShl(x->b, bits, sh, "");
    LLVMBasicBlockRef whole = open_whole_bytes(x, sh, count, lanes);
    if (whole) { /* one store, the mask being zeroed at entry */
        LLVMSetAlignment(LLVMBuildStore(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), lx_gep(x, x->i8, packed, byte)), 1);
        whole = lx_else(x, whole);
    }
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = lx_if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_isz(x, k), ""));
        LLVMValueRef part = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, lx_i32(x, 8 * k), ""), x->i8, "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), part, ""), p);
        lx_if_close(x, join);
    }
    if (whole)
        lx_if_close(x, whole);
}

LLVMValueRef lx_get_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count, unsigned lanes) {
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_isz(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_isz(x, 7), ""), x->i32, "");
    LLVMValueRef word = lx_alloca(x, x->i32);
    LLVMBuildStore(x->b, lx_i32(x, 0), word);
    LLVMBasicBlockRef whole = open_whole_bytes(x, sh, count, lanes);
    if (whole) { /* one load */
        LLVMTypeRef iL = LLVMIntTypeInContext(x->c, lanes);
        LLVMValueRef v = LLVMBuildLoad2(x->b, iL, lx_gep(x, x->i8, packed, byte), "");
        LLVMSetAlignment(v, 1);
        LLVMBuildStore(x->b, LLVMBuildZExt(x->b, v, x->i32, ""), word);
        whole = lx_else(x, whole);
    }
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = lx_if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_isz(x, k), ""));
        LLVMValueRef part = LLVMBuildShl(x->b, LLVMBuildZExt(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), x->i32, ""),
                                         lx_i32(x, 8 * k), "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), part, ""), word);
        lx_if_close(x, join);
    }
    if (whole)
        lx_if_close(x, whole);
    LLVMValueRef bits = LLVMBuildLShr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), sh, "");
    return LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
}

LLVMValueRef lx_unpack_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef bits = lx_get_bits_inline(x, packed, at, count, x->isa->lanes);
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
    return LLVMBuildBitCast(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), x->vm, "");
}

LLVMValueRef lx_mask_of_bits(lx *x, LLVMValueRef bits, unsigned first) {
    const unsigned L = x->isa->lanes;
    LLVMValueRef w[64];
    for (unsigned k = 0; k < L; k++)
        w[k] = lx_i32(x, (long long)1 << ((first + k) & 31));
    LLVMValueRef v = LLVMBuildAnd(x->b, lx_splat(x, bits, x->vi), LLVMConstVector(w, L), "");
    return LLVMBuildICmp(x->b, LLVMIntNE, v, LLVMConstNull(x->vi), "");
}

/* Packed masks on scalable ISAs, inline and without a branch: a strip's
 * lanes (at most 64: 2048-bit SVE) are bits of an
 * i64, lane k at bit k; with the bit offset they touch at most 9 bytes,
 * read and written as the first lanes of a byte vector under a lane mask,
 * so no byte outside the strip's is touched. */
static LLVMValueRef lane_numbers(lx *x, LLVMTypeRef vt) {
    static const char renamed[] = "llvm.stepvector"; /* llvm.experimental.stepvector before LLVM 20 */
    const bool has = LLVMLookupIntrinsicID(renamed, sizeof renamed - 1) != 0;
    return lx_intrinsic(x, has ? renamed : "llvm.experimental.stepvector", &vt, 1, NULL, 0);
}

/* the low `count` (1..64) bits of an i64 */
static LLVMValueRef low_bits64(lx *x, LLVMValueRef count) {
    LLVMValueRef all = lx_i64(x, -1), under = LLVMBuildICmp(x->b, LLVMIntULT, count, lx_i64(x, 64), "");
    LLVMValueRef part = LLVMBuildSub(x->b, LLVMBuildShl(x->b, lx_i64(x, 1), count, ""), lx_i64(x, 1), "");
    return LLVMBuildSelect(x->b, under, part, all, "");
}

typedef struct bit_window {
    LLVMValueRef ptr, sh, active; /* first byte, bit offset in it (i128), bytes touched */
    LLVMTypeRef bytes, words;     /* <vscale x 16 x i8> and the same bits as <vscale x 2 x i64> */
} bit_window;

static bit_window window_of(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    bit_window w;
    LLVMValueRef sh = LLVMBuildAnd(x->b, at, lx_i64(x, 7), "");
    w.ptr = lx_gep(x, x->i8, packed, LLVMBuildLShr(x->b, at, lx_i64(x, 3), ""));
    w.sh = LLVMBuildZExt(x->b, sh, LLVMInt128TypeInContext(x->c), "");
    w.bytes = LLVMScalableVectorType(x->i8, 16);
    w.words = LLVMScalableVectorType(x->i64, 2);
    LLVMValueRef n =
        LLVMBuildLShr(x->b, LLVMBuildAdd(x->b, LLVMBuildAdd(x->b, sh, count, ""), lx_i64(x, 7), ""), lx_i64(x, 3), "");
    LLVMTypeRef ov[2] = {LLVMScalableVectorType(x->i1, 16), x->i64};
    w.active = lx_intrinsic(x, "llvm.get.active.lane.mask", ov, 2, (LLVMValueRef[]){lx_i64(x, 0), n}, 2);
    return w;
}

static LLVMValueRef window_load(lx *x, const bit_window *w) {
    LLVMTypeRef ov[2] = {w->bytes, x->ptr};
    LLVMValueRef args[4] = {w->ptr, lx_i32(x, 1), w->active, LLVMConstNull(w->bytes)};
    return lx_intrinsic(x, "llvm.masked.load", ov, 2, args, 4);
}

void lx_pack_bits_scalable(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMTypeRef v64 = lx_vec(x, x->i64), i128 = LLVMInt128TypeInContext(x->c);
    LLVMValueRef weight = LLVMBuildShl(x->b, lx_splat(x, lx_i64(x, 1), v64), lane_numbers(x, v64), "");
    LLVMValueRef set = LLVMBuildSelect(x->b, m, weight, LLVMConstNull(v64), "");
    LLVMValueRef bits = lx_intrinsic(x, "llvm.vector.reduce.or", &v64, 1, &set, 1);
    bits = LLVMBuildAnd(x->b, bits, low_bits64(x, count), "");
    bit_window w = window_of(x, packed, at, count);
    LLVMValueRef word = LLVMBuildShl(x->b, LLVMBuildZExt(x->b, bits, i128, ""), w.sh, "");
    LLVMValueRef lo = LLVMBuildTrunc(x->b, word, x->i64, "");
    LLVMValueRef hi = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, LLVMConstInt(i128, 64, 0), ""), x->i64, "");
    LLVMValueRef v = LLVMBuildInsertElement(x->b, LLVMConstNull(w.words), lo, lx_i64(x, 0), "");
    v = LLVMBuildBitCast(x->b, LLVMBuildInsertElement(x->b, v, hi, lx_i64(x, 1), ""), w.bytes, "");
    LLVMTypeRef ov[2] = {w.bytes, x->ptr};
    LLVMValueRef args[4] = {LLVMBuildOr(x->b, window_load(x, &w), v, ""), w.ptr, lx_i32(x, 1), w.active};
    lx_intrinsic(x, "llvm.masked.store", ov, 2, args, 4);
}

LLVMValueRef lx_unpack_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMTypeRef v64 = lx_vec(x, x->i64), i128 = LLVMInt128TypeInContext(x->c);
    bit_window w = window_of(x, packed, at, count);
    LLVMValueRef v = LLVMBuildBitCast(x->b, window_load(x, &w), w.words, "");
    LLVMValueRef lo = LLVMBuildZExt(x->b, LLVMBuildExtractElement(x->b, v, lx_i64(x, 0), ""), i128, "");
    LLVMValueRef hi = LLVMBuildZExt(x->b, LLVMBuildExtractElement(x->b, v, lx_i64(x, 1), ""), i128, "");
    LLVMValueRef word = LLVMBuildOr(x->b, lo, LLVMBuildShl(x->b, hi, LLVMConstInt(i128, 64, 0), ""), "");
    LLVMValueRef bits = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, w.sh, ""), x->i64, "");
    LLVMValueRef lane = LLVMBuildLShr(x->b, lx_splat(x, bits, v64), lane_numbers(x, v64), "");
    lane = LLVMBuildAnd(x->b, lane, lx_splat(x, lx_i64(x, 1), v64), "");
    return LLVMBuildICmp(x->b, LLVMIntNE, lane, LLVMConstNull(v64), "");
}

void lx_store_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count) {
    if (x->isa->sp.store_bits_scalable)
        x->isa->sp.store_bits_scalable(x, packed, m, at, count);
    else
        lx_pack_bits_scalable(x, m, packed, at, count);
}

LLVMValueRef lx_load_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    if (x->isa->sp.load_bits_scalable)
        return x->isa->sp.load_bits_scalable(x, packed, at, count);
    return lx_unpack_bits_scalable(x, packed, at, count);
}
