/* .npy files: a magic string, a version, a Python-dict header describing
 * dtype, order and shape, then the raw little-endian elements. */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *descr, *name;
    size_t size;
} kinds[] = {
    {"<f4", "float32", 4}, {"|i1", "int8", 1}, {"|u1", "uint8", 1}, {"<i2", "int16", 2}, {"<i4", "int32", 4},
};

const char *qg_npy_dtype_name(qg_npy_dtype d) { return kinds[d].name; }
size_t qg_npy_dtype_size(qg_npy_dtype d) { return kinds[d].size; }

static qg_status bad(qg_error *err, const char *path, const char *what) {
    return qg_error_set(err, QG_ERR_FORMAT, "%s: %s", path, what);
}

/* Finds 'key': in the header dict and returns the text after the colon. */
static const char *dict_value(const char *hdr, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p)
        return NULL;
    p = strchr(p + strlen(pat), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

qg_status qg_npy_read(const char *path, qg_npy *out, qg_error *err) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return qg_error_set(err, QG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[12];
    qg_status st = QG_OK;
    char *hdr = NULL;
    size_t pre_len = 10, hlen;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = bad(err, path, "not a .npy file (missing \\x93NUMPY magic); expected a file written by numpy.save");
        goto out;
    }
    if (pre[6] == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            st = bad(err, path, "truncated header");
            goto out;
        }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        pre_len = 12;
    } else {
        st = bad(err, path, "unsupported .npy format version; expected 1.0, 2.0 or 3.0");
        goto out;
    }
    (void)pre_len;
    if (hlen > (1u << 20) || !(hdr = malloc(hlen + 1)) || fread(hdr, 1, hlen, f) != hlen) {
        st = bad(err, path, "truncated or oversized header");
        goto out;
    }
    hdr[hlen] = 0;
    const char *descr = dict_value(hdr, "descr"), *order = dict_value(hdr, "fortran_order"),
               *shape = dict_value(hdr, "shape");
    if (!descr || !order || !shape) {
        st = bad(err, path, "header lacks descr, fortran_order or shape");
        goto out;
    }
    int kind = -1;
    for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
        if (strncmp(descr + 1, kinds[k].descr, 3) == 0 && descr[4] == descr[0])
            kind = k;
    if (kind < 0) {
        char d[16] = "";
        sscanf(descr, "'%15[^']'", d);
        st = qg_error_set(err, QG_ERR_FORMAT,
                          "%s: dtype '%s'; expected float32 (<f4), int8 (|i1), uint8 (|u1), int16 (<i2) or int32 (<i4)",
                          path, d);
        goto out;
    }
    if (strncmp(order, "False", 5) != 0) {
        st = bad(err, path, "fortran_order is True; expected a C-ordered array (numpy.ascontiguousarray)");
        goto out;
    }
    if (*shape != '(') {
        st = bad(err, path, "malformed shape in header");
        goto out;
    }
    out->dtype = (qg_npy_dtype)kind;
    out->count = 1;
    const char *p = shape + 1;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno || out->ndim == QG_NPY_MAX_DIMS) {
            st = bad(err, path, "malformed shape in header");
            goto out;
        }
        out->shape[out->ndim++] = (size_t)v;
        if (v && out->count > ((size_t)1 << 40) / v) {
            st = bad(err, path, "shape too large");
            goto out;
        }
        out->count *= (size_t)v;
        p = end;
    }
    size_t bytes = out->count * kinds[kind].size;
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data) {
        st = qg_error_set(err, QG_ERR_NOMEM, "%s: out of memory for %zu bytes", path, bytes);
        goto out;
    }
    size_t got = fread(out->data, 1, bytes, f);
    if (got != bytes) {
        st = qg_error_set(err, QG_ERR_FORMAT, "%s: truncated data: %zu of %zu bytes for shape with %zu %s elements",
                          path, got, bytes, out->count, kinds[kind].name);
        goto out;
    }
    if (fgetc(f) != EOF)
        st = qg_error_set(err, QG_ERR_FORMAT, "%s: trailing bytes after %zu elements; expected the file to end", path,
                          out->count);
out:
    fclose(f);
    free(hdr);
    if (st) {
        free(out->data);
        out->data = NULL;
    }
    return st;
}

qg_status qg_npy_write(const char *path, qg_npy_dtype dtype, const size_t *shape, int ndim, const void *data,
                       qg_error *err) {
    char dict[256], shp[160] = "";
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        char d[32];
        snprintf(d, sizeof d, "%zu%s", shape[i], ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
        strncat(shp, d, sizeof shp - strlen(shp) - 1);
        count *= shape[i];
    }
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", kinds[dtype].descr,
                     shp);
    /* Pad so the data starts on a 64-byte boundary, newline-terminated. */
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return qg_error_set(err, QG_ERR_NOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        qg_status st = qg_error_set(err, QG_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    FILE *f = fdopen(fd, "wb");
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    int ok = f && fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
    for (size_t i = 0; ok && i < pad; i++)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    ok = ok && fwrite(data, kinds[dtype].size, count, f) == count;
    ok = ok && fflush(f) == 0 && fsync(fd) == 0;
    if (f)
        ok = (fclose(f) == 0) && ok;
    else
        close(fd);
    if (!ok || rename(tmp, path) != 0) {
        qg_status st = qg_error_set(err, QG_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return QG_OK;
}
