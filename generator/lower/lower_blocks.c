/* ggml's 32-element block formats (docs/semantics.md, "Block formats"),
 * lowered once for both backends: the walk over a row's blocks. Quantize
 * and fake_quant take the blocks lp->block_group at a time: each block's
 * extremes (observe's reduction, one block's), then the group's scales
 * (d and m from the extremes, 1/d, the fp16 fields, which blocks the
 * reference takes) on group values, lane k block k; then each block's
 * codes, the span of the format's element arithmetic
 * (qg_plan_block_elements, plan_blocks.c) with its scalars as parameters,
 * written in place (q8) or to a buffer packed into nibbles and fifth bits.
 * A block the fast path does not define as ggml does goes to the runtime's
 * reference, one block at a time: a NaN or an infinity in it, q4_0's and
 * q5_0's extremes of equal magnitude and both signs (ggml takes the
 * first), q4_1's and q5_1's minimum zero (its sign is the first zero's) or
 * a range that overflows. */
#include <float.h>

#include "kernel_builder.h"
#include "qgen/blocks.h"

#define B (b->ops)

enum { QK = 32 };

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }
static qg_kv *field(qg_kb *b, qg_kv *blk, int offset) { return B->byte_ptr(b, blk, size(b, offset)); }
static qg_kv *lt(qg_kb *b, qg_kv *x, qg_kv *y) { return B->bin(b, QG_KB_LT, x, y); }
static qg_kv *ge(qg_kb *b, qg_kv *x, qg_kv *y) { return B->bin(b, QG_KB_GE, x, y); }
static qg_kv *and_(qg_kb *b, qg_kv *x, qg_kv *y) { return B->bin(b, QG_KB_AND, x, y); }
static qg_kv *or_(qg_kb *b, qg_kv *x, qg_kv *y) { return B->bin(b, QG_KB_OR, x, y); }

static bool is_q8(qg_block_format f) { return f == QG_BLOCK_Q8_0 || f == QG_BLOCK_Q8_1; }

/* The span over `len` elements of a block from `in` to `out` (and a
 * mask, with `base` added to all three): q8's through the lowering's span
 * call (s = d, 1/s = id, z = 0); the others' with S d, INV id, Z the codes'
 * offset, LO the min or m, HI fake_quant's m (plan_blocks.c). */
static void span_at(qg_kb *b, const qg_plan *p, qg_block_format f, qg_kv *const io[3], qg_kv *base, long long len,
                    qg_kv *d, qg_kv *id, qg_kv *lo, qg_kv *hi) {
    qg_kv *span = B->span_ref(b, "");
    if (is_q8(f)) {
        qg_lower_call_span(b, p, span, io, base, size(b, len), d, id, B->imm(b, QG_KT_I32, 0), NULL);
        return;
    }
    const int offset = f == QG_BLOCK_Q4_0 ? 8 : f == QG_BLOCK_Q5_0 ? 16 : f == QG_BLOCK_Q6_K ? 32 : 0;
    qg_kv *const v[QG_IN_COUNT] = {
        [QG_IN_S] = d, [QG_IN_INV] = id, [QG_IN_Z] = B->imm(b, QG_KT_I32, offset), [QG_IN_LO] = lo, [QG_IN_HI] = hi};
    qg_lower_call_span_with(b, p, span, io, base, size(b, len), v);
}

/* ... from in to out alone */
static void block_span(qg_kb *b, const qg_plan *p, qg_block_format f, qg_kv *in, qg_kv *out, long long len, qg_kv *d,
                       qg_kv *id, qg_kv *lo) {
    qg_kv *io[3] = {in, out, NULL};
    span_at(b, p, f, io, size(b, 0), len, d, id, lo, NULL);
}

/* Returns where `cond` holds. */
static void refuse_if(qg_kb *b, qg_kv *cond) {
    B->if_open(b, cond);
    B->ret(b);
    B->if_close(b);
}

/* The reference's row check (qg_block_quantize_ref): a row of whole
 * blocks and its tensors; otherwise nothing is written. Returns the block
 * count. */
