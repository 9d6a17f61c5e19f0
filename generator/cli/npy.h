/* Reading and writing NumPy .npy files (format 1.0-3.0, little-endian, C
 * order): float32, int8, uint8, int16, int32, uint16. */
#ifndef QGEN_NPY_H
#define QGEN_NPY_H

#include <stddef.h>

#include "qgen/status.h"

typedef enum qg_npy_dtype {
    QG_NPY_F32,
    QG_NPY_I8,
    QG_NPY_U8,
    QG_NPY_I16,
    QG_NPY_I32,
    QG_NPY_U16,
    QG_NPY_F16
} qg_npy_dtype;

#define QG_NPY_MAX_DIMS 8

typedef struct qg_npy {
    qg_npy_dtype dtype;
    int ndim;
    size_t shape[QG_NPY_MAX_DIMS];
    size_t count; /* product of shape */
    void *data;   /* count elements; free() it */
} qg_npy;

const char *qg_npy_dtype_name(qg_npy_dtype d); /* "float32", ... */
size_t qg_npy_dtype_size(qg_npy_dtype d);

qg_status qg_npy_read(const char *path, qg_npy *out, qg_error *err);
/* Writes atomically: a temporary file renamed over `path`. A `path` that
 * exists and is not a regular file (a device, a directory) is refused. */
qg_status qg_npy_write(const char *path, qg_npy_dtype dtype, const size_t *shape, int ndim, const void *data,
                       qg_error *err);

/* The two halves of qg_npy_write, for commands with several outputs that
 * must appear together or not at all: the data goes to a temporary file
 * beside `path` (*tmp, to free()), which qg_npy_commit renames into place
 * (or removes, on failure). */
qg_status qg_npy_write_temp(const char *path, qg_npy_dtype dtype, const size_t *shape, int ndim, const void *data,
                            char **tmp, qg_error *err);
qg_status qg_npy_commit(const char *tmp, const char *path, qg_error *err);

#endif
