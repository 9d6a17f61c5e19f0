/* .npy files: a magic string, a version, a Python-dict header describing
 * dtype, order and shape, then the raw little-endian elements. */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *descr, *name;
    size_t size;
} kinds[] = {
    {"<f4", "float32", 4}, {"|i1", "int8", 1},   {"|u1", "uint8", 1},   {"<i2", "int16", 2},
    {"<i4", "int32", 4},   {"<u2", "uint16", 2}, {"<f2", "float16", 2},
};

const char *qg_npy_dtype_name(qg_npy_dtype d) { return kinds[d].name; }
size_t qg_npy_dtype_size(qg_npy_dtype d) { return kinds[d].size; }

static qg_status bad(qg_error *err, const char *path, const char *what) {
    return qg_error_set(err, QG_ERR_FORMAT, "%s: %s", path, what);
}

/* The header is a Python dict literal, as numpy.save writes it and
 * numpy.load accepts it: exactly the keys descr (a string), fortran_order
 * (True or False) and shape (a tuple of non-negative integers), in any
 * order, then spaces and a newline. Parsed strictly: whatever numpy would
 * refuse is refused here with the key, the value and what was expected. */
typedef struct hdr_parse {
    const char *p, *path;
    qg_error *err;
    int kind;
    int order; /* -1 not seen, 0 False, 1 True */
    bool has_shape;
    qg_npy *out;
} hdr_parse;

static void skip_space(hdr_parse *h) {
    while (*h->p == ' ' || *h->p == '\t')
        h->p++;
}

/* A quoted string of at most cap-1 characters. */
static bool quoted(hdr_parse *h, char *buf, size_t cap) {
    const char q = *h->p;
    if (q != '\'' && q != '"')
        return false;
    const char *end = strchr(h->p + 1, q);
    if (!end || (size_t)(end - h->p - 1) >= cap)
        return false;
    memcpy(buf, h->p + 1, (size_t)(end - h->p - 1));
    buf[end - h->p - 1] = 0;
    h->p = end + 1;
    return true;
}

/* The value as written, for messages: up to the next ',' or '}', at most 40 characters. */
static void value_text(const char *p, char *buf, size_t cap) {
    size_t n = strcspn(p, ",}\n");
    snprintf(buf, cap, "%.*s", (int)(n < 40 ? n : 40), p);
}

static qg_status header_error(hdr_parse *h, const char *key, const char *expected) {
    char got[48];
    value_text(h->p, got, sizeof got);
    return qg_error_set(h->err, QG_ERR_FORMAT, "%s: header %s: got \"%s\"; expected %s", h->path, key, got, expected);
}

