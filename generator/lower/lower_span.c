/* Spans, lowered once for both backends and every ISA: the plan over a
 * stretch of elements sharing one channel's parameters. `unroll` vectors
 * per main-loop iteration (their narrow outputs and masks stored together,
 * their NaN test done once where the target says so), then single
 * vectors, then one partial vector that touches nothing past the end (a
 * scalable ISA's strip of the remaining lanes); wide vectors first align
 * the float tensor (kernel_loops' align_head). A vector itself is
 * lower_vector.c's. */
#include <string.h>

#include "kernel_builder.h"

#define B (b->ops)

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }

int qg_lower_span_args(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *base, qg_kv *len,
                       qg_kv *const params[QG_IN_COUNT], qg_kv **args) {
    int n = 0;
    args[n++] = io[0];
    args[n++] = io[1];
    if (qg_kernel_loops_masked(b->lp))
        args[n++] = io[2];
    args[n++] = base;
    args[n++] = len;
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            args[n++] = params[in];
    return n;
}

/* The arguments a call of the span's sibling takes: its own, base and len
 * replaced. */
static int span_args(qg_kb *b, const qg_plan *p, qg_kv *base, qg_kv *len, qg_kv **args) {
    qg_kv *io[3] = {B->span_arg(b, QG_KSPAN_IN), B->span_arg(b, QG_KSPAN_OUT), NULL}, *params[QG_IN_COUNT] = {0};
    if (qg_kernel_loops_masked(b->lp))
        io[2] = B->span_arg(b, QG_KSPAN_MASK);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            params[in] = B->span_arg(b, QG_KSPAN_PARAM + in);
    return qg_lower_span_args(b, p, io, base, len, params, args);
}

/* for (; i + L <= len; i += L): single full vectors */
static void vector_loop(qg_kb *b, const qg_plan *p, qg_kvar *i, qg_kv *base, qg_kv *len, qg_kv *L) {
    B->loop_open(b, "vectors", i, QG_KTEST_WHOLE_STEPS, len, L);
    const qg_kvector v = {.at = B->bin(b, QG_KB_ADD, base, B->get(b, i)), .count = L, .slot = -1};
    qg_lower_vector(b, p, &v, NULL);
    B->loop_close(b);
}

/* NAME_<op>_span_vectors: whole vectors one at a time, out of line, for
 * the main loop's NaN path. */
static void span_vectors(qg_kb *b, const qg_plan *p) {
    B->open_span(b, p, "_vectors", true);
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    vector_loop(b, p, i, B->span_arg(b, QG_KSPAN_BASE), B->span_arg(b, QG_KSPAN_LEN), B->lanes(b));
    B->close_fn(b, NULL);
}

/* The main loop's `unroll` vectors from base + i. */
static void main_loop(qg_kb *b, const qg_plan *p, qg_kvar *i, qg_kv *base, qg_kv *len, qg_kv *L) {
    const qg_kernel_loops *lp = b->lp;
    const int U = lp->unroll;
    const bool store4 = lp->group_store, nan_once = p->out_ordered >= 0;
    const bool mask4_in = lp->group_mask && lp->mask_in != QG_MASK_NONE;
    const bool mask4_out = lp->group_mask && lp->mask_out != QG_MASK_NONE;
    qg_kv *step = B->let(b, "step", B->bin(b, QG_KB_MUL, L, size(b, U)));
    B->loop_open(b, "unrolled", i, QG_KTEST_WHOLE_STEPS, len, step);
    qg_kv *at0 = B->bin(b, QG_KB_ADD, base, B->get(b, i)), *bits = mask4_in ? B->group_mask_in(b, at0) : NULL;
    qg_kv *r[4], *m[4], *nan[4], *at[4];
    for (int k = 0; k < U && k < 4; k++) {
        at[k] = k ? B->bin(b, QG_KB_ADD, at0, B->bin(b, QG_KB_MUL, L, size(b, k))) : at0;
        const qg_kvector v = {.at = at[k], .count = L, .slot = k};
        const qg_kvector_keep keep = {.result = store4 || nan_once ? &r[k] : NULL,
                                      .mask_out = lp->group_mask ? &m[k] : NULL,
                                      .nan = nan_once ? &nan[k] : NULL,
                                      .bits = bits};
        qg_lower_vector(b, p, &v, &keep);
    }
    if (nan_once) { /* a NaN lane: the four again one by one, with the masks NaN lanes need */
        B->if_open(b, B->any_nan4(b, nan));
        qg_kv *args[5 + QG_IN_COUNT];
        B->call(b, B->span_ref(b, "_vectors"), NULL, NULL, args, span_args(b, p, at0, step, args));
        B->loop_continue(b);
        B->if_close(b);
        for (int k = 0; k < U && !store4; k++) {
            B->vector_open(b, p, &(qg_kvector){.at = at[k], .count = L, .slot = k});
            B->store(b, r[k]);
            B->vector_close(b);
        }
    }
    if (store4)
        B->group_store(b, r, at0);
    if (mask4_out)
        B->group_mask_out(b, m, at0);
    B->loop_close(b);
}

