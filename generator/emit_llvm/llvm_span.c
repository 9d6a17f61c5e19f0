/* The LLVM backend's span: the plan over a stretch of elements sharing one
 * channel's parameters (unrolled full vectors, single vectors, then a
 * masked tail that touches nothing past the end). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llvm_kernel.h"

static bool packs_four(const lx *x) { return x->lp->group_store && x->isa->sp.store_four_q8; }

/* One vector of q (int32 lanes already in the q type's range) narrowed for
 * its store. */
static LLVMValueRef narrow_q(lx *x, LLVMValueRef r) {
    if (x->isa->sp.before_narrow && !x->evl)
        r = x->isa->sp.before_narrow(x, r);
    return lx_narrow(x, r, x->vq);
}

LLVMValueRef lx_concat(lx *x, LLVMValueRef a, LLVMValueRef b) {
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

void lx_add_zero_point(lx *x, LLVMValueRef z16, LLVMValueRef *ab, LLVMValueRef *cd) {
    LLVMTypeRef vw = LLVMTypeOf(z16);
    *ab = lx_intrinsic(x, "llvm.sadd.sat", &vw, 1, (LLVMValueRef[]){*ab, z16}, 2);
    *cd = lx_intrinsic(x, "llvm.sadd.sat", &vw, 1, (LLVMValueRef[]){*cd, z16}, 2);
}

LLVMValueRef lx_bound_below(lx *x, LLVMValueRef bytes) {
    const bool is_unsigned = qg_dtype_is_unsigned(qg_kernel_dtype(x->sp));
    if (x->lp->qmin <= (is_unsigned ? 0 : -128))
        return bytes;
    LLVMTypeRef vb = LLVMTypeOf(bytes);
    LLVMValueRef qmin = lx_splat(x, LLVMConstInt(x->i8, (unsigned long long)x->lp->qmin, true), vb);
    return lx_intrinsic(x, is_unsigned ? "llvm.umax" : "llvm.smax", &vb, 1, (LLVMValueRef[]){bytes, qmin}, 2);
}

/* group_mask: four vectors' lane masks as one of 16 lanes, stored as two
 * whole bytes of bits when the run is on the byte grid, or as 16 bytes. */
static void store_four_masks(lx *x, LLVMValueRef m[4], LLVMValueRef mask, LLVMValueRef at) {
    const unsigned L = x->isa->lanes;
    if (x->isa->sp.store_four_masks && x->isa->sp.store_four_masks(x, m, mask, at))
        return;
    LLVMValueRef idx[16];
    for (unsigned k = 0; k < 4 * L && k < 16; k++)
        idx[k] = lx_i32(x, k);
    LLVMValueRef lo = LLVMBuildShuffleVector(x->b, m[0], m[1], LLVMConstVector(idx, 2 * L), "");
    LLVMValueRef hi = LLVMBuildShuffleVector(x->b, m[2], m[3], LLVMConstVector(idx, 2 * L), "");
    LLVMValueRef all = LLVMBuildShuffleVector(x->b, lo, hi, LLVMConstVector(idx, 4 * L), "");
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, mask, ""));
    if (lx_packed_mask(x)) {
        lx_pack_bits_inline(x, all, mask, at, lx_isz(x, 4 * L));
    } else {
        LLVMValueRef bytes = LLVMBuildZExt(x->b, all, LLVMVectorType(x->i8, 4 * L), "");
        LLVMSetAlignment(LLVMBuildStore(x->b, bytes, lx_gep(x, x->i8, mask, at)), 1);
    }
    lx_if_close(x, join);
}

/* ---- one vector (lower/lower_vector.c) ---------------------------------- */

void lx_kb_vector_open(lx_kb *k, const qg_plan *p, LLVMValueRef at, LLVMValueRef count, bool partial) {
    lx *x = k->x;
    k->p = p;
    k->at = at;
    k->count = count;
    /* a partial vector's lanes k < count */
    k->active = partial ? lx_active(x, lx_isz(x, 0), count) : NULL;
    if (partial && x->lp->tail_kind == QG_TAIL_EVL) /* count <= VLMAX: vsetvli gives count itself */
        x->evl = lx_strip_length(x, count);
}

void lx_kb_vector_close(lx_kb *k) { k->x->evl = NULL; }

