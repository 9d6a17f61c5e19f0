/* The LLVM backend's loop skeletons around the plans, mirroring the C
 * backend's: a span runs one channel's stretch (unrolled full vectors, one
 * vector at a time, then a masked tail that touches nothing past the end),
 * and the entry walks the channel layout. Loop counters live in allocas;
 * the O2 pipeline promotes them to registers. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../emit_c/isa_spelling.h"
#include "../plan/kernel_ops.h"
#include "llvm_builder.h"
#include "qgen/runtime.h"

/* Pointer parameters of one op and what flows through them. */
typedef struct io_t {
    LLVMTypeRef in_t, out_t; /* element types */
    unsigned in_size, out_size;
    bool in_q, out_q; /* quantized (widened / narrowed) */
    bool mask_in, mask_out;
} io_t;

static io_t io_of(const lx *x, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    const qg_arg_kind in = o->args[qg_op_data_in(o)].kind, out = o->args[qg_op_data_out(o)].kind;
    io_t io = {in == QG_ARG_Q_IN     ? x->qe
               : in == QG_ARG_ACC_IN ? x->i32
                                     : x->f32,
               out == QG_ARG_Q_OUT ? x->qe : x->f32,
               in == QG_ARG_Q_IN ? x->qsize : 4,
               out == QG_ARG_Q_OUT ? x->qsize : 4,
               in == QG_ARG_Q_IN,
               out == QG_ARG_Q_OUT,
               qg_op_arg_index(o, QG_ARG_MASK_IN) >= 0,
               qg_op_arg_index(o, QG_ARG_MASK_OUT) >= 0};
    return io;
}

/* NAME_<op>__<isa>(args) with the op table's argument types; the builder
 * is left in its body. */
static LLVMValueRef define_entry(lx *x, const qg_op_info *o) {
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s__%s", x->prefix, o->name, qg_isa_name(x->target->isa));
    LLVMTypeRef types[QG_OP_MAX_ARGS];
    for (int k = 0; k < o->nargs; k++)
        types[k] = o->args[k].kind == QG_ARG_N || o->args[k].kind == QG_ARG_INNER ? x->i64 : x->ptr;
    return lx_define(x, name, o->returns_status ? x->i32 : x->vd, types, (unsigned)o->nargs, false);
}

/* Argument `kind` of entry `fn`, or a null pointer when the op has none. */
static LLVMValueRef entry_arg(lx *x, LLVMValueRef fn, const qg_op_info *o, qg_arg_kind kind) {
    const int k = qg_op_arg_index(o, kind);
    return k >= 0 ? LLVMGetParam(fn, (unsigned)k) : LLVMConstNull(x->ptr);
}

static bool is_signed_q(const lx *x) { return x->sp->dtype != QG_QUINT8; }

/* ---- a counted loop: for (v = start; cond(v); v += step) ------------------ */

typedef struct loop_t {
    LLVMValueRef var;
    LLVMBasicBlockRef head, body, done;
} loop_t;

static loop_t loop_open(lx *x, LLVMValueRef start, const char *name) {
    loop_t l = {lx_alloca(x, x->i64), lx_block(x, name), lx_block(x, name), lx_block(x, name)};
    LLVMBuildStore(x->b, start, l.var);
    LLVMBuildBr(x->b, l.head);
    LLVMPositionBuilderAtEnd(x->b, l.head);
    return l;
}

static LLVMValueRef loop_value(lx *x, const loop_t *l) { return LLVMBuildLoad2(x->b, x->i64, l->var, ""); }

static void loop_test(lx *x, const loop_t *l, LLVMValueRef cond) {
    LLVMBuildCondBr(x->b, cond, l->body, l->done);
    LLVMPositionBuilderAtEnd(x->b, l->body);
}

static void loop_close(lx *x, const loop_t *l, LLVMValueRef step) {
    LLVMBuildStore(x->b, LLVMBuildAdd(x->b, loop_value(x, l), step, ""), l->var);
    LLVMBuildBr(x->b, l->head);
    LLVMPositionBuilderAtEnd(x->b, l->done);
}

/* if (cond) { ...then... } : returns the join block to continue in. */
static LLVMBasicBlockRef if_open(lx *x, LLVMValueRef cond) {
    LLVMBasicBlockRef then = lx_block(x, "then"), join = lx_block(x, "join");
    LLVMBuildCondBr(x->b, cond, then, join);
    LLVMPositionBuilderAtEnd(x->b, then);
    return join;
}

static void if_close(lx *x, LLVMBasicBlockRef join) {
    LLVMBuildBr(x->b, join);
    LLVMPositionBuilderAtEnd(x->b, join);
}

static LLVMValueRef umin(lx *x, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntULT, a, b, ""), a, b, "");
}

/* ---- span: one vector, then the loops -------------------------------------- */

typedef struct span_args {
    LLVMValueRef in, out, mask, base, len;
    LLVMValueRef param[QG_IN_COUNT];
    LLVMValueRef lane_bytes; /* scratch for packed masks */
} span_args;

