/* The fused training step's module state: both qparams rules, the observer
 * and fake-quant switches, and the state file that carries them. Values
 * against torch itself are the conformance suite's job; these cases pin
 * the rules one at a time so that a failure names the rule.
 *
 * usage: test_train_step TMPDIR */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../test_util.h"
#include "qgen/runtime.h"

static char dir[900];

static qg_spec spec_of(const char *json) {
    qg_spec sp;
    qg_error err;
    if (qg_spec_load_string(json, "t", NULL, 0, &sp, &err))
        fprintf(stderr, "%s\n", err.message);
    return sp;
}

static qg_observer *make(const qg_spec *sp) {
    qg_observer *o = NULL;
    qg_error err;
    if (qg_observer_create(sp, &o, &err))
        fprintf(stderr, "%s\n", err.message);
    return o;
}

/* ATen's rule, case by case (docs/semantics.md, "The fused training step"). */
static void test_fused_op_qparams(void) {
    const qg_spec w = spec_of("{\"name\": \"w\", \"base\": \"torch.qnnpack.weight\"}");
    const qg_spec a = spec_of("{\"name\": \"a\", \"base\": \"torch.qnnpack.activation\"}");
    float s, s2;
    int32_t z;
    qg_error err;
    /* symmetric: the range widened by the larger of |min|/128 and max/127 */
    float lo = -1.19911f, hi = 0.5f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&w, &lo, &hi, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(z, 0);
    CU_ASSERT_TRUE(fabsf(s - 1.19911f / 128.0f) < 1e-9f && s != 1.19911f / 127.5f);
    /* symmetric on one-signed data: no widening, zero point at the end */
    lo = 0.5f, hi = 1.0f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&w, &lo, &hi, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(z, -128);
    lo = -1.0f, hi = -0.5f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&w, &lo, &hi, 1, &s2, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(z, 127);
    CU_ASSERT_EQUAL(s, s2);
    /* scale in double, rounded once */
    lo = -0.3f, hi = 5.533f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&a, &lo, &hi, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(s, (float)(((double)hi - lo) / 255.0));
    /* small scales raised to 6.1e-5; a zero range gets 0.1 */
    lo = 0.0f, hi = 1e-6f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&a, &lo, &hi, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(s, 6.1e-5f);
    CU_ASSERT_EQUAL(z, 0);
    lo = hi = 0.0f;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&a, &lo, &hi, 1, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(s, 0.1f);
    /* nothing observed: refused, as torch refuses */
    lo = INFINITY, hi = -INFINITY;
    CU_ASSERT_EQUAL(qg_choose_qparams_fused_op(&a, &lo, &hi, 1, &s, &z, &err), QG_ERR_STATE);
    ASSERT_CONTAINS(err.message, "min/max[0]", "expected observed data");
}

static void test_rule_needs_moving_average(void) {
    qg_spec sp;
    qg_error err;
    CU_ASSERT_NOT_EQUAL(
        qg_spec_load_string("{\"name\": \"x\", \"train_qparams\": \"fused_op\"}", "s.json", NULL, 0, &sp, &err), QG_OK);
    ASSERT_CONTAINS(err.message, "train_qparams", "fused_op", "moving_average_minmax");
    CU_ASSERT_NOT_EQUAL(
        qg_spec_load_string("{\"name\": \"x\", \"train_qparams\": \"fused\"}", "s.json", NULL, 0, &sp, &err), QG_OK);
    ASSERT_CONTAINS(err.message, "s.json:1:", "train_qparams", "\"fused\"", "observer, fused_op");
}

/* One step on 11 elements; returns the status. */
static qg_status step(qg_observer *o, const float *x, float *y, uint8_t *m, float *s, int32_t *z) {
    qg_error err;
    return qg_ref_fused_train_step(o, x, y, m, 11, 1, s, z, &err);
}

static const float X1[11] = {-1.0f, 0.25f, 2.0f, 3.0f, -0.5f, 0.0f, 1.0f, 7.0f, -2.0f, 0.125f, 0.5f};
static const float X2[11] = {-8.0f, 0.25f, 20.0f, 3.0f, -0.5f, 0.0f, 1.0f, 7.0f, -2.0f, 0.125f, 0.5f};

/* Fake quant off: y = x, every mask bit set (and no bit past n), and for
 * fused_op the qparams stay; for observer they follow the observer. */
