/* Observe's min/max reduction, written once: the min and max of x[0..len)
 * (len >= 1) and whether x holds no NaN (docs/semantics.md, observers).
 * Accumulators start at +inf and -inf, so any lanes' order gives the same
 * min and max; `unroll` of them keep the min/max chains short; the last
 * part vector repeats its first element past the end (no lane outside x
 * is read, none changes a min or max). */
#include <math.h>
#include <stdio.h>

#include "kernel_builder.h"

#define B (b->ops)

enum { MAX_ACC = 4 };

/* lo, hi and ok take in the values v (named `name`). */
static void accumulate(qg_kb *b, qg_kvar *lo, qg_kvar *hi, qg_kvar *ok, const char *name, qg_kv *values) {
    qg_kv *v = B->let(b, name, values);
    B->set(b, lo, B->vop(b, QG_OP_MIN_F, B->get(b, lo), v));
    B->set(b, hi, B->vop(b, QG_OP_MAX_F, B->get(b, hi), v));
    B->set(b, ok, B->vop(b, QG_OP_AND_M, B->get(b, ok), B->vop(b, QG_OP_ORDERED, v, NULL)));
}

/* op over the n accumulators, pairwise (short chains, short C text). */
static qg_kv *tree(qg_kb *b, qg_opcode op, qg_kvar *const acc[], int n) {
    qg_kv *v[MAX_ACC];
    for (int k = 0; k < n; k++)
        v[k] = B->get(b, acc[k]);
    for (; n > 1; n = (n + 1) / 2) {
        for (int k = 0; k < n / 2; k++)
            v[k] = B->vop(b, op, v[2 * k], v[2 * k + 1]);
        if (n % 2)
            v[n / 2] = v[n - 1];
    }
    return v[0];
}

/* A block format's 32 values (its walk, lower_blocks.c, is the only
 * caller): on a fixed-width ISA, straight-line vectors that seed the
 * accumulators themselves. */
static void block_extremes(qg_kb *b, const qg_spec *spec, qg_kv *const a[4]) {
    enum { QK = 32 };
    const int L = b->lp->lanes, n = QK / L;
    const bool amax_only = qg_lower_block_amax_only(spec->block, b->lp);
    qg_kv *lo[QK], *hi[QK], *ok[QK];
    qg_kv *magnitude =
        amax_only ? B->let(b, "magnitude", B->vop(b, QG_OP_SPLAT_I, B->imm(b, QG_KT_I32, 0x7FFFFFFF), NULL)) : NULL;
    for (int k = 0; k < n; k++) {
        char name[8];
        snprintf(name, sizeof name, "v%d", k);
        lo[k] = hi[k] = B->let(b, name, B->values(b, a[0], B->imm(b, QG_KT_SIZE, (long long)k * L), NULL));
        if (amax_only) /* |x|'s bits */
            hi[k] = B->vop(b, QG_OP_AND_I, B->vop(b, QG_OP_BITS_F2I, hi[k], NULL), magnitude);
        else
            ok[k] = B->vop(b, QG_OP_ORDERED, lo[k], NULL);
    }
    if (amax_only) {
        /* q8's and mxfp4's amax alone, into mx: as int32s, |x|'s bits
         * order as |x| does and a NaN's lie above +inf's, so the integer
         * max keeps a NaN and the min with +inf's bits makes it +inf,
         * which the walk sends to the reference as it does any amax
         * beyond FLT_MAX; mn is left alone, and the result is 1 */
        for (int m = n; m > 1; m /= 2) /* n is a power of two */
            for (int k = 0; k < m / 2; k++)
                hi[k] = B->vop(b, QG_OP_MAX_I, hi[2 * k], hi[2 * k + 1]);
        qg_kv *inf = B->vop(b, QG_OP_SPLAT_I, B->imm(b, QG_KT_I32, 0x7F800000), NULL);
        qg_kv *largest = B->let(b, "largest", B->vop(b, QG_OP_BITS_I2F, B->vop(b, QG_OP_MIN_I, hi[0], inf), NULL));
        B->store_at(b, a[3], B->reduce(b, QG_OP_MAX_F, largest));
        B->discard(b, a[2]);
        B->close_fn(b, B->imm(b, QG_KT_I32, 1));
        return;
    }
    for (int m = n; m > 1; m /= 2)
        for (int k = 0; k < m / 2; k++) {
            lo[k] = B->vop(b, QG_OP_MIN_F, lo[2 * k], lo[2 * k + 1]);
            hi[k] = B->vop(b, QG_OP_MAX_F, hi[2 * k], hi[2 * k + 1]);
            ok[k] = B->vop(b, QG_OP_AND_M, ok[2 * k], ok[2 * k + 1]);
        }
    B->store_at(b, a[2], B->reduce(b, QG_OP_MIN_F, lo[0]));
    B->store_at(b, a[3], B->reduce(b, QG_OP_MAX_F, hi[0]));
    B->close_fn(b, B->select(b, B->reduce(b, QG_OP_AND_M, ok[0]), B->imm(b, QG_KT_I32, 1), B->imm(b, QG_KT_I32, 0)));
}

