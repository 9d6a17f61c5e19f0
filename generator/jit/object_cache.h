/* The JIT's on-disk object cache: one file per key, installed by writing a
 * temporary file and renaming it (readers never see a partial entry, and
 * processes racing on one key each install a whole, equal entry), checked
 * against a checksum when read. */
#ifndef QGEN_OBJECT_CACHE_H
#define QGEN_OBJECT_CACHE_H

#include <stddef.h>

#include "qgen/status.h"

#define QG_CACHE_KEY_HEX 33 /* 128-bit key as hex, with the NUL */

/* The default directory: $XDG_CACHE_HOME/qgen, else $HOME/.cache/qgen. */
qg_status qg_cache_default_dir(char *out, size_t cap, qg_error *err);

/* Creates dir (and missing parents) with mode 0700. */
qg_status qg_cache_prepare_dir(const char *dir, qg_error *err);

/* The key of `n` bytes of key material, as hex. */
void qg_cache_key(const void *material, size_t n, char hex[QG_CACHE_KEY_HEX]);

typedef enum qg_cache_result { QG_CACHE_HIT, QG_CACHE_MISS, QG_CACHE_CORRUPT } qg_cache_result;

/* Reads the entry of `key`; on a hit *data (malloc'ed) and *size hold the
 * object. An entry whose header, size, key or checksum is wrong is
 * reported as corrupt. */
qg_cache_result qg_cache_load(const char *dir, const char *key, char **data, size_t *size);

/* Installs the entry of `key` atomically. */
qg_status qg_cache_store(const char *dir, const char *key, const void *data, size_t size, qg_error *err);

#endif
