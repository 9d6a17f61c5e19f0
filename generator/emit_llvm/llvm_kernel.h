/* Internal to the LLVM backend: what the files building a kernel
 * (llvm_span, llvm_entry, llvm_mask, llvm_observe) share. */
#ifndef QGEN_LLVM_KERNEL_H
#define QGEN_LLVM_KERNEL_H

#include "../emit_c/isa_spelling.h"
#include "../plan/kernel_ops.h"
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
/* `count` bits from bit `at` as an i32; `lanes` (a vector's, or group_mask's
 * 16) is how many a whole read takes */
LLVMValueRef lx_get_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count, unsigned lanes);
LLVMValueRef lx_unpack_bits_inline(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
/* The lane mask of bits first .. first + lanes - 1 of an i32 (first < 32). */
LLVMValueRef lx_mask_of_bits(lx *x, LLVMValueRef bits, unsigned first);
void lx_pack_bits_scalable(lx *x, LLVMValueRef m, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
LLVMValueRef lx_unpack_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
LLVMValueRef lx_load_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
void lx_store_mask_bytes_pdep(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at);
void lx_store_mask_bits_scalable(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count);

/* llvm_span.c: spans */
LLVMValueRef lx_build_span(lx *x, const qg_plan *p, const io_t *io, bool one_vector);

/* llvm_entry.c: entries */
LLVMValueRef lx_define_entry(lx *x, const qg_op_info *o);
/* NAME_<op><infix>__<isa>: the entry (infix ""), else internal. */
LLVMValueRef lx_define_link(lx *x, const qg_op_info *o, const char *infix);
/* A link that calls runtime_fn(&NAME_spec, [extra,] its args) and returns
 * what it returns; and the chain's forwarder links around `walk`. */
LLVMValueRef lx_build_forwarder(lx *x, const qg_op_info *o, const char *infix, const char *runtime_fn,
                                LLVMValueRef extra);
void lx_build_forwarders(lx *x, const qg_op_info *o, const qg_entry_chain *ch, LLVMValueRef walk);

/* llvm_observe.c: the min/max reduction */
void lx_build_observe(lx *x);

#endif
