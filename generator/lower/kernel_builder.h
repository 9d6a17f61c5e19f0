/* The kernel builder: the one interface through which the lowering
 * (lower/) writes every kernel, and which each backend implements, the C
 * backend by printing text (emit_c/c_builder.c), the LLVM backend by
 * building IR (emit_llvm/llvm_kbuilder.c). The lowering takes every
 * decision (which functions, loops, walks, parameters, calls); a backend
 * only spells the calls below. docs/c-backend.md lists why a builder and
 * not a separate loop IR.
 *
 * Calls are structured: functions, loops and ifs open and close in
 * nesting order, and a value is used only inside the construct that made
 * it or one nested in it. */
#ifndef QGEN_KERNEL_BUILDER_H
#define QGEN_KERNEL_BUILDER_H

#include <stdbool.h>
#include <stddef.h>

#include "../plan/kernel_loops.h"
#include "../plan/kernel_ops.h"

/* A value the builder made: C text, or an LLVM value. Owned by the
 * builder; valid until it is freed. */
typedef struct qg_kv qg_kv;
/* A variable (C: a local; LLVM: a stack slot). */
typedef struct qg_kvar qg_kvar;

/* Types: size_t, int32_t, int64_t, float, pointer, a condition; a vector
 * of float lanes, one of lane conditions (QG_KT_VOK: the plan's masks, as
 * the ISA holds them) and one of int32 lanes; a group of floats, int32s
 * or conditions (the block walks' scalars of lp->block_group blocks at
 * once, as wide as one of the target's vectors). */
typedef enum qg_kt {
    QG_KT_SIZE,
    QG_KT_I32,
    QG_KT_I64,
    QG_KT_F32,
    QG_KT_PTR,
    QG_KT_BOOL,
    QG_KT_VF,
    QG_KT_VOK,
    QG_KT_VI,
    QG_KT_GF,
    QG_KT_GI,
    QG_KT_GB
} qg_kt;

/* Binary operations on scalars of one type, or on groups (a scalar
 * operand then taken in every lane; comparisons: unsigned for
 * sizes, ordered for floats but NE, a condition as their result). */
typedef enum qg_kbin {
    QG_KB_ADD,
    QG_KB_SUB,
    QG_KB_MUL,
    QG_KB_DIV, /* float, or unsigned sizes */
    QG_KB_EQ,
    QG_KB_NE,
    QG_KB_LT,
    QG_KB_GE,
    QG_KB_AND, /* conditions, both evaluated */
    QG_KB_OR,
} qg_kbin;

/* Fields of the runtime's parameter structs (qgen/runtime.h) a walk reads. */
typedef enum qg_kfield {
    QG_KF_QP_SCALE,      /* const float * */
    QG_KF_QP_ZERO_POINT, /* const int32_t * */
    QG_KF_QP_CHANNELS,   /* size_t */
    QG_KF_QP_INNER,      /* size_t */
    QG_KF_RP_S_IN,       /* float */
    QG_KF_RP_S_W,        /* const float * */
    QG_KF_RP_S_OUT,      /* float */
    QG_KF_RP_Z_OUT,      /* int32_t */
    QG_KF_RP_BIAS_Q,     /* const int32_t *, may be NULL */
    QG_KF_RP_CHANNELS,   /* size_t */
    QG_KF_RP_INNER,      /* size_t */
    QG_KF_COUNT
} qg_kfield;

/* Loop tests: v < bound, or "a whole step fits", v + step <= bound
 * (written v < bound - step + 1, the bound 0 when bound < step, so the
 * test reads one induction variable). */
typedef enum qg_ktest { QG_KTEST_LT, QG_KTEST_WHOLE_STEPS } qg_ktest;

/* The functions of an op a builder can open. */
typedef enum qg_kfn {
    QG_KFN_LINK, /* NAME_<op><infix>__<isa>: the entry (infix ""), or a static link a runtime driver calls */
} qg_kfn;

/* A span's arguments: its tensors, base and len, then the parameters
 * (QG_KSPAN_PARAM + the plan input). */
enum { QG_KSPAN_IN, QG_KSPAN_OUT, QG_KSPAN_MASK, QG_KSPAN_BASE, QG_KSPAN_LEN, QG_KSPAN_PARAM };

