/* Shared state and small IR helpers of the LLVM backend's module builder. */
#ifndef QGEN_LLVM_BUILDER_H
#define QGEN_LLVM_BUILDER_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "../plan/kernel_loops.h"
#include "../plan/kernel_plan.h"
#include "emit_llvm.h"
#include "llvm_spelling.h"

/* How an ISA shapes its vectors and spells the few operations whose
 * portable IR would lower badly or not at all (llvm_spelling.h), read from
 * targets/<isa>.json by lx_isa_of. A partial vector's accesses follow the
 * loops' tail_kind. llvm_trunc: "no_rtz" where a truncating conversion
 * must not be spelled as one (RVV under Debian's qemu). */
typedef enum lx_trunc { LX_TRUNC, LX_TRUNC_NO_RTZ } lx_trunc;
/* The ISA's own intrinsics those spellings call, by role (targets/<isa>.json
 * "llvm_intrinsics"): min, max, round_cvt, narrow16, narrow8, narrow8u,
 * pdep, store_bits, load_bits, bitmask. */
typedef enum lx_intr {
    LX_I_MIN,
    LX_I_MAX,
    LX_I_ROUND_CVT,
    LX_I_NARROW16,
    LX_I_NARROW8,
    LX_I_NARROW8U,
    LX_I_PDEP,
    LX_I_STORE_BITS,
    LX_I_LOAD_BITS,
    LX_I_BITMASK,
    LX_I_COUNT
} lx_intr;

typedef struct lx_isa {
    qg_isa isa;
    unsigned lanes;       /* fp32 lanes; scalable: lanes per vscale, in the op's register group */
    unsigned lanes_lmul1; /* ... in one register (targets/<isa>.json "vscale_lanes") */
    bool scalable;
    int unroll; /* vectors per main-loop iteration */
    lx_trunc trunc;
    lx_spelling sp;            /* the hooks of the spellings its row names, merged */
    char intr[LX_I_COUNT][48]; /* "" where the ISA has none */
} lx_isa;

/* The shape and spellings of `isa` from its targets/ row; QG_ERR_BACKEND
 * naming the field when a spelling is not one of the known names. */
qg_status lx_isa_of(qg_isa isa, lx_isa *out, qg_error *err);

typedef struct lx {
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    const qg_spec *sp;
    const qg_llvm_target *target;
    lx_isa *isa;               /* lanes follow the op being built (lx_use_group) */
    const qg_kernel_loops *lp; /* the op being built */
    const char *prefix;
    unsigned ops; /* bit set of 1u << qg_kernel_op to build */
    LLVMTypeRef f32, i1, i8, i16, i32, i64, ptr, vd;
    LLVMTypeRef isz;            /* the target's size_t: i64, or i32 on wasm32 */
    LLVMTypeRef vf, vi, vm, vb; /* fp32, int32, lane-mask and lane-byte vectors */
    LLVMTypeRef qe, vq;         /* quantized element and its vector */
    LLVMTypeRef vh;             /* 16-bit codes of float16/bfloat16 tensors */
    unsigned qsize;             /* bytes per quantized element */
    LLVMValueRef fn;            /* function being built */
    LLVMValueRef evl;           /* i32: an RVV strip's explicit length while its plan is lowered, else NULL */
    const qg_plan *probe;       /* qg_llvm_compile_probe's one-step plan, else NULL */
} lx;

/* Builds the op's kernel from here on in its register group of `lmul`
 * registers (the loops' lmul): the lanes and every vector type follow. */
void lx_use_group(lx *x, int lmul);

LLVMTypeRef lx_vec(const lx *x, LLVMTypeRef elt);
LLVMValueRef lx_i64(const lx *x, long long v);
LLVMValueRef lx_isz(const lx *x, long long v); /* a size_t constant */
LLVMValueRef lx_i32(const lx *x, long long v);
LLVMValueRef lx_f32(const lx *x, float v);
LLVMValueRef lx_intrinsic(lx *x, const char *name, LLVMTypeRef *overloads, unsigned n_overloads, LLVMValueRef *args,
                          unsigned n_args);
LLVMValueRef lx_splat(lx *x, LLVMValueRef scalar, LLVMTypeRef vec_type);
LLVMValueRef lx_unary(lx *x, const char *name, LLVMValueRef a);  /* an intrinsic overloaded on a's type */
LLVMValueRef lx_vl(lx *x);                                       /* elements per vector, i64 */
LLVMValueRef lx_active(lx *x, LLVMValueRef i, LLVMValueRef len); /* lanes k with i + k < len */
LLVMValueRef lx_min(lx *x, LLVMValueRef a, LLVMValueRef b);
/* An RVV strip's length for `left` (i64) elements, as vsetvli gives it:
 * i32, at most VLMAX, `left` itself when that fits. */
LLVMValueRef lx_strip_length(lx *x, LLVMValueRef left);
/* Integer widening and narrowing of a vector (on x->evl lanes where set). */
LLVMValueRef lx_ext(lx *x, LLVMValueRef v, LLVMTypeRef to, bool is_signed);
LLVMValueRef lx_narrow(lx *x, LLVMValueRef v, LLVMTypeRef to);
LLVMValueRef lx_max(lx *x, LLVMValueRef a, LLVMValueRef b);
/* Vector load/store at element `idx` of `base`. A partial vector passes
 * its first `count` lanes as `mask` too (NULL for a whole one): masked
 * accesses; a zeroed stack buffer and a copy of count elements on ISAs
 * whose row says "tail": "buffered" (their masked IR becomes a branch per
 * lane); vector-predicated accesses of `count` lanes where it says "evl".
 * A partial load's other lanes are `passthru`, or unspecified when it is
 * NULL (zero, except on "evl" ISAs, where a select would cost a merge). */
