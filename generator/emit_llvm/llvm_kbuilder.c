/* The kernel builder (lower/kernel_builder.h) as LLVM IR: values are LLVM
 * values, variables stack slots (mem2reg makes them registers), loops and
 * ifs basic blocks. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm_kernel.h"

static lx_kb *kb(qg_kb *b) { return (lx_kb *)b; }
static LLVMValueRef V(qg_kv *v) { return (LLVMValueRef)v; }
static qg_kv *K(LLVMValueRef v) { return (qg_kv *)v; }

static LLVMTypeRef type_of(const lx *x, qg_kt t) {
    switch (t) {
    case QG_KT_SIZE: return x->isz;
    case QG_KT_I64: return x->i64;
    case QG_KT_I32: return x->i32;
    case QG_KT_F32: return x->f32;
    case QG_KT_PTR: return x->ptr;
    case QG_KT_BOOL: return x->i1;
    case QG_KT_VF: return x->vf;
    case QG_KT_VOK: return x->vi; /* all-ones int32 lanes: x86 compares' own form, no narrowing in loops */
    case QG_KT_VI: return x->vi;
    case QG_KT_GF: return LLVMVectorType(x->f32, (unsigned)x->lp->block_group);
    case QG_KT_GI: return LLVMVectorType(x->i32, (unsigned)x->lp->block_group);
    case QG_KT_GB: return LLVMVectorType(x->i1, (unsigned)x->lp->block_group);
    }
    return x->i64;
}

/* A group's lanes of v: v, or a scalar taken in every lane of `like`'s
 * length (no group: v). */
static LLVMValueRef lanes_like(lx *x, LLVMValueRef v, LLVMValueRef like) {
    LLVMTypeRef t = LLVMTypeOf(like);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind)
        return v;
    return lx_splat(x, v, LLVMVectorType(LLVMTypeOf(v), LLVMGetVectorSize(t)));
}
static bool is_float(LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
        t = LLVMGetElementType(t);
    return LLVMGetTypeKind(t) == LLVMFloatTypeKind;
}

static void kb_open_link(qg_kb *b, const qg_op_info *o, const char *infix) {
    kb(b)->o = o;
    kb(b)->nvars = 0; /* variables are a function's */
    lx_define_link(kb(b)->x, o, infix);
}

static qg_kv *kb_arg(qg_kb *b, qg_arg_kind kind) {
    lx *x = kb(b)->x;
    const int k = qg_op_arg_index(kb(b)->o, kind);
    return K(k >= 0 ? LLVMGetParam(x->fn, (unsigned)k) : LLVMConstNull(x->ptr));
}

static void kb_close_fn(qg_kb *b, qg_kv *v) {
    lx *x = kb(b)->x;
    v ? LLVMBuildRet(x->b, V(v)) : LLVMBuildRetVoid(x->b);
}

static void kb_ret(qg_kb *b) { LLVMBuildRetVoid(kb(b)->x->b); }

static qg_kv *kb_link_ref(qg_kb *b, const qg_op_info *o, const char *infix) {
    lx *x = kb(b)->x;
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s%s__%s", x->prefix, o->name, infix, qg_isa_name(x->target->isa));
    return K(LLVMGetNamedFunction(x->m, name));
}

