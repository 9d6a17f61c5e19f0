/* ggml itself as the oracle of qgen's block-format reference: ggml's own
 * quantize_row_<fmt>_ref and dequantize_row_<fmt>, from npm's prebuilt
 * libggml-base.so (scripts/install-npm-peers.sh), run on the same rows as
 * qg_block_quantize_ref / qg_block_dequantize_ref, compared byte for byte.
 * Rows where ggml's C is undefined (non-finite values, a scale whose
 * reciprocal overflows) are left out of the comparison and checked against
 * qgen's own rules instead (docs/semantics.md, "Block formats").
 * Usage: test_ggml_reference LIBGGML_BASE_SO */
#include <dlfcn.h>
#include <float.h>
#include <math.h>

#include "qgen/blocks.h"
#include "qgen/runtime.h"
#include "../test_util.h"

typedef void (*quantize_row_fn)(const float *x, void *y, int64_t k);
typedef void (*dequantize_row_fn)(const void *x, float *y, int64_t k);
typedef uint16_t (*to_fp16_fn)(float f);

static void *ggml;

enum { ROW = 256, ROWS = 400 };

typedef struct format_case {
    qg_block_format f;
    const char *ggml_name;
    bool has_dequantize; /* ggml has no dequantize_row_q8_1: its d and codes go through q8_0's */
    size_t scale_bytes;  /* the fp16 (MXFP4: E8M0) fields at the block's start */
} format_case;

static const format_case formats[] = {
    {QG_BLOCK_Q8_0, "q8_0", true, 2},   {QG_BLOCK_Q8_1, "q8_1", false, 4}, {QG_BLOCK_Q4_0, "q4_0", true, 2},
    {QG_BLOCK_Q4_1, "q4_1", true, 4},   {QG_BLOCK_Q5_0, "q5_0", true, 2},  {QG_BLOCK_Q5_1, "q5_1", true, 4},
    {QG_BLOCK_MXFP4, "mxfp4", true, 1}, {QG_BLOCK_Q4_K, "q4_K", true, 4},  {QG_BLOCK_Q6_K, "q6_K", true, 0}};

