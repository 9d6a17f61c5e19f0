/* Conformance with PyTorch 1.13: runs libqgen_rt's reference ops on the
 * inputs make_reference.py recorded and compares with what torch returned,
 * bit for bit (relative 1e-5 only for sums: histogram scale, LSQ ds/dz).
 *
 * usage: test_conformance REFERENCE_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <jansson.h>

#include "npy.h"
#include "qgen/runtime.h"

static const char *ref_dir;
static json_t *manifest;
static unsigned long long elements_compared, cases_run, fma_filtered, fused_steps;

/* ---- manifest helpers ------------------------------------------------------ */

static float bits_to_float(json_int_t b) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float *floats_of(json_t *arr) {
    size_t n = json_array_size(arr);
    float *out = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        out[i] = bits_to_float(json_integer_value(json_array_get(arr, i)));
    return out;
}

static int32_t *ints_of(json_t *arr) {
    size_t n = json_array_size(arr);
    int32_t *out = malloc((n ? n : 1) * sizeof(int32_t));
    for (size_t i = 0; i < n; i++)
        out[i] = (int32_t)json_integer_value(json_array_get(arr, i));
    return out;
}

static qg_npy load(json_t *c, const char *key) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ref_dir, json_string_value(json_object_get(c, key)));
    qg_npy a;
    qg_error err;
    if (qg_npy_read(path, &a, &err)) {
        fprintf(stderr, "conformance: %s\n", err.message);
        memset(&a, 0, sizeof a);
    }
    return a;
}

static int spec_of(json_t *c, qg_spec *sp) {
    char *text = json_dumps(json_object_get(c, "spec"), JSON_COMPACT);
    qg_error err;
    qg_status st = qg_spec_load_string(text, json_string_value(json_object_get(c, "id")), NULL, 0, sp, &err);
    free(text);
    if (st)
        fprintf(stderr, "conformance: spec of %s: %s\n", json_string_value(json_object_get(c, "id")), err.message);
    return st == QG_OK;
}

static const char *id_of(json_t *c) { return json_string_value(json_object_get(c, "id")); }

/* Bitwise comparison of n elements of `size` bytes; reports the first
 * mismatch and returns how many differ. */
static size_t compare(const char *what, const char *id, const void *got, const void *want, size_t n, size_t size) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * size, (const char *)want + i * size, size) != 0 && bad++ == 0)
            first = i;
    elements_compared += n;
    if (bad) {
        fprintf(stderr, "\n  %s %s: %zu of %zu differ; first at %zu", id, what, bad, n, first);
        if (size == 4) {
            float g, w;
            memcpy(&g, (const char *)got + first * 4, 4);
            memcpy(&w, (const char *)want + first * 4, 4);
            fprintf(stderr, " (got %.9g, want %.9g)", (double)g, (double)w);
        }
        fputc('\n', stderr);
    }
    return bad;
}

/* Relative closeness, the only tolerance docs/semantics.md grants (for sums). */
static bool rel_close(double got, double want, double tol) {
    return got == want || fabs(got - want) <= tol * fabs(want);
}

typedef void (*case_fn)(json_t *c);

static void for_each_case(const char *op, case_fn fn) {
    size_t i, ran = 0;
    json_t *c;
    json_array_foreach(json_object_get(manifest, "cases"), i, c) {
        if (strcmp(json_string_value(json_object_get(c, "op")), op) != 0)
            continue;
        fma_filtered += (unsigned long long)json_integer_value(json_object_get(c, "fma_filtered"));
        fn(c);
        ran++;
        cases_run++;
    }
    CU_ASSERT_TRUE(ran > 0); /* the manifest must hold cases of every op */
}

/* qparams of a case (per tensor or per channel). */
typedef struct cq {
    float *scale, *zf;
    int32_t *zp;
    qg_qparams qp;
} cq;