static qg_kv *row_check(qg_kb *b, qg_block_format f, qg_kv *in, qg_kv *out, qg_kv *n) {
    const long long elems = (long long)qg_block_elems(f);
    qg_kv *nb = B->let(b, "nb", B->bin(b, QG_KB_DIV, n, size(b, elems)));
    refuse_if(b, B->bin(b, QG_KB_NE, B->bin(b, QG_KB_MUL, nb, size(b, elems)), n));
    qg_kv *null = B->imm(b, QG_KT_PTR, 0);
    qg_kv *missing = or_(b, B->bin(b, QG_KB_EQ, in, null), B->bin(b, QG_KB_EQ, out, null));
    refuse_if(b, and_(b, B->bin(b, QG_KB_NE, n, size(b, 0)), missing));
    return nb;
}

/* 1/d, 0 where it overflows (d = 0 included). */
static qg_kv *reciprocal(qg_kb *b, qg_kv *d) {
    qg_kv *r = B->let(b, "r", B->bin(b, QG_KB_DIV, B->fimm(b, 1.0f), d));
    qg_kv *finite = and_(b, ge(b, B->fimm(b, FLT_MAX), r), ge(b, r, B->fimm(b, -FLT_MAX)));
    return B->let(b, "id", B->select(b, finite, r, B->fimm(b, 0.0f)));
}

/* A block's scale d from its extremes lo and hi, as the format takes it,
 * and in *odd what the fast path leaves to the reference besides
 * non-finite values (NULL: nothing). */
static qg_kv *scale_of(qg_kb *b, qg_block_format f, qg_kv *lo, qg_kv *hi, qg_kv **odd) {
    qg_kv *zero = B->fimm(b, 0.0f);
    *odd = NULL;
    if (f == QG_BLOCK_Q4_1 || f == QG_BLOCK_Q5_1) { /* d = (max - min) / top */
        qg_kv *range = B->let(b, "range", B->bin(b, QG_KB_SUB, hi, lo));
        *odd = or_(b, B->bin(b, QG_KB_EQ, lo, zero), lt(b, B->fimm(b, FLT_MAX), range));
        return B->let(b, "d", B->bin(b, QG_KB_DIV, range, B->fimm(b, f == QG_BLOCK_Q4_1 ? 15.0f : 31.0f)));
    }
    const bool amax_alone = qg_lower_block_amax_only(f, b->lp); /* the extremes are hi = amax alone */
    qg_kv *neg = amax_alone ? NULL : B->let(b, "neg", B->bin(b, QG_KB_SUB, zero, lo));
    if (is_q8(f) || f == QG_BLOCK_MXFP4) { /* d = amax / 127, +0 for a zero block; mxfp4's is the runtime's */
        qg_kv *amax = amax_alone ? hi : B->let(b, "amax", B->select(b, lt(b, neg, hi), hi, neg));
        return f == QG_BLOCK_MXFP4 ? amax : B->let(b, "d", B->bin(b, QG_KB_DIV, amax, B->fimm(b, 127.0f)));
    }
    /* d = max / -8 (q5_0: -16), max the signed value of largest magnitude;
     * +0.0 makes a zero block's max ggml's +0 */
    *odd = and_(b, B->bin(b, QG_KB_EQ, neg, hi), B->bin(b, QG_KB_NE, hi, zero));
    qg_kv *max = B->let(b, "max", B->bin(b, QG_KB_ADD, B->select(b, lt(b, hi, neg), lo, hi), zero));
    return B->let(b, "d", B->bin(b, QG_KB_DIV, max, B->fimm(b, f == QG_BLOCK_Q4_0 ? -8.0f : -16.0f)));
}

static bool with_min(qg_block_format f) { return f == QG_BLOCK_Q4_1 || f == QG_BLOCK_Q5_1; }

/* The group's buffers: per block its extremes and whether it is ordered
 * (the walk's first pass), then d, 1/d, the fp16 fields and whether the
 * reference takes it (the group's scales, computed block_group lanes at
 * once). */
typedef struct group_bufs {
    qg_kv *lo, *hi, *ok, *d, *id, *d16, *m16, *ref;
} group_bufs;

