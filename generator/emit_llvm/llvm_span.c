/* The LLVM backend's span: the plan over a stretch of elements sharing one
 * channel's parameters (unrolled full vectors, single vectors, then a
 * masked tail that touches nothing past the end). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

static bool packs_four(const lx *x) { return x->lp->group_store && x->isa->narrow4 != LX_NARROW4_NONE; }

/* One vector of q (int32 lanes already in the q type's range) narrowed for
 * its store. AVX2 lowers a plain truncation to byte shuffles (two pshufb
 * and an unpack after the lane extract); clamped to the type's range first,
 * which changes no value here, it becomes the two saturating packs the C
 * backend's store helper uses. */
static LLVMValueRef narrow_q(lx *x, LLVMValueRef r) {
    const unsigned bits = LLVMGetIntTypeWidth(LLVMGetElementType(x->vq));
    if (x->isa->narrow4 == LX_NARROW4_X86_256 && !x->evl && bits < 32) {
        const bool is_signed = lx_is_signed_q(x);
        const long long lo = is_signed ? -(1LL << (bits - 1)) : 0;
        const long long hi = is_signed ? (1LL << (bits - 1)) - 1 : (1LL << bits) - 1;
        LLVMTypeRef t = LLVMTypeOf(r);
        LLVMValueRef above[2] = {r, lx_splat(x, lx_i32(x, lo), t)};
        LLVMValueRef below[2] = {lx_intrinsic(x, "llvm.smax", &t, 1, above, 2), lx_splat(x, lx_i32(x, hi), t)};
        r = lx_intrinsic(x, "llvm.smin", &t, 1, below, 2);
    }
    return lx_narrow(x, r, x->vq);
}

/* Two vectors' lanes side by side (a vector of twice the lanes). */
static LLVMValueRef concat(lx *x, LLVMValueRef a, LLVMValueRef b) {
    const unsigned n = LLVMGetVectorSize(LLVMTypeOf(a));
    LLVMValueRef idx[32];
    for (unsigned k = 0; k < 2 * n; k++)
        idx[k] = lx_i32(x, k);
    return LLVMBuildShuffleVector(x->b, a, b, LLVMConstVector(idx, 2 * n), "");
}

/* group_store_adds_z: the span's zero point as the 16-bit lanes of a pair
 * of narrowed vectors, made once per span, before its loops. */
static LLVMValueRef zero_point16(lx *x, LLVMValueRef z) {
    LLVMValueRef z0 = LLVMBuildTrunc(x->b, LLVMBuildExtractElement(x->b, z, lx_i32(x, 0), ""), x->i16, "");
    return lx_splat(x, z0, LLVMVectorType(x->i16, 2 * (unsigned)x->isa->lanes));
}

/* The grouped store's arithmetic on four vectors of q - z bounded above
 * (docs/semantics.md, "Element arithmetic"): z added at 16 bits with
 * saturation, then, on the bytes, the bound qmin where the byte
 * saturation does not give it. */
static void add_zero_point(lx *x, LLVMValueRef z16, LLVMValueRef *ab, LLVMValueRef *cd) {
    LLVMTypeRef vw = LLVMTypeOf(z16);
    *ab = lx_intrinsic(x, "llvm.sadd.sat", &vw, 1, (LLVMValueRef[]){*ab, z16}, 2);
    *cd = lx_intrinsic(x, "llvm.sadd.sat", &vw, 1, (LLVMValueRef[]){*cd, z16}, 2);
}

static LLVMValueRef bound_below(lx *x, LLVMValueRef bytes) {
    const bool is_unsigned = qg_dtype_is_unsigned(qg_kernel_dtype(x->sp));
    if (x->lp->qmin <= (is_unsigned ? 0 : -128))
        return bytes;
    LLVMTypeRef vb = LLVMTypeOf(bytes);
    LLVMValueRef qmin = lx_splat(x, LLVMConstInt(x->i8, (unsigned long long)x->lp->qmin, true), vb);
    return lx_intrinsic(x, is_unsigned ? "llvm.umax" : "llvm.smax", &vb, 1, (LLVMValueRef[]){bytes, qmin}, 2);
}

/* NEON: four int32x4 vectors to 16 bytes in one store, as the C backend's
 * qg_neon_store4 helpers do: plain narrows (xtn) of values in range, or,
 * with z16, saturating ones (sqxtn, sqxtun) around the zero point's add. */
