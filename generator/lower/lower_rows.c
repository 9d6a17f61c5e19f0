/* The channels-last rows (kernel_loops' channels_last_table, inner == 1),
 * lowered once: whole rows of C channels, then the last partial row; a
 * row's columns a vector at a time with their parameters from the
 * channel table, then one partial column. Whole rows of a constant C that
 * kernel_loops writes out have their columns one after another (no
 * column loop, no partial column to test for). Out of line, so that qgen
 * compare's loop search reads this walk alone (docs/compare.md). */
#include "kernel_builder.h"
#include "qgen/runtime.h"

#define B (b->ops)

static qg_kv *size(qg_kb *b, long long v) { return B->imm(b, QG_KT_SIZE, v); }

/* Channels j.. of the row from element `row`, `count` of them: a whole
 * vector, or (partial) fewer: on fixed widths the lowered span_part with
 * whole vectors of parameters (the table is padded), on scalable ISAs one
 * strip that reads only its lanes' parameters. */
static void column(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *const rows[QG_IN_COUNT], qg_kv *row, qg_kv *j,
                   qg_kv *count, bool partial) {
    qg_kv *strip = partial && b->lp->lanes == 0 ? count : NULL;
    B->column_open(b, p, strip);
    qg_kv *args[5 + QG_IN_COUNT], *params[QG_IN_COUNT] = {0}, *at = B->bin(b, QG_KB_ADD, row, j);
    for (int in = QG_IN_S; in < QG_IN_COUNT; in++)
        if (p->uses[in])
            params[in] = B->column_param(b, p, (qg_plan_input)in, rows[in], j, strip);
    if (partial && !strip) {
        B->call(b, B->span_ref(b, "_part"), NULL, NULL, args, qg_lower_span_args(b, p, io, at, count, params, args));
    } else {
        const qg_kvector v = {.at = at, .count = count, .partial = partial, .slot = -1, .strip_open = strip != NULL};
        qg_lower_vector(b, p, &v, NULL);
    }
    B->column_close(b);
}

/* The m channels of the row from element `row` (whole_row: m is C). */
static void row_columns(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *const rows[QG_IN_COUNT], qg_kv *row,
                        qg_kv *m, bool whole_row) {
    const qg_kernel_loops *lp = b->lp;
    const long long L = lp->lanes, C = (long long)lp->channels;
    if (whole_row && lp->row_written_out) {
        for (long long k = 0; k < C; k += L)
            column(b, p, io, rows, row, size(b, k), size(b, k + L <= C ? L : C - k), k + L > C);
        return;
    }
    qg_kv *lanes = B->lanes(b);
    qg_kvar *j = B->var(b, "j", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "columns", j, QG_KTEST_WHOLE_STEPS, m, lanes);
    column(b, p, io, rows, row, B->get(b, j), lanes, false);
    B->loop_close(b);
    if (!lp->tail || (whole_row && C && L && C % L == 0))
        return;
    B->if_open(b, B->bin(b, QG_KB_LT, B->get(b, j), m));
    column(b, p, io, rows, row, B->get(b, j), B->bin(b, QG_KB_SUB, m, B->get(b, j)), true);
    B->if_close(b);
}

bool qg_lower_has_rows(const qg_kernel_loops *lp) {
    return lp->channels_last_table && lp->params != QG_PARAMS_NONE && lp->walk != QG_WALK_WHOLE;
}

/* The plan input each row of the runtime's table holds (qgen/runtime.h). */
static const qg_plan_input table_rows[QG_CHAN_ROWS] = {[QG_CHAN_S] = QG_IN_S,
                                                       [QG_CHAN_INV] = QG_IN_INV,
                                                       [QG_CHAN_LO] = QG_IN_LO,
                                                       [QG_CHAN_HI] = QG_IN_HI,
                                                       [QG_CHAN_Z] = QG_IN_Z};

/* The table, padded to whole vectors where a partial column reads a whole
 * one (fixed widths), its rows, the table freed. Without memory the walk
 * goes on below, one element per run. */
void qg_lower_channels_last(qg_kb *b, const qg_plan *p, qg_kv *const io[3], qg_kv *n, qg_kv *qp, qg_kv *C) {
    const long long L = b->lp->lanes;
    qg_kv *padded = C;
    if (L > 1)
        padded = B->let(b, "padded",
                        B->bin(b, QG_KB_MUL, B->bin(b, QG_KB_DIV, B->bin(b, QG_KB_ADD, C, size(b, L - 1)), size(b, L)),
                               size(b, L)));
    qg_kv *args[5] = {qp, C, padded, B->imm(b, QG_KT_I64, b->lp->qmin), B->imm(b, QG_KT_I64, b->lp->qmax)};
    const qg_kt ptr = QG_KT_PTR;
    qg_kv *tbl = B->let(b, "tbl", B->call(b, NULL, "qg_chan_table_new", &ptr, args, 5));
    B->if_open(b, B->nonnull(b, tbl));
    qg_kv *rows_args[5 + QG_IN_COUNT] = {io[0], io[1]};
    int na = 2;
    if (qg_kernel_loops_masked(b->lp))
        rows_args[na++] = io[2];
    rows_args[na++] = n;
    for (int r = 0; r < QG_CHAN_ROWS; r++) {
        if (!p->uses[table_rows[r]])
            continue;
        qg_kv *at = r == 0 ? size(b, 0) : r == 1 ? padded : B->bin(b, QG_KB_MUL, size(b, r), padded);
        rows_args[na++] = B->elem_ptr(b, table_rows[r] == QG_IN_Z ? QG_KT_I32 : QG_KT_F32, tbl, at);
    }
    if (!b->lp->channels)
        rows_args[na++] = C;
    B->call(b, B->rows_ref(b), NULL, NULL, rows_args, na);
    B->call(b, NULL, "qg_chan_table_free", NULL, &tbl, 1);
    B->ret(b);
    B->if_close(b);
    B->comment(b, "out of memory for the parameter table: one element per run");
}

void qg_lower_rows(qg_kb *b, const qg_plan *p) {
    qg_kv *a[5], *rows[QG_IN_COUNT] = {0};
    B->open_rows(b, p, a, rows);
    qg_kv *n = a[3], *C = a[4];
    qg_kvar *row = B->var(b, "row", QG_KT_SIZE, size(b, 0));
    B->loop_open(b, "rows", row, QG_KTEST_WHOLE_STEPS, n, C);
    row_columns(b, p, a, rows, B->get(b, row), C, true);
    B->loop_close(b);
    B->if_open(b, B->bin(b, QG_KB_LT, B->get(b, row), n));
    row_columns(b, p, a, rows, B->get(b, row), B->let(b, "m", B->bin(b, QG_KB_SUB, n, B->get(b, row))), false);
    B->if_close(b);
    B->close_fn(b, NULL);
}
