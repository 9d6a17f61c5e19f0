/* Observer state files.
 *
 * Layout (little-endian): magic "QGOBSRV\0", u32 format version, u32
 * observer type, u32 dtype, u32 qscheme, i64 quant_min, i64 quant_max,
 * u64 channels, u32 bins, u32 flags, u64 batches, f32 min[channels],
 * f32 max[channels], then (version 2) the training step's f32
 * scale[channels], i32 zero_point[channels] and f32
 * zero_point_float[channels], then f32 hist[bins], then the XXH64 of all of
 * the above. flags (version 2): bit 0 observer off, bit 1 fake quant off;
 * version 1 files (0 there, no training qparams) still load.
 * Saving writes a temporary file in the same directory, fsyncs it and
 * renames it over the target, so readers see the old or the new file whole.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "observer_internal.h"
#include "arg_check.h"

#define STATE_MAGIC "QGOBSRV"
#define STATE_VERSION 2u
#define FLAG_OBSERVER_OFF 1u
#define FLAG_FAKE_QUANT_OFF 2u

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

static int put(buf *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static int put_u32(buf *b, uint32_t v) {
    unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24)};
    return put(b, le, 4);
}

static int put_u64(buf *b, uint64_t v) { return put_u32(b, (uint32_t)v) || put_u32(b, (uint32_t)(v >> 32)); }

static int put_f32(buf *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return put_u32(b, u);
}

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const unsigned char *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }
static float get_f32(const unsigned char *p) {
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static size_t hist_bins(const qg_observer *o) { return o->hist ? (size_t)o->spec.observer.bins : 0; }

static uint32_t flags_of(const qg_observer *o) {
    return (o->observe_on ? 0u : FLAG_OBSERVER_OFF) | (o->fake_quant_on ? 0u : FLAG_FAKE_QUANT_OFF);
}

static int serialize(const qg_observer *o, buf *b) {
    int bad = put(b, STATE_MAGIC, 8) || put_u32(b, STATE_VERSION) || put_u32(b, (uint32_t)o->spec.observer.type) ||
              put_u32(b, (uint32_t)o->spec.dtype) || put_u32(b, (uint32_t)o->spec.qscheme) ||
              put_u64(b, (uint64_t)o->spec.quant_min) || put_u64(b, (uint64_t)o->spec.quant_max) ||
              put_u64(b, o->channels) || put_u32(b, (uint32_t)hist_bins(o)) || put_u32(b, flags_of(o)) ||
              put_u64(b, o->batches);
    for (size_t c = 0; c < o->channels && !bad; c++)
        bad = put_f32(b, o->min[c]);
    for (size_t c = 0; c < o->channels && !bad; c++)
        bad = put_f32(b, o->max[c]);
    for (size_t c = 0; c < o->channels && !bad; c++)
        bad = put_f32(b, o->train_scale[c]);
    for (size_t c = 0; c < o->channels && !bad; c++)
        bad = put_u32(b, (uint32_t)o->train_zp[c]);
    for (size_t c = 0; c < o->channels && !bad; c++)
        bad = put_f32(b, o->train_zpf[c]);
    for (size_t i = 0; i < hist_bins(o) && !bad; i++)
        bad = put_f32(b, o->hist[i]);
    if (!bad)
        bad = put_u64(b, XXH64(b->p, b->len, 0));
    return bad;
}

static qg_status write_all(int fd, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return QG_ERR_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return QG_OK;
}

qg_status qg_observer_save(const qg_observer *o, const char *path, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(path, err, "a file name");
#if defined(__wasm__) /* no temporary file, fsync or rename to keep the old one whole (docs/wasm.md) */
    (void)serialize;
    (void)write_all;
    return qg_error_set(err, QG_ERR_IO, "state file %s: not written by a WebAssembly build of the runtime", path);
#else
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) /* renaming over it would replace a device or directory */
        return qg_error_set(err, QG_ERR_IO, "state file %s: exists and is not a regular file; expected a file path",
                            path);
    buf b = {0};
    if (serialize(o, &b)) {
        free(b.p);
        return qg_error_set(err, QG_ERR_NOMEM, "state file %s: out of memory", path);
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    char *dir = strdup(path);
    if (!tmp || !dir) {
        free(b.p);
        free(tmp);
        free(dir);
        return qg_error_set(err, QG_ERR_NOMEM, "state file %s: out of memory", path);
    }
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    qg_status st = QG_OK;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = qg_error_set(err, QG_ERR_IO, "state file %s: cannot create a temporary file beside it: %s", path,
                          strerror(errno));
        goto out;
    }
    if (write_all(fd, b.p, b.len) || fsync(fd)) {
        st = qg_error_set(err, QG_ERR_IO, "state file %s: write failed: %s; the previous file is kept", path,
                          strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) || rename(tmp, path)) {
        st = qg_error_set(err, QG_ERR_IO, "state file %s: cannot replace it: %s; the previous file is kept", path,
                          strerror(errno));
        unlink(tmp);
        goto out;
    }
    /* Make the rename itself durable. */
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
out:
    free(b.p);
    free(tmp);
    free(dir);
    return st;
#endif
}