static cq qparams_of(json_t *c) {
    cq q;
    q.scale = floats_of(json_object_get(c, "scale"));
    q.zp = ints_of(json_object_get(c, "zero_point"));
    json_t *zf = json_object_get(c, "zero_point_float");
    q.zf = zf ? floats_of(zf) : NULL;
    json_t *ch = json_object_get(c, "channels"), *inner = json_object_get(c, "inner");
    q.qp.scale = q.scale;
    q.qp.zero_point = q.zp;
    q.qp.zero_point_float = q.zf;
    q.qp.channels = ch ? (size_t)json_integer_value(ch) : 1;
    q.qp.inner = inner ? (size_t)json_integer_value(inner) : 1;
    return q;
}

static void cq_free(cq *q) {
    free(q->scale);
    free(q->zp);
    free(q->zf);
}

/* Runs fn on every segment (each length torch saw on its own). */
#define FOR_SEGMENTS(c, off, n)                                                                                        \
    for (size_t si_ = 0, off = 0, n = 0; si_ < json_array_size(json_object_get(c, "segments")); si_++, off += n)       \
        if ((n = (size_t)json_integer_value(json_array_get(json_object_get(c, "segments"), si_))), 1)

/* ---- element-wise ops ------------------------------------------------------- */

static void run_fake_quant(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_npy x = load(c, "x"), y = load(c, "y"), m = load(c, "mask");
    cq q = qparams_of(c);
    float *got = malloc(x.count * sizeof(float) + 4);
    uint8_t *mask = malloc(m.count + 8);
    size_t bad = 0, moff = 0;
    FOR_SEGMENTS(c, off, n) {
        qg_ref_fake_quant(&sp, (float *)x.data + off, got + off, mask + moff, n, &q.qp);
        moff += qg_mask_bytes(&sp, n);
    }
    bad += compare("y", id_of(c), got, y.data, y.count, 4);
    CU_ASSERT_EQUAL(moff, m.count);
    bad += compare("mask", id_of(c), mask, m.data, m.count, 1);
    /* In place, where the spec allows it: the same bits. */
    if (sp.in_place) {
        float *inplace = malloc(x.count * sizeof(float) + 4);
        memcpy(inplace, x.data, x.count * sizeof(float));
        FOR_SEGMENTS(c, off, n) { qg_ref_fake_quant(&sp, inplace + off, inplace + off, NULL, n, &q.qp); }
        bad += compare("y (in place)", id_of(c), inplace, y.data, y.count, 4);
        free(inplace);
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(got);
    free(mask);
    free(x.data);
    free(y.data);
    free(m.data);
    cq_free(&q);
}

static void run_backward(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_npy dy = load(c, "dy"), m = load(c, "mask"), dx = load(c, "dx");
    float *got = malloc(dy.count * sizeof(float) + 4);
    size_t moff = 0;
    FOR_SEGMENTS(c, off, n) {
        qg_ref_fake_quant_backward(&sp, (float *)dy.data + off, (uint8_t *)m.data + moff, got + off, n);
        moff += qg_mask_bytes(&sp, n);
    }
    CU_ASSERT_EQUAL(compare("dx", id_of(c), got, dx.data, dx.count, 4), 0);
    free(got);
    free(dy.data);
    free(m.data);
    free(dx.data);
}

static void run_quantize(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_npy x = load(c, "x"), q = load(c, "q");
    cq p = qparams_of(c);
    size_t es = qg_dtype_size(sp.dtype);
    CU_ASSERT_EQUAL(es, qg_npy_dtype_size(q.dtype));
    char *got = malloc(x.count * es + 4);
    FOR_SEGMENTS(c, off, n) { qg_ref_quantize(&sp, (float *)x.data + off, got + off * es, n, &p.qp); }
    CU_ASSERT_EQUAL(compare("q", id_of(c), got, q.data, q.count, es), 0);
    free(got);
    free(x.data);
    free(q.data);
    cq_free(&p);
}

static void run_dequantize(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_npy q = load(c, "q"), x = load(c, "x");
    cq p = qparams_of(c);
    size_t es = qg_dtype_size(sp.dtype);
    float *got = malloc(x.count * sizeof(float) + 4);
    FOR_SEGMENTS(c, off, n) { qg_ref_dequantize(&sp, (char *)q.data + off * es, got + off, n, &p.qp); }
    CU_ASSERT_EQUAL(compare("x", id_of(c), got, x.data, x.count, 4), 0);
    free(got);
    free(x.data);
    free(q.data);
    cq_free(&p);
}

static void test_fake_quant(void) { for_each_case("fake_quant", run_fake_quant); }
static void test_backward(void) { for_each_case("fake_quant_backward", run_backward); }
static void test_quantize(void) { for_each_case("quantize", run_quantize); }
static void test_dequantize(void) { for_each_case("dequantize", run_dequantize); }

/* ---- observers, histogram, fused step ------------------------------------------ */

static void run_observe(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_observer *obs;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &obs, &err), QG_OK);
    size_t ch = sp.channel_len, i;
    float *mn = malloc(ch * sizeof(float)), *mx = malloc(ch * sizeof(float)), *s = malloc(ch * sizeof(float)),
          *zf = malloc(ch * sizeof(float));
    int32_t *zp = malloc(ch * sizeof(int32_t));
    json_t *step;
    size_t bad = 0;
    json_array_foreach(json_object_get(c, "steps"), i, step) {
        qg_npy x = load(step, "x");
        CU_ASSERT_EQUAL(
            qg_observer_update(obs, x.data, x.count, (size_t)json_integer_value(json_object_get(step, "inner")), &err),
            QG_OK);
        CU_ASSERT_EQUAL(qg_observer_qparams(obs, s, zp, zf, &err), QG_OK);
        qg_observer_minmax(obs, mn, mx);
        float *wmn = floats_of(json_object_get(step, "min")), *wmx = floats_of(json_object_get(step, "max")),
              *ws = floats_of(json_object_get(step, "scale"));
        size_t nmm = json_array_size(json_object_get(step, "min"));
        bad += compare("min", id_of(c), mn, wmn, nmm, 4);
        bad += compare("max", id_of(c), mx, wmx, nmm, 4);
        bad += compare("scale", id_of(c), s, ws, json_array_size(json_object_get(step, "scale")), 4);
        if (sp.qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS) {
            float *wz = floats_of(json_object_get(step, "zero_point_float"));
            bad += compare("zero_point", id_of(c), zf, wz, ch, 4);
            free(wz);
        } else {
            int32_t *wz = ints_of(json_object_get(step, "zero_point"));
            bad += compare("zero_point", id_of(c), zp, wz, json_array_size(json_object_get(step, "zero_point")), 4);
            free(wz);
        }
        free(wmn);
        free(wmx);
        free(ws);
        free(x.data);
    }
    CU_ASSERT_EQUAL(bad, 0);
    qg_observer_destroy(obs);
    free(mn);
    free(mx);
    free(s);
    free(zf);
    free(zp);
}