static qg_kv *kb_spec_ref(qg_kb *b) {
    lx *x = kb(b)->x;
    char name[QG_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s_spec", x->prefix);
    LLVMValueRef g = LLVMGetNamedGlobal(x->m, name);
    return K(g ? g : LLVMAddGlobal(x->m, x->i8, name));
}

static qg_kv *kb_span_ref(qg_kb *b, const char *suffix) {
    lx *x = kb(b)->x;
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_%s_span%s", x->prefix, kb(b)->o->name, suffix);
    return K(LLVMGetNamedFunction(x->m, name));
}

static qg_kv *kb_imm(qg_kb *b, qg_kt t, long long v) {
    if (t == QG_KT_PTR)
        return K(LLVMConstNull(kb(b)->x->ptr));
    return K(LLVMConstInt(type_of(kb(b)->x, t), (unsigned long long)v, 1));
}

static qg_kv *kb_minmax_ref(qg_kb *b) { return K(kb(b)->minmax); }

static qg_kv *kb_rows_ref(qg_kb *b) {
    lx *x = kb(b)->x;
    char name[QG_NAME_MAX + 48];
    lx_rows_name(x, kb(b)->o->op, name, sizeof name);
    return K(LLVMGetNamedFunction(x->m, name));
}

static void kb_comment(qg_kb *b, const char *text) {
    (void)b;
    (void)text;
}

static void kb_section(qg_kb *b, const char *op_name) { kb_comment(b, op_name); }

static void kb_op_begin(qg_kb *b, const qg_plan *plan) {
    (void)plan; /* the LLVM backend builds the plan per vector (body) */
    lx *x = kb(b)->x;
    x->lp = b->lp;
    lx_use_group(x, b->lp->lmul);
}

static void kb_op_end(qg_kb *b) { kb(b)->x->lp = NULL; }

static qg_kv *kb_fimm(qg_kb *b, float v) { return K(lx_f32(kb(b)->x, v)); }

static qg_kv *kb_bin(qg_kb *b, qg_kbin op, qg_kv *a, qg_kv *c) {
    lx *x = kb(b)->x;
    LLVMBuilderRef bd = x->b;
    LLVMValueRef l = lanes_like(x, V(a), V(c)), r = lanes_like(x, V(c), V(a));
    /* the lowering's float arithmetic is the run parameters' (s * w / s_out, 1 / s) */
    static const LLVMOpcode arith[2][4] = {{LLVMAdd, LLVMSub, LLVMMul, LLVMUDiv},
                                           {LLVMFAdd, LLVMFSub, LLVMFMul, LLVMFDiv}};
    static const LLVMIntPredicate compare[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntUGE};
    if (op <= QG_KB_DIV)
        return K(LLVMBuildBinOp(bd, arith[is_float(l)][op], l, r, ""));
    static const LLVMRealPredicate fcompare[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOGE};
    if (op <= QG_KB_GE && is_float(l))
        return K(LLVMBuildFCmp(bd, fcompare[op - QG_KB_EQ], l, r, ""));
    if (op <= QG_KB_GE)
        return K(LLVMBuildICmp(bd, compare[op - QG_KB_EQ], l, r, ""));
    return K(op == QG_KB_AND ? LLVMBuildAnd(bd, l, r, "") : LLVMBuildOr(bd, l, r, ""));
}

static qg_kv *kb_select(qg_kb *b, qg_kv *cond, qg_kv *a, qg_kv *c) {
    lx *x = kb(b)->x;
    return K(LLVMBuildSelect(x->b, V(cond), lanes_like(x, V(a), V(cond)), lanes_like(x, V(c), V(cond)), ""));
}

static qg_kv *kb_cast(qg_kb *b, qg_kt t, qg_kv *v) {
    lx *x = kb(b)->x;
    LLVMTypeRef to = type_of(x, t), from = LLVMTypeOf(V(v));
    if (t == QG_KT_F32)
        return K(LLVMBuildSIToFP(x->b, V(v), to, ""));
    const unsigned wt = LLVMGetIntTypeWidth(to), wf = LLVMGetIntTypeWidth(from);
    return K(wt > wf ? LLVMBuildSExt(x->b, V(v), to, "") : wt < wf ? LLVMBuildTrunc(x->b, V(v), to, "") : V(v));
}

static qg_kv *kb_nonnull(qg_kb *b, qg_kv *ptr) { return K(LLVMBuildIsNotNull(kb(b)->x->b, V(ptr), "")); }

static void kb_discard(qg_kb *b, qg_kv *v) {
    (void)b;
    (void)v;
}

static qg_kv *kb_let(qg_kb *b, const char *name, qg_kv *v) {
    (void)b;
    (void)name;
    return v;
}

/* runtime.h's qg_qparams and qg_requant_params as the target lays them out
 * (its size_t and pointers: 32 bits on wasm32). */
static qg_kv *kb_field(qg_kb *b, qg_kv *ptr, qg_kfield f) {
    lx *x = kb(b)->x;
    LLVMTypeRef qp[5] = {x->ptr, x->ptr, x->ptr, x->isz, x->isz};
    LLVMTypeRef rp[7] = {x->f32, x->ptr, x->ptr, x->f32, x->i32, x->isz, x->isz};
    static const unsigned member[QG_KF_COUNT] = {0, 1, 3, 4, 0, 1, 3, 4, 2, 5, 6}; /* in the enum's order */
    const bool of_qp = f <= QG_KF_QP_INNER;
    LLVMTypeRef st = LLVMStructTypeInContext(x->c, of_qp ? qp : rp, of_qp ? 5 : 7, 0);
    const size_t offset = (size_t)LLVMOffsetOfElement(LLVMGetModuleDataLayout(x->m), st, member[f]);
    return K(lx_field(x, LLVMStructGetTypeAtIndex(st, member[f]), V(ptr), offset));
}

static qg_kv *kb_elem_ptr(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i) {
    lx *x = kb(b)->x;
    return K(lx_gep(x, type_of(x, t), V(ptr), V(i)));
}

static qg_kv *kb_index(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i, bool or_zero) {
    lx *x = kb(b)->x;
    LLVMTypeRef et = type_of(x, t);
    LLVMValueRef at = lx_gep(x, et, V(ptr), V(i));
    if (or_zero) { /* a NULL array reads a zero of the stack: no branch */
        LLVMValueRef zero = lx_alloca(x, et);
        LLVMBuildStore(x->b, LLVMConstNull(et), zero);
        at = LLVMBuildSelect(x->b, LLVMBuildIsNotNull(x->b, V(ptr), ""), at, zero, "");
    }
    return K(LLVMBuildLoad2(x->b, et, at, ""));
}

static qg_kvar *kb_var(qg_kb *b, const char *name, qg_kt t, qg_kv *init) {
    (void)name;
    lx_kb *k = kb(b);
    if (k->nvars == LX_KB_MAX) /* more than a kernel function declares: a lowering bug */
        abort();
    qg_kvar *v = &k->vars[k->nvars++];
    v->t = type_of(k->x, t);
    v->slot = lx_alloca(k->x, v->t);
    LLVMBuildStore(k->x->b, V(init), v->slot);
    return v;
}

static qg_kv *kb_get(qg_kb *b, qg_kvar *v) { return K(LLVMBuildLoad2(kb(b)->x->b, v->t, v->slot, "")); }

static void kb_set(qg_kb *b, qg_kvar *v, qg_kv *value) { LLVMBuildStore(kb(b)->x->b, V(value), v->slot); }

static void kb_loop_open(qg_kb *b, const char *name, qg_kvar *v, qg_ktest test, qg_kv *bound, qg_kv *step) {
    lx_kb *k = kb(b);
    lx *x = k->x;
    if (k->nloops == LX_KB_MAX)
        abort();
    lx_kb_loop *l = &k->loops[k->nloops++];
    /* the lowering's loops count size_t variables: lx_loop's i64 slot */
    *l = (lx_kb_loop){{v->slot, lx_block(x, name), lx_block(x, name), lx_block(x, name)}, V(step)};
    LLVMBuildBr(x->b, l->l.head);
    LLVMPositionBuilderAtEnd(x->b, l->l.head);
    LLVMValueRef i = lx_loop_value(x, &l->l);
    lx_loop_test(x, &l->l,
                 test == QG_KTEST_WHOLE_STEPS ? lx_whole_steps_test(x, i, V(bound), V(step))
                                              : LLVMBuildICmp(x->b, LLVMIntULT, i, V(bound), ""));
}

static void kb_loop_close(qg_kb *b) {
    lx_kb *k = kb(b);
    const lx_kb_loop *l = &k->loops[--k->nloops];
    lx_loop_close(k->x, &l->l, l->step);
}

static void kb_loop_continue(qg_kb *b) {
    lx_kb *k = kb(b);
    const lx_kb_loop *l = &k->loops[k->nloops - 1];
    lx_loop_continue(k->x, &l->l, l->step);
}

static void kb_if_open(qg_kb *b, qg_kv *cond) {
    lx_kb *k = kb(b);
    if (k->nifs == LX_KB_MAX)
        abort();
    k->joins[k->nifs++] = lx_if_open(k->x, V(cond));
}

static void kb_if_close(qg_kb *b) {
    lx_kb *k = kb(b);
    LLVMBasicBlockRef join = k->joins[--k->nifs];
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(k->x->b))) /* a branch that returned has none to add */
        LLVMBuildBr(k->x->b, join);
    LLVMPositionBuilderAtEnd(k->x->b, join);
}

