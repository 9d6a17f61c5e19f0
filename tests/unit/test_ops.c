/* Hand-computed cases for every reference op, observer and qparams rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "qgen/runtime.h"

static qg_spec spec_of(const char *json) {
    qg_spec sp;
    qg_error err;
    if (qg_spec_load_string(json, "test", NULL, 0, &sp, &err) != QG_OK) {
        fprintf(stderr, "spec: %s\n", err.message);
        CU_FAIL_FATAL("spec did not load");
    }
    return sp;
}

static const float S_HALF = 0.5f;
static const int32_t Z_TEN = 10;

/* quint8, s = 0.5, z = 10: t = 2x. */
static void test_quantize_ties_saturation_nonfinite(void) {
    qg_spec sp = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\"}");
    qg_qparams qp = {&S_HALF, &Z_TEN, NULL, 1, 1};
    const float x[] = {0.0f, 0.25f, 0.75f, -0.25f, 1.25f, 1000.0f, -1000.0f, NAN, INFINITY, -INFINITY, -5.0f, 122.5f};
    /* t:               0    0.5     1.5    -0.5    2.5    sat      sat     nan  +inf      -inf      -10    245 */
    const uint8_t want[] = {10, 10, 12, 10, 12, 255, 0, 10, 255, 0, 0, 255};
    uint8_t q[12];
    qg_ref_quantize(&sp, x, q, 12, &qp);
    CU_ASSERT_EQUAL(memcmp(q, want, sizeof want), 0);
    float back[12];
    qg_ref_dequantize(&sp, q, back, 12, &qp);
    CU_ASSERT_EQUAL(back[0], 0.0f);
    CU_ASSERT_EQUAL(back[2], 1.0f);
    CU_ASSERT_EQUAL(back[5], 122.5f);
    CU_ASSERT_EQUAL(back[6], -5.0f);
}

static void test_fake_quant_masks(void) {
    qg_spec sp = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\"}");
    qg_qparams qp = {&S_HALF, &Z_TEN, NULL, 1, 1};
    const float x[] = {0.0f, 0.75f, -5.0f, -5.25f, 122.5f, 122.75f, NAN, INFINITY, 3.0f, -100.0f};
    const float want_y[] = {0.0f, 1.0f, -5.0f, -5.0f, 122.5f, 122.5f, 0.0f, 122.5f, 3.0f, -5.0f};
    /* -5.25: t = -10.5 -> -10 (even) -> q 0 in range; 122.75: t = 245.5 -> 246 -> q 256 out of range. */
    const uint8_t want_m[] = {1, 1, 1, 1, 1, 0, 0, 0, 1, 0};
    float y[10];
    uint8_t m[10];
    qg_ref_fake_quant(&sp, x, y, m, 10, &qp);
    CU_ASSERT_EQUAL(memcmp(y, want_y, sizeof y), 0);
    CU_ASSERT_EQUAL(memcmp(m, want_m, sizeof m), 0);

    qg_spec packed = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\",\"compat_mask\":true}");
    uint8_t pm[2] = {0xAA, 0xAA};
    CU_ASSERT_EQUAL(qg_mask_bytes(&packed, 10), 2);
    qg_ref_fake_quant(&packed, x, y, pm, 10, &qp);
    CU_ASSERT_EQUAL(pm[0], 0x1F); /* elements 0..4 in range, LSB first */
    CU_ASSERT_EQUAL(pm[1], 0x01); /* element 8; bits past n are zero */

    const float dy[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, -10};
    float dx[10], dxp[10];
    qg_ref_fake_quant_backward(&sp, dy, m, dx, 10);
    qg_ref_fake_quant_backward(&packed, dy, pm, dxp, 10);
    const float want_dx[] = {1, 2, 3, 4, 5, 0, 0, 0, 9, 0};
    CU_ASSERT_EQUAL(memcmp(dx, want_dx, sizeof dx), 0);
    CU_ASSERT_EQUAL(memcmp(dxp, want_dx, sizeof dx), 0);
    CU_ASSERT_FALSE(signbit(dx[9])); /* +0.0 where masked, even for negative dy */

    qg_spec nosat = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\",\"saturate\":false}");
    qg_ref_fake_quant(&nosat, x, y, m, 10, &qp);
    CU_ASSERT_EQUAL(m[5], 1);
    CU_ASSERT_EQUAL(m[9], 1);
    CU_ASSERT_EQUAL(m[6], 0); /* NaN never passes a gradient */

    qg_spec prop = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\",\"nan\":\"propagate\"}");
    qg_ref_fake_quant(&prop, x, y, NULL, 10, &qp);
    CU_ASSERT_TRUE(isnan(y[6]));
}