/* One vector of a span's plan, as vector_open opens it. */
typedef struct qg_kvector {
    qg_kv *at;       /* element index of its first lane */
    qg_kv *count;    /* its lanes: a whole vector's, or fewer (partial) */
    bool partial;    /* nothing past at + count is read or written (the loops' tail_kind says how) */
    int slot;        /* k of the main loop's vectors, -1 elsewhere (C: its values' names) */
    bool strip_open; /* a scalable ISA's partial column: its strip is column_open's */
} qg_kvector;

/* What a call of the plan's body keeps: its result; quantize's q - z for a
 * grouped store that adds z (qg_plan.out_q_grouped); or, in a main loop
 * that tests for NaN once, the result as it is without NaN lanes
 * (qg_plan.out_ordered) and the value to test. */
typedef enum qg_kbody { QG_KBODY_RESULT, QG_KBODY_GROUPED, QG_KBODY_ORDERED } qg_kbody;

/* The block formats' byte work on 32 codes of a block (docs/semantics.md,
 * "Block formats"), its codes one byte each in a buffer; k is the call's
 * shift where the op takes one. */
typedef enum qg_kbytes {
    QG_KBYTES_PACK_NIBBLES,    /* dst[j] = src[j] & 15 | src[j + k] << 4, j < k (16, 32 or 64) */
    QG_KBYTES_PACK_FIFTH,      /* dst's 4 bytes: bit 4 of src[j] as bit j, little-endian */
    QG_KBYTES_UNPACK_NIBBLES,  /* dst[j] = src[j] & 15, dst[j + 16] = src[j] >> 4, j < 16 */
    QG_KBYTES_OR_FIFTH,        /* dst[j] |= (bit j of src's 4 bytes, little-endian) << 4 */
    QG_KBYTES_SUM_I8,          /* the sum of src's 32 int8 codes, an int32 (dst NULL) */
    QG_KBYTES_NIBBLES,         /* dst[j] = src[j] >> k & 15, j < 32 (K-quants' rows) */
    QG_KBYTES_OR_HIGH_PAIR,    /* dst[j] |= (src[j] >> k & 3) << 4, j < 32 (q6_K's high bits) */
    QG_KBYTES_Q4K_SCALES,      /* q4_K's 12 bytes of 6-bit scales and mins to int32 dst[16] */
    QG_KBYTES_WIDEN_I8,        /* int32 dst[j] = int8 src[j], j < 16 (q6_K's scales) */
    QG_KBYTES_E2M1,            /* int8 dst[j] = mxfp4's doubled value of code src[j] & 15, j < 32 */
    QG_KBYTES_E8M0_HALF,       /* 2^(src[0] - 128), a float (dst NULL; mxfp4's d) */
    QG_KBYTES_PACK_HIGH_PAIRS, /* dst[j] = sum over t < 4 of (src[j + 32t] >> 4 & 3) << 2t, j < 32 */
} qg_kbytes;

typedef struct qg_kb qg_kb;

