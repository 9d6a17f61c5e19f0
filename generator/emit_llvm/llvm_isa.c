/* An ISA's vector shape and LLVM spellings, read from its targets/ row:
 * the backend calls the spellings' hooks (llvm_spelling.h), never branches
 * on which ISA it builds for. */
#include <string.h>

#include "../targets/target_table.h"
#include "llvm_builder.h"

/* The row of `table` that targets/<isa>.json names in `field`, its hooks
 * merged into *sp and its roles into *roles. */
static qg_status pick(const qg_target *t, const char *field, const char *value, const lx_spelling *table,
                      lx_spelling *sp, unsigned *roles, qg_error *err) {
    for (const lx_spelling *row = table; row->name; row++) {
        if (strcmp(row->name, value) != 0)
            continue;
        *roles |= row->roles;
#define TAKE(hook) sp->hook = row->hook ? row->hook : sp->hook
        TAKE(minmax);
        TAKE(round_cvt);
        TAKE(store_four_q8);
        TAKE(before_narrow);
        TAKE(store_mask_bytes);
        TAKE(lane_bits);
        TAKE(store_four_masks);
        TAKE(store_bits_scalable);
        TAKE(load_bits_scalable);
#undef TAKE
        return QG_OK;
    }
    return qg_error_set(err, QG_ERR_BACKEND, "targets/%s.json: %s \"%s\" is not a known spelling", t->name, field,
                        value);
}

qg_status lx_isa_of(qg_isa isa, lx_isa *out, qg_error *err) {
    const qg_target *t = qg_target_of(isa);
    const bool scalable = t->lanes == 0;
    *out = (lx_isa){isa,
                    scalable ? (unsigned)t->vscale_lanes : (unsigned)t->lanes,
                    scalable ? (unsigned)t->vscale_lanes : (unsigned)t->lanes,
                    scalable,
                    t->unroll,
                    LX_TRUNC,
                    {0},
                    {{0}}};
    if (strcmp(t->llvm_trunc, "no_rtz") == 0)
        out->trunc = LX_TRUNC_NO_RTZ;
    else if (strcmp(t->llvm_trunc, "trunc") != 0)
        return qg_error_set(err, QG_ERR_BACKEND, "targets/%s.json: llvm_trunc \"%s\" is not a known spelling", t->name,
                            t->llvm_trunc);
    unsigned roles = 0;
    qg_status st;
    if ((st = pick(t, "llvm_minmax", t->llvm_minmax, lx_minmax_spellings, &out->sp, &roles, err)) ||
        (st = pick(t, "llvm_round_cvt", t->llvm_round_cvt, lx_round_cvt_spellings, &out->sp, &roles, err)) ||
        (st = pick(t, "llvm_narrow4", t->llvm_narrow4, lx_narrow4_spellings, &out->sp, &roles, err)) ||
        (st = pick(t, "llvm_mask_bytes", t->llvm_mask_bytes, lx_mask_bytes_spellings, &out->sp, &roles, err)) ||
        (st = pick(t, "llvm_mask_bits", t->llvm_mask_bits, lx_mask_bits_spellings, &out->sp, &roles, err)))
        return st;
    static const char *const role_names[LX_I_COUNT] = {"min",      "max",  "round_cvt",  "narrow16",  "narrow8",
                                                       "narrow8u", "pdep", "store_bits", "load_bits", "bitmask"};
    for (int r = 0; r < LX_I_COUNT; r++)
        if (!qg_target_member(t->llvm_intrinsics, role_names[r], out->intr[r], sizeof out->intr[r]) &&
            (roles >> r & 1u))
            return qg_error_set(err, QG_ERR_BACKEND,
                                "targets/%s.json: llvm_intrinsics has no \"%s\"; its spellings call one", t->name,
                                role_names[r]);
    return QG_OK;
}