static void store_four_q8_aarch64(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at) {
    const bool is_unsigned = qg_dtype_is_unsigned(qg_kernel_dtype(x->sp));
    LLVMTypeRef h4 = LLVMVectorType(x->i16, 4), b8 = LLVMVectorType(x->i8, 8);
    LLVMValueRef half[4];
    for (int k = 0; k < 4; k++)
        half[k] =
            z16 ? lx_intrinsic(x, "llvm.aarch64.neon.sqxtn", &h4, 1, &r[k], 1) : LLVMBuildTrunc(x->b, r[k], h4, "");
    LLVMValueRef ab = concat(x, half[0], half[1]), cd = concat(x, half[2], half[3]), v;
    if (z16) {
        add_zero_point(x, z16, &ab, &cd);
        const char *to8 = is_unsigned ? "llvm.aarch64.neon.sqxtun" : "llvm.aarch64.neon.sqxtn";
        v = bound_below(x, concat(x, lx_intrinsic(x, to8, &b8, 1, &ab, 1), lx_intrinsic(x, to8, &b8, 1, &cd, 1)));
    } else {
        v = LLVMBuildTrunc(x->b, concat(x, ab, cd), LLVMVectorType(x->i8, 16), "");
    }
    LLVMSetAlignment(LLVMBuildStore(x->b, v, lx_gep(x, x->i8, out, at)), 1);
}

/* x86, int8 outputs: four vectors narrowed with two rounds of saturating
 * packs and one lane permutation, as the C backend's store4 helpers do;
 * with z16 (group_store_adds_z) the zero point is added between them. */
static void store_four_q8(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at) {
    if (x->isa->narrow4 == LX_NARROW4_AARCH64) {
        store_four_q8_aarch64(x, r, z16, out, at);
        return;
    }
    const bool avx512 = x->isa->narrow4 == LX_NARROW4_X86_512;
    const bool is_unsigned = qg_dtype_is_unsigned(qg_kernel_dtype(x->sp));
    const char *dw = avx512 ? "llvm.x86.avx512.packssdw.512" : "llvm.x86.avx2.packssdw";
    const char *wb = avx512 ? (is_unsigned ? "llvm.x86.avx512.packuswb.512" : "llvm.x86.avx512.packsswb.512")
                            : (is_unsigned ? "llvm.x86.avx2.packuswb" : "llvm.x86.avx2.packsswb");
    LLVMValueRef ab = lx_intrinsic(x, dw, NULL, 0, (LLVMValueRef[]){r[0], r[1]}, 2);
    LLVMValueRef cd = lx_intrinsic(x, dw, NULL, 0, (LLVMValueRef[]){r[2], r[3]}, 2);
    if (z16)
        add_zero_point(x, z16, &ab, &cd);
    LLVMValueRef v = lx_intrinsic(x, wb, NULL, 0, (LLVMValueRef[]){ab, cd}, 2);
    if (z16)
        v = bound_below(x, v);
    /* the packs work within 128-bit lanes: put each vector's dwords back together */
    const unsigned L = x->isa->lanes, lanes128 = L / 4;
    LLVMValueRef idx[16];
    for (unsigned m = 0; m < L; m++)
        idx[m] = lx_i32(x, (long long)((m % lanes128) * 4 + m / lanes128));
    LLVMValueRef dwords = LLVMBuildBitCast(x->b, v, x->vi, "");
    LLVMValueRef perm = LLVMBuildShuffleVector(x->b, dwords, LLVMGetPoison(x->vi), LLVMConstVector(idx, L), "");
    LLVMSetAlignment(LLVMBuildStore(x->b, perm, lx_gep(x, x->i8, out, at)), 1);
}

/* group_mask: four vectors' lane masks as one of 16 lanes, stored as two
 * whole bytes of bits when the run is on the byte grid, or as 16 bytes. */
