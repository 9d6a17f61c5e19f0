/* IR helpers and the lowering of a plan's abstract operations. Every
 * floating-point instruction is built without fast-math flags, so LLVM may
 * neither contract nor reassociate them. */
#include <stdio.h>
#include <string.h>

#include "llvm_builder.h"

LLVMTypeRef lx_vec(const lx *x, LLVMTypeRef elt) {
    return x->isa->scalable ? LLVMScalableVectorType(elt, x->isa->lanes) : LLVMVectorType(elt, x->isa->lanes);
}

LLVMValueRef lx_i64(const lx *x, long long v) { return LLVMConstInt(x->i64, (unsigned long long)v, 1); }
LLVMValueRef lx_isz(const lx *x, long long v) { return LLVMConstInt(x->isz, (unsigned long long)v, 1); }
LLVMValueRef lx_i32(const lx *x, long long v) { return LLVMConstInt(x->i32, (unsigned long long)v, 1); }
LLVMValueRef lx_f32(const lx *x, float v) { return LLVMConstReal(x->f32, v); }

LLVMValueRef lx_intrinsic(lx *x, const char *name, LLVMTypeRef *overloads, unsigned n_overloads, LLVMValueRef *args,
                          unsigned n_args) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(x->m, id, overloads, n_overloads);
    LLVMTypeRef ft = LLVMIntrinsicGetType(x->c, id, overloads, n_overloads);
    return LLVMBuildCall2(x->b, ft, fn, args, n_args, "");
}

LLVMValueRef lx_splat(lx *x, LLVMValueRef scalar, LLVMTypeRef vec_type) {
    LLVMValueRef poison = LLVMGetPoison(vec_type);
    LLVMValueRef one = LLVMBuildInsertElement(x->b, poison, scalar, lx_i64(x, 0), "");
    /* fixed vectors of any length (16-bit and byte lanes too); scalable ones of the ISA's lanes */
    LLVMTypeRef index = LLVMGetTypeKind(vec_type) == LLVMVectorTypeKind
                            ? LLVMVectorType(x->i32, LLVMGetVectorSize(vec_type))
                            : lx_vec(x, x->i32);
    return LLVMBuildShuffleVector(x->b, one, poison, LLVMConstNull(index), "");
}

LLVMValueRef lx_vl(lx *x) {
    if (!x->isa->scalable)
        return lx_isz(x, x->isa->lanes);
    LLVMTypeRef t = x->isz;
    LLVMValueRef vscale = lx_intrinsic(x, "llvm.vscale", &t, 1, NULL, 0);
    return LLVMBuildMul(x->b, vscale, lx_isz(x, x->isa->lanes), "vl");
}

LLVMValueRef lx_active(lx *x, LLVMValueRef i, LLVMValueRef len) {
    if (!x->isa->scalable) {
        /* lane k < min(len - i, lanes) on 32-bit lanes: LLVM's lowering of
         * get.active.lane.mask on i64 compares 64-bit lanes (four
         * vpcmpgtq and packs on AVX2) */
        const unsigned L = x->isa->lanes;
        LLVMValueRef args[2] = {len, i};
        LLVMValueRef left = lx_intrinsic(x, "llvm.usub.sat", &x->isz, 1, args, 2); /* 0 when i >= len */
        left = lx_umin(x, left, lx_isz(x, L));
        LLVMValueRef k[64];
        for (unsigned m = 0; m < L; m++)
            k[m] = lx_i32(x, m);
        LLVMValueRef lanes = LLVMConstVector(k, L);
        LLVMValueRef bound = lx_splat(x, LLVMBuildTrunc(x->b, left, x->i32, ""), LLVMTypeOf(lanes));
        return LLVMBuildICmp(x->b, LLVMIntULT, lanes, bound, "");
    }
    LLVMTypeRef ov[2] = {x->vm, x->isz};
    LLVMValueRef args[2] = {i, len};
    return lx_intrinsic(x, "llvm.get.active.lane.mask", ov, 2, args, 2);
}

LLVMValueRef lx_minmax_minimum(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    LLVMTypeRef t = LLVMTypeOf(a);
    return lx_intrinsic(x, is_max ? "llvm.maximum" : "llvm.minimum", &t, 1, (LLVMValueRef[]){a, b}, 2);
}

