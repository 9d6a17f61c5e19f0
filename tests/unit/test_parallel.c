/* qgen/parallel.h: every op cut into pieces on several threads gives the
 * bytes of one call on the whole tensor, for JIT kernels of this CPU's best
 * ISA and for the reference, per tensor and per channel (runs of several
 * lengths, channels-last, one period and many), byte and packed masks,
 * lengths around the cut grain; observers and the fused step keep the
 * state one call keeps. Pieces run on the built-in pool and, in reverse
 * order, through a host's parallel_for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "qgen/jit.h"
#include "qgen/parallel.h"

static qg_jit *jit;
static qg_pool *pool2, *pool3;

static const size_t lengths[] = {0, 1, 63, 64, 65, 127, 128, 129, 200, 1000, 4099, 70001};

/* Runs the tasks last to first on this thread: results must not depend on
 * the order pieces run in. */
static size_t pieces_run; /* by the last reversed_for call */
static void reversed_for(void *pool, size_t count, qg_task_fn task, void *ctx) {
    (void)pool;
    pieces_run = count;
    for (size_t i = count; i-- > 0;)
        task(ctx, i);
}

/* The ways to cut: two and three pool threads, and seven pieces in
 * reverse; min_task_elements 1 cuts even short tensors. */
static qg_parallel cut_way(int w) {
    switch (w) {
    case 0: return (qg_parallel){qg_pool_parallel_for, pool2, 2, 1};
    case 1: return (qg_parallel){qg_pool_parallel_for, pool3, 3, 1};
    default: return (qg_parallel){reversed_for, NULL, 7, 1};
    }
}
enum { WAYS = 3 };

static void fill(float *x, size_t n, unsigned seed, float scale, float offset) {
    unsigned s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * scale + offset;
    }
}

static const qg_kernels *kernels_of(const char *json, qg_spec *sp) {
    qg_error err;
    const qg_kernels *k = NULL;
    if (qg_spec_load_string(json, "t", NULL, 0, sp, &err) || qg_jit_compile(jit, sp, 0, &k, &err))
        fprintf(stderr, "%s\n", err.message);
    return k;
}

/* A layout: C channels of runs of `inner` elements. */
typedef struct layout {
    size_t channels, inner;
} layout;

static bool same(const void *a, const void *b, size_t bytes, const char *what, size_t n, int way) {
    const bool eq = memcmp(a, b, bytes) == 0;
    if (!eq)
        fprintf(stderr, "\n%s differs: n %zu, way %d\n", what, n, way);
    return eq;
}

/* quantize, dequantize, fake_quant (mask or not) and backward of one spec
 * and layout, cut every way, against one call of the same kernel. */
