/* The .npy reader on arbitrary bytes. An array it accepts has as many
 * elements as its shape says, and writes back to a file that reads back
 * to the same array. */
#include <stdint.h>

#include "fuzz_util.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("in.npy", data, size);
    qg_npy a, b;
    qg_error err;
    if (qg_npy_read(path, &a, &err) != QG_OK) {
        FUZZ_ASSERT(err.message[0] && !strchr(err.message, '\n'));
        return 0;
    }
    size_t count = 1;
    for (int i = 0; i < a.ndim; i++)
        count *= a.shape[i];
    FUZZ_ASSERT(count == a.count);
    char out[512];
    snprintf(out, sizeof out, "%s/out.npy", fuzz_dir());
    FUZZ_ASSERT(qg_npy_write(out, a.dtype, a.shape, a.ndim, a.data, &err) == QG_OK);
    FUZZ_ASSERT(qg_npy_read(out, &b, &err) == QG_OK);
    FUZZ_ASSERT(b.count == a.count && b.dtype == a.dtype &&
                memcmp(a.data, b.data, a.count * qg_npy_dtype_size(a.dtype)) == 0);
    free(a.data);
    free(b.data);
    return 0;
}