static qg_kv *kb_call(qg_kb *b, qg_kv *fn, const char *name, const qg_kt *ret, qg_kv **args, int n) {
    lx *x = kb(b)->x;
    LLVMValueRef a[QG_OP_MAX_ARGS + QG_IN_COUNT + 5];
    LLVMTypeRef types[QG_OP_MAX_ARGS + QG_IN_COUNT + 5];
    for (int k = 0; k < n; k++) {
        a[k] = V(args[k]);
        types[k] = LLVMTypeOf(a[k]);
    }
    LLVMValueRef f = fn ? V(fn) : lx_declare(x, name, ret ? type_of(x, *ret) : x->vd, types, (unsigned)n);
    LLVMValueRef r = lx_call(x, f, a, (unsigned)n);
    return ret ? K(r) : NULL;
}

static void kb_zero_bytes(qg_kb *b, qg_kv *ptr, qg_kv *count) {
    lx *x = kb(b)->x;
    LLVMBuildMemSet(x->b, V(ptr), LLVMConstInt(x->i8, 0, 0), V(count), 1);
}

static void kb_store_at(qg_kb *b, qg_kv *ptr, qg_kv *v) { LLVMBuildStore(kb(b)->x->b, V(v), V(ptr)); }

static qg_kv *kb_byte_ptr(qg_kb *b, qg_kv *ptr, qg_kv *bytes) {
    lx *x = kb(b)->x;
    return K(lx_gep(x, x->i8, V(ptr), V(bytes)));
}
static qg_kv *kb_var_addr(qg_kb *b, qg_kvar *v) {
    (void)b;
    return K(v->slot);
}
static LLVMValueRef u32(lx *x, unsigned v) { return LLVMConstInt(x->i32, v, 0); }
/* qg_ks_f16_to_f32 in IR: exact, a NaN quieted with its payload kept. */
static qg_kv *kb_load_f16(qg_kb *b, qg_kv *ptr) {
    lx *x = kb(b)->x;
    LLVMBuilderRef bd = x->b;
    LLVMValueRef ld = LLVMBuildLoad2(bd, x->i16, V(ptr), "");
    LLVMSetAlignment(ld, 1);
    LLVMValueRef h = LLVMBuildZExt(bd, ld, x->i32, "");
    LLVMValueRef sign = LLVMBuildShl(bd, LLVMBuildAnd(bd, h, u32(x, 0x8000), ""), u32(x, 16), "");
    LLVMValueRef exp = LLVMBuildAnd(bd, LLVMBuildLShr(bd, h, u32(x, 10), ""), u32(x, 0x1F), "");
    LLVMValueRef mant = LLVMBuildAnd(bd, h, u32(x, 0x3FF), ""), mant13 = LLVMBuildShl(bd, mant, u32(x, 13), "");
    LLVMValueRef quiet =
        LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntNE, mant, u32(x, 0), ""), u32(x, 0x400000), u32(x, 0), "");
    LLVMValueRef special = LLVMBuildOr(bd, LLVMBuildOr(bd, u32(x, 0x7F800000), mant13, ""), quiet, "");
    /* zero and subnormals: mant * 2^-24, exact in float */
    LLVMValueRef tiny = LLVMBuildFMul(bd, LLVMBuildUIToFP(bd, mant, x->f32, ""), lx_f32(x, 0x1p-24f), "");
    tiny = LLVMBuildBitCast(bd, tiny, x->i32, "");
    LLVMValueRef normal =
        LLVMBuildOr(bd, LLVMBuildShl(bd, LLVMBuildAdd(bd, exp, u32(x, 112), ""), u32(x, 23), ""), mant13, "");
    LLVMValueRef bits = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntEQ, exp, u32(x, 0), ""), tiny, normal, "");
    bits = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntEQ, exp, u32(x, 0x1F), ""), special, bits, "");
    return K(LLVMBuildBitCast(bd, LLVMBuildOr(bd, bits, sign, ""), x->f32, ""));
}
/* qg_ks_f32_to_f16 in IR, the same bits: normals rounded half to even on
 * the 13 bits dropped; below 2^-14 the float sum |v| + 0.5 rounds v to a
 * multiple of 2^-24 (nearest-even, as IEEE adds), whose count is the
 * subnormal code (the smallest normal's after a carry). */