static void check_elementwise(const qg_spec *sp, const qg_kernels *k, layout lay, size_t n) {
    const size_t C = lay.channels, qs = qg_dtype_size(sp->dtype), mb = qg_mask_bytes(sp, n) + 1;
    float scale[16];
    int32_t zp[16];
    for (size_t c = 0; c < C; c++) {
        scale[c] = 0.01f * (float)(c + 1);
        zp[c] = sp->quant_min < 0 ? (int32_t)c - 2 : (int32_t)(3 * c + 100);
    }
    const qg_qparams qp = {scale, zp, NULL, C, lay.inner};
    float *x = malloc(4 * n + 4), *y1 = malloc(4 * n + 4), *y2 = malloc(4 * n + 4);
    char *q1 = malloc(qs * n + 1), *q2 = malloc(qs * n + 1);
    uint8_t *m1 = malloc(mb), *m2 = malloc(mb);
    fill(x, n, (unsigned)n, 6.0f, 0.3f);
    for (int w = 0; w < WAYS; w++) {
        const qg_parallel par = cut_way(w);
        for (int ref = 0; ref < 2; ref++) {
            qg_fake_quant_fn fq = ref ? NULL : k->fake_quant;
            memset(m1, 0xA5, mb), memset(m2, 0xA5, mb);
            fq ? fq(x, y1, m1, n, &qp) : qg_ref_fake_quant(sp, x, y1, m1, n, &qp);
            pieces_run = 0;
            qg_parallel_fake_quant(&par, sp, fq, x, y2, m2, n, &qp);
            if (par.parallel_for == reversed_for && n > 20000) /* the comparison is of pieces, not one call */
                CU_ASSERT_TRUE(pieces_run >= 7);
            CU_ASSERT_TRUE(same(y1, y2, 4 * n, "fake_quant y", n, w));
            CU_ASSERT_TRUE(same(m1, m2, mb, "fake_quant mask", n, w));
            qg_parallel_fake_quant(&par, sp, fq, x, y2, NULL, n, &qp);
            CU_ASSERT_TRUE(same(y1, y2, 4 * n, "fake_quant y without a mask", n, w));
            qg_backward_fn bw = ref ? NULL : k->fake_quant_backward;
            bw ? bw(x, m1, y1, n) : qg_ref_fake_quant_backward(sp, x, m1, y1, n);
            qg_parallel_fake_quant_backward(&par, sp, bw, x, m1, y2, n);
            CU_ASSERT_TRUE(same(y1, y2, 4 * n, "backward dx", n, w));
            qg_quantize_fn qf = ref ? NULL : k->quantize;
            qf ? qf(x, q1, n, &qp) : qg_ref_quantize(sp, x, q1, n, &qp);
            qg_parallel_quantize(&par, sp, qf, x, q2, n, &qp);
            CU_ASSERT_TRUE(same(q1, q2, qs * n, "quantize q", n, w));
            qg_dequantize_fn df = ref ? NULL : k->dequantize;
            df ? df(q1, y1, n, &qp) : qg_ref_dequantize(sp, q1, y1, n, &qp);
            qg_parallel_dequantize(&par, sp, df, q1, y2, n, &qp);
            CU_ASSERT_TRUE(same(y1, y2, 4 * n, "dequantize x", n, w));
        }
    }
    free(x), free(y1), free(y2), free(q1), free(q2), free(m1), free(m2);
}

static void test_per_tensor(void) {
    qg_spec sp, spm;
    const qg_kernels *k = kernels_of("{\"name\": \"pt\", \"base\": \"torch.fbgemm.activation\"}", &sp);
    const qg_kernels *km =
        kernels_of("{\"name\": \"ptm\", \"base\": \"torch.fbgemm.activation\", \"compat_mask\": true}", &spm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(km);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        check_elementwise(&sp, k, (layout){1, 1}, lengths[i]);
        check_elementwise(&spm, km, (layout){1, 1}, lengths[i]);
    }
}

/* Runs of 1 (channels-last), 3, 64 and 100 elements over 5 channels: the
 * cuts fall inside a period, so pieces start at every channel. */
static void test_per_channel(void) {
    qg_spec sp, spm;
    const qg_kernels *k = kernels_of("{\"name\": \"pc\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 5}", &sp);
    const qg_kernels *km = kernels_of(
        "{\"name\": \"pcm\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 5, \"compat_mask\": true}", &spm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(km);
    static const size_t inners[] = {1, 3, 64, 100};
    for (size_t r = 0; r < 4; r++)
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            check_elementwise(&sp, k, (layout){5, inners[r]}, lengths[i]);
            check_elementwise(&spm, km, (layout){5, inners[r]}, lengths[i]);
        }
}

