/* qgen/kernel_support.h - small portable helpers the generated kernels
 * share: moving lane-mask bits in and out of byte and packed masks. */
#ifndef QGEN_KERNEL_SUPPORT_H
#define QGEN_KERNEL_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* The kernels call no C library function but memcpy and memset, which the
 * compiler turns into its own instructions. Where no C library headers are
 * there (clang --target=wasm32 with no sysroot: a module for a page), the
 * two are declared here, and the file needs nothing beyond the compiler's
 * own headers. */
#if defined(__has_include)
#if __has_include(<string.h>)
#define QG_KS_LIBC_HEADERS 1
#endif
#else
#define QG_KS_LIBC_HEADERS 1
#endif
#if defined(QG_KS_LIBC_HEADERS)
#include <math.h>
#include <string.h>
#else
void *memcpy(void *restrict to, const void *restrict from, size_t bytes);
void *memset(void *to, int byte, size_t bytes);
#define HUGE_VALF __builtin_huge_valf()
#endif

#include "qgen/blocks.h"
#include "qgen/runtime.h"

/* Helpers an ISA file may or may not call, depending on the spec. */
#if defined(__GNUC__)
#define QG_KS_HELPER static inline __attribute__((unused))
#else
#define QG_KS_HELPER static inline
#endif

/* A generated function kept out of line (per-call set-up the compiler
 * should not fold into the kernel's loops); plain `static` elsewhere. */
#if defined(__GNUC__)
#define QG_KS_OUT_OF_LINE static __attribute__((noinline))
#else
#define QG_KS_OUT_OF_LINE static
#endif

/* The bit and byte loops below run at most 64 times, on a strip's or a
 * tail's mask: vectorizing them only adds code, and a kernel's vectorized
 * helper loop would pass for its main loop in `qgen compare`. */
#if defined(__clang__)
#define QG_KS_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define QG_KS_SCALAR_LOOP
#endif

/* ORs `count` (<= 64) bits into a packed mask at bit position pos, LSB
 * first. The mask must have been zeroed. */
static inline void qg_ks_put_bits(uint8_t *packed, size_t pos, uint64_t bits, unsigned count) {
    if (count == 0) /* nothing to write, not even an offset to take */
        return;
    if (count < 64)
        bits &= ((uint64_t)1 << count) - 1;
    if ((pos & 7) == 0 && (count & 7) == 0) {
        unsigned char le[8];
        for (unsigned k = 0; k < 8; k++)
            le[k] = (unsigned char)(bits >> (8 * k));
        memcpy(packed + pos / 8, le, count / 8);
        return;
    }
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < count; k++)
        packed[(pos + k) / 8] |= (uint8_t)(((bits >> k) & 1u) << ((pos + k) % 8));
}

/* `count` (<= 64) bits of a packed mask from bit position pos. */
static inline uint64_t qg_ks_get_bits(const uint8_t *packed, size_t pos, unsigned count) {
    uint64_t bits = 0;
    if ((pos & 7) == 0 && (count & 7) == 0) {
        QG_KS_SCALAR_LOOP
        for (unsigned k = 0; k < count / 8; k++)
            bits |= (uint64_t)packed[pos / 8 + k] << (8 * k);
        return bits;
    }
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < count; k++)
        bits |= (uint64_t)((packed[(pos + k) / 8] >> ((pos + k) % 8)) & 1u) << k;
    return bits;
}

/* int32 add saturating at INT32_MIN and INT32_MAX. */
static inline int32_t qg_ks_sat_add_i32(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}