static group_bufs group_buffers(qg_kb *b, qg_block_format f) {
    const unsigned G = (unsigned)b->lp->block_group, F = 4 * G, H = 2 * G;
    group_bufs g = {NULL, B->buffer(b, "g_hi", F), NULL, NULL, NULL, NULL, NULL, B->buffer(b, "g_ref", F)};
    /* q8's and mxfp4's extremes are amax alone, +inf for a NaN (lower_observe.c) */
    if (!qg_lower_block_amax_only(f, b->lp)) {
        g.lo = B->buffer(b, "g_lo", F);
        g.ok = B->buffer(b, "g_ok", F);
    }
    g.d = B->buffer(b, "g_d", F); /* mxfp4: amax, its scale the runtime's, block by block */
    if (f != QG_BLOCK_MXFP4) {
        g.id = B->buffer(b, "g_id", F);
        g.d16 = B->buffer(b, "g_d16", H);
    }
    if (with_min(f))
        g.m16 = B->buffer(b, "g_m16", H);
    /* a short last group's lanes past its blocks are computed on too:
     * defined values, never read back */
    qg_kv *const all[3] = {g.hi, g.lo, g.ok};
    for (int k = 0; k < 3 && all[k]; k++)
        B->zero_bytes(b, all[k], size(b, F));
    return g;
}

/* The group's scalars from its extremes, as the format takes them. */
static void group_scales(qg_kb *b, qg_block_format f, const group_bufs *g) {
    qg_kv *hi = B->let(b, "hi", B->gload(b, QG_KT_GF, g->hi)), *lo = NULL, *bad;
    if (g->lo) {
        lo = B->let(b, "lo", B->gload(b, QG_KT_GF, g->lo));
        qg_kv *ok = B->let(b, "ok", B->gload(b, QG_KT_GI, g->ok));
        qg_kv *infinite =
            B->let(b, "infinite", or_(b, lt(b, B->fimm(b, FLT_MAX), hi), lt(b, lo, B->fimm(b, -FLT_MAX))));
        bad = B->let(b, "bad", or_(b, B->bin(b, QG_KB_EQ, ok, B->imm(b, QG_KT_I32, 0)), infinite));
    } else { /* amax: +inf for a NaN too */
        bad = B->let(b, "bad", lt(b, B->fimm(b, FLT_MAX), hi));
    }
    qg_kv *odd;
    qg_kv *d = scale_of(b, f, lo, hi, &odd);
    B->gstore(b, g->ref, odd ? B->let(b, "to_reference", or_(b, bad, B->let(b, "odd", odd))) : bad);
    B->gstore(b, g->d, d);
    if (!g->id) /* mxfp4: d holds amax, the runtime's scale comes from it block by block */
        return;
    B->gstore(b, g->id, reciprocal(b, d));
    B->store_f16(b, g->d16, d);
    if (g->m16)
        B->store_f16(b, g->m16, lo);
}

/* Opens the walk over a row's nb blocks block_group at a time: each
 * block's extremes, then the group's scales in one pass over its lanes
 * (the scalar chain from a block's extremes to its 1/d and fp16 d then no
 * longer stands between one block's codes and the next's); returns with
 * the loop over the group's blocks open (close_groups closes it), the
 * block's index in the row. */
static qg_kv *open_groups(qg_kb *b, qg_block_format f, qg_kv *x, qg_kv *nb, const group_bufs *g, qg_kvar *j) {
    const qg_kt i32 = QG_KT_I32;
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    qg_kv *G = size(b, b->lp->block_group);
    B->loop_open(b, "groups", i, QG_KTEST_LT, nb, G);
    qg_kv *left = B->let(b, "left", B->bin(b, QG_KB_SUB, nb, B->get(b, i)));
    qg_kv *count = B->let(b, "count", B->select(b, lt(b, left, G), left, G));
    B->set(b, j, size(b, 0));
    B->loop_open(b, "extremes", j, QG_KTEST_LT, count, size(b, 1));
    qg_kv *in = B->elem_ptr(b, QG_KT_F32, x,
                            B->bin(b, QG_KB_MUL, B->bin(b, QG_KB_ADD, B->get(b, i), B->get(b, j)), size(b, QK)));
    qg_kv *at4 = B->let(b, "lane", B->bin(b, QG_KB_MUL, B->get(b, j), size(b, 4)));
    qg_kv *hi = B->byte_ptr(b, g->hi, at4);
    qg_kv *margs[4] = {in, size(b, QK), g->lo ? B->byte_ptr(b, g->lo, at4) : hi, hi};
    qg_kv *ok = B->call(b, B->minmax_ref(b), NULL, &i32, margs, 4);
    if (g->ok)
        B->store_at(b, B->byte_ptr(b, g->ok, at4), B->let(b, "ordered", ok));
    else
        B->discard(b, ok);
    B->loop_close(b);
    group_scales(b, f, g);
    B->set(b, j, size(b, 0));
    B->loop_open(b, "codes", j, QG_KTEST_LT, count, size(b, 1));
    return B->let(b, "at", B->bin(b, QG_KB_ADD, B->get(b, i), B->get(b, j)));
}