bool qg_lower_block_minmax(qg_block_format f, const qg_kernel_loops *lp) {
    return f != QG_BLOCK_NONE && lp->lanes >= 1 && lp->lanes <= 32 && 32 % lp->lanes == 0;
}

void qg_lower_minmax(qg_kb *b, const qg_spec *spec, qg_isa isa) {
    if (!qg_plan_observer_reduces(spec))
        return;
    qg_plan widening;
    qg_kv *a[4];
    const bool block = qg_lower_block_minmax(spec->block, b->lp);
    B->open_minmax(b, qg_plan_observe_widening(spec, isa, &widening) ? &widening : NULL, a, block);
    if (block) {
        block_extremes(b, spec, a);
        return;
    }
    const int U = b->lp->unroll < 1 ? 1 : b->lp->unroll > MAX_ACC ? MAX_ACC : b->lp->unroll;
    static const char *const names[3][MAX_ACC] = {
        {"lo", "lo1", "lo2", "lo3"}, {"hi", "hi1", "hi2", "hi3"}, {"ok", "ok1", "ok2", "ok3"}};
    qg_kvar *lo[MAX_ACC], *hi[MAX_ACC], *ok[MAX_ACC];
    qg_kv *inf = B->vsplat(b, B->fimm(b, INFINITY)), *ninf = B->vsplat(b, B->fimm(b, -INFINITY));
    for (int k = 0; k < U; k++) {
        lo[k] = B->var(b, names[0][k], QG_KT_VF, inf);
        hi[k] = B->var(b, names[1][k], QG_KT_VF, ninf);
        ok[k] = B->var(b, names[2][k], QG_KT_VOK, B->vop(b, QG_OP_ORDERED, B->get(b, lo[k]), NULL));
    }
    qg_kv *lanes = B->lanes(b), *len = a[1];
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, B->imm(b, QG_KT_SIZE, 0));
    if (U > 1) {
        B->loop_open(b, "unrolled", i, QG_KTEST_WHOLE_STEPS, len,
                     B->bin(b, QG_KB_MUL, lanes, B->imm(b, QG_KT_SIZE, U)));
        static const char *const v[MAX_ACC] = {"v0", "v1", "v2", "v3"};
        for (int k = 0; k < U; k++) {
            qg_kv *at = B->get(b, i);
            if (k)
                at = B->bin(b, QG_KB_ADD, at, B->bin(b, QG_KB_MUL, lanes, B->imm(b, QG_KT_SIZE, k)));
            accumulate(b, lo[k], hi[k], ok[k], v[k], B->values(b, a[0], at, NULL));
        }
        B->loop_close(b);
    }
    /* whole vectors, then the last part: the loops hold no tail work */
    B->loop_open(b, "vectors", i, QG_KTEST_WHOLE_STEPS, len, lanes);
    accumulate(b, lo[0], hi[0], ok[0], "v", B->values(b, a[0], B->get(b, i), NULL));
    B->loop_close(b);
    if (b->lp->lanes != 1) {
        B->if_open(b, B->bin(b, QG_KB_LT, B->get(b, i), len));
        accumulate(b, lo[0], hi[0], ok[0], "v",
                   B->values(b, a[0], B->get(b, i), B->bin(b, QG_KB_SUB, len, B->get(b, i))));
        B->if_close(b);
    }
    qg_kv *mn = tree(b, QG_OP_MIN_F, lo, U), *mx = tree(b, QG_OP_MAX_F, hi, U), *all = tree(b, QG_OP_AND_M, ok, U);
    B->store_at(b, a[2], B->reduce(b, QG_OP_MIN_F, mn));
    B->store_at(b, a[3], B->reduce(b, QG_OP_MAX_F, mx));
    B->close_fn(b, B->select(b, B->reduce(b, QG_OP_AND_M, all), B->imm(b, QG_KT_I32, 1), B->imm(b, QG_KT_I32, 0)));
}