static void kb_store_f16(qg_kb *b, qg_kv *ptr, qg_kv *v) {
    lx *x = kb(b)->x;
    LLVMBuilderRef bd = x->b;
    LLVMValueRef f = V(v);
    const bool group = LLVMGetTypeKind(LLVMTypeOf(f)) == LLVMVectorTypeKind;
#define C32(c) lanes_like(x, u32(x, c), f)
    LLVMTypeRef i32 = group ? LLVMVectorType(x->i32, LLVMGetVectorSize(LLVMTypeOf(f))) : x->i32;
    LLVMValueRef u = LLVMBuildBitCast(bd, f, i32, "");
    LLVMValueRef sign = LLVMBuildAnd(bd, LLVMBuildLShr(bd, u, C32(16), ""), C32(0x8000), "");
    LLVMValueRef a = LLVMBuildAnd(bd, u, C32(0x7FFFFFFF), "");
    LLVMValueRef odd = LLVMBuildAnd(bd, LLVMBuildLShr(bd, a, C32(13), ""), C32(1), "");
    LLVMValueRef normal = LLVMBuildAdd(bd, LLVMBuildSub(bd, a, C32(0x38000000u - 0xFFFu), ""), odd, "");
    normal = LLVMBuildLShr(bd, normal, C32(13), "");
    LLVMValueRef sum =
        LLVMBuildFAdd(bd, LLVMBuildBitCast(bd, a, LLVMTypeOf(f), ""), lanes_like(x, lx_f32(x, 0.5f), f), "");
    LLVMValueRef sub = LLVMBuildSub(bd, LLVMBuildBitCast(bd, sum, i32, ""), C32(0x3F000000), "");
    LLVMValueRef r = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntUGE, a, C32(0x38800000), ""), normal, sub, "");
    r = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntUGE, a, C32(0x477FF000), ""), C32(0x7C00), r, "");
    r = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntUGT, a, C32(0x7F800000), ""), C32(0x7E00), r, "");
