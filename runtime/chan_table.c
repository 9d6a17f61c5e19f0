/* The channels-last parameter table both backends' kernels read
 * (docs/c-backend.md, docs/llvm-backend.md): every channel's parameters
 * derived once per call, in the one way the kernels' splats derive them
 * for a run (docs/semantics.md, "Element arithmetic"). */
#include <stdlib.h>

#include "rt_internal.h"

static void fill(float *table, size_t padded, const qg_qparams *qp, size_t channels, int64_t qmin, int64_t qmax) {
    int32_t *z = (int32_t *)(table + QG_CHAN_Z * padded);
    for (size_t c = 0; c < padded; c++) {
        const bool real = c < channels; /* the padding: scale 1, bounds and z 0 */
        const float s = real ? qp->scale[c] : 1.0f;
        const int32_t z0 = real ? qp->zero_point[c] : 0;
        table[QG_CHAN_S * padded + c] = s;
        table[QG_CHAN_INV * padded + c] = 1.0f / s;
        table[QG_CHAN_LO * padded + c] = real ? (float)(qmin - (int64_t)z0) : 0.0f;
        table[QG_CHAN_HI * padded + c] = real ? (float)(qmax - (int64_t)z0) : 0.0f;
        z[c] = z0;
    }
}

float *qg_chan_table_new(const qg_qparams *qp, size_t channels, size_t padded, int64_t qmin, int64_t qmax) {
    /* NULL: the kernel walks the channels one element per run instead */
    if (!qp || !qp->scale || !qp->zero_point || channels > padded || padded == 0 ||
        padded > SIZE_MAX / (QG_CHAN_Z * sizeof(float) + sizeof(int32_t)))
        return NULL;
    float *table = malloc(padded * (QG_CHAN_Z * sizeof(float) + sizeof(int32_t)));
    if (table)
        fill(table, padded, qp, channels, qmin, qmax);
    return table;
}

void qg_chan_table_free(float *table) { free(table); }