static LLVMValueRef mask_helper(lx *x, bool pack) {
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

static LLVMValueRef low_bits(lx *x, LLVMValueRef count) {
    LLVMValueRef c32 = LLVMBuildTrunc(x->b, count, x->i32, "");
    return LLVMBuildSub(x->b, LLVMBuildShl(x->b, lx_i32(x, 1), c32, ""), lx_i32(x, 1), "");
}

static void pack_bits_inline(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
    LLVMValueRef bits = LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, iL, ""), x->i32, "");
    bits = LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_i64(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_i64(x, 7), ""), x->i32, "");
    LLVMValueRef word = LLVMBuildShl(x->b, bits, sh, "");
    LLVMBasicBlockRef general = lx_block(x, "bits_any"), done = lx_block(x, "bits_done");
    if (x->isa->lanes % 8 == 0) {
        /* whole bytes (a full vector at a byte boundary): one store, the
         * mask being zeroed at entry */
        LLVMBasicBlockRef whole = lx_block(x, "bits_whole");
        LLVMValueRef aligned = whole_bytes(x, sh, count);
        LLVMBuildCondBr(x->b, aligned, whole, general);
        LLVMPositionBuilderAtEnd(x->b, whole);
        LLVMSetAlignment(LLVMBuildStore(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), lx_gep(x, x->i8, packed, byte)), 1);
        LLVMBuildBr(x->b, done);
    } else {
        LLVMBuildBr(x->b, general);
    }
    LLVMPositionBuilderAtEnd(x->b, general);
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_i64(x, k), ""));
        LLVMValueRef part = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, lx_i32(x, 8 * k), ""), x->i8, "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), part, ""), p);
        if_close(x, join);
    }
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, done);
}

static LLVMValueRef unpack_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count) {
    LLVMValueRef byte = LLVMBuildLShr(x->b, at, lx_i64(x, 3), "");
    LLVMValueRef sh = LLVMBuildTrunc(x->b, LLVMBuildAnd(x->b, at, lx_i64(x, 7), ""), x->i32, "");
    LLVMValueRef word = lx_alloca(x, x->i32);
    LLVMBuildStore(x->b, lx_i32(x, 0), word);
    LLVMBasicBlockRef general = lx_block(x, "bits_any"), done = lx_block(x, "bits_done");
    if (x->isa->lanes % 8 == 0) { /* whole bytes: one load */
        LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
        LLVMBasicBlockRef whole = lx_block(x, "bits_whole");
        LLVMValueRef aligned = whole_bytes(x, sh, count);
        LLVMBuildCondBr(x->b, aligned, whole, general);
        LLVMPositionBuilderAtEnd(x->b, whole);
        LLVMValueRef v = LLVMBuildLoad2(x->b, iL, lx_gep(x, x->i8, packed, byte), "");
        LLVMSetAlignment(v, 1);
        LLVMBuildStore(x->b, LLVMBuildZExt(x->b, v, x->i32, ""), word);
        LLVMBuildBr(x->b, done);
    } else {
        LLVMBuildBr(x->b, general);
    }
    LLVMPositionBuilderAtEnd(x->b, general);
    for (int k = 0; k < 3; k++) {
        LLVMBasicBlockRef join = if_open(x, byte_needed(x, sh, count, k));
        LLVMValueRef p = lx_gep(x, x->i8, packed, LLVMBuildAdd(x->b, byte, lx_i64(x, k), ""));
        LLVMValueRef part = LLVMBuildShl(x->b, LLVMBuildZExt(x->b, LLVMBuildLoad2(x->b, x->i8, p, ""), x->i32, ""),
                                         lx_i32(x, 8 * k), "");
        LLVMBuildStore(x->b, LLVMBuildOr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), part, ""), word);
        if_close(x, join);
    }
    LLVMBuildBr(x->b, done);
    LLVMPositionBuilderAtEnd(x->b, done);
    LLVMValueRef bits = LLVMBuildLShr(x->b, LLVMBuildLoad2(x->b, x->i32, word, ""), sh, "");
    bits = LLVMBuildAnd(x->b, bits, low_bits(x, count), "");
    LLVMTypeRef iL = LLVMIntTypeInContext(x->c, x->isa->lanes);
    return LLVMBuildBitCast(x->b, LLVMBuildTrunc(x->b, bits, iL, ""), x->vm, "");
}

/* The plan on the vector at element `at` (count lanes valid; `active`
 * masks the loads and stores of a partial vector, NULL for a full one). */
/* x86, int8 outputs: four vectors narrowed with two rounds of saturating
 * packs and one lane permutation, as the C backend's store4 helpers do. */
static bool packs_four(const lx *x, const io_t *io) {
    /* where the ISA's C spelling has a four-vector store (templates/<isa>.def) */
    return io->out_q && x->isa->unroll == 4 && qg_isa_spelling_of(x->isa->isa)->store_q4[x->sp->dtype] &&
           (x->isa->isa == QG_ISA_AVX2 || x->isa->isa == QG_ISA_AVX512);
}

static void store_four_q8(lx *x, LLVMValueRef r[4], LLVMValueRef out, LLVMValueRef at) {
    const bool avx512 = x->isa->isa == QG_ISA_AVX512;
    const bool is_unsigned = x->sp->dtype == QG_QUINT8;
    const char *dw = avx512 ? "llvm.x86.avx512.packssdw.512" : "llvm.x86.avx2.packssdw";
    const char *wb = avx512 ? (is_unsigned ? "llvm.x86.avx512.packuswb.512" : "llvm.x86.avx512.packsswb.512")
                            : (is_unsigned ? "llvm.x86.avx2.packuswb" : "llvm.x86.avx2.packsswb");
    LLVMValueRef ab = lx_intrinsic(x, dw, NULL, 0, (LLVMValueRef[]){r[0], r[1]}, 2);
    LLVMValueRef cd = lx_intrinsic(x, dw, NULL, 0, (LLVMValueRef[]){r[2], r[3]}, 2);
    LLVMValueRef v = lx_intrinsic(x, wb, NULL, 0, (LLVMValueRef[]){ab, cd}, 2);
    /* the packs work within 128-bit lanes: put each vector's dwords back together */
    const unsigned L = x->isa->lanes, lanes128 = L / 4;
    LLVMValueRef idx[16];
    for (unsigned m = 0; m < L; m++)
        idx[m] = lx_i32(x, (long long)((m % lanes128) * 4 + m / lanes128));
    LLVMValueRef dwords = LLVMBuildBitCast(x->b, v, x->vi, "");
    LLVMValueRef perm = LLVMBuildShuffleVector(x->b, dwords, LLVMGetPoison(x->vi), LLVMConstVector(idx, L), "");
    LLVMSetAlignment(LLVMBuildStore(x->b, perm, lx_gep(x, x->i8, out, at)), 1);
}

