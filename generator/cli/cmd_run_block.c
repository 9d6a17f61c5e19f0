/* qgen run for ggml's block formats: each row of the last axis becomes
 * its blocks' bytes, exactly as ggml lays them out, and back
 * (docs/semantics.md, "Block formats"). The block files are 2-D uint8
 * .npy arrays of shape (rows, bytes per row). */
#include <stdlib.h>
#include <string.h>

#include "qgen/blocks.h"
#include "cmd_run.h"

/* The row length of a float tensor (its last dimension), refused unless
 * whole blocks fill it. */
static int row_length(const char *what, const qg_spec *sp, const qg_npy *x, size_t *len) {
    const size_t elems = qg_block_elems(sp->block);
    *len = x->ndim ? x->shape[x->ndim - 1] : 1;
    if (*len % elems)
        return qg_cli_failf("%s: rows of %zu elements (the last dimension); expected a multiple of %s's block of %zu",
                            what, *len, qg_block_format_name(sp->block), elems);
    return QG_EXIT_OK;
}

/* x's rows through the reference: their blocks into q, and, when y is
 * given, q decoded into y (fake_quant). */
static int quantize_rows(const qg_spec *sp, const float *x, size_t rows, size_t len, uint8_t *q, float *y) {
    const size_t row_bytes = qg_block_row_bytes(sp->block, len);
    qg_error err;
    for (size_t r = 0; r < rows; r++)
        if (qg_block_quantize_ref(sp->block, x + r * len, len, q + r * row_bytes, &err) ||
            (y && qg_block_dequantize_ref(sp->block, q + r * row_bytes, len, y + r * len, &err)))
            return qg_cli_failf("row %zu: %s", r, err.message);
    return QG_EXIT_OK;
}

static int block_quantize(const run_args *a, const qg_spec *sp, qg_npy *x, bool fake) {
    size_t len;
    char why[64];
    snprintf(why, sizeof why, "%s input, the spec's float_type", qg_float_type_name(sp->float_type));
    int rc = run_expect_dtype(a->in, x, run_float_npy(sp), why);
    if (rc || (rc = run_widen_input(sp, x)) || (rc = row_length(a->in, sp, x, &len)))
        return rc;
    const size_t rows = len ? x->count / len : 0, row_bytes = qg_block_row_bytes(sp->block, len);
    uint8_t *q = malloc(rows * row_bytes + 1);
    float *y = fake ? malloc(x->count * sizeof(float) + 1) : NULL;
    if (!q || (fake && !y))
        rc = qg_cli_failf("out of memory");
    else if (!(rc = quantize_rows(sp, x->data, rows, len, q, y)))
        rc = fake ? run_write_float(a->out, sp, x, y)
                  : run_stage(a->out, QG_NPY_U8, (const size_t[]){rows, row_bytes}, 2, q);
    free(q);
    free(y);
    return rc;
}

/* The float tensor's shape: --shape, or (rows, the elements a row's bytes
 * hold); it must hold exactly q's rows of q's row bytes. */
static int float_shape(const run_args *a, const qg_spec *sp, const qg_npy *q, qg_npy *shape) {
    const size_t rows = q->shape[0], row_bytes = q->shape[1], bytes = qg_block_bytes(sp->block);
    memset(shape, 0, sizeof *shape);
    shape->ndim = 2;
    shape->shape[0] = rows;
    shape->shape[1] = row_bytes / bytes * qg_block_elems(sp->block);
    int rc = a->shape ? run_parse_shape(a->shape, shape) : QG_EXIT_OK;
    if (rc)
        return rc;
    if (!a->shape)
        shape->count = shape->shape[0] * shape->shape[1];
    size_t len;
    if ((rc = row_length("--shape", sp, shape, &len)))
        return rc;
    const size_t count = shape->count;
    if (qg_block_row_bytes(sp->block, len) != row_bytes || (len ? count / len : 0) != rows)
        return qg_cli_failf("--shape %s: rows of %zu elements, %zu of them; expected %zu rows of %zu bytes as %s holds",
                            a->shape ? a->shape : "(default)", len, len ? count / len : 0, rows, row_bytes, a->in);
    return QG_EXIT_OK;
}

static int block_dequantize(const run_args *a, const qg_spec *sp, const qg_npy *q) {
    int rc = run_expect_dtype(a->in, q, QG_NPY_U8, "block bytes, one row of blocks per row");
    if (rc)
        return rc;
    if (q->ndim != 2 || q->shape[1] % qg_block_bytes(sp->block))
        return qg_cli_failf("%s: %d dimensions, %zu bytes per row; expected (rows, bytes per row) with whole blocks "
                            "of %zu bytes (%s)",
                            a->in, q->ndim, q->ndim == 2 ? q->shape[1] : 0, qg_block_bytes(sp->block),
                            qg_block_format_name(sp->block));
    qg_npy shape;
    if ((rc = float_shape(a, sp, q, &shape)))
        return rc;
    float *y = malloc(shape.count * sizeof(float) + 1);
    if (!y)
        return qg_cli_failf("out of memory");
    const size_t len = shape.ndim ? shape.shape[shape.ndim - 1] : 1;
    qg_error err;
    for (size_t r = 0; len && r < q->shape[0] && !rc; r++)
        if (qg_block_dequantize_ref(sp->block, (const uint8_t *)q->data + r * q->shape[1], len, y + r * len, &err))
            rc = qg_cli_fail(&err);
    if (!rc)
        rc = run_write_float(a->out, sp, &shape, y);
    free(y);
    return rc;
}

int run_block_op(const run_args *a, const qg_spec *sp, qg_npy *x) {
    const char *op = a->op, *name = qg_block_format_name(sp->block);
    if (a->scale || a->zero_point || a->state)
        return qg_cli_failf("%s: given with block %s; expected none (a block format computes each block's scale "
                            "from the block)",
                            a->scale        ? "--scale"
                            : a->zero_point ? "--zero-point"
                                            : "--state",
                            name);
    if (a->mask)
        return qg_cli_failf("--mask: given with block %s; the block formats' gradient mask is not built yet", name);
    if (a->shape && strcmp(op, "dequantize") != 0)
        return qg_cli_failf("--shape: given with --op %s; expected it with --op dequantize", op);
    if (strcmp(op, "quantize") == 0 || strcmp(op, "fake_quant") == 0)
        return block_quantize(a, sp, x, op[0] == 'f');
    if (strcmp(op, "dequantize") == 0)
        return block_dequantize(a, sp, x);
    return qg_cli_failf("--op: got \"%s\" with block %s; expected quantize, dequantize or fake_quant", op, name);
}
