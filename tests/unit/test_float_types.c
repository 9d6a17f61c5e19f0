/* bfloat16 and float16 tensors (docs/semantics.md, "Float types"): the
 * conversions against methods of their own (every code's value from its
 * fields, the nearest code by a search over the codes' values, and the
 * compiler's _Float16 where it has one), and the qg_ftype_* drivers on
 * every path (stack pieces, one heap copy, element by element when that
 * copy cannot be had) against widen, reference, narrow. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../link_counters.h"
#include "../test_util.h"
#include "qgen/blocks.h"
#include "qgen/kernel_support.h"

/* ---- malloc that fails on demand (linked with --wrap=malloc) ---------- */

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static size_t fail_from = SIZE_MAX; /* allocations of this size and more fail */
static size_t big_mallocs;          /* allocations of 16 KB and more (a tensor's heap copy) */
void *__wrap_malloc(size_t size) {
    big_mallocs += size >= 16384;
    return size >= fail_from ? NULL : __real_malloc(size);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static float f_of(uint32_t u) { return qg_ks_bits_i2f((int32_t)u); }
static uint32_t u_of(float f) { return (uint32_t)qg_ks_bits_f2i(f); }

/* A code's value from its sign, exponent and mantissa fields; +-inf for the
 * all-ones exponent with a zero mantissa (NaN codes are not asked). */
static double value_of(qg_float_type t, uint16_t h) {
    const int mbits = t == QG_BFLOAT16 ? 7 : 10, ebits = 15 - mbits, bias = (1 << (ebits - 1)) - 1;
    const int e = (h >> mbits) & ((1 << ebits) - 1), m = h & ((1 << mbits) - 1);
    const double sign = h & 0x8000 ? -1.0 : 1.0;
    if (e == (1 << ebits) - 1)
        return sign * INFINITY;
    if (e == 0)
        return sign * ldexp(m, 1 - bias - mbits);
    return sign * ldexp((1 << mbits) + m, e - bias - mbits);
}

static uint16_t narrow1(qg_float_type t, float f) {
    return t == QG_BFLOAT16 ? qg_float_to_bf16(f) : qg_float_to_f16(f);
}
static float widen1(qg_float_type t, uint16_t h) { return t == QG_BFLOAT16 ? qg_bf16_to_float(h) : qg_f16_to_float(h); }

/* The nearest code to finite v by binary search over the positive codes'
 * values, ties to the even code; past the largest finite value the next
 * code up is infinity, one step of the top binade further. */
static uint16_t nearest(qg_float_type t, float v) {
    const uint16_t inf = t == QG_BFLOAT16 ? 0x7F80 : 0x7C00;
    const double a = fabs((double)v);
    uint16_t lo = 0, hi = inf; /* value(lo) <= a < value(hi), inf as the top binade's next step */
    const double top = 2 * value_of(t, (uint16_t)(inf - 1)) - value_of(t, (uint16_t)(inf - 2));
    if (a >= top)
        lo = inf;
    while (hi - lo > 1 && lo != inf) {
        const uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (value_of(t, mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    uint16_t code = lo;
    if (lo != inf) {
        const double below = a - value_of(t, lo), above = (hi == inf ? top : value_of(t, hi)) - a;
        code = above < below || (above == below && (hi & 1) == 0) ? hi : lo;
    }
    return (uint16_t)(code | (signbit(v) ? 0x8000 : 0));
}

static void test_every_code_round_trips(void) {
    for (int t = QG_BFLOAT16; t <= QG_FLOAT16; t++) {
        unsigned bad = 0;
        for (uint32_t h = 0; h <= 0xFFFF; h++) {
            const float w = widen1((qg_float_type)t, (uint16_t)h);
            const uint16_t back = narrow1((qg_float_type)t, w);
            if (isnan(w)) {
                const uint16_t want = t == QG_BFLOAT16 ? 0x7FC0 : (uint16_t)((h & 0x8000) | 0x7E00);
                bad += back != want;
            } else {
                bad += back != h || (double)w != value_of((qg_float_type)t, (uint16_t)h);
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
}

/* Floats around every tie between neighbouring codes, and random bit
 * patterns across the whole float range, against the search. */
static void test_narrowing_is_nearest_even(void) {
    for (int t = QG_BFLOAT16; t <= QG_FLOAT16; t++) {
        const uint16_t inf = t == QG_BFLOAT16 ? 0x7F80 : 0x7C00;
        unsigned bad = 0, checked = 0;
        for (uint32_t h = 0; h < inf; h++) {
            const double lo = value_of((qg_float_type)t, (uint16_t)h);
            const double hi = h + 1 < inf ? value_of((qg_float_type)t, (uint16_t)(h + 1))
                                          : 2 * lo - value_of((qg_float_type)t, (uint16_t)(h - 1));
            const float tie = (float)((lo + hi) / 2); /* exact: one bit more than the code */
            float v = nextafterf(nextafterf(tie, -INFINITY), -INFINITY);
            for (int k = 0; k < 5; k++, v = nextafterf(v, INFINITY))
                for (int s = 0; s < 2; s++) {
                    const float x = s ? -v : v;
                    bad += narrow1((qg_float_type)t, x) != nearest((qg_float_type)t, x);
                    checked++;
                }
        }
        for (int k = 0; k < 200000; k++) {
            const float x = f_of(next32());
            if (!isfinite(x))
                continue;
            bad += narrow1((qg_float_type)t, x) != nearest((qg_float_type)t, x);
            checked++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(checked > 300000);
        /* specials */
        CU_ASSERT_EQUAL(narrow1((qg_float_type)t, INFINITY), inf);
        CU_ASSERT_EQUAL(narrow1((qg_float_type)t, -INFINITY), inf | 0x8000);
        CU_ASSERT_EQUAL(narrow1((qg_float_type)t, -0.0f), 0x8000);
        CU_ASSERT_EQUAL(narrow1((qg_float_type)t, FLT_MAX), inf);
        CU_ASSERT_EQUAL(narrow1((qg_float_type)t, -NAN), t == QG_BFLOAT16 ? 0x7FC0 : 0xFE00);
    }
#ifdef __FLT16_MAX__
    /* the compiler's own conversion, a third method (NaN aside) */
    unsigned bad = 0;
    for (int k = 0; k < 200000; k++) {
        const float x = k % 2 ? f_of(next32()) : f_of(0x33000000u + next32() % 0x14800000u);
        if (isnan(x))
            continue;
        const _Float16 h = (_Float16)x;
        uint16_t bits;
        memcpy(&bits, &h, sizeof bits);
        bad += qg_float_to_f16(x) != bits || u_of(qg_f16_to_float(bits)) != u_of((float)h);
    }
    CU_ASSERT_EQUAL(bad, 0);
#endif
}

/* The block walks' fp16 store of a group of n lanes (QG_KS_GSTORE_F16,
 * the group scales' d and m) against the one-value converter: the count
 * of lanes that differ. */
#define GROUP_F16_MISSES(n, in, count)                                                                                 \
    __extension__({                                                                                                    \
        unsigned miss_ = 0;                                                                                            \
        for (size_t at = 0; at + n <= (count); at += n) {                                                              \
            uint16_t got[n];                                                                                           \
            const qg_ks_gf##n v = QG_KS_GLOAD(qg_ks_gf##n, (in) + at);                                                 \
            QG_KS_GSTORE_F16(got, v, n);                                                                               \
            for (int j = 0; j < n; j++)                                                                                \
                miss_ += got[j] != qg_ks_f32_to_f16(f_of((in)[at + (size_t)j]));                                       \
        }                                                                                                              \
        miss_;                                                                                                         \
    })

/* ... on every width a target's group takes (4, 8 and 16 lanes): every
 * fp16 tie and its neighbours, the subnormal and overflow edges, and
 * random bit patterns (NaN and inf among them), in every lane. */
static void test_group_f16_store_equals_scalar(void) {
    enum { CASES = 1 << 18 };
    static uint32_t in[CASES];
    size_t m = 0;
    for (uint32_t h = 0; h < 0x7C00 && m + 10 <= CASES; h += 3) { /* a tie sits 2^12 above a code's float bits */
        const uint32_t tie = u_of(qg_f16_to_float((uint16_t)h)) + 0x1000u;
        for (uint32_t d = 0; d < 5; d++) {
            in[m++] = tie - 2 + d;
            in[m++] = (tie - 2 + d) | 0x80000000u;
        }
    }
    const uint32_t edges[] = {0x33000000u, 0x33000001u, 0x387FFFFFu, 0x38800000u, 0x477FEFFFu,
                              0x477FF000u, 0x7F800000u, 0x7F800001u, 0x7FC00000u, 0xFFC00001u};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        in[m++] = edges[k];
    while (m < CASES)
        in[m++] = next32();
    CU_ASSERT_EQUAL(GROUP_F16_MISSES(4, in, CASES), 0);
    CU_ASSERT_EQUAL(GROUP_F16_MISSES(8, in, CASES), 0);
    CU_ASSERT_EQUAL(GROUP_F16_MISSES(16, in, CASES), 0);
}

/* The array loops (vector code where the CPU has it: AVX2 and F16C on x86)
 * against the one-value functions: every code widened, and ties, their
 * neighbours, specials and random floats narrowed, at every offset into a
 * vector. */
static void test_array_loops_equal_scalar(void) {
    enum { M = 65536 + 13 };
    static uint16_t h[M], back[M];
    static float f[M];
    for (int t = QG_BFLOAT16; t <= QG_FLOAT16; t++) {
        unsigned bad = 0;
        for (size_t i = 0; i < M; i++)
            h[i] = (uint16_t)i;
        for (size_t off = 0; off < 9; off++) {
            qg_float_type_widen((qg_float_type)t, h + off, f + off, M - off);
            for (size_t i = off; i < M; i++)
                bad += u_of(f[i]) != u_of(widen1((qg_float_type)t, h[i]));
        }
        for (size_t i = 0; i < M; i++) {
            const uint32_t r = next32();
            f[i] = i % 4 == 0   ? f_of(r)
                   : i % 4 == 1 ? nextafterf(widen1((qg_float_type)t, (uint16_t)r), (r & 1) ? INFINITY : -INFINITY)
                   : i % 4 == 2
                       ? (widen1((qg_float_type)t, (uint16_t)r) + widen1((qg_float_type)t, (uint16_t)(r + 1))) / 2
                       : f_of((r & 0x807FFFFFu) | 0x7F800000u); /* inf and NaNs with payloads */
        }
        for (size_t off = 0; off < 9; off++) {
            qg_float_type_narrow((qg_float_type)t, f + off, back + off, M - off);
            for (size_t i = off; i < M; i++)
                bad += back[i] != narrow1((qg_float_type)t, f[i]);
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
}

/* ---- the drivers, with the reference as the float32 kernel ------------ */

static qg_spec SP;
static void ref_quantize(const void *x, void *q, size_t n, const qg_qparams *qp) { qg_ref_quantize(&SP, x, q, n, qp); }
static void ref_dequantize(const void *q, void *y, size_t n, const qg_qparams *qp) {
    qg_ref_dequantize(&SP, q, y, n, qp);
}
static void ref_fake_quant(const void *x, void *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    qg_ref_fake_quant(&SP, x, y, mask, n, qp);
}
static void ref_backward(const float *dy, const uint8_t *mask, float *dx, size_t n) {
    qg_ref_fake_quant_backward(&SP, dy, mask, dx, n);
}

enum { N = 6000, P = 4000 };
static float xf[N], want_f[N];
static uint16_t xh[N], yh[N], want_h[N];
static uint8_t q[2 * N], want_q[2 * N], mask[N], want_mask[N];
static float scale[P];
static int32_t zp[P];

/* Each op through the driver equals widen, reference, narrow. */
static unsigned check_ops(size_t n, const qg_qparams *qp) {
    unsigned bad = 0;
    const qg_float_type ft = SP.float_type;
    const size_t qb = qg_q_bytes(SP.dtype, n), mb = qg_mask_bytes(&SP, n);
    qg_float_type_widen(ft, xh, xf, n);
    qg_ftype_quantize(&SP, ref_quantize, xh, q, n, qp);
    qg_ref_quantize(&SP, xf, want_q, n, qp);
    bad += memcmp(q, want_q, qb) != 0;
    qg_ftype_dequantize(&SP, ref_dequantize, want_q, yh, n, qp);
    qg_ref_dequantize(&SP, want_q, want_f, n, qp);
    qg_float_type_narrow(ft, want_f, want_h, n);
    bad += memcmp(yh, want_h, 2 * n) != 0;
    memset(mask, 0xA5, mb);
    qg_ftype_fake_quant(&SP, ref_fake_quant, xh, yh, mask, n, qp);
    qg_ref_fake_quant(&SP, xf, want_f, want_mask, n, qp);
    qg_float_type_narrow(ft, want_f, want_h, n);
    bad += memcmp(yh, want_h, 2 * n) != 0 || memcmp(mask, want_mask, mb) != 0;
    qg_ftype_fake_quant_backward(&SP, ref_backward, xh, want_mask, yh, n);
    qg_ref_fake_quant_backward(&SP, xf, want_mask, want_f, n);
    qg_float_type_narrow(ft, want_f, want_h, n);
    bad += memcmp(yh, want_h, 2 * n) != 0;
    return bad;
}

static void load(const char *json) {
    qg_error err;
    if (qg_spec_load_string(json, "test", NULL, 0, &SP, &err) != QG_OK) {
        fprintf(stderr, "spec: %s\n", err.message);
        CU_FAIL_FATAL("spec did not load");
    }
}

static void test_drivers_on_every_path(void) {
    static const char *const specs[] = {
        "{\"name\":\"a\",\"dtype\":\"quint8\",\"float_type\":\"bfloat16\"}",
        "{\"name\":\"c\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_symmetric\",\"channel_len\":3,"
        "\"float_type\":\"float16\",\"compat_mask\":true}",
        "{\"name\":\"g\",\"dtype\":\"quint4\",\"qscheme\":\"per_group_affine\",\"channel_len\":10,\"group_size\":4,"
        "\"observer\":{\"type\":\"minmax\"},\"float_type\":\"bfloat16\",\"compat_mask\":true}",
    };
    for (size_t k = 0; k < P; k++) {
        scale[k] = k % 2 ? 0.25f : 0.013f * (float)(1 + k % 7);
        zp[k] = (int32_t)(k % 5);
    }
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        load(specs[s]);
        const bool sym = qg_qscheme_is_symmetric(SP.qscheme);
        for (size_t i = 0; i < N; i++) /* values of the type, some ties at scale 0.25 */
            xh[i] = narrow1(SP.float_type, i % 3 ? (float)((int)(next32() % 4001) - 2000) * 0.01f
                                                 : 0.125f * (float)((int)(next32() % 81) - 40));
        const size_t channels = SP.channel_len;
        /* Short periods go through the stack in pieces of whole periods. A
         * long per-channel period (3 x 1000) goes in pieces of whole runs,
         * still on the stack; at inner 1001 the packed mask's bytes do not
         * split on runs, and per group at inner 300 (period 3000) nothing
         * splits: one heap copy, or element by element without it. */
        static const size_t inners[] = {1, 7, 300, 1000, 1001};
        unsigned heap_paths = 0;
        for (size_t l = 0; l < sizeof inners / sizeof inners[0]; l++) {
            const size_t inner = inners[l], period = channels * inner;
            const size_t n = qg_qscheme_is_per_group(SP.qscheme) ? N / period * period : N - 3;
            if (n == 0)
                continue;
            const qg_qparams qp = {scale, sym ? NULL : zp, NULL, channels, inner};
            big_mallocs = 0;
            CU_ASSERT_EQUAL(check_ops(n, &qp), 0);
            const bool heap = big_mallocs > 0;
            CU_ASSERT_EQUAL(heap, period > 2048 && (qg_qscheme_is_per_group(SP.qscheme) || inner % 8 != 0));
            heap_paths += heap;
            fail_from = 4096;
            CU_ASSERT_EQUAL(check_ops(n, &qp), 0);
            fail_from = SIZE_MAX;
        }
        CU_ASSERT_EQUAL(heap_paths,
                        qg_qscheme_is_per_channel(SP.qscheme) || qg_qscheme_is_per_group(SP.qscheme) ? 1 : 0);
    }
}

/* Block formats' 16-bit rows through the drivers, as their generated
 * entry points take them: pieces of 2048 elements, no qparams, equal to
 * widening the row, the float32 reference and narrowing; a row that is
 * not whole blocks leaves every output as it was. */
static void test_block_rows_through_the_drivers(void) {
    static const char *const specs[] = {
        "{\"name\":\"q8\",\"base\":\"ggml.q8_0\",\"float_type\":\"bfloat16\"}",
        "{\"name\":\"k\",\"base\":\"ggml.q4_K\",\"float_type\":\"float16\",\"compat_mask\":true}",
    };
    enum { n = 17 * 256 }; /* three pieces: 2048, 2048, 256 */
    static uint16_t bx[n], by[n], want[n];
    static float bf[n], bw[n];
    static uint8_t bq[2 * n], bwq[2 * n], bm[n], bwm[n];
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        load(specs[s]);
        const qg_float_type ft = SP.float_type;
        for (size_t i = 0; i < n; i++)
            bx[i] = narrow1(ft, (float)((int)(next32() % 4001) - 2000) * (i % 512 < 256 ? 0.01f : 3.0f));
        qg_float_type_widen(ft, bx, bf, n);
        const size_t bytes = qg_block_row_bytes(SP.block, n), mb = SP.compat_mask ? n / 8 : n;
        memset(bq, 0, sizeof bq);
        qg_ftype_quantize(&SP, NULL, bx, bq, n, NULL);
        CU_ASSERT_EQUAL(qg_block_quantize_ref(SP.block, bf, n, bwq, NULL), QG_OK);
        CU_ASSERT_EQUAL(memcmp(bq, bwq, bytes), 0);
        qg_ftype_dequantize(&SP, NULL, bwq, by, n, NULL);
        CU_ASSERT_EQUAL(qg_block_dequantize_ref(SP.block, bwq, n, bw, NULL), QG_OK);
        qg_float_type_narrow(ft, bw, want, n);
        CU_ASSERT_EQUAL(memcmp(by, want, sizeof by), 0);
        qg_ftype_fake_quant(&SP, NULL, bx, by, bm, n, NULL);
        CU_ASSERT_EQUAL(qg_block_fake_quant_ref(SP.block, bf, bw, bwm, SP.compat_mask, n, NULL), QG_OK);
        qg_float_type_narrow(ft, bw, want, n);
        CU_ASSERT_EQUAL(memcmp(by, want, sizeof by), 0);
        CU_ASSERT_EQUAL(memcmp(bm, bwm, mb), 0);
        /* one element short of whole blocks: nothing written */
        memset(bq, 0xA5, sizeof bq);
        memset(by, 0xA5, sizeof by);
        memset(bm, 0xA5, sizeof bm);
        qg_ftype_quantize(&SP, NULL, bx, bq, n - 1, NULL);
        qg_ftype_fake_quant(&SP, NULL, bx, by, bm, n - 1, NULL);
        size_t touched = 0;
        for (size_t i = 0; i < n; i++)
            touched += bq[i] != 0xA5 || by[i] != 0xA5A5 || bm[i] != 0xA5;
        CU_ASSERT_EQUAL(touched, 0);
    }
}

/* The per-group and 4-bit drivers on a 16-bit spec without memory for
 * their scratch (a 4-bit tensor's bytes when a period of its parameters
 * does not fit the drivers' stack chunk, the bits of pieces that start
 * inside a byte): the reference on the codes (widen, reference, narrow),
 * never the kernel, and never the codes read as floats. A period that fits
 * the chunk needs no memory: the kernel runs. */
static void test_group_and_4bit_drivers_out_of_memory(void) {
    load("{\"name\":\"g\",\"dtype\":\"quint4\",\"qscheme\":\"per_group_affine\",\"channel_len\":5000,"
         "\"group_size\":3,\"float_type\":\"float16\",\"compat_mask\":true}");
    enum { n = 5000 }; /* one row of 5000: 1667 groups, the last one short */
    for (size_t k = 0; k < 1667; k++) {
        scale[k] = 0.01f * (float)(1 + k % 9);
        zp[k] = (int32_t)(k % 16);
    }
    qg_qparams qp = {scale, zp, NULL, 5000, 1};
    for (size_t i = 0; i < n; i++)
        xh[i] = narrow1(SP.float_type, (float)((int)(next32() % 801) - 400) * 0.01f);
    qg_float_type_widen(SP.float_type, xh, xf, n);
    size_t qb = qg_q_bytes(SP.dtype, n);
    qg_test_link_calls = 0;
    fail_from = 8;
    qg_pack4_quantize(&SP, qg_test_link_quantize, xh, q, n, &qp);
    fail_from = SIZE_MAX;
    qg_ref_quantize(&SP, xf, want_q, n, &qp);
    CU_ASSERT_EQUAL(memcmp(q, want_q, qb), 0);
    fail_from = 8;
    qg_pack4_dequantize(&SP, qg_test_link_dequantize, want_q, yh, n, &qp);
    fail_from = SIZE_MAX;
    qg_ref_dequantize(&SP, want_q, want_f, n, &qp);
    qg_float_type_narrow(SP.float_type, want_f, want_h, n);
    CU_ASSERT_EQUAL(memcmp(yh, want_h, 2 * n), 0);
    CU_ASSERT_EQUAL(qg_test_link_calls, 0);

    load("{\"name\":\"g\",\"dtype\":\"quint4\",\"qscheme\":\"per_group_affine\",\"channel_len\":10,"
         "\"group_size\":4,\"float_type\":\"float16\",\"compat_mask\":true}");
    enum { rows_n = 1000 }; /* 100 rows of 10: 300 groups, pieces of 8 and 2 */
    qp.channels = 10;
    qb = qg_q_bytes(SP.dtype, rows_n);
    const size_t mb = qg_mask_bytes(&SP, rows_n);
    fail_from = 8; /* rows of 10 fit the stack chunk: the kernel, on whole rows */
    qg_pack4_quantize(&SP, qg_test_link_quantize, xh, q, rows_n, &qp);
    qg_pack4_dequantize(&SP, qg_test_link_dequantize, want_q, yh, rows_n, &qp);
    fail_from = SIZE_MAX;
    CU_ASSERT_EQUAL(qg_test_link_calls, 2);
    qg_test_link_calls = 0;
    memset(mask, 0xA5, mb);
    fail_from = 8;
    qg_group_fake_quant(&SP, qg_test_link_fake_quant, xh, yh, mask, rows_n, &qp);
    fail_from = SIZE_MAX;
    qg_ref_fake_quant(&SP, xf, want_f, want_mask, rows_n, &qp);
    qg_float_type_narrow(SP.float_type, want_f, want_h, rows_n);
    CU_ASSERT_EQUAL(memcmp(yh, want_h, 2 * rows_n), 0);
    CU_ASSERT_EQUAL(memcmp(mask, want_mask, mb), 0);
    CU_ASSERT_EQUAL(qg_test_link_calls, 0);
}

static qg_status observe_f32(const float *x, size_t n, size_t inner, qg_observer *obs, qg_error *err) {
    return qg_observer_update(obs, x, n, inner, err);
}

/* observe: one widened call (a moving average folds once per call);
 * without memory for it, an error naming what failed, nothing observed. */
static void test_observe_driver(void) {
    load("{\"name\":\"o\",\"dtype\":\"quint8\",\"float_type\":\"float16\",\"observer\":{\"type\":"
         "\"moving_average_minmax\"}}");
    qg_observer *a, *b;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&SP, &a, &err), QG_OK);
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&SP, &b, &err), QG_OK);
    for (size_t i = 0; i < N; i++)
        xh[i] = narrow1(SP.float_type, (float)((int)(next32() % 2001) - 900) * 0.37f);
    qg_float_type_widen(SP.float_type, xh, xf, N);
    CU_ASSERT_EQUAL(qg_ftype_observe(&SP, observe_f32, xh, N, 1, a, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_observer_update(b, xf, N, 1, &err), QG_OK);
    float amn, amx, bmn, bmx;
    qg_observer_minmax(a, &amn, &amx);
    qg_observer_minmax(b, &bmn, &bmx);
    CU_ASSERT_EQUAL(u_of(amn), u_of(bmn));
    CU_ASSERT_EQUAL(u_of(amx), u_of(bmx));
    fail_from = 1024;
    CU_ASSERT_EQUAL(qg_ftype_observe(&SP, observe_f32, xh, N, 1, a, &err), QG_ERR_NOMEM);
    fail_from = SIZE_MAX;
    ASSERT_CONTAINS(err.message, "observe", "float16");
    qg_observer_minmax(a, &amn, &amx);
    CU_ASSERT_EQUAL(u_of(amn), u_of(bmn));
    qg_observer_destroy(a);
    qg_observer_destroy(b);
}

/* Specs whose kernels are the reference take float32 only; the fused step
 * and dynamic quantization refuse 16-bit specs, naming the field. */
static void test_refusals(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL(qg_spec_load_string("{\"name\":\"a\",\"dtype\":\"qint32\",\"float_type\":\"float16\"}", "t", NULL,
                                        0, &sp, &err),
                    QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "float_type", "float16", "qint32", "expected float32");
    CU_ASSERT_EQUAL(qg_spec_load_string("{\"name\":\"a\",\"float_type\":\"half\"}", "t", NULL, 0, &sp, &err),
                    QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "float_type", "half", "bfloat16");
    load("{\"name\":\"a\",\"dtype\":\"qint8\",\"float_type\":\"bfloat16\"}");
    CU_ASSERT_EQUAL(qg_quantize_dynamic_check(&SP, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "float_type", "bfloat16");
    char *json = qg_spec_to_json(&SP);
    ASSERT_CONTAINS(json, "\"float_type\": \"bfloat16\"");
    free(json);
}

int main(void) {
    static const qg_test tests[] = {
        {"every code widens exactly and narrows back", test_every_code_round_trips},
        {"narrowing is nearest-even (ties, overflow, subnormals)", test_narrowing_is_nearest_even},
        {"array loops equal the one-value functions", test_array_loops_equal_scalar},
        {"the block walks' 16-lane fp16 store equals the scalar one", test_group_f16_store_equals_scalar},
        {"drivers: pieces, one copy, element by element", test_drivers_on_every_path},
        {"drivers: block formats' 16-bit rows", test_block_rows_through_the_drivers},
        {"observe driver", test_observe_driver},
        {"per-group and 4-bit drivers out of memory", test_group_and_4bit_drivers_out_of_memory},
        {"refusals", test_refusals},
    };
    return QG_RUN("float_types", tests);
}