/* AVX2: a full vector's lane mask as bytes through the bit mask and pdep. */
static void store_mask_bytes_avx2(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at) {
    LLVMValueRef bits = LLVMBuildZExt(x->b, LLVMBuildBitCast(x->b, m, x->i8, ""), x->i64, "");
    LLVMValueRef args[2] = {bits, LLVMConstInt(x->i64, 0x0101010101010101ull, 0)};
    LLVMValueRef bytes = lx_intrinsic(x, "llvm.x86.bmi.pdep.64", NULL, 0, args, 2);
    LLVMSetAlignment(LLVMBuildStore(x->b, bytes, lx_gep(x, x->i8, out, at)), 1);
}

/* The plan on the vector at element `at` (count lanes valid; `active`
 * masks the loads and stores of a partial vector, NULL for a full one).
 * With `deferred`, a quantized result is left there instead of stored. */
static void vector_at_ex(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef at,
                         LLVMValueRef count, LLVMValueRef active, LLVMValueRef *deferred) {
    LLVMValueRef in[QG_IN_COUNT] = {0};
    LLVMTypeRef vin = io->in_q ? x->vq : io->in_t == x->i32 ? x->vi : x->vf;
    LLVMValueRef v = lx_load(x, vin, io->in_t, io->in_size, s->in, at, active, LLVMConstNull(vin));
    if (io->in_q)
        v = is_signed_q(x) ? LLVMBuildSExt(x->b, v, x->vi, "") : LLVMBuildZExt(x->b, v, x->vi, "");
    in[p->op == QG_K_FAKE_QUANT_BACKWARD ? QG_IN_DY : io->in_t == x->f32 ? QG_IN_X : QG_IN_Q] = v;
    if (io->mask_in) {
        LLVMValueRef bytes = NULL;
        if (x->sp->compat_mask && !x->isa->scalable) {
            in[QG_IN_MASK] = unpack_bits_inline(x, s->mask, at, count);
        } else if (x->sp->compat_mask) {
            LLVMValueRef args[4] = {s->lane_bytes, s->mask, at, count};
            lx_call(x, mask_helper(x, false), args, 4);
            bytes = lx_load(x, x->vb, x->i8, 1, s->lane_bytes, lx_i64(x, 0), NULL, NULL);
        } else {
            bytes = lx_load(x, x->vb, x->i8, 1, s->mask, at, active, LLVMConstNull(x->vb));
        }
        if (!in[QG_IN_MASK])
            in[QG_IN_MASK] = LLVMBuildICmp(x->b, LLVMIntNE, bytes, LLVMConstNull(x->vb), "");
    }
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        in[k] = s->param[k];
    LLVMValueRef mres = NULL;
    LLVMValueRef r = lx_lower_plan(x, p, in, &mres);
    if (deferred)
        *deferred = r;
    else
        lx_store(x, io->out_q ? LLVMBuildTrunc(x->b, r, x->vq, "") : r, io->out_t, io->out_size, s->out, at, active);
    if (io->mask_out) {
        LLVMBasicBlockRef join = if_open(x, LLVMBuildIsNotNull(x->b, s->mask, ""));
        LLVMValueRef bytes = LLVMBuildZExt(x->b, mres, x->vb, "");
        if (x->sp->compat_mask && !x->isa->scalable) {
            pack_bits_inline(x, mres, s->mask, at, count);
        } else if (x->sp->compat_mask) {
            lx_store(x, bytes, x->i8, 1, s->lane_bytes, lx_i64(x, 0), NULL);
            LLVMValueRef args[4] = {s->mask, at, s->lane_bytes, count};
            lx_call(x, mask_helper(x, true), args, 4);
        } else if (!active && x->isa->isa == QG_ISA_AVX2) {
            store_mask_bytes_avx2(x, mres, s->mask, at);
        } else {
            lx_store(x, bytes, x->i8, 1, s->mask, at, active);
        }
        if_close(x, join);
    }
}

static void vector_at(lx *x, const qg_plan *p, const io_t *io, const span_args *s, LLVMValueRef at, LLVMValueRef count,
                      LLVMValueRef active) {
    vector_at_ex(x, p, io, s, at, count, active, NULL);
}

/* static void span(in, out, mask, base, len, params...) */
/* With one_vector, the span of the channels-last walk: len <= one vector,
 * so no loops (and far less code to compile). */
