/* Entry layout: "QGENOBJ1", the key (32 hex chars), the payload size and the
 * payload's XXH64 (both u64 little-endian), then the payload. */
#define _POSIX_C_SOURCE 200809L
#include "object_cache.h"

#include "../util/fs_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const char magic[8] = {'Q', 'G', 'E', 'N', 'O', 'B', 'J', '1'};
enum { HEADER = 8 + 32 + 8 + 8 };

qg_status qg_cache_default_dir(char *out, size_t cap, qg_error *err) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(out, cap, "%s/qgen", xdg);
    else if (home && home[0])
        snprintf(out, cap, "%s/.cache/qgen", home);
    else
        return qg_error_set(err, QG_ERR_INVALID,
                            "jit cache: neither XDG_CACHE_HOME nor HOME is set; expected one, or a cache_dir, or "
                            "no_disk_cache");
    return QG_OK;
}

qg_status qg_cache_prepare_dir(const char *dir, qg_error *err) {
    if (qg_mkdir_p(dir, 0700) != 0)
        return qg_error_set(err, QG_ERR_IO, "jit cache: cannot create %s: %s", dir, strerror(errno));
    return QG_OK;
}

void qg_cache_key(const void *material, size_t n, char hex[QG_CACHE_KEY_HEX]) {
    XXH128_hash_t h = XXH3_128bits(material, n);
    snprintf(hex, QG_CACHE_KEY_HEX, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int k = 0; k < 8; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

static void entry_path(char *out, size_t cap, const char *dir, const char *key) {
    snprintf(out, cap, "%s/%s.qgobj", dir, key);
}

qg_cache_result qg_cache_load(const char *dir, const char *key, char **data, size_t *size) {
    char path[4200];
    entry_path(path, sizeof path, dir, key);
    FILE *f = fopen(path, "rb");
    if (!f)
        return QG_CACHE_MISS;
    unsigned char h[HEADER];
    qg_cache_result r = QG_CACHE_CORRUPT;
    char *buf = NULL;
    if (fread(h, 1, HEADER, f) == HEADER && memcmp(h, magic, 8) == 0 && memcmp(h + 8, key, 32) == 0) {
        const uint64_t n = get_u64(h + 40), sum = get_u64(h + 48);
        if (n > 0 && n < ((uint64_t)1 << 31) && (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == n &&
            fgetc(f) == EOF && XXH64(buf, (size_t)n, 0) == sum) {
            *data = buf;
            *size = (size_t)n;
            buf = NULL;
            r = QG_CACHE_HIT;
        }
    }
    free(buf);
    fclose(f);
    return r;
}

qg_status qg_cache_store(const char *dir, const char *key, const void *data, size_t size, qg_error *err) {
    char path[4200], tmp[4300];
    entry_path(path, sizeof path, dir, key);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.XXXXXX", dir, key);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return qg_error_set(err, QG_ERR_IO, "jit cache: cannot write into %s: %s", dir, strerror(errno));
    unsigned char h[HEADER];
    memcpy(h, magic, 8);
    memcpy(h + 8, key, 32);
    put_u64(h + 40, size);
    put_u64(h + 48, XXH64(data, size, 0));
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(h, 1, HEADER, f) == HEADER && fwrite(data, 1, size, f) == size;
    ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return qg_error_set(err, QG_ERR_IO, "jit cache: cannot install %s: %s", path, strerror(e));
    }
    return QG_OK;
}