static void *symbol(const char *fmt, const char *name) {
    char full[64];
    snprintf(full, sizeof full, fmt, name);
    void *p = dlsym(ggml, full);
    if (!p)
        fprintf(stderr, "libggml-base.so has no %s\n", full);
    return p;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float uniform(void) { return (float)(next_u32() >> 8) * 0x1p-24f * 2.0f - 1.0f; }

/* One row of the kind `kind`, every block finite with amax >= 2^-100 or 0
 * (ggml's arithmetic is defined C there). K-quant rows keep their scales
 * inside fp16's range (values 2^-10 to 2^10, one huge value 1000 times the
 * rest): beyond it their codes leave nearest_int's range, ggml asserts, and
 * qgen refuses the row (test_kquant_rules). */
static void make_row(int kind, float *x, bool kquant) {
    const int spread = kquant ? 20 : 120;
    const float scale = ldexpf(1.0f, (int)(next_u32() % (unsigned)spread) - spread / 2),
                offset = uniform() * scale * (kind & 1), huge = kquant ? 1000.0f * scale : 1e30f;
    for (int j = 0; j < ROW; j++)
        x[j] = uniform() * scale + offset;
    for (int b = 0; b < ROW / 32; b++) {
        float *blk = x + 32 * b;
        switch ((kind + b) % 9) {
        case 0: memset(blk, 0, 32 * sizeof *blk); break; /* all-zero block */
        case 1:                                          /* constant block */
            for (int j = 0; j < 32; j++)
                blk[j] = blk[0];
            break;
        case 2: /* amax just below, at and above a power of two */
            blk[next_u32() % 32] = ldexpf(1.0f, (int)(next_u32() % (unsigned)(spread / 2)) - spread / 4) *
                                   (1.0f - 0x1p-24f * (float)(next_u32() % 4));
            break;
        case 3: /* denormals beside a normal amax */
            for (int j = 0; j < 16; j++)
                blk[j] = (float)(int)(next_u32() % 1000 - 500) * 0x1p-149f;
            blk[20] = kquant ? 0x1p-10f : 0x1p-90f;
            break;
        case 4: blk[next_u32() % 32] = huge * (next_u32() & 1 ? 1 : -1); break; /* one huge value */
        case 5: /* exact ties: integers and halves times a power of two */
            for (int j = 0; j < 32; j++)
                blk[j] = ldexpf((float)((int)(next_u32() % 255) - 127) * 0.5f, (int)(next_u32() % 5));
            break;
        case 6: /* the signed extreme negative (Q4_0 and Q5_0 take its sign) */
            blk[next_u32() % 32] = -8.0f * scale;
            break;
        default: break;
        }
    }
}

static bool same_bits(const float *a, const float *b, size_t n, size_t *at) {
    for (size_t j = 0; j < n; j++)
        if (memcmp(&a[j], &b[j], sizeof(float)) != 0) {
            *at = j;
            return false;
        }
    return true;
}

static void test_quantize_equals_ggml(void) {
    static float x[ROW];
    static uint8_t ours[ROW * 2], theirs[ROW * 2];
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        quantize_row_fn ref = (quantize_row_fn)symbol("quantize_row_%s_ref", formats[f].ggml_name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        const size_t bytes = qg_block_row_bytes(formats[f].f, ROW);
        size_t differing = 0, refused = 0;
        for (int r = 0; r < ROWS; r++) {
            make_row(r, x, qg_block_elems(formats[f].f) == 256);
            ref(x, theirs, ROW);
            qg_error err;
            if (qg_block_quantize_ref(formats[f].f, x, ROW, ours, &err) != QG_OK) {
                /* the K-quants' rows whose codes pass nearest_int's range: ggml asserts (writes garbage) */
                CU_ASSERT(qg_block_elems(formats[f].f) == 256 && strstr(err.message, "nearest_int") != NULL);
                refused++;
                continue;
            }
            if (memcmp(ours, theirs, bytes) != 0 && differing++ == 0) {
                size_t at = 0;
                while (ours[at] == theirs[at])
                    at++;
                fprintf(stderr, "%s row %d: byte %zu (block %zu) is %02x, ggml's %02x\n", formats[f].ggml_name, r, at,
                        at / qg_block_bytes(formats[f].f), ours[at], theirs[at]);
            }
        }
        CU_ASSERT_EQUAL(differing, 0);
        CU_ASSERT_EQUAL(refused, 0);
        if (refused)
            fprintf(stderr, "%s: %zu of %d rows refused\n", formats[f].ggml_name, refused, ROWS);
    }
}

/* Every block's bytes from random bits (a random fp16 scale, NaN and inf
 * included): ggml's floats and qgen's, bit for bit. */
static void test_dequantize_equals_ggml(void) {
    static uint8_t q[ROW * 2], as_q8_0[ROW * 2];
    static float ours[ROW], theirs[ROW];
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        const bool via_q8_0 = !formats[f].has_dequantize;
        dequantize_row_fn ref =
            (dequantize_row_fn)symbol("dequantize_row_%s", via_q8_0 ? "q8_0" : formats[f].ggml_name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        const size_t bytes = qg_block_row_bytes(formats[f].f, ROW);
        size_t differing = 0, at = 0;
        for (int r = 0; r < ROWS; r++) {
            for (size_t k = 0; k < bytes; k++)
                q[k] = (uint8_t)next_u32();
            for (size_t b = 0; via_q8_0 && b < ROW / 32; b++) { /* q8_1 (d, s, qs[32]) as q8_0 (d, qs[32]) */
                memcpy(as_q8_0 + 34 * b, q + 36 * b, 2);
                memcpy(as_q8_0 + 34 * b + 2, q + 36 * b + 4, 32);
            }
            ref(via_q8_0 ? as_q8_0 : q, theirs, ROW);
            CU_ASSERT_EQUAL_FATAL(qg_block_dequantize_ref(formats[f].f, q, ROW, ours, NULL), QG_OK);
            if (!same_bits(ours, theirs, ROW, &at) && differing++ == 0)
                fprintf(stderr, "%s row %d: element %zu is %a, ggml's %a\n", formats[f].ggml_name, r, at, ours[at],
                        theirs[at]);
        }
        CU_ASSERT_EQUAL(differing, 0);
    }
}

/* ggml's fp32 -> fp16 (the scales' conversion) and qgen's, on a sweep of
 * every exponent with the mantissas around each rounding tie. */
static void test_fp16_conversion(void) {
    to_fp16_fn to16 = (to_fp16_fn)dlsym(ggml, "ggml_fp32_to_fp16");
    CU_ASSERT_PTR_NOT_NULL_FATAL(to16);
    size_t differing = 0;
    for (uint32_t top = 0; top < 512; top++)
        for (uint32_t low = 0; low < 1u << 14; low++) {
            const uint32_t u = top << 23 | (next_u32() & 0x7FC000u) | low;
            float v;
            memcpy(&v, &u, sizeof v);
            if (to16(v) != qg_float_to_f16(v) && differing++ == 0)
                fprintf(stderr, "fp16 of %a (0x%08x): qgen %04x, ggml %04x\n", v, u, qg_float_to_f16(v), to16(v));
        }
    CU_ASSERT_EQUAL(differing, 0);
}

/* qgen's rules where ggml's C is undefined: NaN reads as 0 and +-inf as
 * +-FLT_MAX; a block whose reciprocal scale overflows gets an all-zero
 * block's codes, its scales being zeros (of their own sign). */
static void test_rules_beyond_ggml(void) {
    static float x[64], mapped[64];
    static uint8_t a[128], b[128];
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        const qg_block_format fm = formats[f].f;
        const size_t bytes = qg_block_row_bytes(fm, 64);
        if (!bytes)
            continue; /* the K-quants: test_kquant_rules */
        for (int j = 0; j < 64; j++)
            x[j] = mapped[j] = uniform() * 100.0f;
        x[3] = NAN, mapped[3] = 0.0f;
        x[40] = INFINITY, mapped[40] = FLT_MAX;
        x[41] = -INFINITY, mapped[41] = -FLT_MAX;
        CU_ASSERT_EQUAL(qg_block_quantize_ref(fm, x, 64, a, NULL), QG_OK);
        CU_ASSERT_EQUAL(qg_block_quantize_ref(fm, mapped, 64, b, NULL), QG_OK);
        CU_ASSERT_EQUAL(memcmp(a, b, bytes), 0);

        /* amax 2^-140: a nonzero block whose 1/d overflows, beside an all-zero block */
        for (int j = 0; j < 32; j++)
            x[j] = (float)(int)(j % 7 - 3) * 0x1p-142f, x[32 + j] = 0.0f;
        CU_ASSERT_EQUAL(qg_block_quantize_ref(fm, x, 64, a, NULL), QG_OK);
        const size_t block = qg_block_bytes(fm), sb = formats[f].scale_bytes;
        CU_ASSERT_EQUAL(memcmp(a + sb, a + block + sb, block - sb), 0);
        for (size_t k = 0; k < sb; k++) /* MXFP4: the exponent floors at 0 */
            CU_ASSERT_EQUAL(a[k] & (sb > 1 ? 0x7F : 0xFF), 0);
    }
}