static void close_groups(qg_kb *b) {
    B->loop_close(b);
    B->loop_close(b);
}

/* The reference's quantize of the row's block `at` (into `blk`), or its
 * fake_quant (`fake`: into out, the row's y, and the mask); its status. */
static qg_kv *reference_block(qg_kb *b, qg_block_format f, bool fake, qg_kv *x, qg_kv *out, qg_kv *mask, qg_kv *at,
                              qg_kv *blk) {
    const qg_kt i32 = QG_KT_I32;
    const long long E = (long long)qg_block_elems(f);
    qg_kv *first = B->bin(b, QG_KB_MUL, at, size(b, E)), *in = B->elem_ptr(b, QG_KT_F32, x, first);
    qg_kv *none = B->imm(b, QG_KT_PTR, 0), *format = B->imm(b, QG_KT_I32, f);
    if (!fake) {
        qg_kv *args[5] = {format, in, size(b, E), blk, none};
        return B->call(b, NULL, "qg_block_quantize_ref", &i32, args, 5);
    }
    const bool packed = b->lp->mask_out == QG_MASK_BITS;
    qg_kv *mask_at = B->byte_ptr(b, mask, B->bin(b, QG_KB_MUL, at, size(b, packed ? E / 8 : E)));
    qg_kv *args[7] = {format,
                      in,
                      B->byte_ptr(b, out, B->bin(b, QG_KB_MUL, first, size(b, 4))),
                      /* writable */ B->select(b, B->nonnull(b, mask), mask_at, none),
                      B->imm(b, QG_KT_I32, packed),
                      size(b, E),
                      none};
    return B->call(b, NULL, "qg_block_fake_quant_ref", &i32, args, 7);
}

/* reference_block for a block the group's scales flag, and the walk's
 * next block. */
static void reference_if_flagged(qg_kb *b, const group_bufs *g, qg_kvar *j, qg_block_format f, bool fake, qg_kv *x,
                                 qg_kv *out, qg_kv *mask, qg_kv *at, qg_kv *blk) {
    B->if_open(b, B->bin(b, QG_KB_NE, B->index(b, QG_KT_I32, g->ref, B->get(b, j), false), B->imm(b, QG_KT_I32, 0)));
    B->discard(b, reference_block(b, f, fake, x, out, mask, at, blk));
    B->loop_continue(b);
    B->if_close(b);
}

/* A group buffer's float of block j, unnamed (a span may not read it). */
static qg_kv *of_block(qg_kb *b, qg_kv *buf, qg_kvar *j) { return B->index(b, QG_KT_F32, buf, B->get(b, j), false); }
static qg_kv *half_of_block(qg_kb *b, qg_kv *buf, qg_kvar *j) {
    return B->byte_ptr(b, buf, B->bin(b, QG_KB_MUL, B->get(b, j), size(b, 2)));
}