static LLVMValueRef build_span(lx *x, const qg_plan *p, const io_t *io, bool one_vector) {
    LLVMTypeRef params[5 + QG_IN_COUNT] = {x->ptr, x->ptr, x->ptr, x->i64, x->i64};
    unsigned np = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[np++] = p->kind[k] == QG_VI ? x->vi : x->vf;
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s_span%s", x->prefix, qg_kernel_op_name(p->op), one_vector ? "1" : "");
    LLVMValueRef fn = lx_define(x, name, x->vd, params, np, true);
    span_args s = {LLVMGetParam(fn, 0),
                   LLVMGetParam(fn, 1),
                   LLVMGetParam(fn, 2),
                   LLVMGetParam(fn, 3),
                   LLVMGetParam(fn, 4),
                   {0},
                   NULL};
    np = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            s.param[k] = LLVMGetParam(fn, np++);
    if (x->sp->compat_mask && x->isa->scalable && (io->mask_in || io->mask_out))
        s.lane_bytes = lx_alloca(x, x->vb);
    LLVMValueRef vl = lx_vl(x);
    if (one_vector) {
        LLVMBasicBlockRef full = lx_block(x, "full"), part = lx_block(x, "partial"), done = lx_block(x, "done");
        LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, s.len, vl, ""), full, part);
        LLVMPositionBuilderAtEnd(x->b, full);
        vector_at(x, p, io, &s, s.base, vl, NULL);
        LLVMBuildBr(x->b, done);
        LLVMPositionBuilderAtEnd(x->b, part);
        if (x->isa->lanes > 1 || x->isa->scalable) {
            LLVMBasicBlockRef join = if_open(x, LLVMBuildICmp(x->b, LLVMIntUGT, s.len, lx_i64(x, 0), ""));
            vector_at(x, p, io, &s, s.base, s.len, lx_active(x, lx_i64(x, 0), s.len));
            if_close(x, join);
        }
        LLVMBuildBr(x->b, done);
        LLVMPositionBuilderAtEnd(x->b, done);
        LLVMBuildRetVoid(x->b);
        return fn;
    }
    loop_t main = {0};
    const int U = x->isa->unroll;
    LLVMValueRef i0 = lx_i64(x, 0);
    if (U > 1) {
        LLVMValueRef step = LLVMBuildMul(x->b, vl, lx_i64(x, U), "");
        main = loop_open(x, i0, "unrolled");
        LLVMValueRef i = loop_value(x, &main);
        loop_test(x, &main, LLVMBuildICmp(x->b, LLVMIntULE, LLVMBuildAdd(x->b, i, step, ""), s.len, ""));
        const bool four = packs_four(x, io);
        LLVMValueRef r[4];
        for (int k = 0; k < U; k++) {
            LLVMValueRef off = LLVMBuildAdd(x->b, i, LLVMBuildMul(x->b, vl, lx_i64(x, k), ""), "");
            vector_at_ex(x, p, io, &s, LLVMBuildAdd(x->b, s.base, off, ""), vl, NULL, four ? &r[k] : NULL);
        }
        if (four)
            store_four_q8(x, r, s.out, LLVMBuildAdd(x->b, s.base, i, ""));
        loop_close(x, &main, step);
        i0 = loop_value(x, &main);
    }
    loop_t one = loop_open(x, i0, "vectors");
    LLVMValueRef i = loop_value(x, &one);
    loop_test(x, &one, LLVMBuildICmp(x->b, LLVMIntULE, LLVMBuildAdd(x->b, i, vl, ""), s.len, ""));
    vector_at(x, p, io, &s, LLVMBuildAdd(x->b, s.base, i, ""), vl, NULL);
    loop_close(x, &one, vl);
    if (x->isa->lanes > 1 || x->isa->scalable) {
        i = loop_value(x, &one);
        LLVMBasicBlockRef join = if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, i, s.len, ""));
        LLVMValueRef at = LLVMBuildAdd(x->b, s.base, i, "");
        LLVMValueRef active = lx_active(x, i, s.len);
        vector_at(x, p, io, &s, at, LLVMBuildSub(x->b, s.len, i, ""), active);
        if_close(x, join);
    }
    LLVMBuildRetVoid(x->b);
    return fn;
}

/* ---- parameters ------------------------------------------------------------ */

/* One channel's scalar parameters, as the C backend computes them. */
typedef struct chan_scalars {
    LLVMValueRef s, z, b;
} chan_scalars;

static LLVMValueRef bound(lx *x, long long q, LLVMValueRef z) {
    LLVMValueRef d = LLVMBuildSub(x->b, lx_i64(x, q), LLVMBuildSExt(x->b, z, x->i64, ""), "");
    return LLVMBuildSIToFP(x->b, d, x->f32, "");
}

static void splat_params(lx *x, const qg_plan *p, const chan_scalars *cs, LLVMValueRef *out) {
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++) {
        if (!p->uses[k])
            continue;
        LLVMValueRef v = NULL;
        switch (k) {
        case QG_IN_S: v = cs->s; break;
        case QG_IN_INV: v = LLVMBuildFDiv(x->b, lx_f32(x, 1.0f), cs->s, ""); break;
        case QG_IN_LO: v = bound(x, x->sp->quant_min, cs->z); break;
        case QG_IN_HI: v = bound(x, x->sp->quant_max, cs->z); break;
        case QG_IN_Z: v = cs->z; break;
        case QG_IN_B: v = cs->b; break;
        default: break;
        }
        out[k] = lx_splat(x, v, p->kind[k] == QG_VI ? x->vi : x->vf);
    }
}

static LLVMValueRef call_span(lx *x, LLVMValueRef span, const qg_plan *p, LLVMValueRef in, LLVMValueRef out,
                              LLVMValueRef mask, LLVMValueRef base, LLVMValueRef len, LLVMValueRef *params) {
    LLVMValueRef args[5 + QG_IN_COUNT] = {in, out, mask, base, len};
    unsigned n = 5;
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            args[n++] = params[k];
    return lx_call(x, span, args, n);
}

/* qp->scale[c] and qp->zero_point[c], or the spec's fixed qparams. */
static chan_scalars chan_of(lx *x, LLVMValueRef qp, LLVMValueRef c) {
    const qg_spec *sp = x->sp;
    if (sp->observer.type == QG_OBS_FIXED_QPARAMS)
        return (chan_scalars){lx_f32(x, sp->observer.fixed_scale), lx_i32(x, sp->observer.fixed_zero_point), NULL};
    LLVMValueRef sptr = lx_field(x, x->ptr, qp, offsetof(qg_qparams, scale));
    LLVMValueRef zptr = lx_field(x, x->ptr, qp, offsetof(qg_qparams, zero_point));
    LLVMValueRef s = LLVMBuildLoad2(x->b, x->f32, lx_gep(x, x->f32, sptr, c), "");
    LLVMValueRef z = LLVMBuildLoad2(x->b, x->i32, lx_gep(x, x->i32, zptr, c), "");
    return (chan_scalars){s, z, NULL};
}

