/* qgen compare's cache of the runtime's objects. Every compare run builds
 * the runtime for each architecture it runs (30-odd files, about 10 s of
 * clang per architecture here), the same objects as the last run's unless
 * a source, a header, the compiler or the flags changed. They are kept
 * beside the JIT's objects ($XDG_CACHE_HOME/qgen or ~/.cache/qgen, the
 * JIT's key-value store, qg_cache_*), under "compare-runtime", one entry
 * per object, keyed by all of those; a run that finds no cache directory
 * builds as before. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../jit/object_cache.h"
#include "compare_internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *tail) {
    const size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The names and contents of dir's .c and .h files, in name order. */
static void hash_dir(XXH3_state_t *s, const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;)
        if (ends_with(e->d_name, ".c") || ends_with(e->d_name, ".h"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    for (size_t k = 0; k < n; k++) {
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        XXH3_128bits_update(s, names[k], strlen(names[k]) + 1);
        FILE *f = fopen(path, "rb");
        char buf[1 << 14];
        for (size_t got; f && (got = fread(buf, 1, sizeof buf, f)) > 0;)
            XXH3_128bits_update(s, buf, got);
        if (f)
            fclose(f);
        free(names[k]);
    }
}

bool qg_cmp_rt_cache_open(ctx *c, const arch_t *a, const char *const dirs[], int ndirs, const char *flags,
                          qg_cmp_rt_cache *out) {
    qg_error err;
    memset(out, 0, sizeof *out);
    if (qg_cache_default_dir(out->dir, sizeof out->dir, &err) != QG_OK)
        return false;
    strncat(out->dir, "/compare-runtime", sizeof out->dir - strlen(out->dir) - 1);
    if (qg_cache_prepare_dir(out->dir, &err) != QG_OK)
        return false;
    XXH3_state_t *s = XXH3_createState();
    if (!s)
        return false;
    XXH3_128bits_reset(s);
    struct stat st; /* the compiler: its path and the file's identity */
    const bool seen = stat(c->clang, &st) == 0;
    const long long id[2] = {seen ? (long long)st.st_size : -1, seen ? (long long)st.st_mtime : -1};
    XXH3_128bits_update(s, c->clang, strlen(c->clang) + 1);
    XXH3_128bits_update(s, id, sizeof id);
    XXH3_128bits_update(s, a->triple, strlen(a->triple) + 1);
    XXH3_128bits_update(s, flags, strlen(flags) + 1);
    for (int k = 0; k < ndirs; k++)
        hash_dir(s, dirs[k]);
    const XXH128_hash_t h = XXH3_128bits_digest(s);
    XXH3_freeState(s);
    memcpy(out->digest, &h, sizeof out->digest);
    out->usable = true;
    return true;
}

static void key_of(const qg_cmp_rt_cache *rc, const char *name, char key[QG_CACHE_KEY_HEX]) {
    char material[16 + 128];
    memcpy(material, rc->digest, 16);
    snprintf(material + 16, sizeof material - 16, "%s", name);
    qg_cache_key(material, 16 + strlen(material + 16), key);
}

bool qg_cmp_rt_cache_fetch(const qg_cmp_rt_cache *rc, const char *name, const char *path) {
    char key[QG_CACHE_KEY_HEX], *data = NULL;
    size_t size = 0;
    if (!rc->usable)
        return false;
    key_of(rc, name, key);
    if (qg_cache_load(rc->dir, key, &data, &size) != QG_CACHE_HIT)
        return false;
    const bool ok = qg_cmp_write_file(path, data, size);
    free(data);
    return ok;
}

void qg_cmp_rt_cache_keep(const qg_cmp_rt_cache *rc, const char *name, const char *path) {
    if (!rc->usable)
        return;
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char *data = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)size)) &&
        fread(data, 1, (size_t)size, f) == (size_t)size) {
        char key[QG_CACHE_KEY_HEX];
        qg_error err;
        key_of(rc, name, key);
        (void)qg_cache_store(rc->dir, key, data, (size_t)size, &err); /* a failed store only costs the next run */
    }
    free(data);
    fclose(f);
}