LLVMValueRef lx_minmax_minnum(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    LLVMTypeRef t = LLVMTypeOf(a);
    return lx_intrinsic(x, is_max ? "llvm.maxnum" : "llvm.minnum", &t, 1, (LLVMValueRef[]){a, b}, 2);
}

/* min/max as the C backend's intrinsics compute them; operands never hold
 * NaN or both zeros where the choice is visible in a kernel's output. */
static LLVMValueRef minmax(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    LLVMValueRef r = x->isa->sp.minmax ? x->isa->sp.minmax(x, a, b, is_max) : NULL;
    if (r)
        return r;
    LLVMValueRef lt = LLVMBuildFCmp(x->b, is_max ? LLVMRealOGT : LLVMRealOLT, a, b, "");
    return LLVMBuildSelect(x->b, lt, a, b, "");
}
LLVMValueRef lx_min(lx *x, LLVMValueRef a, LLVMValueRef b) { return minmax(x, a, b, false); }
LLVMValueRef lx_max(lx *x, LLVMValueRef a, LLVMValueRef b) { return minmax(x, a, b, true); }

LLVMValueRef lx_gep(lx *x, LLVMTypeRef et, LLVMValueRef base, LLVMValueRef idx) {
    return LLVMBuildInBoundsGEP2(x->b, et, base, &idx, 1, "");
}

/* count elements of `esize` bytes, as bytes */
static LLVMValueRef byte_count(lx *x, LLVMValueRef count, unsigned esize) {
    return LLVMBuildMul(x->b, LLVMBuildZExt(x->b, count, x->isz, ""), lx_isz(x, esize), "");
}

/* "tail": "evl": the first `count` lanes through the vector-predication
 * intrinsics, whose explicit vector length RVV's vsetvl takes as it is. */
static LLVMValueRef evl_args(lx *x, LLVMValueRef count, LLVMValueRef *all) {
    *all = LLVMConstAllOnes(x->vm);
    return x->evl ? x->evl : LLVMBuildTrunc(x->b, count, x->i32, "");
}

LLVMValueRef lx_load(lx *x, LLVMTypeRef vt, LLVMTypeRef et, unsigned esize, LLVMValueRef base, LLVMValueRef idx,
                     LLVMValueRef mask, LLVMValueRef count, LLVMValueRef passthru) {
    LLVMValueRef p = lx_gep(x, et, base, idx);
    if (!mask) {
        LLVMValueRef v = LLVMBuildLoad2(x->b, vt, p, "");
        LLVMSetAlignment(v, esize);
        return v;
    }
    if (x->lp->tail_kind == QG_TAIL_EVL) {
        LLVMValueRef all, evl = evl_args(x, count, &all);
        LLVMTypeRef ov[2] = {vt, x->ptr};
        LLVMValueRef v = lx_intrinsic(x, "llvm.vp.load", ov, 2, (LLVMValueRef[]){p, all, evl}, 3);
        return passthru ? LLVMBuildSelect(x->b, mask, v, passthru, "") : v;
    }
    if (!passthru)
        passthru = LLVMConstNull(vt);
    if (x->lp->tail_kind == QG_TAIL_BUFFERED) {
        LLVMValueRef buf = lx_alloca(x, vt);
        LLVMBuildStore(x->b, passthru, buf);
        LLVMBuildMemCpy(x->b, buf, esize, p, esize, byte_count(x, count, esize));
        return LLVMBuildLoad2(x->b, vt, buf, "");
    }
    LLVMTypeRef ov[2] = {vt, x->ptr};
    LLVMValueRef args[4] = {p, lx_i32(x, esize), mask, passthru};
    return lx_intrinsic(x, "llvm.masked.load", ov, 2, args, 4);
}