static void test_switches(void) {
    for (int rule = 0; rule < 2; rule++) {
        const qg_spec sp = spec_of(rule ? "{\"name\": \"a\", \"base\": \"torch.qnnpack.activation\", "
                                          "\"compat_mask\": true}"
                                        : "{\"name\": \"a\", \"base\": \"torch.qnnpack.v0.activation\", "
                                          "\"compat_mask\": true}");
        qg_observer *o = make(&sp);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        float y[11], s0, s1, s2, mn, mx;
        int32_t z0, z1, z2;
        uint8_t m[2];
        CU_ASSERT_EQUAL(step(o, X1, y, m, &s0, &z0), QG_OK);
        qg_observer_enable(o, true, false);
        CU_ASSERT_EQUAL(step(o, X2, y, m, &s1, &z1), QG_OK);
        CU_ASSERT_EQUAL(memcmp(y, X2, sizeof y), 0);
        CU_ASSERT_TRUE(m[0] == 0xFF && m[1] == 0x07);
        qg_observer_minmax(o, &mn, &mx);
        CU_ASSERT_TRUE(mn < -1.0f && mx > 7.0f); /* observed all the same */
        CU_ASSERT_TRUE(rule ? s1 == s0 && z1 == z0 : s1 != s0);
        /* observer off: min/max stay; fused_op recomputes from them */
        qg_observer_enable(o, false, true);
        CU_ASSERT_EQUAL(step(o, X1, y, m, &s2, &z2), QG_OK);
        float mn2, mx2;
        qg_observer_minmax(o, &mn2, &mx2);
        CU_ASSERT_TRUE(mn2 == mn && mx2 == mx);
        CU_ASSERT_TRUE(rule ? s2 != s1 : s2 == s1 && z2 == z1);
        bool on, fq;
        qg_observer_enabled(o, &on, &fq);
        CU_ASSERT_TRUE(!on && fq);
        qg_observer_reset(o);
        qg_observer_enabled(o, &on, &fq);
        CU_ASSERT_TRUE(on && fq);
        qg_observer_destroy(o);
    }
}

static void test_nan_changes_nothing(void) {
    const qg_spec sp = spec_of("{\"name\": \"a\", \"base\": \"torch.fbgemm.activation\"}");
    qg_observer *o = make(&sp);
    float y[11], s, z_s;
    int32_t z, z_z;
    uint8_t m[11];
    CU_ASSERT_EQUAL(step(o, X1, y, m, &s, &z), QG_OK);
    float bad[11];
    memcpy(bad, X2, sizeof bad);
    bad[4] = NAN;
    CU_ASSERT_EQUAL(step(o, bad, y, m, &z_s, &z_z), QG_ERR_INVALID);
    qg_observer_train_qparams(o, &z_s, &z_z);
    CU_ASSERT_TRUE(z_s == s && z_z == z);
    qg_observer_destroy(o);
}

/* A module's buffers restored into a fresh observer continue as the
 * observer they came from; bad buffers are refused and change nothing. */