static void store_four_masks(lx *x, LLVMValueRef m[4], LLVMValueRef mask, LLVMValueRef at) {
    const unsigned L = x->isa->lanes;
    LLVMValueRef idx[16];
    for (unsigned k = 0; k < 4 * L && k < 16; k++)
        idx[k] = lx_i32(x, k);
    LLVMValueRef lo = LLVMBuildShuffleVector(x->b, m[0], m[1], LLVMConstVector(idx, 2 * L), "");
    LLVMValueRef hi = LLVMBuildShuffleVector(x->b, m[2], m[3], LLVMConstVector(idx, 2 * L), "");
    LLVMValueRef all = LLVMBuildShuffleVector(x->b, lo, hi, LLVMConstVector(idx, 4 * L), "");
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, mask, ""));
    if (lx_packed_mask(x)) {
        lx_pack_bits_inline(x, all, mask, at, lx_i64(x, 4 * L));
    } else {
        LLVMValueRef bytes = LLVMBuildZExt(x->b, all, LLVMVectorType(x->i8, 4 * L), "");
        LLVMSetAlignment(LLVMBuildStore(x->b, bytes, lx_gep(x, x->i8, mask, at)), 1);
    }
    lx_if_close(x, join);
}

/* ... and a packed mask input, read as 16 bits and cut into four. */
static void load_four_masks(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef m[4]) {
    const unsigned L = x->isa->lanes;
    LLVMValueRef bits = lx_get_bits_inline(x, packed, at, lx_i64(x, 4 * L), 4 * L);
    for (unsigned k = 0; k < 4; k++)
        m[k] = lx_mask_of_bits(x, bits, k * L);
}

/* The plan on the vector at element `at` (count lanes valid; `active`
 * masks the loads and stores of a partial vector, NULL for a full one). */
/* A vector of the unrolled main loop, where its neighbours share stores
 * or loads: its quantized result or lane mask is left for the group's
 * store (NULL: stored here), its packed mask input given (NULL: read here). */
typedef struct group_slot {
    LLVMValueRef *result, *mask_out, mask_in;
    LLVMValueRef *nan; /* a main loop that tests for NaN once: result is out_ordered, nan its nan_value */
} group_slot;

static void vector_at_ex(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef at,
                         LLVMValueRef count, LLVMValueRef active, const group_slot *g) {
    LLVMValueRef *deferred = g ? g->result : NULL, *mask_deferred = g ? g->mask_out : NULL;
    LLVMValueRef in[QG_IN_COUNT] = {0};
    if (active && x->isa->tail == LX_TAIL_EVL) /* count <= VLMAX: vsetvli gives count itself */
        x->evl = lx_strip_length(x, count);
    LLVMTypeRef vin = io->in_q ? x->vq : io->in_h ? x->vh : io->in_t == x->i32 ? x->vi : x->vf;
    /* lanes past `count` are never stored: their values do not matter (NULL) */
    LLVMValueRef v = lx_load(x, vin, io->in_t, io->in_size, s->in, at, active, count, NULL);
    if (io->in_q)
        v = lx_ext(x, v, x->vi, lx_is_signed_q(x));
    else if (io->in_h)
        v = lx_ext(x, v, x->vi, false);
    in[qg_op_info_of(p->op)->data] = v;
    if (io->mask_in && g && g->mask_in) {
        in[QG_IN_MASK] = g->mask_in;
    } else if (io->mask_in && lx_packed_mask(x)) {
        in[QG_IN_MASK] = x->isa->scalable ? lx_load_mask_bits_scalable(x, s->mask, at, count)
                                          : lx_unpack_bits_inline(x, s->mask, at, count);
    } else if (io->mask_in) {
        LLVMValueRef bytes = lx_load(x, x->vb, x->i8, 1, s->mask, at, active, count, NULL);
        in[QG_IN_MASK] = LLVMBuildICmp(x->b, LLVMIntNE, bytes, LLVMConstNull(x->vb), "");
    }
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        in[k] = s->param[k];
    LLVMValueRef mres = NULL, grouped = NULL, ordered[2];
    LLVMValueRef r = lx_lower_plan_ordered(x, p, in, &mres, &grouped, ordered);
    if (g && g->nan) {
        *deferred = ordered[0];
        *g->nan = ordered[1];
    } else if (deferred)
        *deferred = x->lp->group_store_adds_z && grouped ? grouped : r;
    else
        lx_store(x,
                 io->out_q   ? narrow_q(x, r)
                 : io->out_h ? lx_narrow(x, r, x->vh)
                             : r,
                 io->out_t, io->out_size, s->out, at, active, count);
    if (io->mask_out && mask_deferred) {
        *mask_deferred = mres;
    } else if (io->mask_out) {
        LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, s->mask, ""));
        LLVMValueRef bytes = lx_ext(x, mres, x->vb, false);
        if (lx_packed_mask(x) && !x->isa->scalable) {
            lx_pack_bits_inline(x, mres, s->mask, at, count);
        } else if (lx_packed_mask(x)) {
            lx_store_mask_bits_scalable(x, s->mask, mres, at, count);
        } else if (!active && x->isa->mask_bytes == LX_MASK_BYTES_PDEP) {
            lx_store_mask_bytes_pdep(x, mres, s->mask, at);
        } else {
            lx_store(x, bytes, x->i8, 1, s->mask, at, active, count);
        }
        lx_if_close(x, join);
    }
    x->evl = NULL;
}