static qg_status parse_shape(hdr_parse *h) {
    qg_npy *out = h->out;
    const char *start = h->p;
    if (*h->p != '(')
        return header_error(h, "shape", "a tuple of non-negative integers, e.g. (3, 4) or (5,)");
    h->p++;
    out->count = 1;
    for (;;) {
        skip_space(h);
        if (*h->p == ')')
            break;
        if (*h->p < '0' || *h->p > '9' || out->ndim == QG_NPY_MAX_DIMS) {
            h->p = start;
            return header_error(h, "shape", "at most 8 non-negative integers, e.g. (3, 4) or (5,)");
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(h->p, &end, 10);
        if (errno || v > (1ull << 62)) {
            h->p = start;
            return header_error(h, "shape", "dimensions below 2^62");
        }
        h->p = end;
        out->shape[out->ndim++] = (size_t)v;
        /* 2^40 elements: far beyond any array this tool handles */
        if (out->count && v > ((size_t)1 << 40) / out->count)
            out->count = ((size_t)1 << 40) + 1;
        else
            out->count *= (size_t)v;
        skip_space(h);
        if (*h->p == ',')
            h->p++;
        else if (*h->p != ')' || out->ndim == 1) {
            h->p = start; /* "(5)" is an int, not a tuple, for Python */
            return header_error(h, "shape", "a tuple: (n,) for one dimension, (m, n) for two");
        }
    }
    h->p++;
    if (out->count > ((size_t)1 << 40))
        return qg_error_set(h->err, QG_ERR_FORMAT,
                            "%s: header shape: more than 2^40 elements; expected a smaller array", h->path);
    h->has_shape = true;
    return QG_OK;
}

static qg_status parse_entry(hdr_parse *h) {
    char key[32], descr[16];
    if (!quoted(h, key, sizeof key))
        return header_error(h, "key", "'descr', 'fortran_order' or 'shape'");
    skip_space(h);
    if (*h->p++ != ':')
        return qg_error_set(h->err, QG_ERR_FORMAT, "%s: header: ':' missing after '%s'", h->path, key);
    skip_space(h);
    if (strcmp(key, "descr") == 0 && h->kind < 0) {
        const char *at = h->p;
        if (quoted(h, descr, sizeof descr))
            for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
                if (strcmp(descr, kinds[k].descr) == 0)
                    h->kind = k;
        if (h->kind < 0) {
            h->p = at;
            return header_error(h, "descr",
                                "'<f4' (float32), '<f2' (float16), '|i1' (int8), '|u1' (uint8), '<i2' (int16), "
                                "'<u2' (uint16) or '<i4' (int32)");
        }
        return QG_OK;
    }
    if (strcmp(key, "fortran_order") == 0 && h->order < 0) {
        if (strncmp(h->p, "False", 5) == 0 || strncmp(h->p, "True", 4) == 0) {
            h->order = h->p[0] == 'T';
            h->p += h->order ? 4 : 5;
            if (!h->order)
                return QG_OK;
            h->p -= 4;
            return header_error(h, "fortran_order", "False (a C-ordered array: numpy.ascontiguousarray)");
        }
        return header_error(h, "fortran_order", "False");
    }
    if (strcmp(key, "shape") == 0 && !h->has_shape)
        return parse_shape(h);
    return qg_error_set(h->err, QG_ERR_FORMAT,
                        "%s: header: key '%s' unknown or repeated; expected descr, "
                        "fortran_order and shape once each",
                        h->path, key);
}

static qg_status parse_header(const char *hdr, const char *path, qg_npy *out, qg_error *err) {
    hdr_parse h = {hdr, path, err, -1, -1, false, out};
    skip_space(&h);
    if (*h.p++ != '{')
        return qg_error_set(err, QG_ERR_FORMAT, "%s: header is not a dict; expected {'descr': ..., ...}", path);
    for (;;) {
        skip_space(&h);
        if (*h.p == '}')
            break;
        qg_status st = parse_entry(&h);
        if (st)
            return st;
        skip_space(&h);
        if (*h.p == ',')
            h.p++;
        else if (*h.p != '}')
            return header_error(&h, "dict", "',' or '}' after a value");
    }
    h.p++;
    while (*h.p == ' ' || *h.p == '\t' || *h.p == '\n' || *h.p == '\r')
        h.p++;
    if (*h.p)
        return header_error(&h, "end", "only spaces and a newline after the dict");
    if (h.kind < 0 || h.order < 0 || !h.has_shape)
        return qg_error_set(err, QG_ERR_FORMAT, "%s: header lacks %s; expected descr, fortran_order and shape", path,
                            h.kind < 0    ? "descr"
                            : h.order < 0 ? "fortran_order"
                                          : "shape");
    out->dtype = (qg_npy_dtype)h.kind;
    return QG_OK;
}

qg_status qg_npy_read(const char *path, qg_npy *out, qg_error *err) {
    memset(out, 0, sizeof *out);
    struct stat sb; /* a directory, FIFO or device is no .npy file (and may never end) */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return qg_error_set(err, QG_ERR_IO, "%s: not a regular file; expected a .npy file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return qg_error_set(err, QG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return qg_error_set(err, QG_ERR_IO, "%s: not a regular file; expected a .npy file", path);
    }
    unsigned char pre[12];
    qg_status st = QG_OK;
    char *hdr = NULL;
    size_t pre_len = 10, hlen;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = bad(err, path, "not a .npy file (missing \\x93NUMPY magic); expected a file written by numpy.save");
        goto out;
    }
    if (pre[6] == 1 && pre[7] == 0) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
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
    if (hlen > (1u << 20) || !(hdr = malloc(hlen + 1)) || fread(hdr, 1, hlen, f) != hlen) {
        st = bad(err, path, "truncated or oversized header");
        goto out;
    }
    hdr[hlen] = 0;
    if (strlen(hdr) != hlen) {
        st = bad(err, path, "header holds a NUL byte; expected text");
        goto out;
    }
    if ((st = parse_header(hdr, path, out, err)))
        goto out;
    const size_t size = kinds[out->dtype].size, bytes = out->count * size;
    /* the data must be there before it is allocated */
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size - pre_len - hlen < bytes) {
        st = qg_error_set(err, QG_ERR_FORMAT, "%s: truncated data: %llu bytes for %zu %s elements; expected %zu bytes",
                          path, (unsigned long long)((uint64_t)sb.st_size - pre_len - hlen), out->count,
                          kinds[out->dtype].name, bytes);
        goto out;
    }
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data) {
        st = qg_error_set(err, QG_ERR_NOMEM, "%s: out of memory for %zu bytes", path, bytes);
        goto out;
    }
    size_t got = fread(out->data, 1, bytes, f);
    if (got != bytes) {
        st = qg_error_set(err, QG_ERR_FORMAT, "%s: truncated data: %zu of %zu bytes for shape with %zu %s elements",
                          path, got, bytes, out->count, kinds[out->dtype].name);
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

/* An existing output path must be a regular file: renaming over a device
 * node or a directory would replace it. */
static qg_status check_output_path(const char *path, qg_error *err) {
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return qg_error_set(err, QG_ERR_IO, "%s: exists and is not a regular file; expected a path for a .npy file",
                            path);
    return QG_OK;
}

qg_status qg_npy_write_temp(const char *path, qg_npy_dtype dtype, const size_t *shape, int ndim, const void *data,
                            char **tmp_out, qg_error *err) {
    *tmp_out = NULL;
    qg_status st = check_output_path(path, err);
    if (st)
        return st;
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
        st = qg_error_set(err, QG_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
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
    if (!ok) {
        st = qg_error_set(err, QG_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return QG_OK;
}

qg_status qg_npy_commit(const char *tmp, const char *path, qg_error *err) {
    qg_status st = check_output_path(path, err);
    if (!st && rename(tmp, path) != 0)
        st = qg_error_set(err, QG_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (st)
        unlink(tmp);
    return st;
}

qg_status qg_npy_write(const char *path, qg_npy_dtype dtype, const size_t *shape, int ndim, const void *data,
                       qg_error *err) {
    char *tmp;
    qg_status st = qg_npy_write_temp(path, dtype, shape, ndim, data, &tmp, err);
    if (!st)
        st = qg_npy_commit(tmp, path, err);
    free(tmp);
    return st;
}