LLVMValueRef lx_kb_load(lx_kb *k) {
    lx *x = k->x;
    const io_t *io = &k->io;
    LLVMTypeRef vin = io->in_q ? x->vq : io->in_h ? x->vh : io->in_t == x->i32 ? x->vi : x->vf;
    /* lanes past `count` are never stored: their values do not matter (NULL) */
    LLVMValueRef v = lx_load(x, vin, io->in_t, io->in_size, k->s.in, k->at, k->active, k->count, NULL);
    return io->in_q ? lx_ext(x, v, x->vi, lx_is_signed_q(x)) : io->in_h ? lx_ext(x, v, x->vi, false) : v;
}

LLVMValueRef lx_kb_load_mask(lx_kb *k, LLVMValueRef bits, int first) {
    lx *x = k->x;
    if (bits)
        return lx_mask_of_bits(x, bits, (unsigned)first);
    if (lx_packed_mask(x))
        return x->isa->scalable ? lx_load_mask_bits_scalable(x, k->s.mask, k->at, k->count)
                                : lx_unpack_bits_inline(x, k->s.mask, k->at, k->count);
    LLVMValueRef bytes = lx_load(x, x->vb, x->i8, 1, k->s.mask, k->at, k->active, k->count, NULL);
    return LLVMBuildICmp(x->b, LLVMIntNE, bytes, LLVMConstNull(x->vb), "");
}

LLVMValueRef lx_kb_body(lx_kb *k, LLVMValueRef data, LLVMValueRef m, qg_kbody form, LLVMValueRef *mask_out,
                        LLVMValueRef *nan) {
    LLVMValueRef in[QG_IN_COUNT] = {0};
    in[qg_op_info_of(k->p->op)->data] = data;
    in[QG_IN_MASK] = m;
    for (int j = QG_IN_S; j < QG_IN_COUNT; j++)
        in[j] = k->s.param[j];
    LLVMValueRef grouped = NULL, ordered[2];
    LLVMValueRef r = lx_lower_plan_ordered(k->x, k->p, in, mask_out, &grouped, ordered);
    if (form == QG_KBODY_ORDERED) {
        *nan = ordered[1];
        return ordered[0];
    }
    return form == QG_KBODY_GROUPED && grouped ? grouped : r;
}

void lx_kb_store(lx_kb *k, LLVMValueRef r) {
    lx *x = k->x;
    const io_t *io = &k->io;
    LLVMValueRef v = io->out_q ? narrow_q(x, r) : io->out_h ? lx_narrow(x, r, x->vh) : r;
    lx_store(x, v, io->out_t, io->out_size, k->s.out, k->at, k->active, k->count);
}

void lx_kb_store_mask(lx_kb *k, LLVMValueRef m) {
    lx *x = k->x;
    LLVMBasicBlockRef join = lx_if_open(x, LLVMBuildIsNotNull(x->b, k->s.mask, ""));
    if (lx_packed_mask(x) && !x->isa->scalable)
        lx_pack_bits_inline(x, m, k->s.mask, k->at, k->count);
    else if (lx_packed_mask(x))
        lx_store_mask_bits_scalable(x, k->s.mask, m, k->at, k->count);
    else if (!k->active && x->isa->sp.store_mask_bytes)
        x->isa->sp.store_mask_bytes(x, m, k->s.mask, k->at);
    else
        lx_store(x, lx_ext(x, m, x->vb, false), x->i8, 1, k->s.mask, k->at, k->active, k->count);
    lx_if_close(x, join);
}

/* The types of a span's arguments: in, out, [mask,] base, len, then the
 * parameters the plan uses; returns their count. */
static unsigned span_param_types(lx *x, const qg_plan *p, LLVMTypeRef params[5 + QG_IN_COUNT]) {
    unsigned np = 0;
    params[np++] = x->ptr;
    params[np++] = x->ptr;
    if (qg_kernel_loops_masked(x->lp))
        params[np++] = x->ptr;
    params[np++] = x->isz;
    params[np++] = x->isz;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[np++] = p->kind[k] == QG_VI ? x->vi : x->vf;
    return np;
}

static span_args span_args_of(lx *x, const qg_plan *p, LLVMValueRef fn) {
    unsigned np = 0;
    span_args s = {0};
    s.in = LLVMGetParam(fn, np++);
    s.out = LLVMGetParam(fn, np++);
    s.mask = qg_kernel_loops_masked(x->lp) ? LLVMGetParam(fn, np++) : LLVMConstNull(x->ptr);
    s.base = LLVMGetParam(fn, np++);
    s.len = LLVMGetParam(fn, np++);
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            s.param[k] = LLVMGetParam(fn, np++);
    return s;
}

/* ---- the kernel builder's span calls (lower/lower_span.c) ---------------- */