/* K-quants: NaN reads as 0; a row whose codes leave nearest_int's range
 * (an infinity read as FLT_MAX, a value far beyond its block's scale) is
 * refused, naming the block. */
static void test_kquant_rules(void) {
    static float x[512], zeroed[512];
    static uint8_t a[512], b[512];
    const qg_block_format kq[2] = {QG_BLOCK_Q4_K, QG_BLOCK_Q6_K};
    for (int k = 0; k < 2; k++) {
        for (int j = 0; j < 512; j++)
            x[j] = zeroed[j] = uniform();
        x[300] = NAN, zeroed[300] = 0.0f;
        qg_error err;
        CU_ASSERT_EQUAL(qg_block_quantize_ref(kq[k], x, 512, a, &err), QG_OK);
        CU_ASSERT_EQUAL(qg_block_quantize_ref(kq[k], zeroed, 512, b, &err), QG_OK);
        CU_ASSERT_EQUAL(memcmp(a, b, qg_block_row_bytes(kq[k], 512)), 0);
        x[300] = INFINITY;
        CU_ASSERT_EQUAL(qg_block_quantize_ref(kq[k], x, 512, a, &err), QG_ERR_INVALID);
        ASSERT_CONTAINS(err.message, "block 1 (elements 256 to 511)", "nearest_int");
    }
}

static void test_refusals(void) {
    float x[48] = {0};
    uint8_t q[64];
    qg_error err = {0};
    CU_ASSERT_EQUAL(qg_block_quantize_ref(QG_BLOCK_Q4_0, x, 48, q, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "row length: got 48", "multiple of q4_0's block of 32");
    CU_ASSERT_EQUAL(qg_block_dequantize_ref(QG_BLOCK_NONE, q, 32, x, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "format", "ggml's block formats");
    CU_ASSERT_EQUAL(qg_block_quantize_ref(QG_BLOCK_Q8_0, NULL, 32, q, &err), QG_ERR_ARG);
    CU_ASSERT_EQUAL(qg_block_row_bytes(QG_BLOCK_Q4_0, 64), 36);
    CU_ASSERT_EQUAL(qg_block_row_bytes(QG_BLOCK_Q5_1, 33), 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBGGML_BASE_SO\n", argv[0]);
        return 2;
    }
    ggml = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!ggml) {
        fprintf(stderr, "cannot load %s (%s); scripts/install-npm-peers.sh installs it\n", argv[1], dlerror());
        return 1;
    }
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("ggml.reference", NULL, NULL);
    CU_add_test(s, "quantize rows equal ggml's reference", test_quantize_equals_ggml);
    CU_add_test(s, "dequantize rows equal ggml's", test_dequantize_equals_ggml);
    CU_add_test(s, "fp16 scales convert as ggml's", test_fp16_conversion);
    CU_add_test(s, "rules where ggml's C is undefined", test_rules_beyond_ggml);
    CU_add_test(s, "K-quant rows ggml cannot take", test_kquant_rules);
    CU_add_test(s, "bad rows refused", test_refusals);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