static void run_histogram(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_observer *obs;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &obs, &err), QG_OK);
    qg_npy x = load(c, "x");
    CU_ASSERT_EQUAL(qg_observer_update(obs, x.data, x.count, 1, &err), QG_OK);
    float s;
    int32_t z;
    CU_ASSERT_EQUAL(qg_observer_qparams(obs, &s, &z, NULL, &err), QG_OK);
    float ws = bits_to_float(json_integer_value(json_array_get(json_object_get(c, "scale"), 0)));
    int32_t wz = (int32_t)json_integer_value(json_array_get(json_object_get(c, "zero_point"), 0));
    elements_compared += 2;
    if (!rel_close(s, ws, 1e-5) || z != wz)
        fprintf(stderr, "\n  %s: got scale %.9g zp %d, want %.9g zp %d\n", id_of(c), (double)s, (int)z, (double)ws,
                (int)wz);
    CU_ASSERT_TRUE(rel_close(s, ws, 1e-5));
    CU_ASSERT_EQUAL(z, wz);
    free(x.data);
    qg_observer_destroy(obs);
}

/* torch's QAT modules step by step: the switches a step ran with, then its
 * output, mask, qparams and running min/max. */
static size_t fused_step(json_t *c, json_t *step, const qg_spec *sp, qg_observer *obs, float *s, int32_t *zp) {
    qg_npy x = load(step, "x"), y = load(step, "y"), m = load(step, "mask");
    float *got = malloc(x.count * sizeof(float) + 4);
    uint8_t *mask = malloc(x.count + 8);
    json_t *on = json_object_get(step, "observer"), *fq = json_object_get(step, "fake_quant");
    qg_observer_enable(obs, !on || json_is_true(on), !fq || json_is_true(fq));
    qg_error err;
    qg_status st = qg_ref_fused_train_step(obs, x.data, got, mask, x.count,
                                           (size_t)json_integer_value(json_object_get(step, "inner")), s, zp, &err);
    if (st)
        fprintf(stderr, "\n  %s: %s\n", id_of(c), err.message);
    CU_ASSERT_EQUAL(st, QG_OK);
    const size_t ch = json_array_size(json_object_get(step, "scale"));
    CU_ASSERT_EQUAL(qg_mask_bytes(sp, x.count), m.count);
    size_t bad = compare("y", id_of(c), got, y.data, y.count, 4) + compare("mask", id_of(c), mask, m.data, m.count, 1);
    float *ws = floats_of(json_object_get(step, "scale")), *wmin = NULL, *wmax = NULL;
    int32_t *wz = ints_of(json_object_get(step, "zero_point"));
    bad += compare("scale", id_of(c), s, ws, ch, 4) + compare("zero_point", id_of(c), zp, wz, ch, 4);
    if (json_object_get(step, "min")) {
        float *gmin = malloc(ch * sizeof(float)), *gmax = malloc(ch * sizeof(float));
        qg_observer_minmax(obs, gmin, gmax);
        wmin = floats_of(json_object_get(step, "min"));
        wmax = floats_of(json_object_get(step, "max"));
        for (size_t k = 0; k < ch; k++) /* -0.0 == +0.0: qgen keeps +0.0 (docs/semantics.md) */
            bad += (gmin[k] != wmin[k]) + (gmax[k] != wmax[k]);
        elements_compared += 2 * ch;
        free(gmin);
        free(gmax);
    }
    free(ws);
    free(wz);
    free(wmin);
    free(wmax);
    free(got);
    free(mask);
    free(x.data);
    free(y.data);
    free(m.data);
    return bad;
}