void lx_kb_open_span(lx_kb *k, const qg_plan *p, const char *suffix, bool out_of_line) {
    lx *x = k->x;
    LLVMTypeRef params[5 + QG_IN_COUNT];
    const unsigned np = span_param_types(x, p, params);
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s_span%s", x->prefix, qg_kernel_op_name(p->op), suffix);
    LLVMValueRef fn = lx_define(x, name, x->vd, params, np, !out_of_line);
    if (out_of_line) { /* the rare path: kept out of the loop that calls it */
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        const unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->c, noinline, 0));
    }
    k->s = span_args_of(x, p, fn);
    k->io = lx_io_of(x);
    /* the grouped store's zero point, made once at the span's entry, not per iteration */
    k->z16 = x->lp->group_store_adds_z && packs_four(x) && !out_of_line ? zero_point16(x, k->s.param[QG_IN_Z]) : NULL;
}

LLVMValueRef lx_kb_span_arg(lx_kb *k, int which) {
    const span_args *s = &k->s;
    switch (which) {
    case QG_KSPAN_IN: return s->in;
    case QG_KSPAN_OUT: return s->out;
    case QG_KSPAN_MASK: return s->mask;
    case QG_KSPAN_BASE: return s->base;
    case QG_KSPAN_LEN: return s->len;
    default: return s->param[which - QG_KSPAN_PARAM];
    }
}

LLVMValueRef lx_kb_group_mask_in(lx_kb *k, LLVMValueRef at) {
    const unsigned four = 4 * k->x->isa->lanes;
    return lx_get_bits_inline(k->x, k->s.mask, at, lx_isz(k->x, four), four);
}

void lx_kb_group_store(lx_kb *k, LLVMValueRef r[4], LLVMValueRef at) {
    lx *x = k->x;
    if (!packs_four(x)) { /* no narrowing store of four: one by one */
        LLVMValueRef vl = lx_vl(x);
        for (int j = 0; j < 4; j++)
            lx_store(x, narrow_q(x, r[j]), k->io.out_t, k->io.out_size, k->s.out,
                     LLVMBuildAdd(x->b, at, LLVMBuildMul(x->b, vl, lx_isz(x, j), ""), ""), NULL, vl);
        return;
    }
    x->isa->sp.store_four_q8(x, r, k->z16, k->s.out, at);
}

void lx_kb_group_mask_out(lx_kb *k, LLVMValueRef m[4], LLVMValueRef at) { store_four_masks(k->x, m, k->s.mask, at); }

/* Whether a lane of the four nan values is NaN: a NaN-keeping max and its
 * reduction (NEON: fmax, fmaxv), or unordered pairs (x86: two compares). */
LLVMValueRef lx_kb_any_nan4(lx_kb *k, LLVMValueRef nan[4]) {
    lx *x = k->x;
    LLVMTypeRef vt = LLVMTypeOf(nan[0]);
    if (x->isa->sp.minmax == lx_minmax_minimum) {
        LLVMValueRef ab = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){nan[0], nan[1]}, 2);
        LLVMValueRef cd = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){nan[2], nan[3]}, 2);
        LLVMValueRef m = lx_intrinsic(x, "llvm.maximum", &vt, 1, (LLVMValueRef[]){ab, cd}, 2);
        m = lx_intrinsic(x, "llvm.vector.reduce.fmaximum", &vt, 1, &m, 1);
        return LLVMBuildFCmp(x->b, LLVMRealUNO, m, m, "");
    }
    LLVMValueRef ab = LLVMBuildFCmp(x->b, LLVMRealUNO, nan[0], nan[1], "");
    LLVMValueRef cd = LLVMBuildFCmp(x->b, LLVMRealUNO, nan[2], nan[3], "");
    LLVMValueRef any = LLVMBuildOr(x->b, ab, cd, "");
    LLVMTypeRef mt = LLVMTypeOf(any);
    return lx_intrinsic(x, "llvm.vector.reduce.or", &mt, 1, &any, 1);
}

LLVMValueRef lx_kb_to_boundary(lx_kb *k, LLVMValueRef ptr, LLVMValueRef base, bool of_output, unsigned bytes) {
    lx *x = k->x;
    const unsigned esize = of_output ? k->io.out_size : k->io.in_size;
    LLVMValueRef at = lx_gep(x, x->i8, ptr, LLVMBuildMul(x->b, base, lx_isz(x, esize), ""));
    LLVMValueRef to_line = LLVMBuildNeg(x->b, LLVMBuildPtrToInt(x->b, at, x->isz, ""), "");
    to_line = LLVMBuildURem(x->b, to_line, lx_isz(x, bytes), "");
    return LLVMBuildUDiv(x->b, to_line, lx_isz(x, esize), "head");
}
