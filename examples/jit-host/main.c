/* jit-host SPEC.json [isa]: JIT-compiles the spec's kernels, runs each op
 * on generated data, checks it against qgen's reference bit for bit and
 * prints its throughput. Exit status 0 when every op agrees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qgen/jit.h"

enum { N = 1 << 16, REPS = 200 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double rate(double seconds) { return (double)N * REPS / seconds / 1e6; }

static int report(const char *op, int agrees, double seconds) {
    printf("  %-20s %-8s %8.0f Melem/s\n", op, agrees ? "agrees" : "DIFFERS", rate(seconds));
    return agrees;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s SPEC.json [scalar|avx2|avx512|neon|rvv]\n", argv[0]);
        return 2;
    }
    qg_error err;
    qg_spec spec;
    if (qg_spec_load_file(argv[1], NULL, 0, &spec, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, false, false, false};
    if (argc == 3) {
        opt.isa = -2;
        for (int i = 0; i < QG_ISA_COUNT; i++)
            if (strcmp(argv[2], qg_isa_name((qg_isa)i)) == 0)
                opt.isa = i;
    }
    qg_jit *jit;
    const qg_kernels *k;
    double t0 = now();
    if (qg_jit_create(&opt, &jit, &err) || qg_jit_compile(jit, &spec, 0, &k, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    qg_jit_stats st;
    qg_jit_get_stats(jit, &st);
    printf("spec %s: %s kernels ready in %.1f ms (%s; cache %s)\n", spec.name, qg_isa_name(k->isa), (now() - t0) * 1e3,
           st.compiled ? "compiled" : "from the disk cache", qg_jit_cache_dir(jit)[0] ? qg_jit_cache_dir(jit) : "off");

    /* data: a ramp across the range, with ties, saturation and a NaN */
    const size_t C = qg_qscheme_is_per_channel(spec.qscheme) ? spec.channel_len : 1, inner = N / C / 4 + 1;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *r = malloc(N * sizeof *r);
    uint8_t *q = malloc(N * 4), *rq = malloc(N * 4), *m = malloc(N), *rm = malloc(N);
    float *scale = malloc(C * sizeof *scale), *zf = malloc(C * sizeof *zf);
    int32_t *zp = calloc(C, sizeof *zp);
    for (size_t c = 0; c < C; c++) {
        scale[c] = 0.02f * (float)(c % 5 + 1);
        zp[c] = spec.quant_min < 0 ? 0 : (int32_t)((spec.quant_max - spec.quant_min) / 3);
        zf[c] = (float)zp[c];
    }
    if (spec.observer.type == QG_OBS_FIXED_QPARAMS)
        scale[0] = spec.observer.fixed_scale, zp[0] = spec.observer.fixed_zero_point;
    for (size_t i = 0; i < N; i++)
        x[i] = (float)((double)i - N / 2) * 0.0025f + (i % 9 == 0 ? 0.01f : 0.0f);
    x[7] = 1e30f;
    x[8] = -1e30f;
    qg_qparams qp = {scale, zp, spec.qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS ? zf : NULL, C, inner};
    int ok = 1;

    t0 = now();
    for (int rep = 0; rep < REPS; rep++)
        k->fake_quant(x, y, m, N, &qp);
    double t = now() - t0;
    qg_ref_fake_quant(&spec, x, r, rm, N, &qp);
    const size_t mbytes = spec.compat_mask ? (N + 7) / 8 : N;
    ok &= report("fake_quant", memcmp(y, r, N * 4) == 0 && memcmp(m, rm, mbytes) == 0, t);

    t0 = now();
    for (int rep = 0; rep < REPS; rep++)
        k->fake_quant_backward(x, m, y, N);
    t = now() - t0;
    qg_ref_fake_quant_backward(&spec, x, rm, r, N);
    ok &= report("fake_quant_backward", memcmp(y, r, N * 4) == 0, t);

    t0 = now();
    for (int rep = 0; rep < REPS; rep++)
        k->quantize(x, q, N, &qp);
    t = now() - t0;
    qg_ref_quantize(&spec, x, rq, N, &qp);
    const size_t qbytes = qg_dtype_size(spec.dtype);
    ok &= report("quantize", memcmp(q, rq, N * qbytes) == 0, t);

    t0 = now();
    for (int rep = 0; rep < REPS; rep++)
        k->dequantize(q, y, N, &qp);
    t = now() - t0;
    qg_ref_dequantize(&spec, rq, r, N, &qp);
    ok &= report("dequantize", memcmp(y, r, N * 4) == 0, t);

    qg_observer *a, *b;
    if (qg_observer_create(&spec, &a, &err) || qg_observer_create(&spec, &b, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    const size_t obs_inner = spec.channel_len > 1 ? N / spec.channel_len : 1;
    t0 = now();
    qg_status sa = k->observe(x, N, obs_inner, a, &err);
    t = (now() - t0) * REPS;
    qg_status sb = qg_observer_update(b, x, N, obs_inner, &err);
    float amin[64], amax[64], bmin[64], bmax[64];
    int same = sa == sb;
    if (same && spec.channel_len <= 64) {
        qg_observer_minmax(a, amin, amax);
        qg_observer_minmax(b, bmin, bmax);
        same = memcmp(amin, bmin, spec.channel_len * 4) == 0 && memcmp(amax, bmax, spec.channel_len * 4) == 0;
    }
    ok &= report("observe", same, t);
    qg_observer_destroy(a);
    qg_observer_destroy(b);

    printf("%s\n", ok ? "every op agrees with the reference" : "MISMATCH");
    free(x), free(y), free(r), free(q), free(rq), free(m), free(rm), free(scale), free(zf), free(zp);
    qg_jit_destroy(jit);
    return ok ? 0 : 1;
}