/* A float's 32 bits as an int32 and back (fp8 plans, docs/semantics.md). */
static inline int32_t qg_ks_bits_f2i(float f) {
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}
static inline float qg_ks_bits_i2f(int32_t i) {
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* float16 bit patterns (docs/semantics.md, "Float types"), in integer
 * arithmetic so that every ISA and compiler gives the same bits: exact
 * widening (a NaN quieted with its payload kept, as F16C does), and
 * nearest-even narrowing, past 65504's tie to +-inf, NaN to 0x7E00 with
 * its sign. The runtime's converters and the block formats' fp16 fields
 * (ggml's d and m) are these. */
static inline float qg_ks_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1F)
        return qg_ks_bits_i2f((int32_t)(sign | 0x7F800000u | (mant << 13) | (mant ? 0x400000u : 0)));
    if (exp == 0) { /* zero and subnormals: mant * 2^-24, exact in float */
        const float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return qg_ks_bits_i2f((int32_t)(sign | ((exp + 112u) << 23) | (mant << 13)));
}

/* m >> shift rounded half to even (m below 2^31; shift 0 keeps m, and
 * past 31 gives 0): adding half - 1 and the kept part's lowest bit carries
 * exactly when the rest is above half, or is half and the kept part odd;
 * no branch on the data (the callers' shifts are constants). */
static inline uint32_t qg_ks_shift_rne(uint32_t m, unsigned shift) {
    if (shift == 0 || shift > 31)
        return shift ? 0 : m;
    return (m + ((1u << (shift - 1)) - 1u) + ((m >> shift) & 1u)) >> shift;
}

static inline uint16_t qg_ks_f32_to_f16(float f) {
    const uint32_t u = (uint32_t)qg_ks_bits_f2i(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u);
    if (a >= 0x477FF000u) /* 65520 and up: past the tie above 65504 */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) /* normal: rebias 127 -> 15, keep 10 mantissa bits */
        return (uint16_t)(sign | qg_ks_shift_rne(a - 0x38000000u, 13));
    if (a <= 0x33000000u) /* 2^-25 and below: the tie at 2^-25 goes to even 0 */
        return (uint16_t)sign;
    /* subnormal: (1.m) * 2^(e-150) in units of 2^-24; a carry gives the
     * smallest normal's code, as it should */
    const unsigned e = a >> 23;
    return (uint16_t)(sign | qg_ks_shift_rne((a & 0x7FFFFFu) | 0x800000u, 126u - e));
}

/* A little-endian fp16 field at any address (ggml's blocks); NULL reads
 * as 0 and takes nothing. */
static inline float qg_ks_load_f16(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return b ? qg_ks_f16_to_f32((uint16_t)(b[0] | b[1] << 8)) : 0.0f;
}
static inline void qg_ks_store_f16(void *p, float v) {
    const uint16_t h = qg_ks_f32_to_f16(v);
    uint8_t *b = (uint8_t *)p;
    if (!b)
        return;
    b[0] = (uint8_t)h;
    b[1] = (uint8_t)(h >> 8);
}

/* ggml's block formats, one block's codes held a byte each: the nibbles
 * of codes j and j + 16 in byte j; the fifth bits as one little-endian
 * 32-bit field; K-quants' nibble rows and q6_K's two high bits; the sum of
 * int8 codes (docs/semantics.md, "Block formats"). GNU C's 16-byte vectors
 * keep each step one register wide whatever the target: a compiler left
 * to vectorize the byte loops itself scatters them into byte inserts, and
 * the span that reads them back then waits on store forwarding. A null
 * pointer does nothing (gives 0). Byte k of a 64-bit word is lane k: the
 * targets are little-endian. */
