/* JIT cache entries on arbitrary bytes: a hit only for an entry whose
 * header, key, size and checksum all hold; an entry the cache stored loads
 * back to its payload. */
#include <stdint.h>

#include "fuzz_util.h"
#include "jit/object_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char key[QG_CACHE_KEY_HEX];
    qg_cache_key("fuzz", 4, key);
    char name[64];
    snprintf(name, sizeof name, "%s.qgobj", key);
    fuzz_file(name, data, size);
    char *obj = NULL;
    size_t n = 0;
    (void)qg_cache_load(fuzz_dir(), key, &obj, &n);
    free(obj);
    /* the input as a payload (the JIT never stores an empty object) */
    if (size == 0)
        return 0;
    qg_error err;
    FUZZ_ASSERT(qg_cache_store(fuzz_dir(), key, data, size, &err) == QG_OK);
    obj = NULL;
    FUZZ_ASSERT(qg_cache_load(fuzz_dir(), key, &obj, &n) == QG_CACHE_HIT);
    FUZZ_ASSERT(n == size && memcmp(obj, data, size) == 0);
    free(obj);
    return 0;
}