static void vector_at(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef at, LLVMValueRef count,
                      LLVMValueRef active) {
    vector_at_ex(x, p, io, s, at, count, active, NULL);
}

/* The types of a span's arguments: in, out, mask, base, len, then the
 * parameters the plan uses; returns their count. */
static unsigned span_param_types(lx *x, const qg_plan *p, LLVMTypeRef params[5 + QG_IN_COUNT]) {
    LLVMTypeRef head[5] = {x->ptr, x->ptr, x->ptr, x->i64, x->i64};
    unsigned np = 5;
    memcpy(params, head, sizeof head);
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[np++] = p->kind[k] == QG_VI ? x->vi : x->vf;
    return np;
}

static span_args span_args_of(const qg_plan *p, LLVMValueRef fn) {
    span_args s = {LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), LLVMGetParam(fn, 2),
                   LLVMGetParam(fn, 3), LLVMGetParam(fn, 4), {0}};
    unsigned np = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            s.param[k] = LLVMGetParam(fn, np++);
    return s;
}

/* for (i = i0; i + vl <= len; i += vl): single full vectors (vl: lx_vl's,
 * made once per function); returns the loop, whose value is where a tail
 * starts. */
static lx_loop vector_loop(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef i0,
                           LLVMValueRef vl) {
    lx_loop one = lx_loop_open(x, i0, "vectors");
    LLVMValueRef i = lx_loop_value(x, &one);
    lx_loop_test(x, &one, lx_whole_steps_test(x, i, s->len, vl));
    vector_at(x, p, io, s, LLVMBuildAdd(x->b, s->base, i, ""), vl, NULL);
    lx_loop_close(x, &one, vl);
    return one;
}

/* <prefix>_<op>_span_vectors(in, out, mask, base, len, params...): whole
 * vectors one at a time, out of line, for the main loop's NaN path. */
static LLVMValueRef span_vectors(lx *x, const qg_plan *p, const io_t *io) {
    LLVMTypeRef params[5 + QG_IN_COUNT];
    const unsigned np = span_param_types(x, p, params);
    char suffix[64];
    snprintf(suffix, sizeof suffix, "_%s_span_vectors", qg_kernel_op_name(p->op));
    LLVMValueRef fn;
    lx_resume caller;
    if (!lx_helper_open(x, suffix, x->vd, params, np, &fn, &caller))
        return fn;
    const span_args s = span_args_of(p, fn);
    vector_loop(x, p, io, &s, lx_i64(x, 0), lx_vl(x));
    LLVMBuildRetVoid(x->b);
    lx_helper_close(x, &caller);
    return fn;
}

/* The main loop's one NaN test of its four vectors' nan values: where a
 * lane is NaN, the four run again one by one out of line (span_vectors,
 * with the masks NaN lanes need) and the iteration ends there; else the
 * caller stores the results. */
