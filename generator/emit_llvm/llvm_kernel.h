/* Internal to the LLVM backend: what the files building a kernel
 * (llvm_span, llvm_entry, llvm_mask) share. */
#ifndef QGEN_LLVM_KERNEL_H
#define QGEN_LLVM_KERNEL_H

#include "../plan/kernel_ops.h"
#include "../lower/kernel_builder.h"
#include "llvm_builder.h"
#include "qgen/runtime.h"

/* Pointer parameters of one op and what flows through them. */
typedef struct io_t {
    LLVMTypeRef in_t, out_t; /* element types */
    unsigned in_size, out_size;
    bool in_q, out_q; /* quantized (widened / narrowed) */
    bool in_h, out_h; /* 16-bit float codes (zero-extended / truncated; the plan converts them) */
    bool mask_in, mask_out;
} io_t;

/* io_t of the op being built, from its loops' element kinds. */
static inline io_t lx_io_of(const lx *x) {
    const qg_elem in = x->lp->elem_in, out = x->lp->elem_out;
    LLVMTypeRef types[] = {
        [QG_ELEM_F32] = x->f32, [QG_ELEM_Q] = x->qe, [QG_ELEM_CODE16] = x->i16, [QG_ELEM_ACC32] = x->i32};
    const unsigned sizes[] = {[QG_ELEM_F32] = 4, [QG_ELEM_Q] = x->qsize, [QG_ELEM_CODE16] = 2, [QG_ELEM_ACC32] = 4};
    io_t io = {types[in],
               types[out],
               sizes[in],
               sizes[out],
               in == QG_ELEM_Q,
               out == QG_ELEM_Q,
               in == QG_ELEM_CODE16,
               out == QG_ELEM_CODE16,
               x->lp->mask_in != QG_MASK_NONE,
               x->lp->mask_out != QG_MASK_NONE};
    return io;
}

/* Whether the op being built takes or gives a packed (1 bit) mask. */
static inline bool lx_packed_mask(const lx *x) {
    return x->lp->mask_in == QG_MASK_BITS || x->lp->mask_out == QG_MASK_BITS;
}

static inline bool lx_is_signed_q(const lx *x) { return !qg_dtype_is_unsigned(qg_kernel_dtype(x->sp)); }

typedef struct span_args {
    LLVMValueRef in, out, mask, base, len;
    LLVMValueRef param[QG_IN_COUNT];
} span_args;

/* llvm_mask.c: gradient masks */
void lx_pack_bits_inline(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
/* ... the same from the lanes' bits, an i32 (bit k: lane k) */
void lx_pack_bits_value(lx *x, LLVMValueRef bits, unsigned lanes, LLVMValueRef packed, LLVMValueRef at,
                        LLVMValueRef count);
/* `count` bits from bit `at` as an i32; `lanes` (a vector's, or group_mask's
 * 16) is how many a whole read takes */
LLVMValueRef lx_get_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count, unsigned lanes);
LLVMValueRef lx_unpack_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
/* The lane mask of bits first .. first + lanes - 1 of an i32 (first < 32). */
LLVMValueRef lx_mask_of_bits(lx *x, LLVMValueRef bits, unsigned first);
void lx_pack_bits_scalable(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
LLVMValueRef lx_unpack_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
LLVMValueRef lx_load_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
void lx_store_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count);

/* llvm_span.c: the grouped store's pieces, for the ISAs' spellings */
LLVMValueRef lx_concat(lx *x, LLVMValueRef a, LLVMValueRef b); /* two vectors' lanes side by side */
/* The grouped store's arithmetic on four vectors of q - z bounded above
 * (docs/semantics.md, "Element arithmetic"): z added at 16 bits with
 * saturation to two packed pairs, then, on the bytes, the bound qmin where
 * the byte saturation does not give it. */
void lx_add_zero_point(lx *x, LLVMValueRef z16, LLVMValueRef *ab, LLVMValueRef *cd);
LLVMValueRef lx_bound_below(lx *x, LLVMValueRef bytes);

/* llvm_entry.c: entries */
/* NAME_<op><infix>__<isa>: the entry (infix ""), else internal. */
LLVMValueRef lx_define_link(lx *x, const qg_op_info *o, const char *infix);

/* llvm_kbuilder.c: the kernel builder (lower/kernel_builder.h) on x */
enum { LX_KB_MAX = 16 }; /* loops, ifs and variables open at once */
struct qg_kvar {
    LLVMValueRef slot;
    LLVMTypeRef t;
};
typedef struct lx_kb_loop {
    lx_loop l; /* over a builder variable's slot */
    LLVMValueRef step;
} lx_kb_loop;
typedef struct lx_kb {
    qg_kb kb;
    lx *x;
    const qg_op_info *o;     /* the open link's op */
    LLVMValueRef minmax;     /* observe's reduction */
    const qg_plan *widen;    /* ... its widening, or NULL */
    span_args s;             /* the open span's arguments */
    io_t io;                 /* ... and its tensors */
    const qg_plan *p;        /* the open vector's plan, */
    LLVMValueRef at, count;  /* ... its first element and lanes, */
    LLVMValueRef active;     /* ... and its lane mask when partial (NULL: whole) */
    LLVMValueRef z16;        /* the open span's zero point for a grouped store that adds it */
    LLVMValueRef rows_io[3]; /* the open rows' in, out and mask */
    lx_kb_loop loops[LX_KB_MAX];
    LLVMBasicBlockRef joins[LX_KB_MAX];
    struct qg_kvar vars[LX_KB_MAX];
    int nloops, nifs, nvars;
} lx_kb;
void lx_kb_init(lx_kb *k, lx *x);
/* llvm_span.c: the builder's span calls */
void lx_kb_open_span(lx_kb *k, const qg_plan *p, const char *suffix, bool out_of_line);
LLVMValueRef lx_kb_span_arg(lx_kb *k, int which);
LLVMValueRef lx_kb_group_mask_in(lx_kb *k, LLVMValueRef at);
/* ... and its vector calls */
void lx_kb_vector_open(lx_kb *k, const qg_plan *p, LLVMValueRef at, LLVMValueRef count, bool partial);
void lx_kb_vector_close(lx_kb *k);
LLVMValueRef lx_kb_load(lx_kb *k);
LLVMValueRef lx_kb_load_mask(lx_kb *k, LLVMValueRef bits, int first);
LLVMValueRef lx_kb_body(lx_kb *k, LLVMValueRef data, LLVMValueRef m, qg_kbody form, LLVMValueRef *mask_out,
                        LLVMValueRef *nan);
void lx_kb_store(lx_kb *k, LLVMValueRef r);
void lx_kb_store_mask(lx_kb *k, LLVMValueRef m);
void lx_kb_group_store(lx_kb *k, LLVMValueRef r[4], LLVMValueRef at);
void lx_kb_group_mask_out(lx_kb *k, LLVMValueRef m[4], LLVMValueRef at);
LLVMValueRef lx_kb_any_nan4(lx_kb *k, LLVMValueRef nan[4]);
LLVMValueRef lx_kb_to_boundary(lx_kb *k, LLVMValueRef ptr, LLVMValueRef base, bool of_output, unsigned bytes);

/* llvm_entry.c: the channels-last rows' function and its name
 * (lower/lower_rows.c) */
void lx_rows_name(lx *x, qg_kernel_op op, char *name, size_t cap);
void lx_rows_open(lx *x, const qg_plan *p, LLVMValueRef args[5], LLVMValueRef rows[QG_IN_COUNT]);
#endif
