/* qint4 and quint4: quantize and dequantize on byte kernels, packed two
 * per byte around them (include/qgen/spec.h gives the layout). The
 * generated 4-bit entry points call these with their spec's kernels built
 * for one byte per element, clamped to the 4-bit range. The tensor goes
 * through a stack buffer in chunks (per channel and per group, whole
 * periods of its parameters); a period longer than the buffer goes
 * through one scratch copy.
 * The float tensors hold the spec's float_type (16-bit codes are converted
 * inside the byte kernels). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"
#include "rt_internal.h"

enum { CHUNK = 4096 }; /* even: chunks start on whole bytes */

/* Sixteen elements at a time in GCC/clang vector types (one SIMD register
 * where the target has one, word operations where not): a 16-bit lane
 * holds elements 2k (low byte) and 2k + 1, so big-endian hosts take the
 * element loops. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
enum { VECTORS = 1 };
#else
enum { VECTORS = 0 };
#endif
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint8_t u8x8 __attribute__((vector_size(8)));
typedef uint8_t u8x16 __attribute__((vector_size(16)));

static void pack(uint8_t *q, const uint8_t *bytes, size_t n) {
    size_t k = 0;
    for (; VECTORS && k + 16 <= n; k += 16) {
        u16x8 v;
        memcpy(&v, bytes + k, 16);
        const u8x8 packed = __builtin_convertvector((v & 0x0F) | (v >> 4 & 0xF0), u8x8);
        memcpy(q + k / 2, &packed, 8);
    }
    for (; k + 1 < n; k += 2)
        q[k / 2] = (uint8_t)((bytes[k] & 0xFu) | (unsigned)(bytes[k + 1] << 4));
    if (n % 2)
        q[n / 2] = bytes[n - 1] & 0xFu;
}

static void unpack(uint8_t *bytes, const uint8_t *q, size_t n, bool is_signed) {
    size_t k = 0;
    for (; VECTORS && k + 16 <= n; k += 16) {
        u8x8 eight;
        memcpy(&eight, q + k / 2, 8);
        const u16x8 w = __builtin_convertvector(eight, u16x8);
        u8x16 v = (u8x16)((w & 0x0F) | (w << 4 & 0x0F00)); /* one nibble per byte */
        /* signed: 0..15 read as int8_t -8..7 */
        if (is_signed)
            v = (v ^ 8) - 8;
        memcpy(bytes + k, &v, 16);
    }
    for (; k < n; k++) {
        const unsigned v = (q[k / 2] >> (4 * (k % 2))) & 0xFu;
        bytes[k] = (uint8_t)(is_signed && v >= 8 ? v + 0xF0u : v); /* sign-extended as int8_t */
    }
}

/* The elements a chunk through the stack buffer takes: whole periods of
 * the layout's parameters (qg_param_period), an even count of them so that
 * chunks start on whole bytes. 0 when that does not fit the buffer: then
 * one scratch copy. */
static size_t chunk_len(const qg_spec *sp, const qg_qparams *qp, size_t *period, size_t *params_per_period) {
    *period = qg_param_period(sp, qp, params_per_period);
    const size_t unit = *period % 2 ? 2 * *period : *period;
    return unit && unit <= CHUNK ? CHUNK / unit * unit : 0;
}

void qg_pack4_quantize(const qg_spec *sp, qg_quantize_link_fn bytes, const void *x, void *q, size_t n,
                       const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && bytes && qp && ((x && q) || n == 0));
    const size_t esize = qg_float_type_size(sp->float_type);
    size_t period, per_period, step = chunk_len(sp, qp, &period, &per_period);
    if (step) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += step) {
            const size_t len = n - at < step ? n - at : step;
            const qg_qparams p = qg_qparams_at(qp, per_period * (at / period));
            bytes((const char *)x + at * esize, buf, len, &p);
            pack((uint8_t *)q + at / 2, buf, len);
        }
        return;
    }
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) { /* out of memory: the reference, unpacked nowhere */
        if (sp->float_type == QG_FLOAT32)
            qg_ref_quantize(sp, x, q, n, qp);
        else
            qg_ftype_quantize(sp, NULL, x, q, n, qp);
        return;
    }
    bytes(x, buf, n, qp);
    pack(q, buf, n);
    free(buf);
}

void qg_pack4_dequantize(const qg_spec *sp, qg_dequantize_link_fn bytes, const void *q, void *y, size_t n,
                         const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && bytes && qp && ((y && q) || n == 0));
    const bool is_signed = !qg_dtype_is_unsigned(sp->dtype);
    const size_t esize = qg_float_type_size(sp->float_type);
    size_t period, per_period, step = chunk_len(sp, qp, &period, &per_period);
    if (step) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += step) {
            const size_t len = n - at < step ? n - at : step;
            const qg_qparams p = qg_qparams_at(qp, per_period * (at / period));
            unpack(buf, (const uint8_t *)q + at / 2, len, is_signed);
            bytes(buf, (char *)y + at * esize, len, &p);
        }
        return;
    }
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        if (sp->float_type == QG_FLOAT32)
            qg_ref_dequantize(sp, q, y, n, qp);
        else
            qg_ftype_dequantize(sp, NULL, q, y, n, qp);
        return;
    }
    unpack(buf, q, n, is_signed);
    bytes(buf, y, n, qp);
    free(buf);
}