static inline uint64_t qg_ks_spread_bits(uint64_t bits8) { /* bit k -> 0x10 in byte k */
    const uint64_t one_each = ((bits8 & 255u) * 0x0101010101010101ull) & 0x8040201008040201ull;
    return ((one_each + 0x7F7F7F7F7F7F7F7Full) & 0x8080808080808080ull) >> 3;
}
static inline uint32_t qg_ks_gather_bits(uint64_t bytes8) { /* bit 4 of byte k -> bit k */
    return (uint32_t)((((bytes8 >> 4) & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
}
#if defined(__GNUC__)
typedef uint8_t qg_ks_b16 __attribute__((vector_size(16)));
#define QG_KS_GET16(v, p, at) memcpy(&(v), (const uint8_t *)(p) + (at), 16)
#define QG_KS_PUT16(p, at, v) memcpy((uint8_t *)(p) + (at), &(v), 16)
#endif
/* dst[j] = src[j] & 15 | src[j + k] << 4 for j < k (k = 16, 32 or 64: the
 * 32-element formats' pairs, q4_K's and q6_K's) */
static inline void qg_ks_pack_nibbles(void *dst, const void *src, int k) {
    if (!dst || !src)
        return;
    for (int h = 0; h < (k & 112); h += 16) {
#if defined(__GNUC__)
        qg_ks_b16 lo, hi;
        QG_KS_GET16(lo, src, h);
        QG_KS_GET16(hi, src, h + k);
        lo = (lo & 15) | hi << 4;
        QG_KS_PUT16(dst, h, lo);
#else
        const uint8_t *c = (const uint8_t *)src;
        for (int j = h; j < h + 16; j++)
            ((uint8_t *)dst)[j] = (uint8_t)((c[j] & 15) | c[j + k] << 4);
#endif
    }
}
/* dst[j] = bits 4-5 of src[j + 32t] at bits 2t, t < 4, for j < 32 (q6_K's
 * high bits, as qg_ks_or_high_pair reads them) */
static inline void qg_ks_pack_high_pairs(void *dst, const void *src) {
    if (!dst || !src)
        return;
    for (int h = 0; h < 32; h += 16) {
#if defined(__GNUC__)
        qg_ks_b16 acc = {0}, c;
        for (int t = 0; t < 4; t++) {
            QG_KS_GET16(c, src, h + 32 * t);
            acc |= (c >> 4 & 3) << (2 * t);
        }
        QG_KS_PUT16(dst, h, acc);
#else
        for (int j = h; j < h + 16; j++) {
            unsigned v = 0;
            for (int t = 0; t < 4; t++)
                v |= (((const uint8_t *)src)[j + 32 * t] >> 4 & 3u) << (2 * t);
            ((uint8_t *)dst)[j] = (uint8_t)v;
        }
#endif
    }
}
static inline void qg_ks_pack_fifth(void *dst, const void *src) {
    if (!dst || !src)
        return;
    uint32_t bits = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t w;
        memcpy(&w, (const uint8_t *)src + 8 * k, 8);
        bits |= qg_ks_gather_bits(w) << 8 * k;
    }
    for (int k = 0; k < 4; k++)
        ((uint8_t *)dst)[k] = (uint8_t)(bits >> 8 * k);
}
/* dst[j] = src[j] >> k & 15 for j < 32 (K-quants' rows of 32 codes) */
static inline void qg_ks_nibbles(void *dst, const void *src, int k) {
    if (!dst || !src)
        return;
#if defined(__GNUC__)
    for (size_t h = 0; h < 32; h += 16) {
        qg_ks_b16 q;
        QG_KS_GET16(q, src, h);
        q = q >> (k & 7) & 15;
        QG_KS_PUT16(dst, h, q);
    }
#else
    for (int j = 0; j < 32; j++)
        ((uint8_t *)dst)[j] = (uint8_t)(((const uint8_t *)src)[j] >> (k & 7) & 15);
#endif
}
static inline void qg_ks_unpack_nibbles(void *dst, const void *src) {
    if (!dst || !src)
        return;
#if defined(__GNUC__)
    qg_ks_b16 lo, hi;
    QG_KS_GET16(lo, src, 0);
    hi = lo >> 4;
    lo &= 15;
    QG_KS_PUT16(dst, 0, lo);
    QG_KS_PUT16(dst, 16, hi);
#else
    for (int j = 0; j < 16; j++) {
        ((uint8_t *)dst)[j] = ((const uint8_t *)src)[j] & 15;
        ((uint8_t *)dst)[j + 16] = ((const uint8_t *)src)[j] >> 4;
    }
#endif
}
static inline void qg_ks_or_fifth(void *dst, const void *src) {
    if (!dst || !src)
        return;
    const uint8_t *q = (const uint8_t *)src;
    for (size_t h = 0; h < 32; h += 16) {
        const uint64_t fifth[2] = {qg_ks_spread_bits(q[h / 8]), qg_ks_spread_bits(q[h / 8 + 1])};
#if defined(__GNUC__)
        qg_ks_b16 bits, c;
        memcpy(&bits, fifth, 16);
        QG_KS_GET16(c, dst, h);
        c |= bits;
        QG_KS_PUT16(dst, h, c);
#else
        for (int j = 0; j < 16; j++)
            ((uint8_t *)dst)[h + j] |= (uint8_t)(fifth[j / 8] >> 8 * (j % 8));
#endif
    }
}
/* dst[j] |= (src[j] >> k & 3) << 4 for j < 32 (q6_K's high bits) */
static inline void qg_ks_or_high_pair(void *dst, const void *src, int k) {
    if (!dst || !src)
        return;
#if defined(__GNUC__)
    for (size_t h = 0; h < 32; h += 16) {
        qg_ks_b16 c, q;
        QG_KS_GET16(c, dst, h);
        QG_KS_GET16(q, src, h);
        c |= (q >> (k & 7) & 3) << 4;
        QG_KS_PUT16(dst, h, c);
    }
#else
    for (int j = 0; j < 32; j++)
        ((uint8_t *)dst)[j] |= (uint8_t)((((const uint8_t *)src)[j] >> (k & 7) & 3) << 4);
#endif
}
/* q4_K's eight 6-bit scales and eight 6-bit mins, packed in 12 bytes, as
 * int32 dst[0..7] and dst[8..15] */
static inline void qg_ks_q4k_scales(void *dst, const void *src) {
    if (!dst || !src)
        return;
    const uint8_t *q = (const uint8_t *)src;
    int32_t v[16];
    for (int j = 0; j < 4; j++) {
        v[j] = q[j] & 63;
        v[8 + j] = q[j + 4] & 63;
        v[4 + j] = (q[j + 8] & 15) | (q[j] >> 6) << 4;
        v[12 + j] = (q[j + 8] >> 4) | (q[j + 4] >> 6) << 4;
    }
    memcpy(dst, v, sizeof v);
}
/* q6_K's sixteen int8 scales as int32 */
static inline void qg_ks_widen_i8(void *dst, const void *src) {
    if (!dst || !src)
        return;
    int32_t v[16];
    for (int j = 0; j < 16; j++)
        v[j] = ((const int8_t *)src)[j];
    memcpy(dst, v, sizeof v);
}
/* mxfp4's codes (src[j] & 15, j < 32) as their E2M1 values doubled, int8
 * (0 1 2 3 4 6 8 12, negated for codes 8..15) */
static inline void qg_ks_e2m1(void *dst, const void *src) {
    static const int8_t doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    if (!dst || !src)
        return;
#if defined(__GNUC__)
    (void)doubled; /* k, 2k - 4 or 4k - 16 by k = code & 7, negated by bit 3 */
    for (size_t h = 0; h < 32; h += 16) {
        qg_ks_b16 c, k, two, four, below4, below6, neg, v;
        QG_KS_GET16(c, src, h);
        k = c & 7;
        two = k + k;
        four = two + two;
        below4 = (qg_ks_b16)(k < 4);
        below6 = (qg_ks_b16)(k < 6);
        v = (below4 & k) | (~below4 & ((below6 & (two - 4)) | (~below6 & (four - 16))));
        neg = (qg_ks_b16)((c & 8) != 0);
        v = (neg & -v) | (~neg & v);
        QG_KS_PUT16(dst, h, v);
    }
#else
    for (int j = 0; j < 32; j++)
        ((int8_t *)dst)[j] = doubled[((const uint8_t *)src)[j] & 15];
#endif
}
/* The block walks' groups: the per-block scalars of a group of blocks at
 * once (their extremes, d, 1/d, fp16 fields, which blocks go to the
 * reference), as GNU C vectors of n = 4, 8 or 16 lanes, as many as one of
 * the target's vectors holds (docs/c-backend.md, "Block formats"): wider
 * ones, GCC 12 compares lane by lane in scalar code with branches. Macros,
 * not functions: a vector passed by value changes the ABI where the
 * target lacks its registers. Conditions are int32 lanes, -1 or 0; a cast
 * between two of the types of one width keeps the bits. */
#if defined(__GNUC__)
#define QG_KS_GROUP_TYPES(n)                                                                                           \
    typedef float qg_ks_gf##n __attribute__((vector_size(4 * n)));                                                     \
    typedef int32_t qg_ks_gi##n __attribute__((vector_size(4 * n)));                                                   \
    typedef uint32_t qg_ks_gu##n __attribute__((vector_size(4 * n)));                                                  \
    typedef uint16_t qg_ks_gh##n __attribute__((vector_size(2 * n)));
QG_KS_GROUP_TYPES(4)
QG_KS_GROUP_TYPES(8)
QG_KS_GROUP_TYPES(16)
#undef QG_KS_GROUP_TYPES
#define QG_KS_G4_(v) (v), (v), (v), (v)
#define QG_KS_GSPLAT4(T, v) ((T){QG_KS_G4_(v)})
#define QG_KS_GSPLAT8(T, v) ((T){QG_KS_G4_(v), QG_KS_G4_(v)})
#define QG_KS_GSPLAT16(T, v) ((T){QG_KS_G4_(v), QG_KS_G4_(v), QG_KS_G4_(v), QG_KS_G4_(v)})
#define QG_KS_GLOAD(T, p)                                                                                              \
    __extension__({                                                                                                    \
        T qg_ld_;                                                                                                      \
        memcpy(&qg_ld_, (p), sizeof qg_ld_);                                                                           \
        qg_ld_;                                                                                                        \
    })
#define QG_KS_GSTORE(p, v)                                                                                             \
    __extension__({                                                                                                    \
        __typeof__(v) qg_st_ = (v);                                                                                    \
        memcpy((p), &qg_st_, sizeof qg_st_);                                                                           \
    })
/* c ? x : y lane by lane, as a T; c a condition of x's width */
#define QG_KS_GSEL(T, c, x, y) ((T)(((c) & (__typeof__(c))(x)) | (~(c) & (__typeof__(c))(y))))
/* a >= c for an unsigned group a of values below 2^31 and a constant c
 * below 2^31, by the sign of a - c, as a condition of type I */
#define QG_KS_GAT_LEAST(I, a, c) (~((I)((a) - (uint32_t)(c)) >> 31))
/* qg_ks_f32_to_f16 on n lanes, the same bits, stored as n halves:
 * normals rounded half to even on the 13 bits dropped; below 2^-14 the
 * float sum |v| + 0.5 rounds v to a multiple of 2^-24 (nearest-even, as
 * IEEE adds), whose count is the subnormal code (the smallest normal's
 * after a carry); from 65520 on, inf; a NaN, 0x7E00 with its sign. */
#define QG_KS_GSTORE_F16(p, v, n)                                                                                      \
    __extension__({                                                                                                    \
        const qg_ks_gu##n u_ = (qg_ks_gu##n)(v), a_ = u_ & 0x7FFFFFFFu;                                                \
        const qg_ks_gu##n normal_ = (a_ - (0x38000000u - 0xFFFu) + ((a_ >> 13) & 1u)) >> 13;                           \
        const qg_ks_gu##n sub_ = (qg_ks_gu##n)((qg_ks_gf##n)a_ + 0.5f) - 0x3F000000u;                                  \
        qg_ks_gu##n r_ = QG_KS_GSEL(qg_ks_gu##n, QG_KS_GAT_LEAST(qg_ks_gi##n, a_, 0x38800000), normal_, sub_);         \
        r_ = QG_KS_GSEL(qg_ks_gu##n, QG_KS_GAT_LEAST(qg_ks_gi##n, a_, 0x477FF000),                                     \
                        QG_KS_GSPLAT##n(qg_ks_gu##n, 0x7C00u), r_);                                                    \
        r_ = QG_KS_GSEL(qg_ks_gu##n, QG_KS_GAT_LEAST(qg_ks_gi##n, a_, 0x7F800001),                                     \
                        QG_KS_GSPLAT##n(qg_ks_gu##n, 0x7E00u), r_);                                                    \
        const qg_ks_gh##n h_ = __builtin_convertvector(r_ | ((u_ >> 16) & 0x8000u), qg_ks_gh##n);                      \
        memcpy((p), &h_, sizeof h_);                                                                                   \
    })
#endif
/* half of mxfp4's E8M0 scale byte e: 2^(e - 128), subnormal for e < 2 */
static inline float qg_ks_e8m0_half(const void *src) {
    if (!src)
        return 0.0f;
    const uint32_t e = *(const uint8_t *)src, bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
    float d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
static inline int32_t qg_ks_sum_i8(const void *src) {
    if (!src)
        return 0;
    const int8_t *c = (const int8_t *)src;
    int32_t sum = 0;
    for (int j = 0; j < 32; j++)
        sum += c[j];
    return sum;
}

/* Byte mask <-> bits: a byte passes when it is non-zero. */
static inline uint64_t qg_ks_bytes_to_bits(const uint8_t *bytes, unsigned count) {
    uint64_t bits = 0;
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < count; k++)
        bits |= (uint64_t)(bytes[k] != 0) << k;
    return bits;
}

static inline void qg_ks_bits_to_bytes(uint8_t *bytes, uint64_t bits, unsigned count) {
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < count; k++)
        bytes[k] = (uint8_t)((bits >> k) & 1u);
}

/* Observe's reduction (generator/lower/lower_observe.c): a part vector of
 * `count` elements padded to `lanes` by repeating x[0], which changes no
 * min or max (count 0: zeros, x not read); and a vector's lanes, stored,
 * reduced. */
static inline void qg_ks_pad_f32(float *buf, const float *x, size_t count, unsigned lanes) {
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < lanes; k++)
        buf[k] = count ? x[k < count ? k : 0] : 0;
}

static inline void qg_ks_pad_u16(uint16_t *buf, const uint16_t *x, size_t count, unsigned lanes) {
    QG_KS_SCALAR_LOOP
    for (unsigned k = 0; k < lanes; k++)
        buf[k] = count ? x[k < count ? k : 0] : 0;
}

/* Exported by libqgen_rt for kernels that cannot inline the helpers above
 * (the LLVM backend's): `count` lane bytes <-> bits of a packed mask at bit
 * position pos. Packing ORs into a mask the caller has zeroed. */
void qg_mask_pack_bits(uint8_t *packed, size_t pos, const uint8_t *lanes, size_t count);
void qg_mask_unpack_bits(uint8_t *lanes, const uint8_t *packed, size_t pos, size_t count);

/* min and max of x[0..len) (len >= 1); returns 0 when x holds a NaN. */
typedef int (*qg_minmax_span_fn)(const float *x, size_t len, float *mn, float *mx);

/* The generated observe kernels: reductions by `span` (NULL: observers
 * without a min/max run on qg_observer_update), layout and NaN errors
 * reported as qg_observer_update reports them. */
qg_status qg_observe_with(qg_observer *obs, const float *x, size_t n, size_t inner, qg_minmax_span_fn span,
                          qg_error *err);
/* ... the same for a spec of a 16-bit float_type, whose kernels' spans
 * reduce the codes (widened exactly) to float32 min and max. */
typedef int (*qg_minmax16_span_fn)(const uint16_t *x, size_t len, float *mn, float *mx);
qg_status qg_observe16_with(qg_observer *obs, const uint16_t *x, size_t n, size_t inner, qg_minmax16_span_fn span,
                            qg_error *err);

/* The kernels the per-group and 4-bit drivers below call: a generated
 * function whose float tensors hold the spec's float_type (float32 values
 * or 16-bit codes, converted inside the kernel). */
typedef void (*qg_quantize_link_fn)(const void *x, void *q, size_t n, const qg_qparams *qp);
typedef void (*qg_dequantize_link_fn)(const void *q, void *y, size_t n, const qg_qparams *qp);
typedef void (*qg_fake_quant_link_fn)(const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp);

/* Per-group quantize, dequantize and fake_quant (docs/semantics.md,
 * "Layouts") over `kernel`, the spec's per-channel walk with the channel
 * count read from qp->channels: the generated per-group entry points call
 * these. qp is the caller's per-group qparams. */
void qg_group_quantize(const qg_spec *spec, qg_quantize_link_fn kernel, const void *x, void *q, size_t n,
                       const qg_qparams *qp);
void qg_group_dequantize(const qg_spec *spec, qg_dequantize_link_fn kernel, const void *q, void *y, size_t n,
                         const qg_qparams *qp);
void qg_group_fake_quant(const qg_spec *spec, qg_fake_quant_link_fn kernel, const void *x, void *y, uint8_t *mask,
                         size_t n, const qg_qparams *qp);

/* qint4/quint4 quantize and dequantize (packed, see qgen/spec.h) over
 * `bytes`, the spec's kernel on one byte per element: the generated 4-bit
 * entry points call these. */
void qg_pack4_quantize(const qg_spec *spec, qg_quantize_link_fn bytes, const void *x, void *q, size_t n,
                       const qg_qparams *qp);
void qg_pack4_dequantize(const qg_spec *spec, qg_dequantize_link_fn bytes, const void *q, void *y, size_t n,
                         const qg_qparams *qp);

/* bfloat16/float16 tensors (docs/semantics.md, "Float types") over `f32`,
 * a kernel on float32 tensors (NULL: the runtime's reference), widened
 * into a buffer and narrowed back: the threaded ops' and the fused step's
 * reference paths call these, and the generated entry points of a block
 * spec with 16-bit rows (qp may be NULL there). The float arguments hold
 * the spec's float_type bit patterns. */
typedef void (*qg_dequantize_fn)(const void *q, float *y, size_t n, const qg_qparams *qp);
typedef void (*qg_backward_fn)(const float *dy, const uint8_t *mask, float *dx, size_t n);
void qg_ftype_quantize(const qg_spec *spec, qg_quantize_link_fn f32, const uint16_t *x, void *q, size_t n,
                       const qg_qparams *qp);
void qg_ftype_dequantize(const qg_spec *spec, qg_dequantize_link_fn f32, const void *q, uint16_t *y, size_t n,
                         const qg_qparams *qp);
void qg_ftype_fake_quant(const qg_spec *spec, qg_fake_quant_link_fn f32, const uint16_t *x, uint16_t *y, uint8_t *mask,
                         size_t n, const qg_qparams *qp);
void qg_ftype_fake_quant_backward(const qg_spec *spec, qg_backward_fn f32, const uint16_t *dy, const uint8_t *mask,
                                  uint16_t *dx, size_t n);
qg_status qg_ftype_observe(const qg_spec *spec, qg_observe_fn f32, const uint16_t *x, size_t n, size_t inner,
                           qg_observer *obs, qg_error *err);

#endif