typedef struct qg_kb_ops {
    /* ---- functions */
    /* Opens op `o`'s link `infix` (qg_entry_chain) with the op table's
     * signature; the float tensors' element type is the loops' float_io
     * inside a driver link, the spec's at the entry. */
    void (*open_link)(qg_kb *b, const qg_op_info *o, const char *infix);
    /* The open link's argument of `kind`; a null pointer when it has none. */
    qg_kv *(*arg)(qg_kb *b, qg_arg_kind kind);
    /* Returns `v` (NULL: nothing) and closes the function. */
    void (*close_fn)(qg_kb *b, qg_kv *v);
    /* Returns from a void function, inside an if. */
    void (*ret)(qg_kb *b);
    /* The address of op `o`'s link `infix`, defined before; of the spec
     * object NAME_spec; of the op's span NAME_<op>_span<suffix>. */
    qg_kv *(*link_ref)(qg_kb *b, const qg_op_info *o, const char *infix);
    qg_kv *(*spec_ref)(qg_kb *b);
    qg_kv *(*span_ref)(qg_kb *b, const char *suffix);
    /* ... of observe's min/max reduction, NAME_minmax_span, defined before;
     * of the op's channels-last rows (open_rows), defined before */
    qg_kv *(*minmax_ref)(qg_kb *b);
    qg_kv *(*rows_ref)(qg_kb *b);
    /* A comment above what follows, and the heading of an op's part of
     * the file (C only). */
    void (*comment)(qg_kb *b, const char *text);
    void (*section)(qg_kb *b, const char *op_name);
    /* Around an op's entries (b->lp its loops): what the backend still
     * builds itself (the plan's body; the channels-last rows; nothing for
     * observe, `plan` NULL), and the end of the op's part. */
    void (*op_begin)(qg_kb *b, const qg_plan *plan);
    void (*op_end)(qg_kb *b);

    /* ---- spans */
    /* Opens NAME_<op>_span<suffix>(in, out, [mask,] base, len, params...):
     * inline, or out of line (a rare path). */
    void (*open_span)(qg_kb *b, const qg_plan *p, const char *suffix, bool out_of_line);
    qg_kv *(*span_arg)(qg_kb *b, int k);
    qg_kv *(*lanes)(qg_kb *b); /* elements per vector */
    /* The main loop's four vectors: their packed mask bits read at once
     * (an integer, load_mask's `bits`); their kept results stored (one, or
     * four narrowed together, the zero point added there where the loops
     * say so); their masks stored together; whether a lane of their nan
     * values is NaN. */
    qg_kv *(*group_mask_in)(qg_kb *b, qg_kv *at);
    void (*group_store)(qg_kb *b, qg_kv *const r[4], qg_kv *at);
    void (*group_mask_out)(qg_kb *b, qg_kv *const m[4], qg_kv *at);
    qg_kv *(*any_nan4)(qg_kb *b, qg_kv *const nan[4]);
    /* Elements from the span's input (or output) at `base` to its next
     * `bytes` boundary. */
    qg_kv *(*to_boundary)(qg_kb *b, qg_kv *ptr, qg_kv *base, bool of_output, unsigned bytes);

    /* ---- one vector (lower/lower_vector.c): until vector_close, the
     * calls below read and write the lanes of `v` in the open span's (or
     * column's) tensors, whole or partial as the loops' tail_kind says */
    void (*vector_open)(qg_kb *b, const qg_plan *p, const qg_kvector *v);
    /* its data input, as the plan takes it */
    qg_kv *(*load)(qg_kb *b);
    /* its mask input: lanes first.. of `bits` (group_mask_in), or (bits
     * NULL) from the op's mask, bytes or packed bits as the loops say */
    qg_kv *(*load_mask)(qg_kb *b, qg_kv *bits, int first);
    /* the plan's body on in and m (NULL without a mask input): what `form`
     * keeps; its mask output in *mask_out, the NaN test's value in *nan */
    qg_kv *(*body)(qg_kb *b, qg_kv *in, qg_kv *m, qg_kbody form, qg_kv **mask_out, qg_kv **nan);
    /* the result (QG_KBODY_RESULT's) narrowed as the output holds it, and
     * a mask output where the caller gave a mask (it may be NULL) */
    void (*store)(qg_kb *b, qg_kv *r);
    void (*store_mask)(qg_kb *b, qg_kv *m);
    void (*vector_close)(qg_kb *b);

    /* ---- observe's min/max reduction (lower_observe.c) */
    /* Opens static int NAME_minmax_span(const T *x, size_t len, float *mn,
     * float *mx), T float, or uint16_t codes that the `widen` plan
     * (qg_plan_observe_widening) turns into floats; args gets x, len, mn
     * and mx. `block`: a block format's, for one block of 32 (len 32);
     * q8's and mxfp4's give only mx = amax, +inf for a NaN. */
    void (*open_minmax)(qg_kb *b, const qg_plan *widen, qg_kv *args[4], bool block);
    /* The open reduction's float values of x from element `at`: a whole
     * vector, or (count not NULL) its first `count` lanes with the others
     * repeating x[at], so that a min or max over all lanes is theirs. */
    qg_kv *(*values)(qg_kb *b, qg_kv *x, qg_kv *at, qg_kv *count);

    /* ---- vectors */
    qg_kv *(*vsplat)(qg_kb *b, qg_kv *f);
    /* The plan's vector operation `op` (QG_OP_MIN_F, QG_OP_MAX_F, QG_OP_SUB_F,
     * QG_OP_ORDERED of x alone, QG_OP_AND_M; on int32 lanes QG_OP_AND_I,
     * QG_OP_MAX_I, QG_OP_MIN_I, the bit casts QG_OP_BITS_F2I and QG_OP_BITS_I2F, and
     * QG_OP_SPLAT_I of an int32 x) as the ISA spells it. */
    qg_kv *(*vop)(qg_kb *b, qg_opcode op, qg_kv *x, qg_kv *y);
    /* Across lanes: QG_OP_MIN_F, QG_OP_MAX_F (a float); QG_OP_AND_M,
     * whether every lane holds (a condition). */
    qg_kv *(*reduce)(qg_kb *b, qg_opcode op, qg_kv *v);

    /* ---- the channels-last rows (lower_rows.c) */
    /* Opens NAME_<op>_rows(in, out, [mask,] n, the channel table's rows,
     * [C]): args gets in, out, mask (a null pointer without one), n and C
     * (a constant where the spec fixes it, and then no argument); rows[in]
     * the table's row of each plan input the op uses. */
    void (*open_rows)(qg_kb *b, const qg_plan *p, qg_kv *args[5], qg_kv *rows[QG_IN_COUNT]);
    /* A column of the rows, in a scope of its own until column_close: its
     * vectors (`vector`) read the rows' tensors and the parameters
     * column_param loads, the table's row `row_ptr` of input `in` from
     * column j: a whole vector, or (count not NULL: a scalable ISA's strip,
     * opened by column_open with the same count) its first count lanes. */
    void (*column_open)(qg_kb *b, const qg_plan *p, qg_kv *count);
    qg_kv *(*column_param)(qg_kb *b, const qg_plan *p, qg_plan_input in, qg_kv *row_ptr, qg_kv *j, qg_kv *count);
    void (*column_close)(qg_kb *b);

    /* ---- scalars */
    qg_kv *(*imm)(qg_kb *b, qg_kt t, long long v); /* QG_KT_PTR: v 0, the null pointer */
    qg_kv *(*fimm)(qg_kb *b, float v);
    qg_kv *(*bin)(qg_kb *b, qg_kbin op, qg_kv *x, qg_kv *y);
    qg_kv *(*select)(qg_kb *b, qg_kv *cond, qg_kv *x, qg_kv *y);
    /* The value converted to type t (integers: sign-extended or cut;
     * integer to float: rounded as C converts). */
    qg_kv *(*cast)(qg_kb *b, qg_kt t, qg_kv *v);
    qg_kv *(*nonnull)(qg_kb *b, qg_kv *ptr);
    /* An argument the function does not read (C: cast to void). */
    void (*discard)(qg_kb *b, qg_kv *v);
    /* v, named (C: a const local of that name). */
    qg_kv *(*let)(qg_kb *b, const char *name, qg_kv *v);
    qg_kv *(*field)(qg_kb *b, qg_kv *ptr, qg_kfield f);
    /* The address of ptr[i], of elements of type t. */
    qg_kv *(*elem_ptr)(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i);
    /* ptr[i] of elements of type t; with `or_zero`, 0 where ptr is NULL. */
    qg_kv *(*index)(qg_kb *b, qg_kt t, qg_kv *ptr, qg_kv *i, bool or_zero);

    /* ---- variables and control */
    qg_kvar *(*var)(qg_kb *b, const char *name, qg_kt t, qg_kv *init);
    qg_kv *(*get)(qg_kb *b, qg_kvar *v);
    void (*set)(qg_kb *b, qg_kvar *v, qg_kv *value);
    /* for (; v <test> bound; v += step) { ... } around what follows until
     * loop_close; `name` labels the loop (LLVM's blocks). */
    void (*loop_open)(qg_kb *b, const char *name, qg_kvar *v, qg_ktest test, qg_kv *bound, qg_kv *step);
    void (*loop_close)(qg_kb *b);
    /* The innermost loop's next iteration, from inside an if. */
    void (*loop_continue)(qg_kb *b);
    void (*if_open)(qg_kb *b, qg_kv *cond);
    void (*if_close)(qg_kb *b);

    /* ---- calls and memory */
    /* fn(args); a value unless `ret` is NULL (a statement then). fn is a
     * reference from above, or NULL and `name` the runtime's function. */
    qg_kv *(*call)(qg_kb *b, qg_kv *fn, const char *name, const qg_kt *ret, qg_kv **args, int n);
    void (*zero_bytes)(qg_kb *b, qg_kv *ptr, qg_kv *count);
    void (*store_at)(qg_kb *b, qg_kv *ptr, qg_kv *v); /* *ptr = v, a scalar */
    /* The address `bytes` bytes past ptr, of no element type (C: void *,
     * the callee's parameter saying what it may write); a variable's
     * address, for a callee's result. */
    qg_kv *(*byte_ptr)(qg_kb *b, qg_kv *ptr, qg_kv *bytes);
    qg_kv *(*var_addr)(qg_kb *b, qg_kvar *v);
    /* A little-endian binary16 field at any address, as a float (exact),
     * and a float stored there rounded as qgen/kernel_support.h's
     * qg_ks_f32_to_f16 rounds (ggml's block scales); a group's store is
     * lp->block_group halves. */
    qg_kv *(*load_f16)(qg_kb *b, qg_kv *ptr);
    void (*store_f16)(qg_kb *b, qg_kv *ptr, qg_kv *v);
    /* A function's stack buffer of `bytes` bytes (32-byte aligned), and
     * the byte work `op` on one block's codes (an int32 for the sum, else
     * NULL). */
    qg_kv *(*buffer)(qg_kb *b, const char *name, unsigned bytes);
    qg_kv *(*block_bytes)(qg_kb *b, qg_kbytes op, qg_kv *dst, qg_kv *src, int k);
    /* A group (QG_KT_GF or QG_KT_GI) from lp->block_group elements at ptr; one
     * stored there (a QG_KT_GB as int32 -1 and 0); `bytes` bytes copied. */
    qg_kv *(*gload)(qg_kb *b, qg_kt t, qg_kv *ptr);
    void (*gstore)(qg_kb *b, qg_kv *ptr, qg_kv *v);
    void (*copy_bytes)(qg_kb *b, qg_kv *dst, qg_kv *src, unsigned bytes);
    /* A span parameter of plan input `in` from its scalar (QG_IN_Z and
     * QG_IN_B int32, the others float). */
    qg_kv *(*param)(qg_kb *b, qg_plan_input in, qg_kv *scalar);
} qg_kb_ops;

