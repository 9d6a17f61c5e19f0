/* The channels-last parameter table both backends' kernels read
 * (docs/c-backend.md, docs/llvm-backend.md): every channel's parameters
 * derived once per call, in the one way the kernels' splats derive them
 * for a run (docs/semantics.md, "Element arithmetic"). */
#include "arg_check.h"
#include "rt_internal.h"

void qg_chan_table_fill(float *table, size_t padded, const qg_qparams *qp, size_t channels, int64_t qmin,
                        int64_t qmax) {
    QG_NEED_OR_RETURN(table && qp && qp->scale && qp->zero_point && channels <= padded);
    int32_t *z = (int32_t *)(table + 4 * padded);
    for (size_t c = 0; c < padded; c++) {
        const bool real = c < channels; /* the padding: scale 1, bounds and z 0 */
        const float s = real ? qp->scale[c] : 1.0f;
        const int32_t z0 = real ? qp->zero_point[c] : 0;
        table[c] = s;
        table[padded + c] = 1.0f / s;
        table[2 * padded + c] = real ? (float)(qmin - (int64_t)z0) : 0.0f;
        table[3 * padded + c] = real ? (float)(qmax - (int64_t)z0) : 0.0f;
        z[c] = z0;
    }
}