/* ---- entries ------------------------------------------------------------- */

/* Channels-last (inner == 1): a table of every channel's parameters, then
 * rows of C elements; a row's vectors take their parameters from the table. */
static void channels_last(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                          LLVMValueRef mask, LLVMValueRef n, LLVMValueRef qp, LLVMBasicBlockRef fallback) {
    const long long C = (long long)x->sp->channel_len;
    LLVMTypeRef sz = x->i64;
    LLVMValueRef malloc_fn = lx_declare(x, "malloc", x->ptr, &sz, 1);
    LLVMValueRef free_fn = lx_declare(x, "free", x->vd, &x->ptr, 1);
    LLVMValueRef size = lx_i64(x, C * 4 * 5);
    LLVMValueRef tbl = lx_call(x, malloc_fn, &size, 1);
    LLVMBasicBlockRef have = lx_block(x, "table");
    LLVMBuildCondBr(x->b, LLVMBuildIsNull(x->b, tbl, ""), fallback, have);
    LLVMPositionBuilderAtEnd(x->b, have);
    /* rows of the table: s, inv, lo, hi (fp32) and z (int32) */
    static const int rows[] = {QG_IN_S, QG_IN_INV, QG_IN_LO, QG_IN_HI, QG_IN_Z};
    LLVMValueRef row_ptr[QG_IN_COUNT] = {0};
    for (int r = 0; r < 5; r++)
        row_ptr[rows[r]] = lx_gep(x, x->i8, tbl, lx_i64(x, C * 4 * r));
    loop_t fill = loop_open(x, lx_i64(x, 0), "table_fill");
    LLVMValueRef c = loop_value(x, &fill);
    loop_test(x, &fill, LLVMBuildICmp(x->b, LLVMIntULT, c, lx_i64(x, C), ""));
    chan_scalars cs = chan_of(x, qp, c);
    LLVMValueRef vals[QG_IN_COUNT] = {0};
    vals[QG_IN_S] = cs.s;
    vals[QG_IN_INV] = LLVMBuildFDiv(x->b, lx_f32(x, 1.0f), cs.s, "");
    vals[QG_IN_LO] = bound(x, x->sp->quant_min, cs.z);
    vals[QG_IN_HI] = bound(x, x->sp->quant_max, cs.z);
    vals[QG_IN_Z] = cs.z;
    for (int r = 0; r < 5; r++)
        LLVMBuildStore(x->b, vals[rows[r]], lx_gep(x, rows[r] == QG_IN_Z ? x->i32 : x->f32, row_ptr[rows[r]], c));
    loop_close(x, &fill, lx_i64(x, 1));

    loop_t row = loop_open(x, lx_i64(x, 0), "rows");
    LLVMValueRef r0 = loop_value(x, &row);
    loop_test(x, &row, LLVMBuildICmp(x->b, LLVMIntULT, r0, n, ""));
    LLVMValueRef m = umin(x, LLVMBuildSub(x->b, n, r0, ""), lx_i64(x, C));
    LLVMValueRef vl = lx_vl(x);
    loop_t col = loop_open(x, lx_i64(x, 0), "columns");
    LLVMValueRef j = loop_value(x, &col);
    loop_test(x, &col, LLVMBuildICmp(x->b, LLVMIntULT, j, m, ""));
    LLVMValueRef cnt = umin(x, LLVMBuildSub(x->b, m, j, ""), vl);
    /* parameters of lanes j..j+cnt: whole vectors, or masked at a row's end */
    LLVMValueRef slots[QG_IN_COUNT] = {0};
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            slots[k] = lx_alloca(x, p->kind[k] == QG_VI ? x->vi : x->vf);
    LLVMBasicBlockRef full = lx_block(x, "full"), part = lx_block(x, "partial"), go = lx_block(x, "go");
    LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, cnt, vl, ""), full, part);
    for (int pass = 0; pass < 2; pass++) {
        LLVMPositionBuilderAtEnd(x->b, pass ? part : full);
        LLVMValueRef active = pass ? lx_active(x, j, m) : NULL;
        for (int k = QG_IN_S; k < QG_IN_COUNT; k++) {
            if (!p->uses[k])
                continue;
            const bool is_int = p->kind[k] == QG_VI;
            LLVMTypeRef vt = is_int ? x->vi : x->vf;
            LLVMValueRef pass_v = is_int                             ? LLVMConstNull(vt)
                                  : (k == QG_IN_S || k == QG_IN_INV) ? lx_splat(x, lx_f32(x, 1.0f), vt)
                                                                     : LLVMConstNull(vt);
            LLVMValueRef v = lx_load(x, vt, is_int ? x->i32 : x->f32, 4, row_ptr[k], j, active, pass_v);
            LLVMBuildStore(x->b, v, slots[k]);
        }
        LLVMBuildBr(x->b, go);
    }
    LLVMPositionBuilderAtEnd(x->b, go);
    LLVMValueRef params[QG_IN_COUNT] = {0};
    for (int k = QG_IN_S; k < QG_IN_COUNT; k++)
        if (p->uses[k])
            params[k] = LLVMBuildLoad2(x->b, p->kind[k] == QG_VI ? x->vi : x->vf, slots[k], "");
    call_span(x, span, p, in, out, mask, LLVMBuildAdd(x->b, r0, j, ""), cnt, params);
    loop_close(x, &col, vl);
    loop_close(x, &row, lx_i64(x, C));
    lx_call(x, free_fn, &tbl, 1);
    LLVMBuildRetVoid(x->b);
}