static void test_restore(void) {
    const qg_spec sp = spec_of("{\"name\": \"a\", \"base\": \"torch.fbgemm.activation\"}");
    qg_observer *a = make(&sp), *b = make(&sp);
    float y[11], yb[11], s, sb, mn, mx;
    int32_t z, zb;
    uint8_t m[11], mb[11];
    CU_ASSERT_EQUAL(step(a, X1, y, m, &s, &z), QG_OK);
    qg_observer_minmax(a, &mn, &mx);
    qg_error err;
    CU_ASSERT_EQUAL(qg_observer_restore(b, &mn, &mx, &s, &z, &err), QG_OK);
    CU_ASSERT_EQUAL(step(a, X2, y, m, &s, &z), QG_OK);
    CU_ASSERT_EQUAL(step(b, X2, yb, mb, &sb, &zb), QG_OK);
    CU_ASSERT_TRUE(memcmp(y, yb, sizeof y) == 0 && memcmp(m, mb, sizeof m) == 0 && s == sb && z == zb);
    const float nan = NAN;
    const int32_t far = 300;
    CU_ASSERT_EQUAL(qg_observer_restore(b, &nan, &mx, &s, &z, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "NaN");
    CU_ASSERT_EQUAL(qg_observer_restore(b, &mn, &mx, &s, &far, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "zero_point[0]: 300");
    qg_observer_train_qparams(b, &sb, &zb);
    CU_ASSERT_TRUE(sb == s && zb == z);
    const qg_spec hs = spec_of("{\"name\": \"h\", \"observer\": {\"type\": \"histogram\"}}");
    qg_observer *h = make(&hs);
    CU_ASSERT_EQUAL(qg_observer_restore(h, &mn, &mx, &s, &z, &err), QG_ERR_STATE);
    ASSERT_CONTAINS(err.message, "histogram");
    qg_observer_destroy(a);
    qg_observer_destroy(b);
    qg_observer_destroy(h);
}

/* A state saved mid-training resumes bit for bit, switches included; a
 * version 1 file (before the training state) loads with torch's initial
 * buffers. */
static void test_state_file(void) {
    const qg_spec sp = spec_of("{\"name\": \"w\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 11}");
    qg_observer *a = make(&sp), *b = make(&sp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    float y1[11], y2[11], sa[11], sb[11];
    int32_t za[11], zb[11];
    uint8_t m1[11], m2[11];
    qg_error err;
    CU_ASSERT_EQUAL(qg_ref_fused_train_step(a, X1, y1, m1, 11, 1, sa, za, &err), QG_OK);
    qg_observer_enable(a, true, false);
    CU_ASSERT_EQUAL(qg_ref_fused_train_step(a, X2, y1, m1, 11, 1, sa, za, &err), QG_OK);
    char path[1000];
    snprintf(path, sizeof path, "%s/train.state", dir);
    CU_ASSERT_EQUAL(qg_observer_save(a, path, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_observer_load(b, path, &err), QG_OK);
    bool on, fq;
    qg_observer_enabled(b, &on, &fq);
    CU_ASSERT_TRUE(on && !fq);
    qg_observer_train_qparams(b, sb, zb);
    CU_ASSERT_TRUE(memcmp(sa, sb, sizeof sa) == 0 && memcmp(za, zb, sizeof za) == 0);
    qg_observer_enable(a, true, true);
    qg_observer_enable(b, true, true);
    CU_ASSERT_EQUAL(qg_ref_fused_train_step(a, X1, y1, m1, 11, 1, sa, za, &err), QG_OK);
    CU_ASSERT_EQUAL(qg_ref_fused_train_step(b, X1, y2, m2, 11, 1, sb, zb, &err), QG_OK);
    CU_ASSERT_TRUE(memcmp(y1, y2, sizeof y1) == 0 && memcmp(sa, sb, sizeof sa) == 0);

    /* the same file as version 1 wrote it: no flags, no training qparams */
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const size_t header = 64, ch = 11; /* docs/semantics.md, state files */
    unsigned char v1[4096];
    memcpy(v1, buf, header + 8 * ch);
    v1[8] = 1;
    memset(v1 + 52, 0, 4); /* flags */
    size_t v1len = header + 8 * ch;
    CU_ASSERT_EQUAL(len, header + 20 * ch + 8);
    uint64_t h = XXH64(v1, v1len, 0);
    for (int k = 0; k < 8; k++)
        v1[v1len + (size_t)k] = (unsigned char)(h >> (8 * k));
    f = fopen(path, "wb");
    fwrite(v1, 1, v1len + 8, f);
    fclose(f);
    CU_ASSERT_EQUAL(qg_observer_load(b, path, &err), QG_OK);
    qg_observer_enabled(b, &on, &fq);
    CU_ASSERT_TRUE(on && fq);
    qg_observer_train_qparams(b, sb, zb);
    CU_ASSERT_TRUE(sb[0] == 1.0f && zb[0] == 0 && sb[10] == 1.0f);
    /* unknown flag bits are corruption */
    buf[52] = 4;
    h = XXH64(buf, len - 8, 0);
    for (int k = 0; k < 8; k++)
        buf[len - 8 + (size_t)k] = (unsigned char)(h >> (8 * k));
    f = fopen(path, "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    CU_ASSERT_EQUAL(qg_observer_load(b, path, &err), QG_ERR_FORMAT);
    ASSERT_CONTAINS(err.message, "unknown flags 0x4");
    qg_observer_destroy(a);
    qg_observer_destroy(b);
}

int main(int argc, char **argv) {
    if (!qg_test_tmpdir(argc, argv, dir, sizeof dir))
        return 2;
    static const qg_test tests[] = {
        {"fused_op qparams, rule by rule", test_fused_op_qparams},
        {"fused_op needs a moving-average observer", test_rule_needs_moving_average},
        {"observer and fake-quant switches", test_switches},
        {"NaN changes nothing", test_nan_changes_nothing},
        {"restore from a module's buffers", test_restore},
        {"state file carries the training state", test_state_file},
    };
    return QG_RUN("train_step", tests);
}