static void quantize(qg_kb *b, const qg_plan *p, qg_block_format f, const qg_block_layout *l) {
    qg_kv *x = B->arg(b, QG_ARG_F32_IN), *q = B->arg(b, QG_ARG_Q_OUT), *n = B->arg(b, QG_ARG_N);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, f, x, q, n);
    const group_bufs g = group_buffers(b, f);
    qg_kv *codes = is_q8(f) ? NULL : B->buffer(b, "codes", QK);
    qg_kvar *j = B->var(b, "j", QG_KT_SIZE, size(b, 0));
    qg_kv *at = open_groups(b, f, x, nb, &g, j);
    qg_kv *blk = B->let(b, "blk", B->byte_ptr(b, q, B->bin(b, QG_KB_MUL, at, size(b, (long long)qg_block_bytes(f)))));
    qg_kv *in = B->elem_ptr(b, QG_KT_F32, x, B->bin(b, QG_KB_MUL, at, size(b, QK)));
    reference_if_flagged(b, &g, j, f, false, x, NULL, NULL, at, blk);
    if (f == QG_BLOCK_MXFP4) { /* the E8M0 byte and d from amax, then the codes' nibbles */
        const qg_kt f32 = QG_KT_F32;
        qg_kv *sargs[2] = {of_block(b, g.d, j), blk};
        qg_kv *d = B->let(b, "blk_d", B->call(b, NULL, "qg_block_mxfp4_scale", &f32, sargs, 2));
        block_span(b, p, f, in, codes, QK, d, NULL, NULL);
        B->block_bytes(b, QG_KBYTES_PACK_NIBBLES, field(b, blk, l->qs), codes, QK / 2);
        close_groups(b);
        return;
    }
    qg_kv *d = of_block(b, g.d, j), *id = B->let(b, "blk_id", of_block(b, g.id, j));
    B->copy_bytes(b, field(b, blk, l->d), half_of_block(b, g.d16, j), 2);
    if (with_min(f))
        B->copy_bytes(b, field(b, blk, l->m), half_of_block(b, g.m16, j), 2);
    if (is_q8(f)) {
        qg_kv *qs = B->let(b, "qs", field(b, blk, l->qs));
        block_span(b, p, f, in, qs, QK, d, id, NULL);
        if (f == QG_BLOCK_Q8_1) { /* s = sum of the codes times d */
            qg_kv *sum = B->cast(b, QG_KT_F32, B->block_bytes(b, QG_KBYTES_SUM_I8, NULL, qs, 0));
            B->store_f16(b, field(b, blk, l->m), B->bin(b, QG_KB_MUL, sum, d));
        }
    } else {
        block_span(b, p, f, in, codes, QK, d, id, of_block(b, g.lo, j)); /* the min: q4_1's and q5_1's */
        if (l->qh >= 0)
            B->block_bytes(b, QG_KBYTES_PACK_FIFTH, field(b, blk, l->qh), codes, 0);
        B->block_bytes(b, QG_KBYTES_PACK_NIBBLES, field(b, blk, l->qs), codes, QK / 2);
    }
    close_groups(b);
}

/* y = the row quantized and decoded block by block: one span from x to y
 * (and the mask) with the quantizer's d and 1/d and the decoder's d (and
 * m) as the block stores them, rounded to fp16 and read back; a block the
 * reference takes is qg_block_fake_quant_ref's. */
static void fake_quant(qg_kb *b, const qg_plan *p, qg_block_format f) {
    qg_kv *x = B->arg(b, QG_ARG_F32_IN), *y = B->arg(b, QG_ARG_F32_OUT), *n = B->arg(b, QG_ARG_N);
    qg_kv *mask = B->arg(b, QG_ARG_MASK_OUT);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, f, x, y, n);
    qg_lower_clear_packed_mask(b, mask, n);
    const group_bufs g = group_buffers(b, f);
    qg_kvar *j = B->var(b, "j", QG_KT_SIZE, size(b, 0));
    qg_kv *blk = open_groups(b, f, x, nb, &g, j);
    qg_kv *at = B->let(b, "first", B->bin(b, QG_KB_MUL, blk, size(b, QK)));
    reference_if_flagged(b, &g, j, f, true, x, y, mask, blk, NULL);
    qg_kv *io[3] = {x, y, mask};
    if (f == QG_BLOCK_MXFP4) { /* d from amax as quantize takes it */
        const qg_kt f32 = QG_KT_F32;
        qg_kv *sargs[2] = {of_block(b, g.d, j), B->imm(b, QG_KT_PTR, 0)};
        qg_kv *d = B->let(b, "blk_d", B->call(b, NULL, "qg_block_mxfp4_scale", &f32, sargs, 2));
        span_at(b, p, f, io, at, QK, d, NULL, NULL, NULL);
        close_groups(b);
        return;
    }
    qg_kv *d16 = B->let(b, "d16", B->load_f16(b, half_of_block(b, g.d16, j)));
    qg_kv *m16 = with_min(f) ? B->let(b, "m16", B->load_f16(b, half_of_block(b, g.m16, j))) : NULL;
    qg_kv *lo = g.lo ? of_block(b, g.lo, j) : NULL; /* the min: q4_1's and q5_1's */
    span_at(b, p, f, io, at, QK, d16, B->let(b, "blk_id", of_block(b, g.id, j)), lo, m16);
    close_groups(b);
}