LLVMValueRef lx_load(lx *x, LLVMTypeRef vt, LLVMTypeRef et, unsigned esize, LLVMValueRef base, LLVMValueRef idx,
                     LLVMValueRef mask, LLVMValueRef count, LLVMValueRef passthru);
void lx_store(lx *x, LLVMValueRef v, LLVMTypeRef et, unsigned esize, LLVMValueRef base, LLVMValueRef idx,
              LLVMValueRef mask, LLVMValueRef count);
LLVMValueRef lx_gep(lx *x, LLVMTypeRef et, LLVMValueRef base, LLVMValueRef idx);
LLVMValueRef lx_field(lx *x, LLVMTypeRef t, LLVMValueRef base, size_t offset); /* load of a struct field */
LLVMValueRef lx_alloca(lx *x, LLVMTypeRef t);                                  /* in the entry block */
LLVMBasicBlockRef lx_block(lx *x, const char *name);
LLVMValueRef lx_declare(lx *x, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n);
LLVMValueRef lx_call(lx *x, LLVMValueRef fn, LLVMValueRef *args, unsigned n);
/* A function of this module, with the target's attributes. */
LLVMValueRef lx_define(lx *x, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, bool internal);
/* An out-of-line helper of the module (internal, never inlined) named
 * <prefix><suffix> in *fn: open returns false when the module has it
 * already; else true, with the caller's position saved in *caller and the
 * builder at the helper's entry. Close returns to the caller. */
typedef struct lx_resume {
    LLVMBasicBlockRef block;
    LLVMValueRef fn;
} lx_resume;
bool lx_helper_open(lx *x, const char *suffix, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, LLVMValueRef *fn,
                    lx_resume *caller);
/* ... named <prefix><stem>_x<lanes>: one per register group, for helpers
 * whose types or layout follow the op's vectors. */
bool lx_group_helper_open(lx *x, const char *stem, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, LLVMValueRef *fn,
                          lx_resume *caller);
void lx_helper_close(lx *x, const lx_resume *caller);

/* A counted loop, for (v = start; cond(v); v += step), its counter in an
 * alloca: open, read the value, test the condition, build the body, close. */
typedef struct lx_loop {
    LLVMValueRef var;
    LLVMBasicBlockRef head, body, done;
} lx_loop;
lx_loop lx_loop_open(lx *x, LLVMValueRef start, const char *name);
LLVMValueRef lx_loop_value(lx *x, const lx_loop *l);
void lx_loop_test(lx *x, const lx_loop *l, LLVMValueRef cond);
void lx_loop_close(lx *x, const lx_loop *l, LLVMValueRef step);
/* The next iteration, from inside the body: the block ends there. */
void lx_loop_continue(lx *x, const lx_loop *l, LLVMValueRef step);
/* The test `i + step <= len` (for i <= len) as `i < len - step + 1`, the
 * bound 0 when len < step: it reads the one induction variable, where the
 * sum kept i and i + step both alive (a register copy per iteration). The
 * C printer spells the same test (QG_KTEST_WHOLE_STEPS). */
LLVMValueRef lx_whole_steps_test(lx *x, LLVMValueRef i, LLVMValueRef len, LLVMValueRef step);
LLVMBasicBlockRef lx_if_open(lx *x, LLVMValueRef cond);
void lx_if_close(lx *x, LLVMBasicBlockRef join);
/* } else { -- after an if's `then` part: the block the false edge reaches
 * (the if's join) becomes the else part; returns the join after both. */
LLVMBasicBlockRef lx_else(lx *x, LLVMBasicBlockRef join);
LLVMValueRef lx_umin(lx *x, LLVMValueRef a, LLVMValueRef b);

/* One plan operation on a (and b), as a plan step lowers it (no
 * immediate: not SPLAT_F, SPLAT_I or the shifts). */
LLVMValueRef lx_lower_op(lx *x, qg_opcode op, LLVMValueRef a, LLVMValueRef b);
/* The plan's per-vector arithmetic; in[] holds the inputs it uses.
 * *mask_out receives the lane-mask output, *grouped_out quantize's q - z
 * for a grouped store (qg_plan.out_q_grouped), where the plan has them
 * (either pointer may be NULL). */
LLVMValueRef lx_lower_plan(lx *x, const qg_plan *p, LLVMValueRef in[QG_IN_COUNT], LLVMValueRef *mask_out,
                           LLVMValueRef *grouped_out);
/* ... and, where the plan has them, ordered[0] its qg_plan.out_ordered and
 * ordered[1] its nan_value (both NULL otherwise). */
LLVMValueRef lx_lower_plan_ordered(lx *x, const qg_plan *p, LLVMValueRef in[QG_IN_COUNT], LLVMValueRef *mask_out,
                                   LLVMValueRef *grouped_out, LLVMValueRef ordered[2]);

/* The kernels of x->sp, all of them, into x->m. */
qg_status lx_build_kernels(lx *x, qg_error *err);
/* llvm_probe.c: x->probe's step as <prefix>_probe (qg_llvm_compile_probe). */
qg_status lx_build_probe(lx *x, qg_error *err);

#endif
