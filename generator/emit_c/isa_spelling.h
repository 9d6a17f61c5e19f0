/* How one ISA spells the abstract operations of a kernel plan in C. The
 * tables themselves are text in templates/<isa>.def. In every spelling $a,
 * $b and $c stand for the operands. Scalable ISAs work in strips: the
 * strip's control (RVV's vl, SVE's governing predicate) is in scope under
 * `strip_name` in every spelling. An ISA with register groups (RVV's LMUL,
 * per op in targets/<isa>.json) names the group by tokens spelled before
 * an op's text is (qg_isa_spelling_grouped): $F the 32-bit group ("m4"), $B
 * the mask ratio ("8"), $Q the 8-bit group ("m1") and $H the 16-bit one
 * ("m2"); its helpers are written once per group the file uses, so their
 * names carry $F. */
#ifndef QGEN_ISA_SPELLING_H
#define QGEN_ISA_SPELLING_H

#include "../plan/kernel_plan.h"

typedef struct qg_isa_spelling {
    qg_isa isa;
    const char *includes; /* #include lines */
    const char *helpers;  /* static inline helper functions, verbatim */
    const char *vf, *vi, *vm;
    const char *op[QG_OP_COUNT];
    const char *splat_i;
    const char *load_f, *store_f;         /* $a pointer, $b value */
    const char *load_i;                   /* $a const int32_t * -> vi */
    const char *load_q[QG_DTYPE_COUNT];   /* by qg_dtype; $a pointer -> vi */
    const char *store_q[QG_DTYPE_COUNT];  /* $a pointer, $b vi */
    const char *store_q4[QG_DTYPE_COUNT]; /* $a pointer, $b "v0, v1, v2, v3": four vectors at once; NULL = one by one */
    /* ... of quantize's q - z bounded above only (qg_plan.out_q_grouped), adding z and
     * bounding below by the qmin in $c; NULL: the ISA's main loop stores q */
    const char *store_q4_z[QG_DTYPE_COUNT];
    /* Masked tails (tail_mask NULL: the whole tail goes through stack
     * buffers; any other NULL: that operand does). $a is the pointer, $b
     * the tail mask made by tail_mask from the count $a. */
    const char *tail_mask;                    /* $a count -> tail mask */
    const char *tail_mask_type;               /* its C type; NULL = vm */
    const char *load_f_tail;                  /* $a ptr, $b tail mask -> vf */
    const char *load_i_tail;                  /* $a ptr, $b tail mask -> vi (int32) */
    const char *store_f_tail;                 /* $a ptr, $b tail mask, $c vf */
    const char *load_q_tail[QG_DTYPE_COUNT];  /* $a ptr, $b tail mask -> vi */
    const char *store_q_tail[QG_DTYPE_COUNT]; /* $a ptr, $b tail mask, $c vi */
    const char *load_mask_bytes_tail;         /* $a ptr, $b tail mask -> vm */
    const char *store_mask_bytes_tail;        /* $a ptr, $b tail mask, $c vm */
    const char *mask_to_bits;                 /* vm -> uint64_t; NULL where packed masks go straight */
    const char *any_nan4;                     /* $a "nan0, nan1, nan2, nan3" -> nonzero when a lane is NaN
                                                 (targets/<isa>.json's nan_check "per_iteration") */
    const char *mask4_to_bits;                /* $a "m0, m1, m2, m3" -> uint64_t (kernel_loops' group_mask) */
    const char *store_mask4_bytes;            /* $a uint8_t*, $b "m0, m1, m2, m3": four vectors' byte masks */
    const char *bits_to_mask;                 /* uint64_t -> vm; ... (RVV: a strip's lanes may pass 64) */
    const char *store_mask_bytes;             /* $a uint8_t*, $b vm: one full vector; NULL = via bits */
    const char *load_mask_bytes;              /* $a const uint8_t* -> vm; NULL = via bits */
    /* A packed mask (`mask`) stored straight from a mask register; NULL =
     * via mask_to_bits and qg_ks_put_bits. */
    const char *store_mask_packed; /* $a bit position, $b vm, $c count */
    const char *load_mask_packed;  /* $a bit position, $b count -> vm; NULL = via qg_ks_get_bits */
    /* Strips of a scalable ISA (all NULL for fixed widths). */
    const char *strip_type, *strip_name; /* the control's C type and name */
    const char *strip_open;              /* $a position, $b end -> the control of the strip at $a */
    const char *strip_count;             /* lanes the strip holds */
    const char *strip_step;              /* how far the strip advances */
    const char *strip_all;               /* the control of a whole register */
    /* Observe's reduction, under strip_all (fixed widths: NULL, through
     * qg_ks_pad_* and qg_ks_min/max_f32). */
    const char *load_f_pad, *load_h_pad; /* $a ptr, $b count: float32 or 16-bit codes (as load_q), lanes past
                                            count repeating *$a */
    const char *reduce_min, *reduce_max; /* $a vf, $b seed float -> float */
    const char *all_lanes;               /* $a vm -> whether every lane is set */
} qg_isa_spelling;

const qg_isa_spelling *qg_isa_spelling_of(qg_isa isa);

/* The register groups of 1, 2, 4 and 8 vectors: a table with its group
 * tokens spelled for `group` (qg_isa_group_of an LMUL), each string that
 * has one a copy (false without memory); released back to `raw`'s. */
enum { QG_ISA_GROUPS = 4 };
int qg_isa_group_of(int lmul);
bool qg_isa_spelling_grouped(const qg_isa_spelling *raw, int group, qg_isa_spelling *out);
void qg_isa_spelling_release(qg_isa_spelling *t, const qg_isa_spelling *raw);

#endif