/* Every call of the interface, in qg_kb_ops' order: a backend binds its
 * implementations, named kb_<call>, with
 * {QG_KB_CALLS(QG_KB_BIND)}, so a call it lacks does not compile. */
/* clang-format off */
#define QG_KB_CALLS(X) \
    X(open_link) X(arg) X(close_fn) X(ret) X(link_ref) X(spec_ref) X(span_ref) X(minmax_ref) X(rows_ref) \
    X(comment) X(section) X(op_begin) X(op_end) X(open_span) X(span_arg) X(lanes) \
    X(group_mask_in) X(group_store) X(group_mask_out) X(any_nan4) X(to_boundary) \
    X(vector_open) X(load) X(load_mask) X(body) X(store) X(store_mask) X(vector_close) \
    X(open_minmax) X(values) X(vsplat) X(vop) X(reduce) X(open_rows) X(column_open) X(column_param) X(column_close) X(imm) X(fimm) \
    X(bin) X(select) X(cast) X(nonnull) X(discard) X(let) X(field) X(elem_ptr) X(index) \
    X(var) X(get) X(set) X(loop_open) X(loop_close) X(loop_continue) X(if_open) X(if_close) \
    X(call) X(zero_bytes) X(store_at) X(byte_ptr) X(var_addr) X(load_f16) X(store_f16) X(buffer) X(block_bytes) \
    X(gload) X(gstore) X(copy_bytes) X(param)
