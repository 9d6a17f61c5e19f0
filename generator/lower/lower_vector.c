/* One vector of a span's plan, lowered once: its data and mask inputs
 * loaded, the plan's body, its result and mask output stored, or kept for
 * the stores and the NaN test its main loop does for four vectors at once
 * (lower_span.c). How each access reaches memory (whole, a strip, masked
 * or through buffers: the loops' tail_kind) is the builder's spelling. */
#include "kernel_builder.h"

#define B (b->ops)

void qg_lower_vector(qg_kb *b, const qg_plan *p, const qg_kvector *v, const qg_kvector_keep *keep) {
    const qg_kernel_loops *lp = b->lp;
    B->vector_open(b, p, v);
    qg_kv *in = B->load(b), *m = NULL;
    if (lp->mask_in != QG_MASK_NONE)
        m = keep && keep->bits ? B->load_mask(b, keep->bits, v->slot * lp->lanes) : B->load_mask(b, NULL, 0);
    const qg_kbody form = keep && keep->nan                                ? QG_KBODY_ORDERED
                          : keep && keep->result && lp->group_store_adds_z ? QG_KBODY_GROUPED
                                                                           : QG_KBODY_RESULT;
    qg_kv *mask_out = NULL, *nan = NULL, *r = B->body(b, in, m, form, &mask_out, &nan);
    if (keep && keep->result)
        *keep->result = r;
    else
        B->store(b, r);
    if (keep && keep->nan)
        *keep->nan = nan;
    if (lp->mask_out != QG_MASK_NONE && keep && keep->mask_out)
        *keep->mask_out = mask_out;
    else if (lp->mask_out != QG_MASK_NONE)
        B->store_mask(b, mask_out);
    B->vector_close(b);
}