static void test_requantize(void) {
    qg_spec sp;
    const qg_kernels *k = kernels_of("{\"name\": \"rq\", \"base\": \"torch.fbgemm.activation\"}", &sp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    const float s_w[3] = {0.02f, 0.031f, 0.017f};
    const int32_t bias[3] = {-40, 7, 300};
    const size_t n = 70001;
    int32_t *acc = malloc(4 * n);
    uint8_t *q1 = malloc(n), *q2 = malloc(n);
    for (size_t i = 0; i < n; i++)
        acc[i] = (int32_t)((i * 2654435761u) % 20001) - 10000;
    static const size_t shapes[][2] = {{1, 1}, {3, 1}, {3, 7}, {3, 100}};
    for (size_t s = 0; s < 4; s++)
        for (int b = 0; b < 2; b++)
            for (int w = 0; w < WAYS; w++) {
                const qg_requant_params rp = {0.05f, s_w, b ? bias : NULL, 0.07f, 3, shapes[s][0], shapes[s][1]};
                const qg_parallel par = cut_way(w);
                k->requantize(acc, q1, n, &rp);
                pieces_run = 0;
                qg_parallel_requantize(&par, &sp, k->requantize, acc, q2, n, &rp);
                CU_ASSERT_TRUE(par.parallel_for != reversed_for || pieces_run >= 7);
                CU_ASSERT_TRUE(same(q1, q2, n, "requantize q", n, w));
                qg_parallel_requantize(&par, &sp, NULL, acc, q2, n, &rp);
                CU_ASSERT_TRUE(same(q1, q2, n, "reference requantize q", n, w));
            }
    free(acc), free(q1), free(q2);
}

static qg_observer *observer_of(const qg_spec *sp) {
    qg_observer *o = NULL;
    qg_error err;
    if (qg_observer_create(sp, &o, &err))
        fprintf(stderr, "%s\n", err.message);
    return o;
}

static bool same_state(const qg_observer *a, const qg_observer *b, size_t C) {
    float mn1[16], mx1[16], mn2[16], mx2[16];
    qg_observer_minmax(a, mn1, mx1);
    qg_observer_minmax(b, mn2, mx2);
    return memcmp(mn1, mn2, 4 * C) == 0 && memcmp(mx1, mx2, 4 * C) == 0 &&
           qg_observer_batches(a) == qg_observer_batches(b);
}

/* Three batches of varied scale and offset (a moving average remembers
 * them all), cut every way, kernel and reference. */
static void check_observer(const char *json, size_t C, size_t inner, size_t n) {
    qg_spec sp;
    const qg_kernels *k = kernels_of(json, &sp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    float *x = malloc(4 * n + 4);
    qg_error err;
    for (int w = 0; w < WAYS; w++)
        for (int ref = 0; ref < 2; ref++) {
            const qg_parallel par = cut_way(w);
            qg_observe_fn ob = ref ? NULL : k->observe;
            qg_observer *one = observer_of(&sp), *cut = observer_of(&sp);
            for (unsigned b = 0; b < 3; b++) {
                fill(x, n, b + 7, 3.0f * (float)(b + 1), (float)b - 1.0f);
                if (n > 2)
                    x[n / 2] = -0.0f, x[n - 1] = 0.0f;
                const qg_status s1 = ob ? ob(x, n, inner, one, &err) : qg_observer_update(one, x, n, inner, &err);
                pieces_run = 0;
                CU_ASSERT_EQUAL(qg_parallel_observe(&par, ob, cut, x, n, inner, &err), s1);
                if (par.parallel_for == reversed_for && n > 20000 && s1 == QG_OK)
                    CU_ASSERT_TRUE(pieces_run >= 2);
                CU_ASSERT_TRUE(same_state(one, cut, C));
            }
            if (n > 100) { /* NaN: the one call's error, the state kept */
                x[n - 7] = NAN;
                CU_ASSERT_NOT_EQUAL(qg_parallel_observe(&par, ob, cut, x, n, inner, &err), QG_OK);
                ASSERT_CONTAINS(err.message, "NaN", "element");
                CU_ASSERT_TRUE(same_state(one, cut, C));
            }
            qg_observer_destroy(one);
            qg_observer_destroy(cut);
        }
    free(x);
}

static void test_observers(void) {
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        check_observer("{\"name\": \"oa\", \"base\": \"torch.fbgemm.activation\"}", 1, 1, lengths[i]);
        check_observer("{\"name\": \"om\", \"base\": \"torch.fbgemm.v0.activation\"}", 1, 1, lengths[i]);
    }
    const char *w5 = "{\"name\": \"ow\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 5}";
    static const size_t inners[] = {1, 3, 64, 1000};
    for (size_t r = 0; r < 4; r++)
        for (size_t periods = 1; periods <= 3; periods++)
            check_observer(w5, 5, inners[r], 5 * inners[r] * periods);
    check_observer(w5, 5, 3, 16); /* not whole periods: the one call's error */
}

/* The fused training step, three steps with the switches moved. */
static void test_fused_step(void) {
    static const char *const specs[] = {
        "{\"name\": \"fa\", \"base\": \"torch.fbgemm.activation\"}",
        "{\"name\": \"fv\", \"base\": \"torch.x86.v0.activation\", \"compat_mask\": true}",
        "{\"name\": \"fw\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 5}",
    };
    const size_t n = 70000, inner = 14000;
    float *x = malloc(4 * n), *y1 = malloc(4 * n), *y2 = malloc(4 * n);
    uint8_t *m1 = malloc(n), *m2 = malloc(n);
    for (size_t s = 0; s < 3; s++) {
        qg_spec sp;
        const qg_kernels *k = kernels_of(specs[s], &sp);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        const size_t C = sp.channel_len;
        for (int w = 0; w < WAYS; w++) {
            const qg_parallel par = cut_way(w);
            qg_observer *one = observer_of(&sp), *cut = observer_of(&sp);
            for (unsigned step = 0; step < 3; step++) {
                qg_observer_enable(one, step != 1, step != 2);
                qg_observer_enable(cut, step != 1, step != 2);
                fill(x, n, step, 4.0f, 0.5f * (float)step);
                float s1[8], s2[8];
                int32_t z1[8], z2[8];
                qg_error e1, e2;
                CU_ASSERT_EQUAL(qg_kernels_fused_train_step(k, one, x, y1, m1, n, inner, s1, z1, &e1), QG_OK);
                pieces_run = 0;
                CU_ASSERT_EQUAL(qg_parallel_fused_train_step(&par, k->observe, k->fake_quant, cut, x, y2, m2, n, inner,
                                                             s2, z2, &e2),
                                QG_OK);
                CU_ASSERT_TRUE(par.parallel_for != reversed_for || pieces_run >= 2);
                CU_ASSERT_TRUE(same(y1, y2, 4 * n, "fused step y", n, w));
                CU_ASSERT_TRUE(same(m1, m2, qg_mask_bytes(&sp, n), "fused step mask", n, w));
                CU_ASSERT_TRUE(same(s1, s2, 4 * C, "fused step scale", n, w) && same(z1, z2, 4 * C, "zp", n, w));
                CU_ASSERT_TRUE(same_state(one, cut, C));
            }
            qg_observer_destroy(one);
            qg_observer_destroy(cut);
        }
    }
    free(x), free(y1), free(y2), free(m1), free(m2);
}

/* bfloat16/float16 tensors, packed 4-bit q and a per-group spec, cut
 * every way, with the JIT kernels and with the reference (NULL kernels),
 * against one call of the kernel. Per group runs one call. */
static void check_format(const char *json, size_t channels, size_t inner, size_t n) {
    qg_spec sp;
    const qg_kernels *k = kernels_of(json, &sp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    const size_t fs = qg_float_type_size(sp.float_type), qb = qg_q_bytes(sp.dtype, n) + 1,
                 mb = qg_mask_bytes(&sp, n) + 1;
    const size_t count = qg_qscheme_is_per_group(sp.qscheme) ? qg_qparams_count(&sp, n, inner) : channels;
    float *scale = malloc(4 * count + 4), *f = malloc(4 * n + 4);
    int32_t *zp = malloc(4 * count + 4);
    for (size_t c = 0; c < count; c++) {
        scale[c] = 0.02f * (float)(c % 7 + 1);
        zp[c] = sp.quant_min < 0 ? 0 : (int32_t)(c % 5 + 3);
    }
    const qg_qparams qp = {scale, zp, NULL, channels, inner};
    char *x = malloc(fs * n + 4), *y1 = malloc(fs * n + 4), *y2 = malloc(fs * n + 4);
    char *q1 = malloc(qb), *q2 = malloc(qb);
    uint8_t *m1 = malloc(mb), *m2 = malloc(mb);
    fill(f, n, (unsigned)n + 1, 0.8f, 0.05f);
    qg_float_type_narrow(sp.float_type, f, x, n);
    /* the kernels of any float type, as the parallel ops take them */
    qg_fake_quant_fn fq = (qg_fake_quant_fn)k->fake_quant;
    qg_backward_fn bw = (qg_backward_fn)k->fake_quant_backward;
    qg_quantize_fn qf = (qg_quantize_fn)k->quantize;
    qg_dequantize_fn df = (qg_dequantize_fn)k->dequantize;
    for (int w = 0; w < WAYS; w++) {
        const qg_parallel par = cut_way(w);
        for (int ref = 0; ref < 2; ref++) {
            memset(m1, 0xA5, mb), memset(m2, 0xA5, mb), memset(q1, 0x5A, qb), memset(q2, 0x5A, qb);
            fq((const float *)x, (float *)y1, m1, n, &qp);
            pieces_run = 0;
            qg_parallel_fake_quant(&par, &sp, ref ? NULL : fq, (const float *)x, (float *)y2, m2, n, &qp);
            if (par.parallel_for == reversed_for)
                CU_ASSERT_TRUE(qg_qscheme_is_per_group(sp.qscheme) ? pieces_run == 0 : pieces_run >= 2);
            CU_ASSERT_TRUE(same(y1, y2, fs * n, "fake_quant y", n, w));
            CU_ASSERT_TRUE(same(m1, m2, mb, "fake_quant mask", n, w));
            bw((const float *)x, m1, (float *)y1, n);
            qg_parallel_fake_quant_backward(&par, &sp, ref ? NULL : bw, (const float *)x, m1, (float *)y2, n);
            CU_ASSERT_TRUE(same(y1, y2, fs * n, "backward dx", n, w));
            qf((const float *)x, q1, n, &qp);
            qg_parallel_quantize(&par, &sp, ref ? NULL : qf, (const float *)x, q2, n, &qp);
            CU_ASSERT_TRUE(same(q1, q2, qb, "quantize q", n, w));
            df(q1, (float *)y1, n, &qp);
            qg_parallel_dequantize(&par, &sp, ref ? NULL : df, q1, (float *)y2, n, &qp);
            CU_ASSERT_TRUE(same(y1, y2, fs * n, "dequantize x", n, w));
        }
    }
    if (sp.float_type != QG_FLOAT32 && !qg_qscheme_is_per_group(sp.qscheme)) /* the fused step, cut */
        for (int w = 0; w < WAYS; w++)
            for (int ref = 0; ref < 2; ref++) {
                const qg_parallel par = cut_way(w);
                qg_observer *one = observer_of(&sp), *cut = observer_of(&sp);
                float s1[8], s2[8];
                int32_t z1[8], z2[8];
                qg_error e1, e2;
                for (unsigned step = 0; step < 2; step++) {
                    CU_ASSERT_EQUAL(qg_kernels_fused_train_step16(k, one, (const uint16_t *)x, (uint16_t *)y1, m1, n,
                                                                  inner, s1, z1, &e1),
                                    QG_OK);
                    pieces_run = 0;
                    CU_ASSERT_EQUAL(qg_parallel_fused_train_step(&par, ref ? NULL : (qg_observe_fn)k->observe,
                                                                 ref ? NULL : fq, cut, (const float *)x, (float *)y2,
                                                                 m2, n, inner, s2, z2, &e2),
                                    QG_OK);
                    CU_ASSERT_TRUE(par.parallel_for != reversed_for || pieces_run >= 2);
                    CU_ASSERT_TRUE(same(y1, y2, fs * n, "fused step y", n, w));
                    CU_ASSERT_TRUE(same(m1, m2, qg_mask_bytes(&sp, n), "fused step mask", n, w));
                    CU_ASSERT_TRUE(same(s1, s2, 4 * channels, "fused step scale", n, w));
                    CU_ASSERT_TRUE(same(z1, z2, 4 * channels, "fused step zero point", n, w));
                    CU_ASSERT_TRUE(same_state(one, cut, channels));
                }
                qg_observer_destroy(one);
                qg_observer_destroy(cut);
            }
    free(scale), free(zp), free(f), free(x), free(y1), free(y2), free(q1), free(q2), free(m1), free(m2);
}

static void test_formats(void) {
    check_format("{\"name\": \"hb\", \"base\": \"torch.fbgemm.activation\", \"float_type\": \"bfloat16\"}", 1, 1,
                 70001);
    check_format("{\"name\": \"hf\", \"base\": \"torch.fbgemm.weight\", \"channel_len\": 5, \"compat_mask\": "
                 "true, \"float_type\": \"float16\"}",
                 5, 3, 70005);
    check_format("{\"name\": \"q4\", \"dtype\": \"qint4\", \"qscheme\": \"per_tensor_symmetric\", "
                 "\"compat_mask\": true}",
                 1, 1, 70001);
    check_format("{\"name\": \"g4\", \"dtype\": \"quint4\", \"qscheme\": \"per_group_affine\", \"channel_len\": "
                 "20, \"group_size\": 8, \"ch_axis\": 1, \"float_type\": \"bfloat16\"}",
                 20, 1, 70000);
}

static void count_task(void *ctx, size_t i) { __atomic_fetch_add(&((int *)ctx)[i], 1, __ATOMIC_RELAXED); }

/* Every task runs once, job after job; bad thread counts are refused. */
static void test_pool(void) {
    enum { TASKS = 1000 };
    static int ran[TASKS];
    for (int job = 0; job < 50; job++)
        qg_pool_parallel_for(pool3, TASKS, count_task, ran);
    qg_pool_parallel_for(pool3, 0, count_task, ran);
    int wrong = 0;
    for (int i = 0; i < TASKS; i++)
        wrong += ran[i] != 50;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(qg_pool_threads(pool3), 3);
    qg_pool *p = NULL;
    qg_error err;
    CU_ASSERT_EQUAL(qg_pool_create(0, &p, &err), QG_OK);
    CU_ASSERT_TRUE(qg_pool_threads(p) >= 1);
    qg_pool_destroy(p);
    CU_ASSERT_EQUAL(qg_pool_create(5000, &p, &err), QG_ERR_INVALID);
    ASSERT_CONTAINS(err.message, "threads", "5000", "1024");
    CU_ASSERT_PTR_NULL(p);
}

int main(void) {
    qg_error err;
    const qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    if (qg_jit_create(&opt, &jit, &err) || qg_pool_create(2, &pool2, &err) || qg_pool_create(3, &pool3, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    static const qg_test tests[] = {
        {"per tensor", test_per_tensor},
        {"per channel", test_per_channel},
        {"requantize", test_requantize},
        {"observers", test_observers},
        {"fused step", test_fused_step},
        {"pool", test_pool},
        {"16-bit, 4-bit and per-group formats", test_formats},
    };
    const int status = QG_RUN("parallel", tests);
    qg_pool_destroy(pool2);
    qg_pool_destroy(pool3);
    qg_jit_destroy(jit);
    return status;
}
