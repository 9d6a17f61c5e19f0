/* The ISAs' own LLVM spellings (generator/emit_llvm/llvm_spelling.h says
 * what each hook does), one file per architecture; spellings.c names them
 * for targets/<isa>.json. */
#ifndef QGEN_TEMPLATES_LLVM_SPELLINGS_H
#define QGEN_TEMPLATES_LLVM_SPELLINGS_H

#include "../../generator/emit_llvm/llvm_kernel.h"

/* packs.c: x86's and wasm's llvm_narrow4 */
void lx_store_four_q8_packs(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at);
/* four int32 vectors to bytes in two rounds of saturating packs by the
 * narrow16 and narrow8(u) roles; with z16 the zero point is added between */
LLVMValueRef lx_narrow_four(lx *x, LLVMValueRef r[4], bool to_unsigned, LLVMValueRef z16);
/* x86.c */
LLVMValueRef lx_x86_minmax_256(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max);
LLVMValueRef lx_x86_minmax_512(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max);
LLVMValueRef lx_x86_cvtps2dq_256(lx *x, LLVMValueRef a);
LLVMValueRef lx_x86_cvtps2dq_512(lx *x, LLVMValueRef a);
LLVMValueRef lx_x86_clamp_before_narrow(lx *x, LLVMValueRef r);
void lx_x86_store_mask_bytes_pdep(lx *x, LLVMValueRef m, LLVMValueRef out, LLVMValueRef at);
/* aarch64.c */
LLVMValueRef lx_aarch64_fcvtns(lx *x, LLVMValueRef a);
LLVMValueRef lx_aarch64_sve_fcvtzs(lx *x, LLVMValueRef a);
void lx_aarch64_store_four_q8(lx *x, LLVMValueRef r[4], LLVMValueRef z16, LLVMValueRef out, LLVMValueRef at);
/* riscv.c */
LLVMValueRef lx_riscv_vfcvt(lx *x, LLVMValueRef a);
void lx_riscv_store_bits_vsm(lx *x, LLVMValueRef packed, LLVMValueRef m, LLVMValueRef at, LLVMValueRef count);
LLVMValueRef lx_riscv_load_bits_vlm(lx *x, LLVMValueRef packed, LLVMValueRef at, LLVMValueRef count);
/* wasm.c */
LLVMValueRef lx_wasm_trunc_sat(lx *x, LLVMValueRef a);
LLVMValueRef lx_wasm_pminmax(lx *x, LLVMValueRef a, LLVMValueRef b, bool is_max);
LLVMValueRef lx_wasm_lane_bits(lx *x, LLVMValueRef m, unsigned lanes);
bool lx_wasm_store_four_masks(lx *x, LLVMValueRef m[4], LLVMValueRef mask, LLVMValueRef at);

#endif