/* Runs of `run_len` elements; run r uses channel r % C. */
static void channel_runs(lx *x, const qg_plan *p, LLVMValueRef span, LLVMValueRef in, LLVMValueRef out,
                         LLVMValueRef mask, LLVMValueRef n, LLVMValueRef run_len, LLVMValueRef C,
                         chan_scalars (*chan)(lx *, LLVMValueRef, LLVMValueRef), LLVMValueRef src) {
    LLVMValueRef run = lx_alloca(x, x->i64);
    LLVMBuildStore(x->b, lx_i64(x, 0), run);
    loop_t l = loop_open(x, lx_i64(x, 0), "runs");
    LLVMValueRef base = loop_value(x, &l);
    loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULT, base, n, ""));
    LLVMValueRef r = LLVMBuildLoad2(x->b, x->i64, run, "");
    LLVMValueRef c = LLVMBuildURem(x->b, r, C, "");
    LLVMBuildStore(x->b, LLVMBuildAdd(x->b, r, lx_i64(x, 1), ""), run);
    LLVMValueRef m = umin(x, LLVMBuildSub(x->b, n, base, ""), run_len);
    chan_scalars cs = chan(x, src, c);
    LLVMValueRef params[QG_IN_COUNT] = {0};
    splat_params(x, p, &cs, params);
    call_span(x, span, p, in, out, mask, base, m, params);
    loop_close(x, &l, run_len);
}

static void build_entry(lx *x, const qg_plan *p, const io_t *io, LLVMValueRef span, LLVMValueRef span1) {
    const qg_op_info *o = qg_op_info_of(p->op);
    LLVMValueRef fn = define_entry(x, o);
    LLVMValueRef in = LLVMGetParam(fn, (unsigned)qg_op_data_in(o)), out = LLVMGetParam(fn, (unsigned)qg_op_data_out(o));
    LLVMValueRef mask = entry_arg(x, fn, o, io->mask_in ? QG_ARG_MASK_IN : QG_ARG_MASK_OUT);
    LLVMValueRef n = entry_arg(x, fn, o, QG_ARG_N), qp = entry_arg(x, fn, o, QG_ARG_QPARAMS);
    if (io->mask_out && x->sp->compat_mask) {
        LLVMBasicBlockRef join = if_open(x, LLVMBuildIsNotNull(x->b, mask, ""));
        LLVMValueRef bytes = LLVMBuildUDiv(x->b, LLVMBuildAdd(x->b, n, lx_i64(x, 7), ""), lx_i64(x, 8), "");
        LLVMBuildMemSet(x->b, mask, LLVMConstInt(x->i8, 0, 0), bytes, 1);
        if_close(x, join);
    }
    if (qg_op_arg_index(o, QG_ARG_QPARAMS) < 0) { /* backward: no parameters */
        LLVMValueRef none[QG_IN_COUNT] = {0};
        call_span(x, span, p, in, out, mask, lx_i64(x, 0), n, none);
        LLVMBuildRetVoid(x->b);
        return;
    }
    if (!qg_qscheme_is_per_channel(x->sp->qscheme)) {
        chan_scalars cs = chan_of(x, qp, lx_i64(x, 0));
        LLVMValueRef pv[QG_IN_COUNT] = {0};
        splat_params(x, p, &cs, pv);
        call_span(x, span, p, in, out, mask, lx_i64(x, 0), n, pv);
        LLVMBuildRetVoid(x->b);
        return;
    }
    const long long C = (long long)x->sp->channel_len;
    LLVMValueRef inner = lx_field(x, x->i64, qp, offsetof(qg_qparams, inner));
    LLVMBasicBlockRef runs = lx_block(x, "runs_layout");
    if (C > 1) {
        LLVMBasicBlockRef last = lx_block(x, "channels_last");
        LLVMBuildCondBr(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 1), ""), last, runs);
        LLVMPositionBuilderAtEnd(x->b, last);
        channels_last(x, p, span1, in, out, mask, n, qp, runs);
    } else {
        LLVMBuildBr(x->b, runs);
    }
    LLVMPositionBuilderAtEnd(x->b, runs);
    LLVMValueRef is0 = LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 0), "");
    LLVMValueRef run_len = LLVMBuildSelect(x->b, is0, lx_i64(x, 1), inner, "");
    channel_runs(x, p, span, in, out, mask, n, run_len, lx_i64(x, C), chan_of, qp);
    LLVMBuildRetVoid(x->b);
}

/* requantize: m = fl(fl(s_in * s_w[c]) / s_out), bias and z_out per run. */
static chan_scalars requant_chan(lx *x, LLVMValueRef rp, LLVMValueRef c) {
    LLVMValueRef s_in = lx_field(x, x->f32, rp, offsetof(qg_requant_params, s_in));
    LLVMValueRef s_out = lx_field(x, x->f32, rp, offsetof(qg_requant_params, s_out));
    LLVMValueRef s_w = lx_field(x, x->ptr, rp, offsetof(qg_requant_params, s_w));
    LLVMValueRef w = LLVMBuildLoad2(x->b, x->f32, lx_gep(x, x->f32, s_w, c), "");
    LLVMValueRef m = LLVMBuildFDiv(x->b, LLVMBuildFMul(x->b, s_in, w, ""), s_out, "");
    LLVMValueRef z = lx_field(x, x->i32, rp, offsetof(qg_requant_params, z_out));
    LLVMValueRef bias = lx_field(x, x->ptr, rp, offsetof(qg_requant_params, bias_q));
    /* bias_q may be NULL: read a zero instead */
    LLVMValueRef zero = lx_alloca(x, x->i32);
    LLVMBuildStore(x->b, lx_i32(x, 0), zero);
    LLVMValueRef has = LLVMBuildIsNotNull(x->b, bias, "");
    LLVMValueRef bp = LLVMBuildSelect(x->b, has, lx_gep(x, x->i32, bias, c), zero, "");
    LLVMValueRef b = LLVMBuildLoad2(x->b, x->i32, bp, "");
    return (chan_scalars){m, z, b};
}