#undef C32
    LLVMTypeRef i16 = group ? LLVMVectorType(x->i16, LLVMGetVectorSize(LLVMTypeOf(f))) : x->i16;
    LLVMValueRef h = LLVMBuildTrunc(bd, LLVMBuildOr(bd, r, sign, ""), i16, "");
    LLVMSetAlignment(LLVMBuildStore(bd, h, V(ptr)), 1);
}
static qg_kv *kb_gload(qg_kb *b, qg_kt t, qg_kv *ptr) {
    lx *x = kb(b)->x;
    LLVMValueRef ld = LLVMBuildLoad2(x->b, type_of(x, t), V(ptr), "");
    LLVMSetAlignment(ld, 4);
    return K(ld);
}
static void kb_gstore(qg_kb *b, qg_kv *ptr, qg_kv *v) {
    lx *x = kb(b)->x;
    LLVMValueRef g = V(v);
    if (LLVMGetTypeKind(LLVMGetElementType(LLVMTypeOf(g))) == LLVMIntegerTypeKind &&
        LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(g))) == 1) /* conditions as int32 -1 and 0 */
        g = LLVMBuildSExt(x->b, g, type_of(x, QG_KT_GI), "");
    LLVMSetAlignment(LLVMBuildStore(x->b, g, V(ptr)), 4);
}
static void kb_copy_bytes(qg_kb *b, qg_kv *dst, qg_kv *src, unsigned bytes) {
    lx *x = kb(b)->x;
    LLVMBuildMemCpy(x->b, V(dst), 1, V(src), 1, lx_isz(x, bytes));
}
static qg_kv *kb_buffer(qg_kb *b, const char *name, unsigned bytes) {
    (void)name;
    lx *x = kb(b)->x;
    LLVMValueRef slot = lx_alloca(x, LLVMArrayType2(x->i8, bytes));
    LLVMSetAlignment(slot, 32);
    return K(slot);
}

/* Byte vectors of the block's codes, any alignment. */
static LLVMValueRef load_bytes(lx *x, LLVMTypeRef t, LLVMValueRef p, unsigned offset) {
    LLVMValueRef ld = LLVMBuildLoad2(x->b, t, offset ? lx_gep(x, x->i8, p, lx_isz(x, offset)) : p, "");
    LLVMSetAlignment(ld, 1);
    return ld;
}
static void store_bytes(lx *x, LLVMValueRef v, LLVMValueRef p, unsigned offset) {
    LLVMSetAlignment(LLVMBuildStore(x->b, v, offset ? lx_gep(x, x->i8, p, lx_isz(x, offset)) : p), 1);
}
static LLVMValueRef bytes_of(lx *x, unsigned n, unsigned v) {
    return lx_splat(x, LLVMConstInt(x->i8, v, 0), LLVMVectorType(x->i8, n));
}
/* 16 bytes, lane j four times from each of a, b, c, d */
static LLVMValueRef bytes_by_four(lx *x, unsigned a, unsigned b, unsigned c, unsigned d) {
    const unsigned v[4] = {a, b, c, d};
    LLVMValueRef lane[16];
    for (unsigned j = 0; j < 16; j++)
        lane[j] = LLVMConstInt(x->i8, v[j / 4], 0);
    return LLVMConstVector(lane, 16);
}

/* q4_K's scales (lanes 0-7) and mins (8-15) from bytes q[0..11]: lanes
 * j < 4 of each half take q's low six bits, the others a nibble of
 * q[8..11] below two high bits of q[0..7] */
