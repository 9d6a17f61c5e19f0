/* An ISA's LLVM spellings: the few operations whose portable IR lowers
 * badly or not at all on it, as hooks the backend calls. targets/<isa>.json
 * names one spelling per operation (llvm_minmax, llvm_round_cvt,
 * llvm_narrow4, llvm_mask_bytes, llvm_mask_bits); the names are the rows of
 * templates/llvm/spellings.c, and an ISA's own spellings are code in
 * templates/llvm/<arch>.c, as its C spellings are templates/<isa>.def. The
 * portable forms live here in the backend: a NULL hook, or a hook returning
 * NULL, takes them. */
#ifndef QGEN_LLVM_SPELLING_H
#define QGEN_LLVM_SPELLING_H

#include <llvm-c/Core.h>
#include <stdbool.h>

typedef struct lx lx;

typedef struct lx_spelling {
    const char *name; /* as targets/<isa>.json writes it */
    unsigned roles;   /* 1u << lx_intr of each llvm_intrinsics role it calls */
    /* fp32 min/max (NULL result: a compare and select) */
    LLVMValueRef (*minmax)(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max);
    /* fp32 -> int32 rounding to nearest even (NULL: roundeven, fptosi) */
    LLVMValueRef (*round_cvt)(lx *x, LLVMValueRef a);
    /* group_store: four int32 vectors of q (with z16: q - z) narrowed to the
     * q type and stored at byte `at` of `out` (NULL: one by one) */
    void (*store_four_q8)(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at);
    /* one vector of q in range, made ready for its narrowing (NULL: as is) */
    LLVMValueRef (*before_narrow)(lx *x, LLVMValueRef r);
    /* a whole vector's lane mask as bytes (NULL: zero-extended lanes) */
    void (*store_mask_bytes)(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at);
    /* a fixed-width mask's lanes as the low bits of an i32 (NULL: a bitcast) */
    LLVMValueRef (*lane_bits)(lx *x, LLVMValueRef m, unsigned lanes);
    /* group_mask: four vectors' masks to the mask tensor (false: not here) */
    bool (*store_four_masks)(lx *x, LLVMValueRef m[4], LLVMValueRef mask, LLVMValueRef at);
    /* scalable ISAs' packed masks (NULL: the portable bit window) */
    void (*store_bits_scalable)(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count);
    LLVMValueRef (*load_bits_scalable)(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
} lx_spelling;

/* The rows of templates/llvm/spellings.c, one table per operation, each
 * ending with a row whose name is NULL. */
extern const lx_spelling lx_minmax_spellings[];
extern const lx_spelling lx_round_cvt_spellings[];
extern const lx_spelling lx_narrow4_spellings[];
extern const lx_spelling lx_mask_bytes_spellings[];
extern const lx_spelling lx_mask_bits_spellings[];

/* The backend's portable spellings that the tables name (the others are
 * in templates/llvm/spellings.h). */
LLVMValueRef lx_minmax_minimum(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max); /* NaN propagates */
LLVMValueRef lx_minmax_minnum(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max);  /* NaN gives the number */

#endif
