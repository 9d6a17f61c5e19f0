/* An ISA's vector shape and LLVM spellings, read from its targets/ row:
 * the backend branches on these, never on which ISA it builds for. */
#include <string.h>

#include "../targets/target_table.h"
#include "llvm_builder.h"

/* The index of `value` among `names`, or -1. */
static int pick(const char *value, const char *const *names, int n) {
    for (int k = 0; k < n; k++)
        if (strcmp(value, names[k]) == 0)
            return k;
    return -1;
}

#define PICK(field, ...)                                                                                               \
    do {                                                                                                               \
        static const char *const names[] = {__VA_ARGS__};                                                              \
        const int k = pick(t->field, names, (int)(sizeof names / sizeof names[0]));                                    \
        if (k < 0)                                                                                                     \
            return qg_error_set(err, QG_ERR_BACKEND, "targets/%s.json: %s \"%s\" is not a known spelling", t->name,    \
                                #field, t->field);                                                                     \
        k_##field = k;                                                                                                 \
    } while (0)

qg_status lx_isa_of(qg_isa isa, lx_isa *out, qg_error *err) {
    const qg_target *t = qg_target_of(isa);
    int k_llvm_minmax, k_llvm_round_cvt, k_llvm_trunc, k_llvm_narrow4, k_llvm_mask_bytes, k_llvm_mask_bits;
    /* in the order of the enums in llvm_builder.h */
    PICK(llvm_minmax, "select", "x86_256", "x86_512", "minimum", "minnum", "wasm_pminmax");
    PICK(llvm_round_cvt, "roundeven", "x86_cvtps2dq_256", "x86_cvtps2dq_512", "aarch64_fcvtns", "riscv_vfcvt",
         "aarch64_sve_fcvtzs", "fptosi_sat");
    PICK(llvm_trunc, "trunc", "no_rtz");
    PICK(llvm_narrow4, "", "x86_packs_256", "x86_packs_512", "aarch64_sqxtn", "wasm_narrow");
    PICK(llvm_mask_bytes, "", "x86_pdep");
    PICK(llvm_mask_bits, "", "riscv_vsm", "wasm_bitmask");
    const bool scalable = t->lanes == 0;
    *out = (lx_isa){isa,
                    scalable ? (unsigned)t->vscale_lanes : (unsigned)t->lanes,
                    scalable ? (unsigned)t->vscale_lanes : (unsigned)t->lanes,
                    scalable,
                    t->unroll,
                    (lx_minmax)k_llvm_minmax,
                    (lx_round_cvt)k_llvm_round_cvt,
                    (lx_trunc)k_llvm_trunc,
                    (lx_narrow4)k_llvm_narrow4,
                    (lx_mask_bytes)k_llvm_mask_bytes,
                    (lx_mask_bits)k_llvm_mask_bits,
                    {{0}}};
    static const char *const roles[LX_I_COUNT] = {"min",      "max",  "round_cvt",  "narrow16",  "narrow8",
                                                  "narrow8u", "pdep", "store_bits", "load_bits", "bitmask"};
    /* the roles each spelling calls */
    const bool by_intrinsic =
        out->minmax == LX_MINMAX_X86_256 || out->minmax == LX_MINMAX_X86_512 || out->minmax == LX_MINMAX_WASM_PMINMAX;
    const bool needs[LX_I_COUNT] = {by_intrinsic,
                                    by_intrinsic,
                                    out->round_cvt != LX_CVT_ROUNDEVEN && out->round_cvt != LX_CVT_FPTOSI_SAT,
                                    out->narrow4 != LX_NARROW4_NONE,
                                    out->narrow4 != LX_NARROW4_NONE,
                                    out->narrow4 != LX_NARROW4_NONE,
                                    out->mask_bytes == LX_MASK_BYTES_PDEP,
                                    out->mask_bits == LX_MASK_BITS_RISCV_VSM,
                                    out->mask_bits == LX_MASK_BITS_RISCV_VSM,
                                    out->mask_bits == LX_MASK_BITS_WASM_BITMASK};
    for (int r = 0; r < LX_I_COUNT; r++)
        if (!qg_target_member(t->llvm_intrinsics, roles[r], out->intr[r], sizeof out->intr[r]) && needs[r])
            return qg_error_set(err, QG_ERR_BACKEND,
                                "targets/%s.json: llvm_intrinsics has no \"%s\"; its spellings call one", t->name,
                                roles[r]);
    return QG_OK;
}