/* y from the block's codes and its fp16 d (and m) as stored. */
static void dequantize(qg_kb *b, const qg_plan *p, qg_block_format f, const qg_block_layout *l) {
    qg_kv *q = B->arg(b, QG_ARG_Q_IN), *y = B->arg(b, QG_ARG_F32_OUT), *n = B->arg(b, QG_ARG_N);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, f, q, y, n);
    const long long bytes = (long long)qg_block_bytes(f);
    qg_kv *codes = is_q8(f) ? NULL : B->buffer(b, "codes", QK);
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "blocks", i, QG_KTEST_LT, nb, size(b, 1));
    qg_kv *blk = B->let(b, "blk", B->byte_ptr(b, q, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes))));
    qg_kv *out = B->byte_ptr(b, y, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, QK * 4)));
    if (f == QG_BLOCK_MXFP4) { /* E2M1 values times half the E8M0 scale */
        qg_kv *d = B->let(b, "d", B->block_bytes(b, QG_KBYTES_E8M0_HALF, NULL, blk, 0));
        B->block_bytes(b, QG_KBYTES_UNPACK_NIBBLES, codes, field(b, blk, l->qs), 0);
        B->block_bytes(b, QG_KBYTES_E2M1, codes, codes, 0);
        qg_kv *io[3] = {codes, out, NULL};
        qg_lower_call_span(b, p, B->span_ref(b, ""), io, size(b, 0), size(b, QK), d, NULL, B->imm(b, QG_KT_I32, 0),
                           NULL);
        B->loop_close(b);
        return;
    }
    qg_kv *d = B->let(b, "d", B->load_f16(b, field(b, blk, l->d)));
    if (is_q8(f)) {
        block_span(b, p, f, field(b, blk, l->qs), out, QK, d, NULL, NULL);
    } else {
        qg_kv *m = with_min(f) ? B->let(b, "m", B->load_f16(b, field(b, blk, l->m))) : NULL;
        if (m) { /* q·d + m with both NaN: which payload wins depends on the
                    add's operand order, which LLVM may swap; the reference's */
            qg_kv *infinite = or_(b, lt(b, B->fimm(b, FLT_MAX), d), lt(b, d, B->fimm(b, -FLT_MAX)));
            qg_kv *nan_d = B->bin(b, QG_KB_NE, d, d);
            B->if_open(b, and_(b, B->bin(b, QG_KB_NE, m, m), or_(b, infinite, nan_d)));
            const qg_kt i32 = QG_KT_I32;
            qg_kv *rargs[5] = {B->imm(b, QG_KT_I32, f), blk, size(b, QK), out, B->imm(b, QG_KT_PTR, 0)};
            B->discard(b, B->call(b, NULL, "qg_block_dequantize_ref", &i32, rargs, 5));
            B->loop_continue(b);
            B->if_close(b);
        }
        B->block_bytes(b, QG_KBYTES_UNPACK_NIBBLES, codes, field(b, blk, l->qs), 0);
        if (l->qh >= 0)
            B->block_bytes(b, QG_KBYTES_OR_FIFTH, codes, field(b, blk, l->qh), 0);
        block_span(b, p, f, codes, out, QK, d, NULL, m);
    }
    B->loop_close(b);
}

/* A K-quant's sub-block scale as a float: int32 entry j of `scales`
 * times the block's fp16 factor (ggml's d * sc, in that order). */
static qg_kv *sub_scale(qg_kb *b, qg_kv *factor, qg_kv *scales, int j) {
    qg_kv *sc = B->cast(b, QG_KT_F32, B->index(b, QG_KT_I32, scales, size(b, j), false));
    return B->bin(b, QG_KB_MUL, factor, sc);
}

/* The K-quants' 256 floats from their codes: q4_K's eight rows of 32
 * nibbles (rows 2i and 2i + 1 the low and high nibbles of qs[32i..]) as
 * fl(q * d*scale) - dmin*min; q6_K's two halves of 128, each four rows of
 * 32 (ql's nibbles below two bits of qh), 16 codes to a scale, as
 * float(q - 32) * fl(d*scale). */