static void build_requantize_entry(lx *x, const qg_plan *p, LLVMValueRef span) {
    LLVMValueRef fn = define_entry(x, qg_op_info_of(QG_K_REQUANTIZE));
    LLVMValueRef acc = LLVMGetParam(fn, 0), q = LLVMGetParam(fn, 1), n = LLVMGetParam(fn, 2), rp = LLVMGetParam(fn, 3);
    LLVMValueRef ch = lx_field(x, x->i64, rp, offsetof(qg_requant_params, channels));
    LLVMValueRef C = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, ch, lx_i64(x, 0), ""), lx_i64(x, 1), ch, "");
    LLVMValueRef inner = lx_field(x, x->i64, rp, offsetof(qg_requant_params, inner));
    LLVMValueRef one = lx_i64(x, 1);
    LLVMValueRef inner1 =
        LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, inner, lx_i64(x, 0), ""), one, inner, "");
    LLVMValueRef n1 = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, n, lx_i64(x, 0), ""), one, n, "");
    LLVMValueRef run_len = LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntEQ, C, one, ""), n1, inner1, "");
    channel_runs(x, p, span, acc, q, LLVMConstNull(x->ptr), n, run_len, C, requant_chan, rp);
    LLVMBuildRetVoid(x->b);
}

/* ---- calls into the runtime ---------------------------------------------- */

static LLVMValueRef spec_object(lx *x) {
    char name[QG_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s_spec", x->prefix);
    LLVMValueRef g = LLVMGetNamedGlobal(x->m, name);
    return g ? g : LLVMAddGlobal(x->m, x->i8, name);
}

/* NAME_<op>__<isa>(args...) { ref(&NAME_spec, args...); } */
static void build_forward(lx *x, qg_kernel_op op) {
    const qg_op_info *o = qg_op_info_of(op);
    LLVMValueRef fn = define_entry(x, o);
    LLVMTypeRef types[QG_OP_MAX_ARGS + 1] = {x->ptr};
    LLVMValueRef args[QG_OP_MAX_ARGS + 1] = {spec_object(x)};
    for (int k = 0; k < o->nargs; k++) {
        args[k + 1] = LLVMGetParam(fn, (unsigned)k);
        types[k + 1] = LLVMTypeOf(args[k + 1]);
    }
    const unsigned n = (unsigned)o->nargs + 1;
    lx_call(x, lx_declare(x, o->reference, x->vd, types, n), args, n);
    LLVMBuildRetVoid(x->b);
}

/* ---- observe ----------------------------------------------------------- */

/* int minmax(const float *x, size_t len, float *mn, float *mx), len >= 1:
 * `unroll` independent accumulators, then a masked tail whose inactive
 * lanes repeat x[0]. Returns 0 when x holds a NaN. */
static LLVMValueRef build_minmax(lx *x) {
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_minmax_span__%s", x->prefix, qg_isa_name(x->target->isa));
    LLVMValueRef fn = lx_define(x, name, x->i32, (LLVMTypeRef[]){x->ptr, x->i64, x->ptr, x->ptr}, 4, false);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMValueRef xs = LLVMGetParam(fn, 0), len = LLVMGetParam(fn, 1);
    const int U = x->isa->unroll;
    LLVMValueRef first = lx_splat(x, LLVMBuildLoad2(x->b, x->f32, xs, ""), x->vf);
    LLVMValueRef lo[4], hi[4], ok[4];
    for (int k = 0; k < U; k++) {
        /* "no NaN yet" as all-ones int32 lanes: the compares' own form on
         * x86, so no mask narrowing in the loop */
        lo[k] = lx_alloca(x, x->vf), hi[k] = lx_alloca(x, x->vf), ok[k] = lx_alloca(x, x->vi);
        LLVMBuildStore(x->b, first, lo[k]);
        LLVMBuildStore(x->b, first, hi[k]);
        LLVMBuildStore(x->b, LLVMBuildSExt(x->b, LLVMBuildFCmp(x->b, LLVMRealORD, first, first, ""), x->vi, ""), ok[k]);
    }
    LLVMValueRef vl = lx_vl(x);
#define ACCUMULATE(k, v)                                                                                               \
    do {                                                                                                               \
        LLVMBuildStore(x->b, lx_min(x, LLVMBuildLoad2(x->b, x->vf, lo[k], ""), v), lo[k]);                             \
        LLVMBuildStore(x->b, lx_max(x, LLVMBuildLoad2(x->b, x->vf, hi[k], ""), v), hi[k]);                             \
        LLVMBuildStore(x->b,                                                                                           \
                       LLVMBuildAnd(x->b, LLVMBuildLoad2(x->b, x->vi, ok[k], ""),                                      \
                                    LLVMBuildSExt(x->b, LLVMBuildFCmp(x->b, LLVMRealORD, v, v, ""), x->vi, ""), ""),   \
                       ok[k]);                                                                                         \
    } while (0)
    LLVMValueRef i0 = lx_i64(x, 0);
    if (U > 1) {
        LLVMValueRef step = LLVMBuildMul(x->b, vl, lx_i64(x, U), "");
        loop_t l = loop_open(x, i0, "unrolled");
        LLVMValueRef i = loop_value(x, &l);
        loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULE, LLVMBuildAdd(x->b, i, step, ""), len, ""));
        for (int k = 0; k < U; k++) {
            LLVMValueRef at = LLVMBuildAdd(x->b, i, LLVMBuildMul(x->b, vl, lx_i64(x, k), ""), "");
            LLVMValueRef v = lx_load(x, x->vf, x->f32, 4, xs, at, NULL, NULL);
            ACCUMULATE(k, v);
        }
        loop_close(x, &l, step);
        i0 = loop_value(x, &l);
    }
    loop_t l = loop_open(x, i0, "vectors");
    LLVMValueRef i = loop_value(x, &l);
    loop_test(x, &l, LLVMBuildICmp(x->b, LLVMIntULE, LLVMBuildAdd(x->b, i, vl, ""), len, ""));
    LLVMValueRef v = lx_load(x, x->vf, x->f32, 4, xs, i, NULL, NULL);
    ACCUMULATE(0, v);
    loop_close(x, &l, vl);
    if (x->isa->lanes > 1 || x->isa->scalable) {
        i = loop_value(x, &l);
        LLVMBasicBlockRef join = if_open(x, LLVMBuildICmp(x->b, LLVMIntULT, i, len, ""));
        LLVMValueRef t = lx_load(x, x->vf, x->f32, 4, xs, i, lx_active(x, i, len), first);
        ACCUMULATE(0, t);
        if_close(x, join);
    }