/* clang-format on */
#define QG_KB_BIND(call) .call = kb_##call,

struct qg_kb {
    const qg_kb_ops *ops;
    const qg_kernel_loops *lp; /* the op being lowered */
};

/* lower_vector.c: one vector; `keep` (NULL: none) names what the main
 * loop keeps for its stores and NaN test instead of storing it here: the
 * result (NULL: stored), the mask output (NULL: stored), the NaN test's
 * value (NULL: no test; the result is then the one without NaN lanes);
 * bits, its four vectors' packed mask input (NULL: read here). */
typedef struct qg_kvector_keep {
    qg_kv **result, **mask_out, **nan;
    qg_kv *bits;
} qg_kvector_keep;
void qg_lower_vector(qg_kb *b, const qg_plan *p, const qg_kvector *v, const qg_kvector_keep *keep);

/* lower_span.c: the op's span, and the arguments a call of one takes:
 * tensors io (in, out, mask where the op has one), base, len, then the
 * parameters the plan uses; returns their count. */
void qg_lower_span(qg_kb *b, const qg_plan *p);
int qg_lower_span_args(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *base, qg_kv *len,
                       qg_kv *const params[QG_IN_COUNT], qg_kv **args);

/* lower_entry.c: a call of `span` over tensors io (in, out, mask) from
 * base for len elements, with the parameters the plan uses from one
 * channel's s, z and bias (inv: 1/s where NULL). */
