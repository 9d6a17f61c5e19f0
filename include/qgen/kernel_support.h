/* qgen/kernel_support.h - small portable helpers the generated kernels
 * share: moving lane-mask bits in and out of byte and packed masks. */
#ifndef QGEN_KERNEL_SUPPORT_H
#define QGEN_KERNEL_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Helpers an ISA file may or may not call, depending on the spec. */
#if defined(__GNUC__)
#define QG_KS_HELPER static inline __attribute__((unused))
#else
#define QG_KS_HELPER static inline
#endif

/* ORs `count` (<= 64) bits into a packed mask at bit position pos, LSB
 * first. The mask must have been zeroed. */
static inline void qg_ks_put_bits(uint8_t *packed, size_t pos, uint64_t bits, unsigned count) {
    if (count < 64)
        bits &= ((uint64_t)1 << count) - 1;
    if ((pos & 7) == 0 && (count & 7) == 0) {
        unsigned char le[8];
        for (unsigned k = 0; k < 8; k++)
            le[k] = (unsigned char)(bits >> (8 * k));
        memcpy(packed + pos / 8, le, count / 8);
        return;
    }
    for (unsigned k = 0; k < count; k++)
        packed[(pos + k) / 8] |= (uint8_t)(((bits >> k) & 1u) << ((pos + k) % 8));
}

/* `count` (<= 64) bits of a packed mask from bit position pos. */
static inline uint64_t qg_ks_get_bits(const uint8_t *packed, size_t pos, unsigned count) {
    uint64_t bits = 0;
    if ((pos & 7) == 0 && (count & 7) == 0) {
        for (unsigned k = 0; k < count / 8; k++)
            bits |= (uint64_t)packed[pos / 8 + k] << (8 * k);
        return bits;
    }
    for (unsigned k = 0; k < count; k++)
        bits |= (uint64_t)((packed[(pos + k) / 8] >> ((pos + k) % 8)) & 1u) << k;
    return bits;
}

/* int32 add saturating at INT32_MIN and INT32_MAX. */
static inline int32_t qg_ks_sat_add_i32(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}

/* Byte mask <-> bits: a byte passes when it is non-zero. */
static inline uint64_t qg_ks_bytes_to_bits(const uint8_t *bytes, unsigned count) {
    uint64_t bits = 0;
    for (unsigned k = 0; k < count; k++)
        bits |= (uint64_t)(bytes[k] != 0) << k;
    return bits;
}

static inline void qg_ks_bits_to_bytes(uint8_t *bytes, uint64_t bits, unsigned count) {
    for (unsigned k = 0; k < count; k++)
        bytes[k] = (uint8_t)((bits >> k) & 1u);
}

#endif