static void run_fused(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    json_t *module = json_object_get(c, "module");
    if (module) /* the preset names the rule of the module it reproduces */
        CU_ASSERT_EQUAL(sp.train_qparams, strcmp(json_string_value(module), "FakeQuantize") == 0
                                              ? QG_TRAIN_QPARAMS_OBSERVER
                                              : QG_TRAIN_QPARAMS_FUSED_OP);
    qg_observer *obs;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &obs, &err), QG_OK);
    size_t i, bad = 0, ch = sp.channel_len;
    json_t *step;
    float *s = malloc(ch * sizeof(float));
    int32_t *zp = malloc(ch * sizeof(int32_t));
    char path[1100];
    snprintf(path, sizeof path, "%s/fused.state", ref_dir);
    json_array_foreach(json_object_get(c, "steps"), i, step) {
        bad += fused_step(c, step, &sp, obs, s, zp);
        fused_steps++;
        /* as `qgen run --op fused_train_step --state F` chains steps: the
         * next one starts from the saved state in a fresh observer */
        qg_observer *next;
        CU_ASSERT_EQUAL_FATAL(qg_observer_create(&sp, &next, &err), QG_OK);
        CU_ASSERT_EQUAL(qg_observer_save(obs, path, &err), QG_OK);
        CU_ASSERT_EQUAL(qg_observer_load(next, path, &err), QG_OK);
        qg_observer_destroy(obs);
        obs = next;
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(s);
    free(zp);
    qg_observer_destroy(obs);
}

