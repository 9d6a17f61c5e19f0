/* qint4 and quint4: quantize and dequantize on byte kernels, packed two
 * per byte around them (include/qgen/spec.h gives the layout). The
 * generated 4-bit entry points call these with their spec's kernels built
 * for one byte per element, clamped to the 4-bit range; per tensor the
 * tensor goes through a stack buffer in chunks, other layouts (whose
 * parameters depend on the element's position) through one scratch copy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"

enum { CHUNK = 4096 }; /* even: chunks start on whole bytes */

static bool position_free(const qg_spec *sp) {
    return !qg_qscheme_is_per_channel(sp->qscheme) && !qg_qscheme_is_per_group(sp->qscheme);
}

static void pack(uint8_t *q, const uint8_t *bytes, size_t n) {
    for (size_t k = 0; k + 1 < n; k += 2)
        q[k / 2] = (uint8_t)((bytes[k] & 0xFu) | (unsigned)(bytes[k + 1] << 4));
    if (n % 2)
        q[n / 2] = bytes[n - 1] & 0xFu;
}

static void unpack(uint8_t *bytes, const uint8_t *q, size_t n, bool is_signed) {
    for (size_t k = 0; k < n; k++) {
        const unsigned v = (q[k / 2] >> (4 * (k % 2))) & 0xFu;
        bytes[k] = (uint8_t)(is_signed && v >= 8 ? v + 0xF0u : v); /* sign-extended as int8_t */
    }
}

void qg_pack4_quantize(const qg_spec *sp, qg_quantize_fn bytes, const float *x, void *q, size_t n,
                       const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && bytes && qp && ((x && q) || n == 0));
    if (position_free(sp)) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += CHUNK) {
            const size_t len = n - at < CHUNK ? n - at : CHUNK;
            bytes(x + at, buf, len, qp);
            pack((uint8_t *)q + at / 2, buf, len);
        }
        return;
    }
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        qg_ref_quantize(sp, x, q, n, qp); /* out of memory: the reference, unpacked nowhere */
        return;
    }
    bytes(x, buf, n, qp);
    pack(q, buf, n);
    free(buf);
}

void qg_pack4_dequantize(const qg_spec *sp, qg_dequantize_fn bytes, const void *q, float *y, size_t n,
                         const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && bytes && qp && ((y && q) || n == 0));
    const bool is_signed = !qg_dtype_is_unsigned(sp->dtype);
    if (position_free(sp)) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += CHUNK) {
            const size_t len = n - at < CHUNK ? n - at : CHUNK;
            unpack(buf, (const uint8_t *)q + at / 2, len, is_signed);
            bytes(buf, y + at, len, qp);
        }
        return;
    }
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        qg_ref_dequantize(sp, q, y, n, qp);
        return;
    }
    unpack(buf, q, n, is_signed);
    bytes(buf, y, n, qp);
    free(buf);
}