void qg_lower_call_span(qg_kb *b, const qg_plan *p, qg_kv *span, qg_kv *const io[3], qg_kv *base, qg_kv *len, qg_kv *s,
                        qg_kv *inv, qg_kv *z, qg_kv *bias);
/* ... with each plan input's scalar given (the block formats' d, 1/d,
 * offset, min and m); those the plan does not use may be NULL. */
void qg_lower_call_span_with(qg_kb *b, const qg_plan *p, qg_kv *span, qg_kv *const io[3], qg_kv *base, qg_kv *len,
                             qg_kv *const scalars[QG_IN_COUNT]);
/* A packed mask output cleared at the entry where the loops say so (the
 * spans then set its bits); nothing for a NULL mask. */
void qg_lower_clear_packed_mask(qg_kb *b, qg_kv *mask, qg_kv *n);
/* lower_entry.c: every kernel of `spec` on `isa` in `ops` (a bit set of
 * 1u << qg_kernel_op), in the op table's order. */
qg_status qg_lower_kernels(qg_kb *b, const qg_spec *spec, qg_isa isa, unsigned ops, qg_error *err);

/* op `p->op`'s entry (its walk and the forwarders to the
 * runtime's drivers around it), requantize's entry, a by-reference entry. */
void qg_lower_entry(qg_kb *b, const qg_plan *p);
void qg_lower_requantize_entry(qg_kb *b, const qg_plan *p);
void qg_lower_by_reference(qg_kb *b, const qg_spec *sp, qg_kernel_op op);
void qg_lower_forwarders(qg_kb *b, const qg_op_info *o, const qg_entry_chain *ch);
/* lower_rows.c: whether the op walks channels-last rows, those rows, and
 * the entry's branch to them (inner == 1): the runtime's parameter table
 * for the tensors io (in, out, mask or NULL) of n elements in C channels. */
bool qg_lower_has_rows(const qg_kernel_loops *lp);
void qg_lower_rows(qg_kb *b, const qg_plan *p);
void qg_lower_channels_last(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *n, qg_kv *qp, qg_kv *C);
/* lower_blocks.c: op p->op's entry for ggml's block format `f`: its walk
 * over a row's blocks around the span of the blocks' element arithmetic
 * (qg_plan_block_elements), the minmax reduction defined before. */
void qg_lower_block_entry(qg_kb *b, const qg_plan *p, qg_block_format f);
/* Whether that op's walk calls observe's min/max span for its blocks'
 * extremes (the 32-element formats' quantize and fake_quant). */
bool qg_lower_block_reads_extremes(qg_block_format f, qg_kernel_op op);
/* Whether observe's reduction is one block's (a block format on a
 * fixed-width ISA whose vectors divide 32; elsewhere it is the general
 * loop), and whether that block reduction gives amax = max |x| alone
 * (q8's and mxfp4's; NaN as +inf). */
bool qg_lower_block_minmax(qg_block_format f, const qg_kernel_loops *lp);
bool qg_lower_block_amax_only(qg_block_format f, const qg_kernel_loops *lp);
/* lower_observe.c: observe's min/max reduction on `isa`, where the spec's
 * observer keeps one (qg_plan_observer_reduces). */
void qg_lower_minmax(qg_kb *b, const qg_spec *spec, qg_isa isa);
/* observe's entry: the runtime's walk and observers (qg_observe_with), with
 * the kernel's min/max reduction where the spec's observer keeps one. */
void qg_lower_observe_entry(qg_kb *b, const qg_spec *spec);

#endif