#undef ACCUMULATE
    LLVMValueRef mn = LLVMBuildLoad2(x->b, x->vf, lo[0], ""), mx = LLVMBuildLoad2(x->b, x->vf, hi[0], "");
    LLVMValueRef all = LLVMBuildLoad2(x->b, x->vi, ok[0], "");
    for (int k = 1; k < U; k++) {
        mn = lx_min(x, mn, LLVMBuildLoad2(x->b, x->vf, lo[k], ""));
        mx = lx_max(x, mx, LLVMBuildLoad2(x->b, x->vf, hi[k], ""));
        all = LLVMBuildAnd(x->b, all, LLVMBuildLoad2(x->b, x->vi, ok[k], ""), "");
    }
    all = LLVMBuildICmp(x->b, LLVMIntNE, all, LLVMConstNull(x->vi), "");
    LLVMValueRef rmn = lx_intrinsic(x, "llvm.vector.reduce.fmin", &x->vf, 1, &mn, 1);
    LLVMValueRef rmx = lx_intrinsic(x, "llvm.vector.reduce.fmax", &x->vf, 1, &mx, 1);
    LLVMValueRef rok = lx_intrinsic(x, "llvm.vector.reduce.and", &x->vm, 1, &all, 1);
    LLVMBuildStore(x->b, rmn, LLVMGetParam(fn, 2));
    LLVMBuildStore(x->b, rmx, LLVMGetParam(fn, 3));
    LLVMBuildRet(x->b, LLVMBuildZExt(x->b, rok, x->i32, ""));
    return fn;
}

static void build_observe(lx *x) {
    LLVMValueRef span = qg_plan_observer_reduces(x->sp) ? build_minmax(x) : LLVMConstNull(x->ptr);
    LLVMValueRef fn = define_entry(x, qg_op_info_of(QG_K_OBSERVE));
    LLVMTypeRef rtypes[6] = {x->ptr, x->ptr, x->i64, x->i64, x->ptr, x->ptr};
    LLVMValueRef drv = lx_declare(x, "qg_observe_with", x->i32, rtypes, 6);
    LLVMValueRef args[6] = {LLVMGetParam(fn, 3), LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), LLVMGetParam(fn, 2), span,
                            LLVMGetParam(fn, 4)};
    LLVMBuildRet(x->b, lx_call(x, drv, args, 6));
}

/* ---- all of a spec's kernels ------------------------------------------------ */

qg_status lx_build_kernels(lx *x, qg_error *err) {
    const qg_spec *sp = x->sp;
    qg_status st = qg_plan_check_isa(sp, x->target->isa, err);
    if (st)
        return st;
    for (qg_kernel_op op = QG_K_QUANTIZE; op <= QG_K_FAKE_QUANT_BACKWARD; op++) {
        if (!(x->ops & (1u << op)))
            continue;
        if (qg_plan_by_reference(sp, op)) {
            build_forward(x, op);
            continue;
        }
        qg_plan plan;
        if ((st = qg_plan_build(sp, op, &plan, err)))
            return st;
        io_t io = io_of(x, op);
        LLVMValueRef span = build_span(x, &plan, &io, false);
        LLVMValueRef span1 =
            qg_qscheme_is_per_channel(sp->qscheme) && sp->channel_len > 1 && op != QG_K_FAKE_QUANT_BACKWARD
                ? build_span(x, &plan, &io, true)
                : NULL;
        build_entry(x, &plan, &io, span, span1);
    }
    if (x->ops & (1u << QG_K_REQUANTIZE)) {
        if (qg_plan_by_reference(sp, QG_K_REQUANTIZE)) {
            build_forward(x, QG_K_REQUANTIZE);
        } else {
            qg_plan plan;
            if ((st = qg_plan_build(sp, QG_K_REQUANTIZE, &plan, err)))
                return st;
            io_t io = io_of(x, QG_K_REQUANTIZE);
            build_requantize_entry(x, &plan, build_span(x, &plan, &io, false));
        }
    }
    if (x->ops & (1u << QG_K_OBSERVE))
        build_observe(x);
    return QG_OK;
}