static void dequantize_k(qg_kb *b, const qg_plan *p, qg_block_format f) {
    qg_kv *q = B->arg(b, QG_ARG_Q_IN), *y = B->arg(b, QG_ARG_F32_OUT), *n = B->arg(b, QG_ARG_N);
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, f, q, y, n);
    const bool q4 = f == QG_BLOCK_Q4_K;
    qg_kv *codes = B->buffer(b, "codes", QK), *scales = B->buffer(b, "scales", 64);
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "blocks", i, QG_KTEST_LT, nb, size(b, 1));
    qg_kv *blk =
        B->let(b, "blk", B->byte_ptr(b, q, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, (long long)qg_block_bytes(f)))));
    qg_kv *out = B->byte_ptr(b, y, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, 256 * 4)));
    qg_kv *d = B->let(b, "d", B->load_f16(b, field(b, blk, q4 ? 0 : 208)));
    if (q4) {
        qg_kv *dmin = B->let(b, "dmin", B->load_f16(b, field(b, blk, 2)));
        B->block_bytes(b, QG_KBYTES_Q4K_SCALES, scales, field(b, blk, 4), 0);
        for (int j = 0; j < 8; j++) {
            B->block_bytes(b, QG_KBYTES_NIBBLES, codes, field(b, blk, 16 + 32 * (j / 2)), 4 * (j % 2));
            qg_kv *row = field(b, out, 32 * 4 * j);
            block_span(b, p, f, codes, row, QK, sub_scale(b, d, scales, j), NULL, sub_scale(b, dmin, scales, 8 + j));
        }
    } else {
        B->block_bytes(b, QG_KBYTES_WIDEN_I8, scales, field(b, blk, 192), 0);
        for (int j = 0; j < 8; j++) { /* half j / 4, row j % 4 */
            const int half = j / 4, row = j % 4;
            B->block_bytes(b, QG_KBYTES_NIBBLES, codes, field(b, blk, 64 * half + 32 * (row % 2)), 4 * (row / 2));
            B->block_bytes(b, QG_KBYTES_OR_HIGH_PAIR, codes, field(b, blk, 128 + 32 * half), 2 * row);
            for (int t = 0; t < 2; t++) {
                qg_kv *at = field(b, out, 4 * (128 * half + 32 * row + 16 * t));
                block_span(b, p, f, field(b, codes, 16 * t), at, 16, sub_scale(b, d, scales, 8 * half + 2 * row + t),
                           NULL, NULL);
            }
        }
    }
    B->loop_close(b);
}

/* The K-quants' quantize and fake_quant: the runtime's search writes a
 * block's fields and its sub-blocks' final scales (qg_block_kquant_search);
 * the element loop here takes every sub-block whose scale is not 0.
 * Quantize writes its codes over the search's and packs them: q4_K's rows
 * 2i and 2i + 1 into the nibbles of qs[32i..], q6_K's halves of 128 into
 * ql's nibbles and qh's bit pairs. fake_quant decodes them in the same
 * span, and leaves a block with a sub-block of scale 0 (whose codes are the
 * search's) to the reference. So does either op a block the search hands
 * back, and where the reference refuses it the row ends there, as the
 * reference's does. */