static void test_roundings(void) {
    const float one = 1.0f;
    const int32_t zero = 0;
    qg_qparams qp = {&one, &zero, NULL, 1, 1};
    const float x[] = {0.5f, -0.5f, 2.5f, -2.5f, 1.5f, 0.49999997f};
    int8_t q[6];
    qg_spec even = spec_of("{\"name\":\"a\",\"dtype\":\"qint8\"}");
    qg_ref_quantize(&even, x, q, 6, &qp);
    CU_ASSERT_TRUE(q[0] == 0 && q[1] == 0 && q[2] == 2 && q[3] == -2 && q[4] == 2 && q[5] == 0);
    qg_spec up = spec_of("{\"name\":\"a\",\"dtype\":\"qint8\",\"rounding\":\"half_up\"}");
    qg_ref_quantize(&up, x, q, 6, &qp);
    /* floor(t + 0.5) in fp32: 0.49999997 + 0.5 rounds to 1.0, as Horizon's formula does */
    CU_ASSERT_TRUE(q[0] == 1 && q[1] == 0 && q[2] == 3 && q[3] == -2 && q[4] == 2 && q[5] == 1);
    qg_spec away = spec_of("{\"name\":\"a\",\"dtype\":\"qint8\",\"rounding\":\"half_away\"}");
    qg_ref_quantize(&away, x, q, 6, &qp);
    CU_ASSERT_TRUE(q[0] == 1 && q[1] == -1 && q[2] == 3 && q[3] == -3 && q[4] == 2 && q[5] == 0);
}

/* docs/semantics.md's example where x * fl(1/s) and x / s round differently. */
static void test_scale_op_div_differs(void) {
    const float s = 0.00214854861f, x = 0.273939937f;
    const int32_t zero = 0;
    qg_qparams qp = {&s, &zero, NULL, 1, 1};
    int16_t qm, qd;
    qg_spec mul = spec_of("{\"name\":\"a\",\"dtype\":\"qint16\"}");
    qg_spec dv = spec_of("{\"name\":\"a\",\"dtype\":\"qint16\",\"scale_op\":\"div\"}");
    qg_ref_quantize(&mul, &x, &qm, 1, &qp);
    qg_ref_quantize(&dv, &x, &qd, 1, &qp);
    volatile float inv = 1.0f / s;
    CU_ASSERT_EQUAL(qm, (int16_t)nearbyintf(x * inv));
    CU_ASSERT_EQUAL(qd, (int16_t)nearbyintf(x / s));
    CU_ASSERT_NOT_EQUAL(qm, qd);
}

static void test_per_channel_layouts(void) {
    qg_spec sp = spec_of("{\"name\":\"w\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_affine\",\"channel_len\":2}");
    const float scale[] = {1.0f, 0.5f};
    const int32_t zp[] = {0, 3};
    /* inner = 3: channels 0,0,0,1,1,1,0,0,0,... */
    qg_qparams runs = {scale, zp, NULL, 2, 3};
    const float x[] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    int8_t q[12];
    qg_ref_quantize(&sp, x, q, 12, &runs);
    const int8_t want[] = {1, 1, 1, 5, 5, 5, 2, 2, 2, 7, 7, 7};
    CU_ASSERT_EQUAL(memcmp(q, want, 12), 0);
    /* channels-last: alternate */
    qg_qparams last = {scale, zp, NULL, 2, 1};
    qg_ref_quantize(&sp, x, q, 4, &last);
    CU_ASSERT_TRUE(q[0] == 1 && q[1] == 5 && q[2] == 1 && q[3] == 5);

    qg_spec fq = spec_of("{\"name\":\"e\",\"dtype\":\"quint8\",\"qscheme\":\"per_channel_affine_float_qparams\","
                         "\"channel_len\":1}");
    const float s1 = 0.5f, zf = 2.25f;
    qg_qparams fqp = {&s1, NULL, &zf, 1, 1};
    const float xf[] = {1.0f, -1.0f, -2.0f};
    uint8_t qf[3];
    qg_ref_quantize(&fq, xf, qf, 3, &fqp);
    /* rint(2x + 2.25): 4.25 -> 4, 0.25 -> 0, -1.75 -> -2 -> clamp 0 */
    CU_ASSERT_TRUE(qf[0] == 4 && qf[1] == 0 && qf[2] == 0);
    float yf[3];
    qg_ref_fake_quant(&fq, xf, yf, NULL, 3, &fqp);
    CU_ASSERT_EQUAL(yf[0], (float)((4.0 - 2.25) * 0.5));
}

