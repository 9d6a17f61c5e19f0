/* qgen run's files: q files by dtype, and outputs staged in temporary
 * files and renamed into place together once the command has succeeded,
 * so a failure leaves no output. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"

qg_npy_dtype run_npy_of(qg_dtype d) {
    switch (d) {
    case QG_QINT8: return QG_NPY_I8;
    case QG_QUINT8:
    case QG_QINT4: /* packed bytes */
    case QG_QUINT4:
    case QG_FP8_E4M3FN: /* the bits */
    case QG_FP8_E5M2: return QG_NPY_U8;
    case QG_QINT16: return QG_NPY_I16;
    case QG_QUINT16: return QG_NPY_U16;
    case QG_QINT32:
    default: return QG_NPY_I32;
    }
}

qg_npy_dtype run_float_npy(const qg_spec *sp) {
    return sp->float_type == QG_FLOAT16 ? QG_NPY_F16 : sp->float_type == QG_BFLOAT16 ? QG_NPY_U16 : QG_NPY_F32;
}

int run_widen_input(const qg_spec *sp, qg_npy *x) {
    if (sp->float_type == QG_FLOAT32)
        return QG_EXIT_OK;
    float *f = malloc(x->count * sizeof(float) + 1);
    if (!f)
        return qg_cli_failf("out of memory");
    qg_float_type_widen(sp->float_type, x->data, f, x->count);
    free(x->data);
    x->data = f;
    x->dtype = QG_NPY_F32;
    return QG_EXIT_OK;
}

int run_write_float(const char *path, const qg_spec *sp, const qg_npy *shape_of, const float *data) {
    if (sp->float_type == QG_FLOAT32)
        return run_write_out(path, QG_NPY_F32, shape_of, data);
    uint16_t *h = malloc(shape_of->count * sizeof(uint16_t) + 1);
    if (!h)
        return qg_cli_failf("out of memory");
    qg_float_type_narrow(sp->float_type, data, h, shape_of->count);
    const int rc = run_write_out(path, run_float_npy(sp), shape_of, h);
    free(h);
    return rc;
}

int run_expect_dtype(const char *path, const qg_npy *a, qg_npy_dtype want, const char *why) {
    if (a->dtype == want)
        return QG_EXIT_OK;
    return qg_cli_failf("%s: dtype %s; expected %s (%s)", path, qg_npy_dtype_name(a->dtype), qg_npy_dtype_name(want),
                        why);
}

/* Outputs go to temporary files first and are renamed into place together
 * once the whole command has succeeded: a failure leaves no output. */
static struct {
    char *tmp[2];
    const char *path[2];
    int n;
} staged;

int run_stage(const char *path, qg_npy_dtype d, const size_t *shape, int ndim, const void *data) {
    qg_error err;
    char *tmp;
    if (staged.n == 2 || qg_npy_write_temp(path, d, shape, ndim, data, &tmp, &err))
        return staged.n == 2 ? qg_cli_failf("too many outputs") : qg_cli_fail(&err);
    staged.tmp[staged.n] = tmp;
    staged.path[staged.n++] = path;
    return QG_EXIT_OK;
}

int run_write_out(const char *path, qg_npy_dtype d, const qg_npy *shape_of, const void *data) {
    return run_stage(path, d, shape_of->shape, shape_of->ndim, data);
}

/* A q output: 4-bit dtypes as their packed bytes, one dimension. */
int run_write_q(const char *path, const qg_spec *sp, const qg_npy *shape_of, const void *q) {
    if (!qg_dtype_is_packed(sp->dtype))
        return run_write_out(path, run_npy_of(sp->dtype), shape_of, q);
    const size_t bytes = qg_q_bytes(sp->dtype, shape_of->count);
    return run_stage(path, QG_NPY_U8, &bytes, 1, q);
}

/* A packed 4-bit input takes the tensor's shape from --shape, or two
 * elements per byte; the data stay packed. */
int run_parse_shape(const char *arg, qg_npy *shape) {
    int32_t v[QG_NPY_MAX_DIMS + 1];
    size_t nd = 0;
    int rc = qg_cli_ints("--shape", arg, v, QG_NPY_MAX_DIMS + 1, &nd);
    if (rc)
        return rc;
    if (nd < 1 || nd > QG_NPY_MAX_DIMS)
        return qg_cli_failf("--shape: got %zu dimensions; expected 1 to %d", nd, QG_NPY_MAX_DIMS);
    shape->ndim = (int)nd;
    shape->count = 1;
    for (size_t d = 0; d < nd; d++) {
        if (v[d] < 0)
            return qg_cli_failf("--shape: got %d for dimension %zu; expected a size >= 0", (int)v[d], d);
        shape->shape[d] = (size_t)v[d];
        shape->count *= shape->shape[d];
    }
    return QG_EXIT_OK;
}

int run_unpacked_shape(const run_args *a, qg_npy *x) {
    const size_t bytes = x->count;
    qg_npy shape = {.ndim = 1, .shape = {2 * bytes}, .count = 2 * bytes};
    int rc = a->shape ? run_parse_shape(a->shape, &shape) : QG_EXIT_OK;
    if (rc)
        return rc;
    if ((shape.count + 1) / 2 != bytes)
        return qg_cli_failf("--shape: %s holds %zu elements; expected %zu or %zu for the %zu packed bytes of %s",
                            a->shape ? a->shape : "(default)", shape.count, bytes ? 2 * bytes - 1 : 0, 2 * bytes, bytes,
                            a->in);
    x->ndim = shape.ndim;
    memcpy(x->shape, shape.shape, sizeof x->shape);
    x->count = shape.count;
    return QG_EXIT_OK;
}

int run_write_mask(const char *path, const qg_spec *sp, size_t n, const uint8_t *mask, const qg_npy *x) {
    if (!sp->compat_mask)
        return run_write_out(path, QG_NPY_U8, x, mask);
    size_t bytes = qg_mask_bytes(sp, n);
    return run_stage(path, QG_NPY_U8, &bytes, 1, mask);
}

/* Renames every staged output into place (rc == 0), or removes them all. */
int run_finish_outputs(int rc) {
    qg_error err;
    for (int i = 0; i < staged.n; i++) {
        if (rc == QG_EXIT_OK && qg_npy_commit(staged.tmp[i], staged.path[i], &err))
            rc = qg_cli_fail(&err);
        else if (rc != QG_EXIT_OK)
            unlink(staged.tmp[i]);
        free(staged.tmp[i]);
    }
    staged.n = 0;
    return rc;
}