static void nan_test(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef nan[4], LLVMValueRef at0,
                     const lx_loop *loop, LLVMValueRef step) {
    LLVMValueRef any;
    LLVMTypeRef vt = LLVMTypeOf(nan[0]);
    if (x->isa->minmax == LX_MINMAX_MINIMUM) { /* a NaN-keeping max and its reduction (NEON: fmax, fmaxv) */
        LLVMValueRef ab = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){nan[0], nan[1]}, 2);
        LLVMValueRef cd = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){nan[2], nan[3]}, 2);
        LLVMValueRef m = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){ab, cd}, 2);
        m = lx_intrinsic(x, "llvm.vector.reduce.fmaximum", &vt, 1, &m, 1);
        any = LLVMBuildFCmp(x->b, LLVMRealUNO, m, m, "");
    } else { /* unordered pairs (x86: two compares) */
        LLVMValueRef ab = LLVMBuildFCmp(x->b, LLVMRealUNO, nan[0], nan[1], "");
        LLVMValueRef cd = LLVMBuildFCmp(x->b, LLVMRealUNO, nan[2], nan[3], "");
        any = LLVMBuildOr(x->b, ab, cd, "");
        LLVMTypeRef mt = LLVMTypeOf(any);
        any = lx_intrinsic(x, "llvm.vector.reduce.or", &mt, 1, &any, 1);
    }
    LLVMBasicBlockRef rare = lx_block(x, "nan"), stores = lx_block(x, "ordered");
    LLVMBuildCondBr(x->b, any, rare, stores);
    LLVMPositionBuilderAtEnd(x->b, rare);
    LLVMValueRef args[5 + QG_IN_COUNT] = {s->in, s->out, s->mask, at0, step};
    unsigned n = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            args[n++] = s->param[k];
    lx_call(x, span_vectors(x, p, io), args, n);
    lx_loop_continue(x, loop, step);
    LLVMPositionBuilderAtEnd(x->b, stores);
}

/* static void span(in, out, mask, base, len, params...) */
/* With one_vector, the span of the channels-last walk: one vector, so no
 * loops (and far less code to compile); 1 <= len <= one vector, but on SVE,
 * where len may pass it and the strip's predicate (whilelo) saturates. */
static LLVMValueRef span_function(lx *x, const qg_plan *p, const io_t *io, bool one_vector, const char *suffix);

/* The span of kernel_loops' align_head: a partial vector up to the float
 * tensor's next vector boundary (`run` on `head` elements), then `run` on
 * the rest from there. */
static LLVMValueRef align_head_span(lx *x, const qg_plan *p, const io_t *io, LLVMValueRef run) {
    LLVMValueRef fn = span_function(x, p, io, false, "");
    const unsigned np = LLVMCountParams(fn);
    LLVMValueRef args[5 + QG_IN_COUNT];
    for (unsigned k = 0; k < np; k++)
        args[k] = LLVMGetParam(fn, k);
    LLVMValueRef base = args[3], len = args[4];
    const unsigned esize = x->lp->align_out ? io->out_size : io->in_size;
    LLVMValueRef at = lx_gep(x, x->i8, args[x->lp->align_out ? 1 : 0], LLVMBuildMul(x->b, base, lx_i64(x, esize), ""));
    LLVMValueRef to_line = LLVMBuildNeg(x->b, LLVMBuildPtrToInt(x->b, at, x->i64, ""), "");
    to_line = LLVMBuildURem(x->b, to_line, lx_i64(x, x->lp->align_bytes), "");
    LLVMValueRef head = LLVMBuildUDiv(x->b, to_line, lx_i64(x, esize), "head");
    LLVMValueRef cut = LLVMBuildAnd(x->b, LLVMBuildICmp(x->b, LLVMIntNE, head, lx_i64(x, 0), ""),
                                    LLVMBuildICmp(x->b, LLVMIntUGE, len, lx_i64(x, x->lp->align_min), ""), "");
    LLVMBasicBlockRef join = lx_if_open(x, cut);
    args[4] = head;
    lx_call(x, run, args, np);
    lx_if_close(x, join);
    head = LLVMBuildSelect(x->b, cut, head, lx_i64(x, 0), "");
    args[3] = LLVMBuildAdd(x->b, base, head, "");
    args[4] = LLVMBuildSub(x->b, len, head, "");
    lx_call(x, run, args, np);
    LLVMBuildRetVoid(x->b);
    return fn;
}

LLVMValueRef lx_build_span(lx *x, const qg_plan *p, const io_t *io, bool one_vector) {
    if (x->lp->align_head && !one_vector)
        return align_head_span(x, p, io, span_function(x, p, io, false, "_run"));
    return span_function(x, p, io, one_vector, one_vector ? "1" : "");
}

/* static void NAME_<op>_span<suffix>(in, out, mask, base, len, params...),
 * with its body but for align_head's outer span (align_head_span's). */