static void test_calculate_qparams(void) {
    float s;
    int32_t z;
    qg_error err;
    qg_spec aff = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\"}");
    float two = 2.0f;
    CU_ASSERT_EQUAL(qg_calculate_qparams(&aff, &two, &two, 1, &s, &z, NULL, &err), QG_OK);
    CU_ASSERT_EQUAL(s, 2.0f / 255.0f); /* min == max is not special-cased */
    CU_ASSERT_EQUAL(z, 0);
    float lo = -1.0f, hi = 3.0f;
    qg_calculate_qparams(&aff, &lo, &hi, 1, &s, &z, NULL, &err);
    CU_ASSERT_EQUAL(s, 4.0f / 255.0f);
    CU_ASSERT_EQUAL(z, 0 - (int32_t)nearbyintf(-1.0f / (4.0f / 255.0f)));
    float inf = INFINITY, ninf = -INFINITY;
    qg_calculate_qparams(&aff, &inf, &ninf, 1, &s, &z, NULL, &err);
    CU_ASSERT_TRUE(s == 1.0f && z == 0);

    qg_spec sym8 = spec_of("{\"name\":\"a\",\"dtype\":\"qint8\",\"qscheme\":\"per_tensor_symmetric\"}");
    lo = -1.0f;
    hi = 2.0f;
    qg_calculate_qparams(&sym8, &lo, &hi, 1, &s, &z, NULL, &err);
    CU_ASSERT_TRUE(s == 2.0f / 127.5f && z == 0);
    qg_spec symu8 = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\",\"qscheme\":\"per_tensor_symmetric\"}");
    qg_calculate_qparams(&symu8, &lo, &hi, 1, &s, &z, NULL, &err);
    CU_ASSERT_EQUAL(z, 128);
    qg_spec symu8c = spec_of(
        "{\"name\":\"a\",\"dtype\":\"quint8\",\"qscheme\":\"per_tensor_symmetric\",\"quant_min\":0,\"quant_max\":255}");
    qg_calculate_qparams(&symu8c, &lo, &hi, 1, &s, &z, NULL, &err);
    CU_ASSERT_EQUAL(z, 127); /* custom range: (qmin + qmax) // 2 */
    qg_spec symu16 = spec_of("{\"name\":\"a\",\"dtype\":\"quint16\",\"qscheme\":\"per_tensor_symmetric\"}");
    qg_calculate_qparams(&symu16, &lo, &hi, 1, &s, &z, NULL, &err);
    CU_ASSERT_TRUE(s == 2.0f / 32767.5f && z == 32768);
    float zero = 0.0f;
    qg_calculate_qparams(&aff, &zero, &zero, 1, &s, &z, NULL, &err);
    CU_ASSERT_EQUAL(s, 0x1p-23f); /* eps floor */

    float nan = NAN;
    CU_ASSERT_EQUAL(qg_calculate_qparams(&aff, &nan, &hi, 1, &s, &z, NULL, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "NaN");
    CU_ASSERT_EQUAL(qg_calculate_qparams(&aff, &hi, &lo, 1, &s, &z, NULL, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "min <= max");
}

static void test_observers(void) {
    qg_error err;
    qg_observer *o;
    qg_spec ma =
        spec_of("{\"name\":\"a\",\"observer\":{\"type\":\"moving_average_minmax\",\"averaging_constant\":0.5}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&ma, &o, &err), QG_OK);
    const float b1[] = {-1.0f, 0.5f, 1.0f}, b2[] = {-3.0f, 5.0f};
    float mn, mx, s;
    int32_t z;
    CU_ASSERT_EQUAL(qg_observer_update(o, b1, 0, 1, &err), QG_OK); /* empty: skipped */
    qg_observer_minmax(o, &mn, &mx);
    CU_ASSERT_TRUE(mn == INFINITY && mx == -INFINITY);
    qg_observer_update(o, b1, 3, 1, &err);
    qg_observer_update(o, b2, 2, 1, &err);
    qg_observer_minmax(o, &mn, &mx);
    CU_ASSERT_TRUE(mn == -2.0f && mx == 3.0f); /* -1 + 0.5 * (-3 - -1), 1 + 0.5 * (5 - 1) */
    const float bad[] = {1.0f, NAN};
    CU_ASSERT_EQUAL(qg_observer_update(o, bad, 2, 1, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "NaN", "element 1", "kept");
    qg_observer_minmax(o, &mn, &mx);
    CU_ASSERT_TRUE(mn == -2.0f && mx == 3.0f); /* old state kept */
    qg_observer_reset(o);
    qg_observer_minmax(o, &mn, &mx);
    CU_ASSERT_EQUAL(mn, INFINITY);
    qg_observer_destroy(o);

    qg_spec pc =
        spec_of("{\"name\":\"w\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_symmetric\",\"channel_len\":2}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&pc, &o, &err), QG_OK);
    const float w[] = {1, -2, 3, 4, -8, 0.5f}; /* inner 3: ch0 = {1,-2,3}, ch1 = {4,-8,0.5} */
    CU_ASSERT_EQUAL(qg_observer_update(o, w, 5, 3, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "channel_len");
    CU_ASSERT_EQUAL(qg_observer_update(o, w, 6, 3, &err), QG_OK);
    float mins[2], maxs[2], ss[2];
    int32_t zs[2];
    qg_observer_minmax(o, mins, maxs);
    CU_ASSERT_TRUE(mins[0] == -2 && maxs[0] == 3 && mins[1] == -8 && maxs[1] == 4);
    qg_observer_qparams(o, ss, zs, NULL, &err);
    CU_ASSERT_TRUE(ss[0] == 3.0f / 127.5f && ss[1] == 8.0f / 127.5f && zs[0] == 0 && zs[1] == 0);
    qg_observer_destroy(o);

    qg_spec fixed = spec_of("{\"name\":\"f\",\"observer\":{\"type\":\"fixed_qparams\",\"scale\":0.00390625,"
                            "\"zero_point\":0}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&fixed, &o, &err), QG_OK);
    qg_observer_update(o, b2, 2, 1, &err);
    qg_observer_qparams(o, &s, &z, NULL, &err);
    CU_ASSERT_TRUE(s == 0.00390625f && z == 0);
    qg_observer_destroy(o);

    qg_spec ph = spec_of("{\"name\":\"p\",\"observer\":{\"type\":\"placeholder\"}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&ph, &o, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_observer_qparams(o, &s, &z, NULL, &err), QG_ERR_STATE);
    ASSERT_CONTAINS(err.message, "placeholder");
    qg_observer_destroy(o);
}

/* min and max as the element loop from x[0] gives them (the first of equal
 * extremes), in bits. */
static void loop_minmax(const float *x, size_t n, float *lo, float *hi) {
    *lo = *hi = x[0];
    for (size_t i = 1; i < n; i++) {
        *lo = x[i] < *lo ? x[i] : *lo;
        *hi = x[i] > *hi ? x[i] : *hi;
    }
}

static void test_observer_scans(void) {
    qg_spec mm = spec_of("{\"name\":\"m\",\"observer\":{\"type\":\"minmax\"}}");
    qg_error err;
    qg_observer *o;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&mm, &o, &err), QG_OK);
    enum { N = 41 };
    float x[N];
    int failures = 0;
    /* every length around the four-lane scan, a non-finite value at every place */
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t n = 1; n <= N; n++) {
        for (size_t p = 0; p < n; p++) {
            for (int b = 0; b < 3; b++) {
                for (size_t i = 0; i < n; i++)
                    x[i] = (float)i - 7.5f;
                x[p] = bad[b];
                if (p + 1 < n)
                    x[n - 1] = NAN; /* a later one must not be the one reported */
                char want[32];
                snprintf(want, sizeof want, "element %zu;", p);
                failures += qg_observer_update(o, x, n, 1, &err) != QG_ERR_INVALID || !strstr(err.message, want);
            }
        }
    }
    /* extremes of zero: the first zero's sign, wherever it falls among the
     * lanes (a histogram observer keeps its first batch's min/max as they
     * are; min/max observers make zeros +0.0) */
    qg_observer_destroy(o);
    qg_spec hist = spec_of("{\"name\":\"h\",\"observer\":{\"type\":\"histogram\",\"bins\":16}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&hist, &o, &err), QG_OK);
    float counts[16];
    unsigned seed = 3;
    for (size_t n = 1; n <= N; n++) {
        for (int trial = 0; trial < 40; trial++) {
            const int sign = trial % 2 ? 1 : -1; /* all >= 0 (min 0) or all <= 0 (max 0) */
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                const unsigned r = (seed >> 16) % 8;
                x[i] = r < 3 ? (r == 0 ? 0.0f : -0.0f) : (float)sign * (float)(r + trial % 5);
            }
            float lo, hi, want_lo, want_hi;
            loop_minmax(x, n, &want_lo, &want_hi);
            qg_observer_reset(o);
            failures += qg_observer_update(o, x, n, 1, &err) != QG_OK;
            qg_observer_histogram(o, counts, &lo, &hi);
            failures += memcmp(&lo, &want_lo, sizeof lo) != 0 || memcmp(&hi, &want_hi, sizeof hi) != 0;
        }
    }
    CU_ASSERT_EQUAL(failures, 0);
    qg_observer_destroy(o);
}

/* torch.histc adds 1.0f per element to a float bin, which stops at 2^24:
 * a bin of 2^24 + 3 elements reads 2^24, as it does in torch. */
static void test_histogram_bin_saturates(void) {
    const size_t n = ((size_t)1 << 24) + 4;
    float *x = malloc(n * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (size_t i = 0; i < n; i++)
        x[i] = 1.0f;
    x[n / 2] = 2.0f;
    qg_spec hist = spec_of("{\"name\":\"h\",\"observer\":{\"type\":\"histogram\",\"bins\":4}}");
    qg_error err;
    qg_observer *o;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&hist, &o, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_observer_update(o, x, n, 1, &err), QG_OK);
    float counts[4], lo, hi;
    qg_observer_histogram(o, counts, &lo, &hi);
    CU_ASSERT_TRUE(lo == 1.0f && hi == 2.0f);
    CU_ASSERT_TRUE(counts[0] == 16777216.0f && counts[1] == 0.0f && counts[2] == 0.0f && counts[3] == 1.0f);
    qg_observer_destroy(o);
    free(x);
}

static void test_histogram_basics(void) {
    qg_error err;
    qg_observer *o;
    qg_spec h = spec_of("{\"name\":\"h\",\"observer\":{\"type\":\"histogram\",\"bins\":64}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&h, &o, &err), QG_OK);
    float s, mn, mx;
    int32_t z;
    CU_ASSERT_EQUAL(qg_observer_qparams(o, &s, &z, NULL, &err), QG_OK);
    CU_ASSERT_TRUE(s == 1.0f && z == 0); /* no data yet */
    float x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = (float)(i % 100) / 10.0f; /* uniform on [0, 9.9] */
    qg_observer_update(o, x, 1000, 1, &err);
    qg_observer_qparams(o, &s, &z, NULL, &err);
    /* Uniform data: the search keeps (nearly) the whole range. */
    CU_ASSERT_TRUE(s > 9.0f / 255.0f && s <= 9.9f / 255.0f * 1.0001f);
    CU_ASSERT_EQUAL(z, 0);
    for (int i = 0; i < 1000; i++)
        x[i] = -x[i];
    qg_observer_update(o, x, 1000, 1, &err); /* merges onto a wider grid */
    qg_observer_minmax(o, &mn, &mx);
    CU_ASSERT_TRUE(mn == -9.9f && mx >= 9.9f);
    qg_observer_qparams(o, &s, &z, NULL, &err);
    CU_ASSERT_TRUE(z > 100 && z < 155);
    qg_observer_destroy(o);
}

static void test_fused_step(void) {
    qg_error err;
    qg_observer *o;
    qg_spec sp = spec_of("{\"name\":\"a\",\"compat_mask\":true,\"observer\":{\"type\":\"minmax\"}}");
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &o, &err), QG_OK);
    const float x[] = {-1.0f, 0.0f, 1.0f, 2.0f, 3.0f};
    float y[5], s;
    int32_t z;
    uint8_t m = 0;
    CU_ASSERT_EQUAL(qg_ref_fused_train_step(o, x, y, &m, 5, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(s, 4.0f / 255.0f);
    CU_ASSERT_EQUAL(z, 64);   /* 0 - rint(-1 / (4/255)) = rint(63.75) */
    CU_ASSERT_EQUAL(m, 0x1F); /* every element inside the observed range */
    qg_observer_destroy(o);
}

static void test_lsq_cases(void) {
    qg_spec sp = spec_of("{\"name\":\"l\",\"dtype\":\"quint8\"}");
    const float x[] = {0.4f, 300.0f, -2.0f}, dy[] = {1.0f, 2.0f, 3.0f}, s = 1.0f, zf = 0.0f;
    float dx[3];
    double ds, dz;
    qg_lsq_grads g = {dx, &ds, &dz};
    qg_ref_lsq_backward(&sp, x, dy, 3, &s, &zf, 1, 1, 1.0f, &g);
    CU_ASSERT_TRUE(dx[0] == 1.0f && dx[1] == 0.0f && dx[2] == 0.0f);
    /* in range: 1*(0-0.4); above: 2*(255-0); below: 3*(0-0) */
    CU_ASSERT_EQUAL(ds, (double)(1.0f * (0.0f - 0.4f)) + 510.0);
    CU_ASSERT_EQUAL(dz, -2.0 - 3.0);
    /* The per-tensor backward truncates z + 0.5: 4.5 -> 5, forward rounds to 4. */
    const float z45 = 4.5f, x0 = 0.0f;
    float y;
    qg_ref_lsq_forward(&sp, &x0, &y, 1, &s, &z45, 1, 1);
    CU_ASSERT_EQUAL(y, 0.0f);
    const float xm = -4.6f; /* forward z=4: xq = rint(-4.6)+4 = -1 -> below; backward z=5: rint(5-4.6)=0 -> in range */
    qg_ref_lsq_backward(&sp, &xm, dy, 1, &s, &z45, 1, 1, 1.0f, &g);
    CU_ASSERT_EQUAL(dx[0], 1.0f);
}

/* Equal, NaN equal to NaN. */
static bool same_sum(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void test_lsq_fast_matches_reference(void) {
    static const char *const specs[] = {
        "{\"name\":\"l\",\"dtype\":\"quint8\"}",
        ("{\"name\":\"l\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_affine\","
         "\"observer\":{\"type\":\"per_channel_minmax\"}}"),
        "{\"name\":\"l\",\"dtype\":\"quint8\",\"rounding\":\"half_up\"}",
    };
    enum { N = 1031 };
    static float x[N], dy[N], dx_ref[N], dx_fast[N];
    const float scale[3] = {0.25f, 0.0625f, 0.5f}, zf[3] = {10.3f, -4.5f, 127.5f};
    unsigned seed = 7;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        const int r = (int)(seed >> 16) % 2000 - 1000;
        x[i] = (float)r * 0.125f; /* multiples of 1/8: ties at scale 1/4 */
        dy[i] = (float)((int)(seed >> 8) % 17 - 8) * 0.5f;
    }
    x[5] = -0.0f, x[9] = 3e7f, x[10] = -3e7f, x[11] = 1e30f, x[12] = -INFINITY;
    x[N - 9] = NAN; /* the long run's sums are NaN in both */
    const size_t lengths[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 17, N - 10, N};
    int failures = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        qg_spec sp = spec_of(specs[k]);
        const size_t channels = k == 1 ? 3 : 1;
        static const size_t inners[] = {1, 5, 19}; /* 19: runs of two wide vectors and a tail */
        for (size_t m = 0; m < sizeof inners / sizeof inners[0]; m++) {
            const size_t inner = inners[m];
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
                const size_t n = lengths[l];
                double ds_ref[3], dz_ref[3], ds_fast[3], dz_fast[3];
                qg_lsq_grads ref = {dx_ref, ds_ref, dz_ref}, fast = {dx_fast, ds_fast, dz_fast};
                qg_ref_lsq_backward(&sp, x, dy, n, scale, zf, channels, inner, 0.5f, &ref);
                qg_lsq_backward(&sp, x, dy, n, scale, zf, channels, inner, 0.5f, &fast);
                failures += n && memcmp(dx_ref, dx_fast, n * sizeof dx_ref[0]) != 0;
                for (size_t c = 0; c < channels; c++)
                    failures += !same_sum(ds_ref[c], ds_fast[c]) + !same_sum(dz_ref[c], dz_fast[c]);
            }
        }
    }
    CU_ASSERT_EQUAL(failures, 0);
}

static void test_requantize_and_bias(void) {
    int32_t mult;
    int shift;
    qg_quantize_multiplier(0.5, &mult, &shift);
    CU_ASSERT_TRUE(mult == (1 << 30) && shift == 0);
    qg_quantize_multiplier(0.25, &mult, &shift);
    CU_ASSERT_TRUE(mult == (1 << 30) && shift == -1);
    qg_quantize_multiplier(0.5, &mult, &shift);
    CU_ASSERT_EQUAL(qg_multiply_by_quantized_multiplier(100, mult, shift), 50);
    CU_ASSERT_EQUAL(qg_multiply_by_quantized_multiplier(3, mult, shift), 2); /* 1.5 rounds away */
    /* gemmlowp's doubling high multiply nudges ties upward: -1.5 -> -1. */
    CU_ASSERT_EQUAL(qg_multiply_by_quantized_multiplier(-3, mult, shift), -1);
    qg_quantize_multiplier(0.25, &mult, &shift);
    /* the rounding shift sends ties away from zero: +-2.5 -> +-3 */
    CU_ASSERT_EQUAL(qg_multiply_by_quantized_multiplier(10, mult, shift), 3);
    CU_ASSERT_EQUAL(qg_multiply_by_quantized_multiplier(-10, mult, shift), -3);

    const float bias[] = {0.5f, -0.25f}, s_w[] = {0.01f, 0.01f};
    int32_t bq[2];
    qg_ref_quantize_bias(bias, bq, 2, 0.02f, s_w);
    CU_ASSERT_TRUE(bq[0] == 2500 && bq[1] == -1250);

    /* The worked case: zero weights, bias 0.5, output scale 1/510 -> 255, and 0.5 as float. */
    qg_spec out = spec_of("{\"name\":\"o\",\"dtype\":\"quint8\"}");
    int32_t acc[4] = {0, 0, 0, 0};
    uint8_t y[4];
    qg_requant_params rp = {0.02f, s_w, bq, 1.0f / 510.0f, 0, 1, 4};
    int32_t b0 = bq[0];
    rp.bias_q = &b0;
    qg_ref_requantize(&out, acc, y, 4, &rp);
    CU_ASSERT_TRUE(y[0] == 255 && y[3] == 255);
    qg_spec outfp = spec_of("{\"name\":\"o\",\"dtype\":\"quint8\",\"requant\":\"fixed_point\"}");
    qg_ref_requantize(&outfp, acc, y, 4, &rp);
    CU_ASSERT_TRUE(y[0] == 255 && y[3] == 255);
    float s_out = 1.0f / 510.0f, f;
    int32_t z0 = 0;
    qg_qparams qp = {&s_out, &z0, NULL, 1, 1};
    qg_ref_dequantize(&out, y, &f, 1, &qp);
    CU_ASSERT_EQUAL(f, 0.5f);

    /* fp32 scheme: ties to even; fixed point (shift 0 here): ties upward. */
    qg_spec q8 = spec_of("{\"name\":\"o\",\"dtype\":\"qint8\"}");
    qg_spec q8f = spec_of("{\"name\":\"o\",\"dtype\":\"qint8\",\"requant\":\"fixed_point\"}");
    const float one = 1.0f;
    int32_t a2[] = {101, -101, 1000};
    int8_t r[3];
    qg_requant_params half = {0.5f, &one, NULL, 1.0f, 0, 1, 1};
    qg_ref_requantize(&q8, a2, r, 3, &half);
    CU_ASSERT_TRUE(r[0] == 50 && r[1] == -50 && r[2] == 127);
    qg_ref_requantize(&q8f, a2, r, 3, &half);
    CU_ASSERT_TRUE(r[0] == 51 && r[1] == -50 && r[2] == 127);
}

static void test_qparams_validate(void) {
    qg_spec sp = spec_of("{\"name\":\"a\",\"dtype\":\"quint8\"}");
    qg_error err;
    float s = 0.0f;
    int32_t z = 0;
    qg_qparams qp = {&s, &z, NULL, 1, 1};
    CU_ASSERT_EQUAL(qg_qparams_validate(&sp, &qp, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "scale[0]", "got 0", "> 0");
    s = NAN;
    CU_ASSERT_EQUAL(qg_qparams_validate(&sp, &qp, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "nan");
    s = 1.0f;
    z = 300;
    CU_ASSERT_EQUAL(qg_qparams_validate(&sp, &qp, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "zero_point[0]", "300", "0..255");
    z = 3;
    CU_ASSERT_EQUAL(qg_qparams_validate(&sp, &qp, &err), QG_OK);
    qp.channels = 2;
    CU_ASSERT_EQUAL(qg_qparams_validate(&sp, &qp, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "channels");
}

static void test_quantizer_states(void) {
    qg_spec sp = spec_of("{\"name\":\"w\",\"dtype\":\"qint8\"}");
    qg_quantizer *qz;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_quantizer_create(&sp, &qz, &err), QG_OK);
    float w[4] = {0.3f, -0.77f, 1.26f, 100.0f}, orig[4], y[4];
    memcpy(orig, w, sizeof w);
    CU_ASSERT_EQUAL(qg_quantizer_state(qz), QG_STATE_INITIAL);
    qg_quantizer_apply(qz, w, y, 4, 1, &err);
    CU_ASSERT_EQUAL(memcmp(y, w, sizeof y), 0); /* INITIAL passes through */
    CU_ASSERT_EQUAL(qg_quantizer_bake(qz, w, 4, 1, &err), QG_ERR_STATE);
    ASSERT_CONTAINS(err.message, "bake()", "INITIAL");
    const float s = 0.5f;
    const int32_t z = 0;
    CU_ASSERT_EQUAL(qg_quantizer_activate(qz, &s, &z, &err), QG_OK);
    qg_quantizer_apply(qz, w, y, 4, 1, &err);
    const float fq[4] = {0.5f, -1.0f, 1.5f, 63.5f};
    CU_ASSERT_EQUAL(memcmp(y, fq, sizeof y), 0);
    CU_ASSERT_EQUAL(qg_quantizer_bake(qz, w, 4, 1, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_quantizer_state(qz), QG_STATE_BAKED);
    CU_ASSERT_EQUAL(memcmp(w, fq, sizeof w), 0);
    CU_ASSERT_EQUAL(qg_quantizer_dequantize(qz, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_quantizer_state(qz), QG_STATE_DEQUANTIZED);
    CU_ASSERT_EQUAL(memcmp(w, orig, sizeof w), 0);             /* float values back */
    CU_ASSERT_EQUAL(qg_quantizer_dequantize(qz, &err), QG_OK); /* harmless twice */
    CU_ASSERT_EQUAL(memcmp(w, orig, sizeof w), 0);
    qg_quantizer_apply(qz, orig, y, 4, 1, &err);
    CU_ASSERT_EQUAL(memcmp(y, orig, sizeof y), 0); /* pass-through */
    CU_ASSERT_EQUAL(qg_quantizer_restore(qz, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_quantizer_state(qz), QG_STATE_BAKED);
    CU_ASSERT_EQUAL(memcmp(w, fq, sizeof w), 0);
    CU_ASSERT_EQUAL(qg_quantizer_restore(qz, &err), QG_OK); /* unbake */
    CU_ASSERT_EQUAL(qg_quantizer_state(qz), QG_STATE_ACTIVATED);
    CU_ASSERT_EQUAL(memcmp(w, orig, sizeof w), 0); /* bit-exact originals */
    CU_ASSERT_EQUAL(qg_quantizer_restore(qz, &err), QG_ERR_STATE);
    CU_ASSERT_EQUAL(qg_quantizer_set_fp32(qz, &err), QG_OK);
    qg_quantizer_apply(qz, orig, y, 4, 1, &err);
    CU_ASSERT_EQUAL(memcmp(y, orig, sizeof y), 0);
    CU_ASSERT_EQUAL(qg_quantizer_set_passive(qz, &s, &z, &err), QG_OK);
    qg_quantizer_apply(qz, orig, y, 4, 1, &err);
    CU_ASSERT_EQUAL(memcmp(y, fq, sizeof y), 0);
    const int32_t zbad = 200;
    CU_ASSERT_EQUAL(qg_quantizer_set_passive(qz, &s, &zbad, &err), QG_ERR_INVALID);
    qg_quantizer_destroy(qz);
}

int main(void) {
    static const qg_test tests[] = {
        {"quantize: ties, saturation, NaN and inf", test_quantize_ties_saturation_nonfinite},
        {"fake_quant: byte and packed masks, backward", test_fake_quant_masks},
        {"rounding modes", test_roundings},
        {"scale_op div differs from mul_inv", test_scale_op_div_differs},
        {"per-channel layouts and float qparams", test_per_channel_layouts},
        {"calculate_qparams", test_calculate_qparams},
        {"observers", test_observers},
        {"histogram observer", test_histogram_basics},
        {"fused training step", test_fused_step},
        {"observer scans: the first non-finite element, zero extremes' signs", test_observer_scans},
        {"histogram bins stop at 2^24, as torch's float bins", test_histogram_bin_saturates},
        {"LSQ backward", test_lsq_cases},
        {"LSQ backward at speed against the reference", test_lsq_fast_matches_reference},
        {"requantize and bias", test_requantize_and_bias},
        {"qparams validation", test_qparams_validate},
        {"quantizer states", test_quantizer_states},
    };
    return QG_RUN("reference_ops", tests);
}