static void quantize_k(qg_kb *b, const qg_plan *p, qg_block_format f) {
    const qg_kt i32 = QG_KT_I32;
    const bool fq = p->op == QG_K_FAKE_QUANT, q4 = f == QG_BLOCK_Q4_K;
    qg_kv *x = B->arg(b, QG_ARG_F32_IN), *out = B->arg(b, fq ? QG_ARG_F32_OUT : QG_ARG_Q_OUT);
    qg_kv *n = B->arg(b, QG_ARG_N), *mask = fq ? B->arg(b, QG_ARG_MASK_OUT) : NULL;
    B->discard(b, B->arg(b, QG_ARG_QPARAMS));
    qg_kv *nb = row_check(b, f, x, out, n);
    if (fq)
        qg_lower_clear_packed_mask(b, mask, n);
    const int rows = q4 ? 8 : 16, len = q4 ? 32 : 16;
    const long long bytes = (long long)qg_block_bytes(f);
    qg_kv *codes = B->buffer(b, "codes", 256), *sub = B->buffer(b, "sub", 4 * 16);
    qg_kv *fields = fq ? B->buffer(b, "fields", (unsigned)bytes) : NULL;
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "blocks", i, QG_KTEST_LT, nb, size(b, 1));
    qg_kv *first = B->let(b, "first", B->bin(b, QG_KB_MUL, B->get(b, i), size(b, 256)));
    qg_kv *in = B->elem_ptr(b, QG_KT_F32, x, first);
    qg_kv *blk =
        fq ? fields : B->let(b, "blk", B->byte_ptr(b, out, B->bin(b, QG_KB_MUL, B->get(b, i), size(b, bytes))));
    qg_kv *sargs[5] = {B->imm(b, QG_KT_I32, f), in, blk, codes, sub};
    qg_kv *searched = B->let(b, "searched", B->call(b, NULL, "qg_block_kquant_search", &i32, sargs, 5));
    /* quantize: 2 (a sub-block keeps the search's codes) is the element loop's */
    B->if_open(b, fq ? B->bin(b, QG_KB_NE, searched, B->imm(b, QG_KT_I32, 0))
                     : B->bin(b, QG_KB_EQ, searched, B->imm(b, QG_KT_I32, 1)));
    qg_kv *ref = reference_block(b, f, fq, x, out, mask, B->get(b, i), blk);
    refuse_if(b, B->bin(b, QG_KB_NE, ref, B->imm(b, QG_KT_I32, 0)));
    B->loop_continue(b);
    B->if_close(b);
    qg_kvar *j = B->var(b, "j", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "rows", j, QG_KTEST_LT, size(b, rows), size(b, 1));
    qg_kv *d = B->let(b, "d", B->index(b, QG_KT_F32, sub, B->get(b, j), false));
    B->if_open(b, B->bin(b, QG_KB_NE, d, B->fimm(b, 0.0f)));
    qg_kv *dm = q4 ? B->index(b, QG_KT_F32, sub, B->bin(b, QG_KB_ADD, B->get(b, j), size(b, 8)), false) : NULL;
    qg_kv *at = B->let(b, "at", B->bin(b, QG_KB_MUL, B->get(b, j), size(b, len)));
    if (fq) {
        qg_kv *io[3] = {x, out, mask};
        span_at(b, p, f, io, B->bin(b, QG_KB_ADD, first, at), len, d, NULL, dm, NULL);
    } else {
        block_span(b, p, f, B->elem_ptr(b, QG_KT_F32, in, at), B->byte_ptr(b, codes, at), len, d, NULL, dm);
    }
    B->if_close(b);
    B->loop_close(b);
    for (int h = 0; !fq && h < (q4 ? 4 : 2); h++) {
        if (q4) {
            B->block_bytes(b, QG_KBYTES_PACK_NIBBLES, field(b, blk, 16 + 32 * h), field(b, codes, 64 * h), 32);
            continue;
        }
        B->block_bytes(b, QG_KBYTES_PACK_NIBBLES, field(b, blk, 64 * h), field(b, codes, 128 * h), 64);
        B->block_bytes(b, QG_KBYTES_PACK_HIGH_PAIRS, field(b, blk, 128 + 32 * h), field(b, codes, 128 * h), 0);
    }
    B->loop_close(b);
}

bool qg_lower_block_reads_extremes(qg_block_format f, qg_kernel_op op) {
    return qg_block_elems(f) == QK && (op == QG_K_QUANTIZE || op == QG_K_FAKE_QUANT);
}

bool qg_lower_block_amax_only(qg_block_format f, const qg_kernel_loops *lp) {
    return (is_q8(f) || f == QG_BLOCK_MXFP4) && qg_lower_block_minmax(f, lp);
}

void qg_lower_block_entry(qg_kb *b, const qg_plan *p, qg_block_format f) {
    const qg_op_info *o = qg_op_info_of(p->op);
    qg_entry_chain ch; /* 16-bit rows: the walk is the ftype driver's float32 one */
    qg_entry_chain_of(b->lp, &ch);
    if (f == QG_BLOCK_Q4_K || f == QG_BLOCK_Q6_K) {
        B->open_link(b, o, ch.walk);
        if (p->op == QG_K_QUANTIZE || p->op == QG_K_FAKE_QUANT)
            quantize_k(b, p, f);
        else
            dequantize_k(b, p, f);
        B->close_fn(b, NULL);
        qg_lower_forwarders(b, o, &ch);
        return;
    }
    qg_block_layout l;
    qg_block_layout_of(f, &l); /* a generated format's (qg_plan_block_generated) */
    B->open_link(b, o, ch.walk);
    if (p->op == QG_K_QUANTIZE)
        quantize(b, p, f, &l);
    else if (p->op == QG_K_FAKE_QUANT)
        fake_quant(b, p, f);
    else
        dequantize(b, p, f, &l);
    B->close_fn(b, NULL);
    qg_lower_forwarders(b, o, &ch);
}