/* The whole of a regular file into b. */
static qg_status read_whole(const char *path, buf *b, qg_error *err) {
    struct stat sb; /* a FIFO or device would block or never end */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return qg_error_set(err, QG_ERR_IO, "state file %s: not a regular file; expected a state from qgen observe",
                            path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return qg_error_set(err, QG_ERR_IO, "state file %s: cannot open: %s", path, strerror(errno));
    unsigned char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (put(b, chunk, got)) {
            fclose(f);
            return qg_error_set(err, QG_ERR_NOMEM, "state file %s: out of memory", path);
        }
    const int rerr = ferror(f);
    fclose(f);
    return rerr ? qg_error_set(err, QG_ERR_IO, "state file %s: read failed", path) : QG_OK;
}

enum { STATE_HEADER = 8 + 4 * 4 + 8 * 3 + 4 * 2 + 8 };

/* The file's header: magic, version, flags, sizes, checksum, and the
 * observer it was written for, which must be this one. */
static qg_status check_header(const qg_observer *o, const char *path, const buf *b, uint32_t *version, uint32_t *flags,
                              qg_error *err) {
    const size_t header = STATE_HEADER;
    if (b->len < 8 || memcmp(b->p, STATE_MAGIC, 8) != 0)
        return qg_error_set(err, QG_ERR_FORMAT,
                            "state file %s: not a qgen observer state (bad magic); expected a file "
                            "written by qgen observe --state",
                            path);
    if (b->len < header + 8)
        return qg_error_set(err, QG_ERR_FORMAT, "state file %s: truncated (%zu bytes); expected at least %zu", path,
                            b->len, header + 8);
    *version = get_u32(b->p + 8);
    if (*version != 1 && *version != STATE_VERSION)
        return qg_error_set(err, QG_ERR_FORMAT, "state file %s: format version %u; expected 1 or %u", path, *version,
                            STATE_VERSION);
    uint64_t channels = get_u64(b->p + 8 + 16 + 16);
    uint32_t bins = get_u32(b->p + 8 + 16 + 24);
    *flags = get_u32(b->p + 8 + 16 + 28);
    const size_t per_channel = *version == 1 ? 8 : 20;
    if (*flags & ~(*version == 1 ? 0u : FLAG_OBSERVER_OFF | FLAG_FAKE_QUANT_OFF))
        return qg_error_set(err, QG_ERR_FORMAT, "state file %s: unknown flags 0x%x; the file is corrupt", path, *flags);
    if (channels > (1u << 30) || bins > (1u << 20) ||
        b->len != header + per_channel * (size_t)channels + 4 * (size_t)bins + 8)
        return qg_error_set(err, QG_ERR_FORMAT,
                            "state file %s: size %zu does not match its header; the file is "
                            "truncated or corrupt",
                            path, b->len);
    if (XXH64(b->p, b->len - 8, 0) != get_u64(b->p + b->len - 8))
        return qg_error_set(err, QG_ERR_FORMAT, "state file %s: checksum mismatch; the file is corrupt", path);
    uint32_t type = get_u32(b->p + 12), dtype = get_u32(b->p + 16), qscheme = get_u32(b->p + 20);
    int64_t qmin = (int64_t)get_u64(b->p + 24), qmax = (int64_t)get_u64(b->p + 32);
    if (type != (uint32_t)o->spec.observer.type || dtype != (uint32_t)o->spec.dtype ||
        qscheme != (uint32_t)o->spec.qscheme || qmin != o->spec.quant_min || qmax != o->spec.quant_max ||
        channels != o->channels || bins != hist_bins(o)) {
        const char *tn = qg_observer_type_name((qg_observer_type)type), *dn = qg_dtype_name((qg_dtype)dtype);
        return qg_error_set(err, QG_ERR_FORMAT,
                            "state file %s: written for observer %s, dtype %s, range %lld..%lld, %llu channels; "
                            "expected observer %s, dtype %s, range %lld..%lld, %zu channels (spec \"%s\")",
                            path, tn ? tn : "?", dn ? dn : "?", (long long)qmin, (long long)qmax,
                            (unsigned long long)channels, qg_observer_type_name(o->spec.observer.type),
                            qg_dtype_name(o->spec.dtype), (long long)o->spec.quant_min, (long long)o->spec.quant_max,
                            o->channels, o->spec.name);
    }
    return QG_OK;
}

/* The state after a checked header (version 1 files carry no training
 * state: torch's initial buffers). */
static void restore(qg_observer *o, const buf *b, uint32_t version, uint32_t flags) {
    const size_t channels = o->channels, bins = hist_bins(o);
    const unsigned char *p = b->p + STATE_HEADER;
    o->batches = get_u64(b->p + STATE_HEADER - 8);
    for (size_t c = 0; c < channels; c++, p += 4)
        o->min[c] = get_f32(p);
    for (size_t c = 0; c < channels; c++, p += 4)
        o->max[c] = get_f32(p);
    for (size_t c = 0; version > 1 && c < channels; c++, p += 4)
        o->train_scale[c] = get_f32(p);
    for (size_t c = 0; version > 1 && c < channels; c++, p += 4)
        o->train_zp[c] = (int32_t)get_u32(p);
    for (size_t c = 0; version > 1 && c < channels; c++, p += 4)
        o->train_zpf[c] = get_f32(p);
    for (size_t c = 0; version == 1 && c < channels; c++) { /* torch's initial buffers */
        o->train_scale[c] = 1.0f;
        o->train_zp[c] = 0;
        o->train_zpf[c] = 0.0f;
    }
    qg_observer_enable(o, !(flags & FLAG_OBSERVER_OFF), !(flags & FLAG_FAKE_QUANT_OFF));
    for (size_t i = 0; i < bins; i++, p += 4)
        o->hist[i] = get_f32(p);
}

qg_status qg_observer_load(qg_observer *o, const char *path, qg_error *err) {
    QG_NEED_AS(o, "obs", err, "an observer from qg_observer_create");
    QG_NEED(path, err, "a file name");
    buf b = {0};
    uint32_t version = 0, flags = 0;
    qg_status st = read_whole(path, &b, err);
    if (!st && !(st = check_header(o, path, &b, &version, &flags, err)))
        restore(o, &b, version, flags);
    free(b.p);
    return st;
}