void lx_store(lx *x, LLVMValueRef v, LLVMTypeRef et, unsigned esize, LLVMValueRef base, LLVMValueRef idx,
              LLVMValueRef mask, LLVMValueRef count) {
    LLVMValueRef p = lx_gep(x, et, base, idx);
    if (!mask) {
        LLVMSetAlignment(LLVMBuildStore(x->b, v, p), esize);
        return;
    }
    if (x->lp->tail_kind == QG_TAIL_BUFFERED) {
        LLVMValueRef buf = lx_alloca(x, LLVMTypeOf(v));
        LLVMBuildStore(x->b, v, buf);
        LLVMBuildMemCpy(x->b, p, esize, buf, esize, byte_count(x, count, esize));
        return;
    }
    if (x->lp->tail_kind == QG_TAIL_EVL) {
        LLVMValueRef all, evl = evl_args(x, count, &all);
        LLVMTypeRef ov[2] = {LLVMTypeOf(v), x->ptr};
        lx_intrinsic(x, "llvm.vp.store", ov, 2, (LLVMValueRef[]){v, p, all, evl}, 4);
        return;
    }
    LLVMTypeRef ov[2] = {LLVMTypeOf(v), x->ptr};
    LLVMValueRef args[4] = {v, p, lx_i32(x, esize), mask};
    lx_intrinsic(x, "llvm.masked.store", ov, 2, args, 4);
}

LLVMValueRef lx_field(lx *x, LLVMTypeRef t, LLVMValueRef base, size_t offset) {
    LLVMValueRef p = lx_gep(x, x->i8, base, lx_i64(x, (long long)offset));
    return LLVMBuildLoad2(x->b, t, p, "");
}