static LLVMValueRef span_function(lx *x, const qg_plan *p, const io_t *io, bool one_vector, const char *suffix) {
    LLVMTypeRef params[5 + QG_IN_COUNT];
    const unsigned np = span_param_types(x, p, params);
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s_span%s", x->prefix, qg_kernel_op_name(p->op), suffix);
    LLVMValueRef fn = lx_define(x, name, x->vd, params, np, true);
    if (!suffix[0] && x->lp->align_head && !one_vector)
        return fn; /* align_head_span builds it */
    span_args s = span_args_of(p, fn);
    LLVMValueRef vl = lx_vl(x);
    if (one_vector && x->isa->scalable) {
        /* one predicated strip, as the C backend's strips: no branch; the
         * packed-mask helpers take a count within the vector */
        LLVMValueRef count = x->isa->tail == LX_TAIL_EVL ? s.len : lx_umin(x, s.len, vl);
        vector_at(x, p, io, &s, s.base, count, lx_active(x, lx_i64(x, 0), s.len));
        LLVMBuildRetVoid(x->b);
        return fn;
    }
    if (one_vector) {
        LLVMBasicBlockRef full = lx_block(x, "full"), part = lx_block(x, "partial"), done = lx_block(x, "done");
        LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, s.len, vl, ""), full, part);
        LLVMPositionBuilderAtEnd(x->b, full);
        vector_at(x, p, io, &s, s.base, vl, NULL);
        LLVMBuildBr(x->b, done);
        LLVMPositionBuilderAtEnd(x->b, part);
        if (x->lp->tail) /* the walk never passes an empty one */
            vector_at(x, p, io, &s, s.base, s.len, lx_active(x, lx_i64(x, 0), s.len));
        LLVMBuildBr(x->b, done);
        LLVMPositionBuilderAtEnd(x->b, done);
        LLVMBuildRetVoid(x->b);
        return fn;
    }
    lx_loop main = {0};
    const int U = x->lp->unroll;
    LLVMValueRef i0 = lx_i64(x, 0);
    if (U > 1) {
        LLVMValueRef step = LLVMBuildMul(x->b, vl, lx_i64(x, U), "");
        const bool four = packs_four(x), mask4 = x->lp->group_mask && io->mask_out;
        LLVMValueRef z16 = four && x->lp->group_store_adds_z ? zero_point16(x, s.param[QG_IN_Z]) : NULL;
        main = lx_loop_open(x, i0, "unrolled");
        LLVMValueRef i = lx_loop_value(x, &main);
        lx_loop_test(x, &main, lx_whole_steps_test(x, i, s.len, step));
        LLVMValueRef r[4], m[4], m_in[4] = {0}, nan[4], at[4];
        if (x->lp->group_mask && io->mask_in)
            load_four_masks(x, s.mask, LLVMBuildAdd(x->b, s.base, i, ""), m_in);
        const bool nan_once = p->out_ordered >= 0; /* qg_plan.out_ordered: one NaN test of the four */
        for (int k = 0; k < U; k++) {
            LLVMValueRef off = LLVMBuildAdd(x->b, i, LLVMBuildMul(x->b, vl, lx_i64(x, k), ""), "");
            const group_slot g = {four || nan_once ? &r[k] : NULL, mask4 ? &m[k] : NULL, m_in[k & 3],
                                  nan_once ? &nan[k] : NULL};
            at[k] = LLVMBuildAdd(x->b, s.base, off, "");
            vector_at_ex(x, p, io, &s, at[k], vl, NULL, &g);
        }
        if (nan_once)
            nan_test(x, p, io, &s, nan, at[0], &main, step);
        for (int k = 0; k < U && nan_once && !four; k++)
            lx_store(x, r[k], io->out_t, io->out_size, s.out, at[k], NULL, vl);
        if (four)
            store_four_q8(x, r, z16, s.out, LLVMBuildAdd(x->b, s.base, i, ""));
        if (mask4)
            store_four_masks(x, m, s.mask, LLVMBuildAdd(x->b, s.base, i, ""));
        lx_loop_close(x, &main, step);
        i0 = lx_loop_value(x, &main);
    }
    lx_loop one = vector_loop(x, p, io, &s, i0, vl);
    if (x->lp->tail) {
        LLVMValueRef i = lx_loop_value(x, &one);
        LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, i, s.len, ""));
        LLVMValueRef at = LLVMBuildAdd(x->b, s.base, i, "");
        LLVMValueRef active = lx_active(x, i, s.len);
        vector_at(x, p, io, &s, at, LLVMBuildSub(x->b, s.len, i, ""), active);
        lx_if_close(x, join);
    }
    LLVMBuildRetVoid(x->b);
    return fn;
}
