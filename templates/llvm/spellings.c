/* The LLVM spellings targets/<isa>.json can name, one table per operation:
 * the backend's portable forms and each architecture's own. A row's roles
 * are the llvm_intrinsics of the ISA's row that its code calls. */
#include "spellings.h"

#define ROLE(r) (1u << LX_I_##r)

const lx_spelling lx_minmax_spellings[] = {
    {.name = "select", .roles = 0},
    {.name = "x86_256", .roles = ROLE(MIN) | ROLE(MAX), .minmax = lx_x86_minmax_256},
    {.name = "x86_512", .roles = ROLE(MIN) | ROLE(MAX), .minmax = lx_x86_minmax_512},
    {.name = "minimum", .roles = 0, .minmax = lx_minmax_minimum},
    {.name = "minnum", .roles = 0, .minmax = lx_minmax_minnum},
    {.name = "wasm_pminmax", .roles = ROLE(MIN) | ROLE(MAX), .minmax = lx_wasm_pminmax},
    {.name = NULL},
};

const lx_spelling lx_round_cvt_spellings[] = {
    {.name = "roundeven", .roles = 0},
    {.name = "x86_cvtps2dq_256", .roles = ROLE(ROUND_CVT), .round_cvt = lx_x86_cvtps2dq_256},
    {.name = "x86_cvtps2dq_512", .roles = ROLE(ROUND_CVT), .round_cvt = lx_x86_cvtps2dq_512},
    {.name = "aarch64_fcvtns", .roles = ROLE(ROUND_CVT), .round_cvt = lx_aarch64_fcvtns},
    {.name = "riscv_vfcvt", .roles = ROLE(ROUND_CVT), .round_cvt = lx_riscv_vfcvt},
    {.name = "aarch64_sve_fcvtzs", .roles = ROLE(ROUND_CVT), .round_cvt = lx_aarch64_sve_fcvtzs},
    {.name = "wasm_trunc_sat", .roles = 0, .round_cvt = lx_wasm_trunc_sat},
    {.name = NULL},
};

#define PACKS ROLE(NARROW16) | ROLE(NARROW8) | ROLE(NARROW8U)
const lx_spelling lx_narrow4_spellings[] = {
    {.name = "", .roles = 0},
    {.name = "x86_packs_256",
     .roles = PACKS,
     .store_four_q8 = lx_store_four_q8_packs,
     .before_narrow = lx_x86_clamp_before_narrow},
    {.name = "x86_packs_512", .roles = PACKS, .store_four_q8 = lx_store_four_q8_packs},
    {.name = "aarch64_sqxtn", .roles = PACKS, .store_four_q8 = lx_aarch64_store_four_q8},
    {.name = "wasm_narrow", .roles = PACKS, .store_four_q8 = lx_store_four_q8_packs},
    {.name = NULL},
};

const lx_spelling lx_mask_bytes_spellings[] = {
    {.name = "", .roles = 0},
    {.name = "x86_pdep", .roles = ROLE(PDEP), .store_mask_bytes = lx_x86_store_mask_bytes_pdep},
    {.name = NULL},
};

const lx_spelling lx_mask_bits_spellings[] = {
    {.name = "", .roles = 0},
    {.name = "riscv_vsm",
     .roles = ROLE(STORE_BITS) | ROLE(LOAD_BITS),
     .store_bits_scalable = lx_riscv_store_bits_vsm,
     .load_bits_scalable = lx_riscv_load_bits_vlm},
    {.name = "wasm_bitmask",
     .roles = ROLE(BITMASK),
     .lane_bits = lx_wasm_lane_bits,
     .store_four_masks = lx_wasm_store_four_masks},
    {.name = NULL},
};