LLVMValueRef lx_alloca(lx *x, LLVMTypeRef t) {
    LLVMBasicBlockRef here = LLVMGetInsertBlock(x->b);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(x->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
        LLVMPositionBuilderBefore(x->b, first);
    else
        LLVMPositionBuilderAtEnd(x->b, entry);
    LLVMValueRef a = LLVMBuildAlloca(x->b, t, "");
    LLVMPositionBuilderAtEnd(x->b, here);
    return a;
}

LLVMBasicBlockRef lx_block(lx *x, const char *name) { return LLVMAppendBasicBlockInContext(x->c, x->fn, name); }

LLVMValueRef lx_declare(lx *x, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n) {
    LLVMValueRef f = LLVMGetNamedFunction(x->m, name);
    if (!f)
        f = LLVMAddFunction(x->m, name, LLVMFunctionType(ret, params, n, 0));
    return f;
}

LLVMValueRef lx_call(lx *x, LLVMValueRef fn, LLVMValueRef *args, unsigned n) {
    return LLVMBuildCall2(x->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}

static void add_string_attr(lx *x, LLVMValueRef fn, const char *k, const char *v) {
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(x->c, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

static void add_enum_attr(lx *x, LLVMValueRef fn, const char *k) {
    unsigned kind = LLVMGetEnumAttributeKindForName(k, strlen(k));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->c, kind, 0));
}

LLVMValueRef lx_define(lx *x, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, bool internal) {
    LLVMValueRef fn = LLVMAddFunction(x->m, name, LLVMFunctionType(ret, params, n, 0));
    add_string_attr(x, fn, "target-cpu", x->target->cpu);
    if (x->target->features[0])
        add_string_attr(x, fn, "target-features", x->target->features);
    add_enum_attr(x, fn, "nounwind");
    if (internal) {
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        add_enum_attr(x, fn, "alwaysinline");
    }
    x->fn = fn;
    LLVMPositionBuilderAtEnd(x->b, lx_block(x, "entry"));
    return fn;
}

bool lx_helper_open(lx *x, const char *suffix, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, LLVMValueRef *fn,
                    lx_resume *caller) {
    char name[QG_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s%s", x->prefix, suffix);
    *fn = LLVMGetNamedFunction(x->m, name);
    if (*fn)
        return false;
    *caller = (lx_resume){LLVMGetInsertBlock(x->b), x->fn};
    *fn = lx_define(x, name, ret, params, n, false);
    LLVMSetLinkage(*fn, LLVMInternalLinkage);
    add_enum_attr(x, *fn, "noinline");
    return true;
}

bool lx_group_helper_open(lx *x, const char *stem, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, LLVMValueRef *fn,
                          lx_resume *caller) {
    char suffix[48];
    snprintf(suffix, sizeof suffix, "%s_x%u", stem, x->isa->lanes);
    return lx_helper_open(x, suffix, ret, params, n, fn, caller);
}

void lx_helper_close(lx *x, const lx_resume *caller) {
    x->fn = caller->fn;
    LLVMPositionBuilderAtEnd(x->b, caller->block);
}

/* ---- plan operations ------------------------------------------------------ */

LLVMValueRef lx_unary(lx *x, const char *name, LLVMValueRef a) {
    LLVMTypeRef t = LLVMTypeOf(a);
    return lx_intrinsic(x, name, &t, 1, &a, 1);
}

/* no_rtz (RVV): LLVM spells an fp32 -> int32 truncation (fptosi,
 * llvm.trunc) with vfcvt.rtz, which Debian's qemu cannot run; floor
 * (dynamic rounding mode) and the sign serve instead, as in the C backend. */
static LLVMValueRef trunc_f(lx *x, LLVMValueRef a) {
    if (x->isa->trunc == LX_TRUNC)
        return lx_unary(x, "llvm.trunc", a);
    LLVMValueRef mag = lx_unary(x, "llvm.floor", lx_unary(x, "llvm.fabs", a));
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[2] = {mag, a};
    return lx_intrinsic(x, "llvm.copysign", &t, 1, args, 2);
}

/* fp32 -> int32, rounding to nearest even (the operand is integral where
 * the plan only converts). */
static LLVMValueRef round_cvt(lx *x, LLVMValueRef a) {
    if (x->isa->sp.round_cvt)
        return x->isa->sp.round_cvt(x, a);
    return LLVMBuildFPToSI(x->b, lx_unary(x, "llvm.roundeven", a), x->vi, "");
}

static LLVMTypeRef half_t(const lx *x) { return LLVMHalfTypeInContext(LLVMGetTypeContext(x->f32)); }

static LLVMValueRef zero_like(LLVMValueRef v) { return LLVMConstNull(LLVMTypeOf(v)); }

/* llvm.vp.<op> on the strip's first x->evl lanes: RVV then runs the
 * arithmetic at the loads' and stores' vector length, with no vsetvli
 * between them (lanes past it are never stored). `n` operands, then the
 * all-true mask where the op takes one. */
static LLVMValueRef vp(lx *x, const char *op, LLVMTypeRef *ov, unsigned nov, LLVMValueRef *ops, unsigned n,
                       bool masked) {
    char name[40];
    snprintf(name, sizeof name, "llvm.vp.%s", op);
    LLVMValueRef args[6];
    memcpy(args, ops, n * sizeof *ops);
    if (masked)
        args[n++] = LLVMConstAllOnes(x->vm);
    args[n++] = x->evl;
    return lx_intrinsic(x, name, ov, nov, args, n);
}

static LLVMValueRef vp2(lx *x, const char *op, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    return vp(x, op, &t, 1, (LLVMValueRef[]){a, b}, 2, true);
}

static LLVMValueRef vp_fcmp(lx *x, const char *cc, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef md = LLVMMetadataAsValue(x->c, LLVMMDStringInContext2(x->c, cc, strlen(cc)));
    LLVMTypeRef t = LLVMTypeOf(a);
    return vp(x, "fcmp", &t, 1, (LLVMValueRef[]){a, b, md}, 3, true);
}

static LLVMValueRef vp_select(lx *x, LLVMValueRef m, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    return vp(x, "select", &t, 1, (LLVMValueRef[]){m, a, b}, 3, false);
}

static LLVMValueRef vp_cast(lx *x, const char *op, LLVMValueRef a, LLVMTypeRef to) {
    LLVMTypeRef ov[2] = {to, LLVMTypeOf(a)};
    return vp(x, op, ov, 2, &a, 1, true);
}

LLVMValueRef lx_strip_length(lx *x, LLVMValueRef left) {
    return lx_intrinsic(
        x, "llvm.experimental.get.vector.length", &x->i64, 1,
        (LLVMValueRef[]){LLVMBuildZExt(x->b, left, x->i64, ""), lx_i32(x, x->isa->lanes), LLVMConstInt(x->i1, 1, 0)},
        3);
}

LLVMValueRef lx_ext(lx *x, LLVMValueRef v, LLVMTypeRef to, bool is_signed) {
    if (x->evl)
        return vp_cast(x, is_signed ? "sext" : "zext", v, to);
    return is_signed ? LLVMBuildSExt(x->b, v, to, "") : LLVMBuildZExt(x->b, v, to, "");
}

LLVMValueRef lx_narrow(lx *x, LLVMValueRef v, LLVMTypeRef to) {
    return x->evl ? vp_cast(x, "trunc", v, to) : LLVMBuildTrunc(x->b, v, to, "");
}

/* The steps that are one IR instruction: a binary operator or an ordered
 * compare, each with its vector-predicated twin (llvm.vp.<vp>, or
 * llvm.vp.fcmp's condition), which RVV strips use (x->evl set). */
typedef struct step_rule {
    LLVMOpcode binary;     /* 0: not a binary operator */
    LLVMRealPredicate cmp; /* LLVMRealPredicateFalse: not a compare */
    const char *vp;
} step_rule;

static const step_rule step_rules[QG_OP_COUNT] = {
    [QG_OP_ADD_F] = {LLVMFAdd, 0, "fadd"},    [QG_OP_SUB_F] = {LLVMFSub, 0, "fsub"},
    [QG_OP_MUL_F] = {LLVMFMul, 0, "fmul"},    [QG_OP_DIV_F] = {LLVMFDiv, 0, "fdiv"},
    [QG_OP_ADD_I] = {LLVMAdd, 0, "add"},      [QG_OP_SUB_I] = {LLVMSub, 0, "sub"},
    [QG_OP_AND_I] = {LLVMAnd, 0, "and"},      [QG_OP_AND_M] = {LLVMAnd, 0, "and"},
    [QG_OP_CMP_GE] = {0, LLVMRealOGE, "oge"}, [QG_OP_CMP_LE] = {0, LLVMRealOLE, "ole"},
    [QG_OP_CMP_EQ] = {0, LLVMRealOEQ, "oeq"}, [QG_OP_ORDERED] = {0, LLVMRealORD, "ord"},
};

static LLVMValueRef binary(lx *x, LLVMOpcode op, const char *vp, LLVMValueRef a, LLVMValueRef b) {
    return x->evl ? vp2(x, vp, a, b) : LLVMBuildBinOp(x->b, op, a, b, "");
}

static LLVMValueRef select_v(lx *x, LLVMValueRef m, LLVMValueRef a, LLVMValueRef b) {
    return x->evl ? vp_select(x, m, a, b) : LLVMBuildSelect(x->b, m, a, b, "");
}

/* min/max: llvm.vp.minnum/maxnum where the ISA's min/max are minnum's */
static LLVMValueRef min_max(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max) {
    if (x->evl && x->isa->sp.minmax == lx_minmax_minnum)
        return vp2(x, is_max ? "maxnum" : "minnum", a, b);
    return is_max ? lx_max(x, a, b) : lx_min(x, a, b);
}

static LLVMValueRef lower_step(lx *x, const qg_step *st, LLVMValueRef *v) {
    LLVMBuilderRef b = x->b;
    LLVMValueRef a = st->a >= 0 ? v[st->a] : NULL, bb = st->b >= 0 ? v[st->b] : NULL, c = st->c >= 0 ? v[st->c] : NULL;
    const step_rule *rule = &step_rules[st->op];
    if (rule->binary)
        return binary(x, rule->binary, rule->vp, a, bb);
    if (rule->cmp) {
        LLVMValueRef rhs = st->op == QG_OP_ORDERED ? a : bb;
        return x->evl ? vp_fcmp(x, rule->vp, a, rhs) : LLVMBuildFCmp(b, rule->cmp, a, rhs, "");
    }
    switch (st->op) {
    case QG_OP_MIN_F: return min_max(x, a, bb, false);
    case QG_OP_MAX_F: return min_max(x, a, bb, true);
    case QG_OP_ROUND_EVEN: return lx_unary(x, "llvm.roundeven", a);
    case QG_OP_FLOOR: return lx_unary(x, "llvm.floor", a);
    case QG_OP_TRUNC: return trunc_f(x, a);
    case QG_OP_COPYSIGN: return lx_intrinsic(x, "llvm.copysign", &x->vf, 1, (LLVMValueRef[]){a, bb}, 2);
    case QG_OP_SPLAT_F: return lx_splat(x, lx_f32(x, st->imm), x->vf);
    case QG_OP_SELECT_F: return select_v(x, a, bb, c);
    case QG_OP_MASK_F:
    case QG_OP_MASKZ_I: return select_v(x, a, bb, zero_like(bb));
    case QG_OP_MASKZ_MUL_F: return select_v(x, a, binary(x, LLVMFMul, "fmul", bb, c), zero_like(bb));
    case QG_OP_CVT_F2I:
        /* the operand is integral: any rounding converts it exactly */
        if (x->isa->trunc == LX_TRUNC_NO_RTZ)
            return round_cvt(x, a);
        return LLVMBuildFPToSI(b, a, x->vi, "");
    case QG_OP_ROUND_CVT: return round_cvt(x, a);
    case QG_OP_TRUNC_CVT: /* the operand is in range; no_rtz: truncated first, then converted exactly */
        if (x->isa->trunc == LX_TRUNC_NO_RTZ)
            return round_cvt(x, trunc_f(x, a));
        return LLVMBuildFPToSI(b, a, x->vi, "");
    case QG_OP_MAX_I: return lx_intrinsic(x, "llvm.smax", &x->vi, 1, (LLVMValueRef[]){a, bb}, 2);
    case QG_OP_MIN_I: return lx_intrinsic(x, "llvm.smin", &x->vi, 1, (LLVMValueRef[]){a, bb}, 2);
    case QG_OP_CVT_I2F: return x->evl ? vp_cast(x, "sitofp", a, x->vf) : LLVMBuildSIToFP(b, a, x->vf, "");
    case QG_OP_SAT_ADD_I: return lx_intrinsic(x, "llvm.sadd.sat", &x->vi, 1, (LLVMValueRef[]){a, bb}, 2);
    case QG_OP_SPLAT_I: return lx_splat(x, lx_i32(x, st->imm_i), x->vi);
    case QG_OP_SHL_I: return LLVMBuildShl(b, a, lx_splat(x, lx_i32(x, st->imm_i), x->vi), "");
    case QG_OP_SHR_I: return LLVMBuildLShr(b, a, lx_splat(x, lx_i32(x, st->imm_i), x->vi), "");
    case QG_OP_BITS_F2I: return LLVMBuildBitCast(b, a, x->vi, "");
    case QG_OP_BITS_I2F: return LLVMBuildBitCast(b, a, x->vf, "");
    case QG_OP_CVT_H2F: {
        LLVMValueRef code = LLVMBuildBitCast(b, LLVMBuildTrunc(b, a, lx_vec(x, x->i16), ""), lx_vec(x, half_t(x)), "");
        return LLVMBuildFPExt(b, code, x->vf, "");
    }
    case QG_OP_CVT_F2H: {
        LLVMValueRef h = LLVMBuildFPTrunc(b, a, lx_vec(x, half_t(x)), "");
        return LLVMBuildZExt(b, LLVMBuildBitCast(b, h, lx_vec(x, x->i16), ""), x->vi, "");
    }
    default: return NULL;
    }
}

LLVMValueRef lx_lower_plan(lx *x, const qg_plan *p, LLVMValueRef in[QG_IN_COUNT], LLVMValueRef *mask_out,
                           LLVMValueRef *grouped_out) {
    LLVMValueRef ordered[2];
    return lx_lower_plan_ordered(x, p, in, mask_out, grouped_out, ordered);
}

LLVMValueRef lx_lower_op(lx *x, qg_opcode op, LLVMValueRef a, LLVMValueRef b) {
    LLVMValueRef v[2] = {a, b};
    const qg_step st = {.op = op, .dst = 2, .a = 0, .b = b ? 1 : -1, .c = -1};
    return lower_step(x, &st, v);
}

LLVMValueRef lx_lower_plan_ordered(lx *x, const qg_plan *p, LLVMValueRef in[QG_IN_COUNT], LLVMValueRef *mask_out,
                                   LLVMValueRef *grouped_out, LLVMValueRef ordered[2]) {
    LLVMValueRef v[QG_PLAN_MAX_VALUES] = {0};
    for (int k = 0; k < QG_IN_COUNT; k++)
        v[k] = in[k];
    for (int k = 0; k < p->nsteps; k++) {
        const int dst = p->steps[k].dst;
        v[dst] = lower_step(x, &p->steps[k], v);
        /* the plan's names make the IR read like the C body */
        if (p->name[dst] && !LLVMContextShouldDiscardValueNames(x->c) && LLVMIsAInstruction(v[dst]) &&
            !LLVMGetValueName2(v[dst], &(size_t){0})[0])
            LLVMSetValueName2(v[dst], p->name[dst], strlen(p->name[dst]));
    }
    if (mask_out)
        *mask_out = p->out_mask >= 0 ? v[p->out_mask] : NULL;
    if (grouped_out)
        *grouped_out = p->out_q_grouped >= 0 ? v[p->out_q_grouped] : NULL;
    ordered[0] = p->out_ordered >= 0 ? v[p->out_ordered] : NULL;
    ordered[1] = p->out_ordered >= 0 ? v[p->nan_value] : NULL;
    return v[p->out_q >= 0 ? p->out_q : p->out_y];
}

/* ---- structured control flow: counted loops and ifs ---------------------- */

lx_loop lx_loop_open(lx *x, LLVMValueRef start, const char *name) {
    lx_loop l = {lx_alloca(x, x->isz), lx_block(x, name), lx_block(x, name), lx_block(x, name)};
    LLVMBuildStore(x->b, start, l.var);
    LLVMBuildBr(x->b, l.head);
    LLVMPositionBuilderAtEnd(x->b, l.head);
    return l;
}

LLVMValueRef lx_loop_value(lx *x, const lx_loop *l) { return LLVMBuildLoad2(x->b, x->isz, l->var, ""); }

void lx_loop_test(lx *x, const lx_loop *l, LLVMValueRef cond) {
    LLVMBuildCondBr(x->b, cond, l->body, l->done);
    LLVMPositionBuilderAtEnd(x->b, l->body);
}

void lx_loop_continue(lx *x, const lx_loop *l, LLVMValueRef step) {
    LLVMBuildStore(x->b, LLVMBuildAdd(x->b, lx_loop_value(x, l), step, ""), l->var);
    LLVMBuildBr(x->b, l->head);
}

LLVMValueRef lx_whole_steps_test(lx *x, LLVMValueRef i, LLVMValueRef len, LLVMValueRef step) {
    LLVMValueRef limit =
        LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntUGE, len, step, ""),
                        LLVMBuildAdd(x->b, LLVMBuildSub(x->b, len, step, ""), lx_isz(x, 1), ""), lx_isz(x, 0), "");
    return LLVMBuildICmp(x->b, LLVMIntULT, i, limit, "");
}

void lx_loop_close(lx *x, const lx_loop *l, LLVMValueRef step) {
    lx_loop_continue(x, l, step);
    LLVMPositionBuilderAtEnd(x->b, l->done);
}

/* if (cond) { ...then... } : returns the join block to continue in. */
LLVMBasicBlockRef lx_if_open(lx *x, LLVMValueRef cond) {
    LLVMBasicBlockRef then = lx_block(x, "then"), join = lx_block(x, "join");
    LLVMBuildCondBr(x->b, cond, then, join);
    LLVMPositionBuilderAtEnd(x->b, then);
    return join;
}

void lx_if_close(lx *x, LLVMBasicBlockRef join) {
    LLVMBuildBr(x->b, join);
    LLVMPositionBuilderAtEnd(x->b, join);
}

LLVMBasicBlockRef lx_else(lx *x, LLVMBasicBlockRef join) {
    LLVMBasicBlockRef after = lx_block(x, "join");
    LLVMBuildBr(x->b, after);
    LLVMPositionBuilderAtEnd(x->b, join);
    return after;
}

LLVMValueRef lx_umin(lx *x, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(x->b, LLVMBuildICmp(x->b, LLVMIntULT, a, b, ""), a, b, "");
}
