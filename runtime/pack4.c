/* qint4 and quint4: quantize and dequantize on byte kernels, packed two
 * per byte around them (include/qgen/spec.h gives the layout). The
 * generated 4-bit entry points call these with their spec's kernels built
 * for one byte per element, clamped to the 4-bit range; per tensor the
 * tensor goes through a stack buffer in chunks, other layouts (whose
 * parameters depend on the element's position) through one scratch copy.
 * The float tensors hold the spec's float_type (16-bit codes are converted
 * inside the byte kernels). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/kernel_support.h"
#include "arg_check.h"

enum { CHUNK = 4096 }; /* even: chunks start on whole bytes */

static bool position_free(const qg_spec *sp) {
    return !qg_qscheme_is_per_channel(sp->qscheme) && !qg_qscheme_is_per_group(sp->qscheme);
}

/* Eight elements at a time in one 64-bit word (byte k of the word is
 * element k), so that the packing costs a few word operations per eight
 * elements instead of several per element. Big-endian hosts take the
 * element loops. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
enum { WORDS = 1 };
#else
enum { WORDS = 0 };
#endif

static void pack(uint8_t *q, const uint8_t *bytes, size_t n) {
    size_t k = 0;
    for (; WORDS && k + 8 <= n; k += 8) {
        uint64_t v;
        memcpy(&v, bytes + k, 8);
        v &= 0x0F0F0F0F0F0F0F0Full;
        v = (v | v >> 4) & 0x00FF00FF00FF00FFull; /* byte pairs -> one byte per 16 bits */
        v = (v | v >> 8) & 0x0000FFFF0000FFFFull;
        const uint32_t packed = (uint32_t)(v | v >> 16);
        memcpy(q + k / 2, &packed, 4);
    }
    for (; k + 1 < n; k += 2)
        q[k / 2] = (uint8_t)((bytes[k] & 0xFu) | (unsigned)(bytes[k + 1] << 4));
    if (n % 2)
        q[n / 2] = bytes[n - 1] & 0xFu;
}

static void unpack(uint8_t *bytes, const uint8_t *q, size_t n, bool is_signed) {
    size_t k = 0;
    for (; WORDS && k + 8 <= n; k += 8) {
        uint32_t four;
        memcpy(&four, q + k / 2, 4);
        uint64_t v = four;
        v = (v | v << 16) & 0x0000FFFF0000FFFFull;
        v = (v | v << 8) & 0x00FF00FF00FF00FFull;
        v = (v | v << 4) & 0x0F0F0F0F0F0F0F0Full; /* one nibble per byte */
        if (is_signed) /* bit 3 set: the byte's high nibble 0xF (8 * 30 = 0xF0, no carry between bytes) */
            v |= (v & 0x0808080808080808ull) * 30u;
        memcpy(bytes + k, &v, 8);
    }
    for (; k < n; k++) {
        const unsigned v = (q[k / 2] >> (4 * (k % 2))) & 0xFu;
        bytes[k] = (uint8_t)(is_signed && v >= 8 ? v + 0xF0u : v); /* sign-extended as int8_t */
    }
}

void qg_pack4_quantize(const qg_spec *sp, qg_quantize_link_fn bytes, const void *x, void *q, size_t n,
                       const qg_qparams *qp) {
    QG_NEED_OR_RETURN(sp && bytes && qp && ((x && q) || n == 0));
    const size_t esize = qg_float_type_size(sp->float_type);
    if (position_free(sp)) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += CHUNK) {
            const size_t len = n - at < CHUNK ? n - at : CHUNK;
            bytes((const char *)x + at * esize, buf, len, qp);
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
    if (position_free(sp)) {
        uint8_t buf[CHUNK];
        for (size_t at = 0; at < n; at += CHUNK) {
            const size_t len = n - at < CHUNK ? n - at : CHUNK;
            unpack(buf, (const uint8_t *)q + at / 2, len, is_signed);
            bytes(buf, (char *)y + at * esize, len, qp);
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