static LLVMValueRef q4k_scales(lx *x, LLVMValueRef q) {
    LLVMBuilderRef bd = x->b;
    static const unsigned low[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
    static const unsigned top[16] = {0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 4, 5, 6, 7};
    LLVMValueRef lo[16], hi[16];
    for (unsigned j = 0; j < 16; j++) {
        lo[j] = LLVMConstInt(x->i32, low[j], 0);
        hi[j] = LLVMConstInt(x->i32, top[j], 0);
    }
    LLVMValueRef undef = LLVMGetUndef(LLVMTypeOf(q));
    LLVMValueRef p = LLVMBuildShuffleVector(bd, q, undef, LLVMConstVector(lo, 16), "");
    LLVMValueRef t = LLVMBuildShuffleVector(bd, q, undef, LLVMConstVector(hi, 16), "");
    LLVMValueRef body =
        LLVMBuildAnd(bd, LLVMBuildLShr(bd, p, bytes_by_four(x, 0, 0, 0, 4), ""), bytes_by_four(x, 63, 15, 63, 15), "");
    LLVMValueRef high =
        LLVMBuildAnd(bd, LLVMBuildShl(bd, LLVMBuildLShr(bd, t, bytes_of(x, 16, 6), ""), bytes_of(x, 16, 4), ""),
                     bytes_by_four(x, 0, 0x30, 0, 0x30), "");
    return LLVMBuildOr(bd, body, high, "");
}

/* The codes' byte work as vectors of 16 and 32 bytes, which every target
 * legalizes (the fifth bits: a compare's 32 lane bits as one i32). */
static qg_kv *kb_block_bytes(qg_kb *b, qg_kbytes op, qg_kv *dst, qg_kv *src, int k) {
    lx *x = kb(b)->x;
    LLVMBuilderRef bd = x->b;
    LLVMTypeRef v16 = LLVMVectorType(x->i8, 16), v32 = LLVMVectorType(x->i8, 32), m32 = LLVMVectorType(x->i1, 32);
    LLVMValueRef s = V(src);
    switch (op) {
    case QG_KBYTES_PACK_NIBBLES: {
        LLVMTypeRef vk = LLVMVectorType(x->i8, (unsigned)k);
        LLVMValueRef lo = LLVMBuildAnd(bd, load_bytes(x, vk, s, 0), bytes_of(x, (unsigned)k, 15), "");
        LLVMValueRef hi = LLVMBuildShl(bd, load_bytes(x, vk, s, (unsigned)k), bytes_of(x, (unsigned)k, 4), "");
        store_bytes(x, LLVMBuildOr(bd, lo, hi, ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_PACK_HIGH_PAIRS: {
        LLVMValueRef acc = LLVMConstNull(v32);
        for (unsigned t = 0; t < 4; t++) {
            LLVMValueRef pair = LLVMBuildAnd(
                bd, LLVMBuildLShr(bd, load_bytes(x, v32, s, 32 * t), bytes_of(x, 32, 4), ""), bytes_of(x, 32, 3), "");
            acc = LLVMBuildOr(bd, acc, LLVMBuildShl(bd, pair, bytes_of(x, 32, 2 * t), ""), "");
        }
        store_bytes(x, acc, V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_PACK_FIFTH: {
        LLVMValueRef bit = LLVMBuildAnd(bd, load_bytes(x, v32, s, 0), bytes_of(x, 32, 16), "");
        LLVMValueRef set = LLVMBuildICmp(bd, LLVMIntNE, bit, LLVMConstNull(v32), "");
        store_bytes(x, LLVMBuildBitCast(bd, set, x->i32, ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_UNPACK_NIBBLES: {
        LLVMValueRef q = load_bytes(x, v16, s, 0);
        store_bytes(x, LLVMBuildAnd(bd, q, bytes_of(x, 16, 15), ""), V(dst), 0);
        store_bytes(x, LLVMBuildLShr(bd, q, bytes_of(x, 16, 4), ""), V(dst), 16);
        return NULL;
    }
    case QG_KBYTES_OR_FIFTH: {
        LLVMValueRef set = LLVMBuildBitCast(bd, load_bytes(x, x->i32, s, 0), m32, "");
        LLVMValueRef fifth = LLVMBuildShl(bd, LLVMBuildZExt(bd, set, v32, ""), bytes_of(x, 32, 4), "");
        store_bytes(x, LLVMBuildOr(bd, load_bytes(x, v32, V(dst), 0), fifth, ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_NIBBLES: {
        LLVMValueRef q = LLVMBuildLShr(bd, load_bytes(x, v32, s, 0), bytes_of(x, 32, (unsigned)k & 7), "");
        store_bytes(x, LLVMBuildAnd(bd, q, bytes_of(x, 32, 15), ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_OR_HIGH_PAIR: {
        LLVMValueRef pair =
            LLVMBuildAnd(bd, LLVMBuildLShr(bd, load_bytes(x, v32, s, 0), bytes_of(x, 32, (unsigned)k & 7), ""),
                         bytes_of(x, 32, 3), "");
        LLVMValueRef high = LLVMBuildShl(bd, pair, bytes_of(x, 32, 4), "");
        store_bytes(x, LLVMBuildOr(bd, load_bytes(x, v32, V(dst), 0), high, ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_Q4K_SCALES:
    case QG_KBYTES_WIDEN_I8: {
        LLVMTypeRef w = LLVMVectorType(x->i32, 16);
        LLVMValueRef q = load_bytes(x, v16, s, 0);
        LLVMValueRef wide =
            op == QG_KBYTES_WIDEN_I8 ? LLVMBuildSExt(bd, q, w, "") : LLVMBuildZExt(bd, q4k_scales(x, q), w, "");
        store_bytes(x, wide, V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_E2M1: { /* k, 2k - 4 or 4k - 16 by k = code & 7 (m3), negated by bit 3 */
        LLVMValueRef c = load_bytes(x, v32, s, 0), m3 = LLVMBuildAnd(bd, c, bytes_of(x, 32, 7), "");
        LLVMValueRef two = LLVMBuildAdd(bd, m3, m3, ""), four = LLVMBuildAdd(bd, two, two, "");
        LLVMValueRef big = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntULT, m3, bytes_of(x, 32, 6), ""),
                                           LLVMBuildSub(bd, two, bytes_of(x, 32, 4), ""),
                                           LLVMBuildSub(bd, four, bytes_of(x, 32, 16), ""), "");
        LLVMValueRef v = LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntULT, m3, bytes_of(x, 32, 4), ""), m3, big, "");
        LLVMValueRef neg =
            LLVMBuildICmp(bd, LLVMIntNE, LLVMBuildAnd(bd, c, bytes_of(x, 32, 8), ""), LLVMConstNull(v32), "");
        store_bytes(x, LLVMBuildSelect(bd, neg, LLVMBuildNeg(bd, v, ""), v, ""), V(dst), 0);
        return NULL;
    }
    case QG_KBYTES_E8M0_HALF: {
        LLVMValueRef e = LLVMBuildZExt(bd, load_bytes(x, x->i8, s, 0), x->i32, "");
        LLVMValueRef sub = LLVMBuildShl(bd, LLVMConstInt(x->i32, 0x00200000u, 0), e, "");
        LLVMValueRef normal =
            LLVMBuildShl(bd, LLVMBuildSub(bd, e, LLVMConstInt(x->i32, 1, 0), ""), LLVMConstInt(x->i32, 23, 0), "");
        LLVMValueRef low = LLVMBuildICmp(bd, LLVMIntULT, e, LLVMConstInt(x->i32, 2, 0), "");
        return K(LLVMBuildBitCast(bd, LLVMBuildSelect(bd, low, sub, normal, ""), x->f32, ""));
    }
    case QG_KBYTES_SUM_I8: {
        LLVMTypeRef w = LLVMVectorType(x->i32, 32);
        LLVMValueRef wide = LLVMBuildSExt(bd, load_bytes(x, v32, s, 0), w, "");
        return K(lx_intrinsic(x, "llvm.vector.reduce.add", &w, 1, &wide, 1));
    }
    }
    return NULL;
}

/* ---- the channels-last rows */

static void kb_open_rows(qg_kb *b, const qg_plan *p, qg_kv *args[5], qg_kv *rows[QG_IN_COUNT]) {
    lx_kb *k = kb(b);
    k->o = qg_op_info_of(p->op);
    k->nvars = 0;
    LLVMValueRef a[5], r[QG_IN_COUNT];
    lx_rows_open(k->x, p, a, r);
    for (int i = 0; i < 5; i++)
        args[i] = K(a[i]);
    for (int in = 0; in < QG_IN_COUNT; in++)
        rows[in] = in >= QG_IN_S && p->uses[in] ? K(r[in]) : NULL;
    for (int i = 0; i < 3; i++)
        k->rows_io[i] = a[i];
}

/* A column's vectors read the rows' tensors and the parameters loaded here. */
static void kb_column_open(qg_kb *b, const qg_plan *p, qg_kv *count) {
    (void)p, (void)count;
    lx_kb *k = kb(b);
    k->s = (span_args){.in = k->rows_io[0], .out = k->rows_io[1], .mask = k->rows_io[2]};
    k->io = lx_io_of(k->x);
}

/* a strip's parameters by its length (RVV) or under its lane mask (SVE) */
static qg_kv *kb_column_param(qg_kb *b, const qg_plan *p, qg_plan_input in, qg_kv *row_ptr, qg_kv *j, qg_kv *count) {
    lx *x = kb(b)->x;
    LLVMValueRef strip = !count                            ? NULL
                         : x->lp->tail_kind == QG_TAIL_EVL ? LLVMConstAllOnes(x->vm)
                                                           : lx_active(x, lx_isz(x, 0), V(count));
    const bool is_int = p->kind[in] == QG_VI;
    LLVMValueRef v = lx_load(x, is_int ? x->vi : x->vf, is_int ? x->i32 : x->f32, 4, V(row_ptr), V(j), strip,
                             count ? V(count) : NULL, NULL);
    kb(b)->s.param[in] = v;
    return K(v);
}

static void kb_column_close(qg_kb *b) { (void)b; }

/* ---- observe's reduction and vectors */

static void kb_open_minmax(qg_kb *b, const qg_plan *widen, qg_kv *args[4], bool block) {
    (void)block; /* the lowering's body says it all */
    lx_kb *k = kb(b);
    lx *x = k->x;
    char name[QG_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s_minmax_span__%s", x->prefix, qg_isa_name(x->target->isa));
    k->minmax = lx_define(x, name, x->i32, (LLVMTypeRef[]){x->ptr, x->isz, x->ptr, x->ptr}, 4, false);
    LLVMSetLinkage(k->minmax, LLVMInternalLinkage);
    k->widen = widen;
    k->nvars = 0;
    for (unsigned a = 0; a < 4; a++)
        args[a] = K(LLVMGetParam(k->minmax, a));
}

/* A part vector: a masked load whose other lanes take x[at]. */
static qg_kv *kb_values(qg_kb *b, qg_kv *xs, qg_kv *at, qg_kv *count) {
    lx_kb *k = kb(b);
    lx *x = k->x;
    const bool h = k->widen != NULL;
    LLVMTypeRef vt = h ? x->vh : x->vf, et = h ? x->i16 : x->f32;
    LLVMValueRef active = NULL, pass = NULL;
    if (count) {
        active = lx_active(x, V(at), LLVMBuildAdd(x->b, V(at), V(count), ""));
        pass = lx_splat(x, LLVMBuildLoad2(x->b, et, lx_gep(x, et, V(xs), V(at)), ""), vt);
    }
    LLVMValueRef v = lx_load(x, vt, et, h ? 2 : 4, V(xs), V(at), active, count ? V(count) : NULL, pass);
    if (!h)
        return K(v);
    LLVMValueRef in[QG_IN_COUNT] = {[QG_IN_X] = LLVMBuildZExt(x->b, v, x->vi, "")};
    return K(lx_lower_plan(x, k->widen, in, NULL, NULL));
}

static qg_kv *kb_vsplat(qg_kb *b, qg_kv *f) { return K(lx_splat(kb(b)->x, V(f), kb(b)->x->vf)); }

static qg_kv *kb_vop(qg_kb *b, qg_opcode op, qg_kv *a, qg_kv *c) {
    lx *x = kb(b)->x;
    switch (op) {
    case QG_OP_ORDERED: return K(LLVMBuildSExt(x->b, LLVMBuildFCmp(x->b, LLVMRealORD, V(a), V(a), ""), x->vi, ""));
    case QG_OP_AND_M: return K(LLVMBuildAnd(x->b, V(a), V(c), ""));
    case QG_OP_SPLAT_I: return K(lx_splat(x, V(a), x->vi));       /* of a value, where a plan step has an immediate */
    default: return K(lx_lower_op(x, op, V(a), c ? V(c) : NULL)); /* min, max, sub and the integer ops, as the plan's */
    }
}

static qg_kv *kb_reduce(qg_kb *b, qg_opcode op, qg_kv *v) {
    lx *x = kb(b)->x;
    LLVMValueRef a = V(v);
    if (op == QG_OP_AND_M) {
        a = LLVMBuildICmp(x->b, LLVMIntNE, a, LLVMConstNull(x->vi), "");
        return K(lx_intrinsic(x, "llvm.vector.reduce.and", &x->vm, 1, &a, 1));
    }
    return K(
        lx_intrinsic(x, op == QG_OP_MIN_F ? "llvm.vector.reduce.fmin" : "llvm.vector.reduce.fmax", &x->vf, 1, &a, 1));
}

static qg_kv *kb_param(qg_kb *b, qg_plan_input in, qg_kv *scalar) {
    lx *x = kb(b)->x;
    return K(lx_splat(x, V(scalar), in == QG_IN_Z || in == QG_IN_B ? x->vi : x->vf));
}

static void kb_open_span(qg_kb *b, const qg_plan *p, const char *suffix, bool out_of_line) {
    kb(b)->o = qg_op_info_of(p->op);
    kb(b)->nvars = 0;
    lx_kb_open_span(kb(b), p, suffix, out_of_line);
}
static qg_kv *kb_span_arg(qg_kb *b, int k) { return K(lx_kb_span_arg(kb(b), k)); }
static qg_kv *kb_lanes(qg_kb *b) { return K(lx_vl(kb(b)->x)); }
static qg_kv *kb_group_mask_in(qg_kb *b, qg_kv *at) { return K(lx_kb_group_mask_in(kb(b), V(at))); }
static void kb_vector_open(qg_kb *b, const qg_plan *p, const qg_kvector *v) {
    lx_kb_vector_open(kb(b), p, V(v->at), V(v->count), v->partial);
}
static void kb_vector_close(qg_kb *b) { lx_kb_vector_close(kb(b)); }
static qg_kv *kb_load(qg_kb *b) { return K(lx_kb_load(kb(b))); }
static qg_kv *kb_load_mask(qg_kb *b, qg_kv *bits, int first) { return K(lx_kb_load_mask(kb(b), V(bits), first)); }
static qg_kv *kb_body(qg_kb *b, qg_kv *in, qg_kv *m, qg_kbody form, qg_kv **mask_out, qg_kv **nan) {
    LLVMValueRef mo = NULL, n = NULL, r = lx_kb_body(kb(b), V(in), V(m), form, &mo, &n);
    *mask_out = K(mo);
    *nan = K(n);
    return K(r);
}
static void kb_store(qg_kb *b, qg_kv *r) { lx_kb_store(kb(b), V(r)); }
static void kb_store_mask(qg_kb *b, qg_kv *m) { lx_kb_store_mask(kb(b), V(m)); }
static void kb_group_store(qg_kb *b, qg_kv *const r[4], qg_kv *at) {
    LLVMValueRef v[4] = {V(r[0]), V(r[1]), V(r[2]), V(r[3])};
    lx_kb_group_store(kb(b), v, V(at));
}
static void kb_group_mask_out(qg_kb *b, qg_kv *const m[4], qg_kv *at) {
    LLVMValueRef v[4] = {V(m[0]), V(m[1]), V(m[2]), V(m[3])};
    lx_kb_group_mask_out(kb(b), v, V(at));
}
static qg_kv *kb_any_nan4(qg_kb *b, qg_kv *const nan[4]) {
    LLVMValueRef v[4] = {V(nan[0]), V(nan[1]), V(nan[2]), V(nan[3])};
    return K(lx_kb_any_nan4(kb(b), v));
}
static qg_kv *kb_to_boundary(qg_kb *b, qg_kv *ptr, qg_kv *base, bool of_output, unsigned bytes) {
    return K(lx_kb_to_boundary(kb(b), V(ptr), V(base), of_output, bytes));
}

static const qg_kb_ops llvm_ops = {QG_KB_CALLS(QG_KB_BIND)};

void lx_kb_init(lx_kb *k, lx *x) {
    memset(k, 0, sizeof *k);
    k->kb.ops = &llvm_ops;
    k->kb.lp = x->lp;
    k->x = x;
}
