/* The channels-last rows (kernel_loops' channels_last_table, inner == 1),
 * lowered once: whole rows of C channels, then the last partial row; a
 * row's columns a vector at a time with their parameters from the
 * channel table, then one partial column. Whole rows of a constant C that
 * kernel_loops writes out have their columns one after another (no
 * column loop, no partial column to test for). Out of line, so that qgen
 * compare's loop search reads this walk alone (docs/compare.md). */
#include "kernel_builder.h"

#define B (b->ops)

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }

/* The m channels of the row from element `row` (whole_row: m is C). */
static void row_columns(qg_kb *b, const qg_plan *p, qg_kv *const rows[QG_IN_COUNT], qg_kv *row, qg_kv *m,
                        bool whole_row) {
    const qg_kernel_loops *lp = b->lp;
    const long long L = lp->lanes, C = (long long)lp->channels;
    if (whole_row && lp->row_written_out) {
        for (long long k = 0; k < C; k += L)
            B->column(b, p, rows, row, size(b, k), size(b, k + L <= C ? L : C - k), k + L > C);
        return;
    }
    qg_kv *lanes = B->lanes(b);
    qg_kvar *j = B->var(b, "j", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "columns", j, QG_KTEST_WHOLE_STEPS, m, lanes);
    B->column(b, p, rows, row, B->get(b, j), lanes, false);
    B->loop_close(b);
    if (!lp->tail || (whole_row && C && L && C % L == 0))
        return;
    B->if_open(b, B->bin(b, QG_KB_LT, B->get(b, j), m));
    B->column(b, p, rows, row, B->get(b, j), B->bin(b, QG_KB_SUB, m, B->get(b, j)), true);
    B->if_close(b);
}

bool qg_lower_has_rows(const qg_kernel_loops *lp) {
    return lp->channels_last_table && lp->params != QG_PARAMS_NONE && lp->walk != QG_WALK_WHOLE;
}

void qg_lower_rows(qg_kb *b, const qg_plan *p) {
    qg_kv *a[5], *rows[QG_IN_COUNT] = {0};
    B->open_rows(b, p, a, rows);
    qg_kv *n = a[3], *C = a[4];
    qg_kvar *row = B->var(b, "row", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "rows", row, QG_KTEST_WHOLE_STEPS, n, C);
    row_columns(b, p, rows, B->get(b, row), C, true);
    B->loop_close(b);
    B->if_open(b, B->bin(b, QG_KB_LT, B->get(b, row), n));
    row_columns(b, p, rows, B->get(b, row), B->let(b, "m", B->bin(b, QG_KB_SUB, n, B->get(b, row))), false);
    B->if_close(b);
    B->close_fn(b, NULL);
}