static void test_observe(void) { for_each_case("observe", run_observe); }
static void test_histogram(void) { for_each_case("histogram", run_histogram); }
static void test_fused(void) { for_each_case("fused_train_step", run_fused); }

/* ---- LSQ -------------------------------------------------------------------- */

static void run_lsq(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    qg_npy x = load(c, "x"), dy = load(c, "dy"), y = load(c, "y"), dx = load(c, "dx");
    float *scale = floats_of(json_object_get(c, "scale")), *zf = floats_of(json_object_get(c, "zero_point_float"));
    float g = bits_to_float(json_integer_value(json_array_get(json_object_get(c, "grad_factor"), 0)));
    size_t ch = (size_t)json_integer_value(json_object_get(c, "channels"));
    size_t inner = (size_t)json_integer_value(json_object_get(c, "inner"));
    float *goty = malloc(x.count * sizeof(float) + 4), *gotdx = malloc(x.count * sizeof(float) + 4);
    double *ds = calloc(ch, sizeof(double)), *dz = calloc(ch, sizeof(double));
    qg_ref_lsq_forward(&sp, x.data, goty, x.count, scale, zf, ch, inner);
    qg_lsq_grads gr = {gotdx, ds, dz};
    qg_ref_lsq_backward(&sp, x.data, dy.data, x.count, scale, zf, ch, inner, g, &gr);
    size_t bad =
        compare("y", id_of(c), goty, y.data, y.count, 4) + compare("dx", id_of(c), gotdx, dx.data, dx.count, 4);
    for (size_t k = 0; k < ch; k++) {
        double wds = json_real_value(json_array_get(json_object_get(c, "ds"), k));
        double wdz = json_real_value(json_array_get(json_object_get(c, "dz"), k));
        elements_compared += 2;
        if (!rel_close(ds[k], wds, 1e-5) || !rel_close(dz[k], wdz, 1e-5)) {
            fprintf(stderr, "\n  %s channel %zu: ds %.9g (want %.9g), dz %.9g (want %.9g)\n", id_of(c), k, ds[k], wds,
                    dz[k], wdz);
            bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(goty);
    free(gotdx);
    free(ds);
    free(dz);
    free(scale);
    free(zf);
    free(x.data);
    free(dy.data);
    free(y.data);
    free(dx.data);
}

static void test_lsq(void) { for_each_case("lsq", run_lsq); }

/* ---- presets and the PTQ case ------------------------------------------------ */

static void run_preset(json_t *c) {
    char text[256];
    snprintf(text, sizeof text, "{\"name\": \"p\", \"base\": \"%s\"}", json_string_value(json_object_get(c, "preset")));
    qg_spec sp;
    qg_error err;
    CU_ASSERT_EQUAL_FATAL(qg_spec_load_string(text, "preset", NULL, 0, &sp, &err), QG_OK);
    bool ok =
        strcmp(qg_dtype_name(sp.dtype), json_string_value(json_object_get(c, "dtype"))) == 0 &&
        strcmp(qg_qscheme_name(sp.qscheme), json_string_value(json_object_get(c, "qscheme"))) == 0 &&
        sp.quant_min == json_integer_value(json_object_get(c, "quant_min")) &&
        sp.quant_max == json_integer_value(json_object_get(c, "quant_max")) &&
        strcmp(qg_observer_type_name(sp.observer.type), json_string_value(json_object_get(c, "observer"))) == 0 &&
        sp.observer.averaging_constant ==
            bits_to_float(json_integer_value(json_array_get(json_object_get(c, "averaging_constant"), 0))) &&
        sp.observer.eps == bits_to_float(json_integer_value(json_array_get(json_object_get(c, "eps"), 0))) &&
        sp.fast_training &&
        (sp.train_qparams == QG_TRAIN_QPARAMS_FUSED_OP) == json_is_true(json_object_get(c, "fused")) &&
        (!qg_qscheme_is_per_channel(sp.qscheme) || sp.ch_axis == json_integer_value(json_object_get(c, "ch_axis")));
    if (!ok)
        fprintf(stderr, "\n  preset %s differs from torch's qconfig\n", id_of(c));
    elements_compared++;
    CU_ASSERT_TRUE(ok);
}

static void run_conv_bias(json_t *c) {
    qg_spec sp;
    if (!spec_of(c, &sp)) {
        CU_FAIL("spec");
        return;
    }
    float *s_in = floats_of(json_object_get(c, "s_in")), *s_w = floats_of(json_object_get(c, "s_w")),
          *s_out = floats_of(json_object_get(c, "s_out")), *bias = floats_of(json_object_get(c, "bias"));
    int32_t bq[2];
    qg_ref_quantize_bias(bias, bq, 2, s_in[0], s_w);
    json_t *shape = json_object_get(c, "out_shape");
    size_t inner =
        (size_t)(json_integer_value(json_array_get(shape, 2)) * json_integer_value(json_array_get(shape, 3)));
    size_t n = 2 * inner;
    int32_t *acc = calloc(n, sizeof(int32_t)); /* all-zero weights: every accumulator is 0 */
    uint8_t *q = malloc(n);
    float *y = malloc(n * sizeof(float));
    qg_requant_params rp = {s_in[0], s_w, bq, s_out[0], 0, 2, inner};
    qg_ref_requantize(&sp, acc, q, n, &rp);
    float one = s_out[0];
    int32_t zero = 0;
    qg_qparams qp = {&one, &zero, NULL, 1, 1};
    qg_ref_dequantize(&sp, q, y, n, &qp);
    int32_t *wq = ints_of(json_object_get(c, "q"));
    float *wy = floats_of(json_object_get(c, "y"));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += q[i] != (uint8_t)wq[i];
    elements_compared += n;
    bad += compare("y", id_of(c), y, wy, n, 4);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(q[0], 255);
    CU_ASSERT_EQUAL(y[0], 0.5f);
    free(s_in);
    free(s_w);
    free(s_out);
    free(bias);
    free(acc);
    free(q);
    free(y);
    free(wq);
    free(wy);
}

static void test_presets(void) { for_each_case("preset", run_preset); }
static void test_conv_bias(void) { for_each_case("conv_bias", run_conv_bias); }

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR\n", argv[0]);
        return 2;
    }
    ref_dir = argv[1];
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.json", ref_dir);
    json_error_t jerr;
    manifest = json_load_file(path, 0, &jerr);
    if (!manifest) {
        fprintf(stderr, "%s:%d:%d: %s (run make_reference.py first)\n", path, jerr.line, jerr.column, jerr.text);
        return 2;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("torch_conformance", NULL, NULL);
    CU_add_test(s, "fake_quant", test_fake_quant);
    CU_add_test(s, "fake_quant_backward", test_backward);
    CU_add_test(s, "quantize", test_quantize);
    CU_add_test(s, "dequantize", test_dequantize);
    CU_add_test(s, "observers", test_observe);
    CU_add_test(s, "histogram", test_histogram);
    CU_add_test(s, "fused_train_step", test_fused);
    CU_add_test(s, "lsq", test_lsq);
    CU_add_test(s, "presets", test_presets);
    CU_add_test(s, "ptq_conv_bias", test_conv_bias);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    printf("\nconformance vs torch %s: %llu cases (%llu QAT module steps), %llu elements compared, %u failed "
           "assertions, %llu inputs dropped for torch's FMA contraction\n",
           json_string_value(json_object_get(manifest, "torch_version")), cases_run, fused_steps, elements_compared,
           failed, fma_filtered);
    CU_cleanup_registry();
    json_decref(manifest);
    return failed ? 1 : 0;
}