/* The partial vector of the len - i lanes left, if any. */
static void part_vector(qg_kb *b, const qg_plan *p, qg_kvar *i, qg_kv *base, qg_kv *len) {
    qg_kv *at = B->get(b, i);
    B->if_open(b, B->bin(b, QG_KB_LT, at, len));
    const qg_kvector v = {.at = B->bin(b, QG_KB_ADD, base, at),
                          .count = B->let(b, "r", B->bin(b, QG_KB_SUB, len, at)),
                          .partial = true,
                          .slot = -1};
    qg_lower_vector(b, p, &v, NULL);
    B->if_close(b);
}

/* NAME_<op>_span<suffix>: the loops; with suffix "_part" the partial
 * vector alone (the channels-last rows' last column on fixed widths). */
static void span_loops(qg_kb *b, const qg_plan *p, const char *suffix) {
    const bool part = !strcmp(suffix, "_part");
    B->open_span(b, p, suffix, false);
    qg_kv *base = B->span_arg(b, QG_KSPAN_BASE), *len = B->span_arg(b, QG_KSPAN_LEN), *L = B->lanes(b);
    qg_kvar *i = B->var(b, "i", QG_KT_SIZE, size(b, 0));
    if (b->lp->unroll > 1 && !part)
        main_loop(b, p, i, base, len, L);
    if (!part)
        vector_loop(b, p, i, base, len, L);
    if (b->lp->tail)
        part_vector(b, p, i, base, len);
    B->close_fn(b, NULL);
}

/* kernel_loops' align_head: a partial vector up to the float tensor's next
 * vector boundary, then the rest from there. */
static void align_head(qg_kb *b, const qg_plan *p) {
    const qg_kernel_loops *lp = b->lp;
    B->open_span(b, p, "", false);
    qg_kv *base = B->span_arg(b, QG_KSPAN_BASE), *len = B->span_arg(b, QG_KSPAN_LEN);
    qg_kv *ptr = B->span_arg(b, lp->align_out ? QG_KSPAN_OUT : QG_KSPAN_IN);
    qg_kv *head = B->let(b, "head", B->to_boundary(b, ptr, base, lp->align_out, lp->align_bytes));
    qg_kvar *from = B->var(b, "from", QG_KT_SIZE, base), *left = B->var(b, "left", QG_KT_SIZE, len);
    qg_kv *run = B->span_ref(b, "_run"), *args[5 + QG_IN_COUNT];
    B->if_open(b, B->bin(b, QG_KB_AND, B->bin(b, QG_KB_NE, head, size(b, 0)),
                         B->bin(b, QG_KB_GE, len, size(b, lp->align_min))));
    B->call(b, run, NULL, NULL, args, span_args(b, p, base, head, args));
    B->set(b, from, B->bin(b, QG_KB_ADD, base, head));
    B->set(b, left, B->bin(b, QG_KB_SUB, len, head));
    B->if_close(b);
    B->call(b, run, NULL, NULL, args, span_args(b, p, B->get(b, from), B->get(b, left), args));
    B->close_fn(b, NULL);
}

void qg_lower_span(qg_kb *b, const qg_plan *p) {
    if (b->lp->lanes > 1 && b->lp->tail && qg_lower_has_rows(b->lp))
        span_loops(b, p, "_part");
    if (p->out_ordered >= 0 && b->lp->unroll > 1)
        span_vectors(b, p);
    span_loops(b, p, b->lp->align_head ? "_run" : "");
    if (b->lp->align_head)
        align_head(b, p);
}
