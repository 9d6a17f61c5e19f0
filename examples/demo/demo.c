/* The demo behind `make demo`: one spec, generated data, every op of the
 * runtime run on it, invariants checked, and a short report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qgen/runtime.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Deterministic data: a mixture of a wide and a narrow normal (xorshift +
 * Box-Muller), so the observer and the clamp both have work to do. */
static void make_data(float *x, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i += 2) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            u[k] = ((double)(seed >> 11) + 0.5) / 9007199254740992.0;
        }
        double r = sqrt(-2.0 * log(u[0])), a = 6.283185307179586 * u[1];
        double sd = (i % 16 == 0) ? 6.0 : 1.0;
        x[i] = (float)(r * cos(a) * sd);
        if (i + 1 < n)
            x[i + 1] = (float)(r * sin(a) * sd);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SPEC.json\n", argv[0]);
        return 2;
    }
    qg_spec sp;
    qg_error err;
    if (qg_spec_load_file(argv[1], NULL, 0, &sp, &err)) {
        fprintf(stderr, "qgen_demo: %s\n", err.message);
        return 2;
    }
    const size_t n = (size_t)1 << 20, ch = qg_qscheme_is_per_channel(sp.qscheme) ? sp.channel_len : 1;
    const size_t inner = n / ch;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
    float *dx = malloc(n * sizeof(float)), *scale = malloc(ch * sizeof(float));
    int32_t *zp = malloc(ch * sizeof(int32_t));
    uint8_t *mask = malloc(n), *q = malloc(n * qg_dtype_size(sp.dtype));
    make_data(x, n, 0x9E3779B97F4A7C15ull);

    qg_observer *obs;
    if (qg_observer_create(&sp, &obs, &err)) {
        fprintf(stderr, "qgen_demo: %s\n", err.message);
        return 2;
    }
    printf("qgen demo: spec \"%s\" (%s, %s, range %lld..%lld, observer %s), %zu elements, %zu channel(s)\n", sp.name,
           qg_dtype_name(sp.dtype), qg_qscheme_name(sp.qscheme), (long long)sp.quant_min, (long long)sp.quant_max,
           qg_observer_type_name(sp.observer.type), n, ch);

    double t0 = now();
    if (qg_ref_fused_train_step(obs, x, y, mask, n, inner, scale, zp, &err)) {
        fprintf(stderr, "qgen_demo: %s\n", err.message);
        return 2;
    }
    double t_fused = now() - t0;
    qg_qparams qp = {scale, zp, NULL, ch, inner};
    t0 = now();
    qg_ref_quantize(&sp, x, q, n, &qp);
    double t_q = now() - t0;
    t0 = now();
    qg_ref_dequantize(&sp, q, back, n, &qp);
    double t_dq = now() - t0;
    t0 = now();
    qg_ref_fake_quant_backward(&sp, x, mask, dx, n);
    double t_bw = now() - t0;

    size_t round_trip_bad = 0, clipped = 0;
    double err2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        round_trip_bad += memcmp(&back[i], &y[i], 4) != 0;
        err2 += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
    }
    for (size_t i = 0; i < n; i++) {
        bool m = sp.compat_mask ? (mask[i / 8] >> (i % 8)) & 1 : mask[i];
        clipped += !m;
    }
    printf("  qparams: scale %.9g, zero point %d%s\n", (double)scale[0], (int)zp[0], ch > 1 ? " (channel 0)" : "");
    printf("  fake-quant RMS error %.3g, %zu elements clipped (gradient masked, %s mask)\n", sqrt(err2 / (double)n),
           clipped, sp.compat_mask ? "packed" : "byte");
    printf("  dequantize(quantize(x)) == fake_quant(x): %s (%zu mismatches)\n", round_trip_bad ? "NO" : "yes",
           round_trip_bad);
    printf("  the runtime's scalar reference (the oracle, not the kernels), one core:\n");
    printf("    fused train step %7.1f Melem/s\n", (double)n / t_fused * 1e-6);
    printf("    quantize         %7.1f Melem/s\n", (double)n / t_q * 1e-6);
    printf("    dequantize       %7.1f Melem/s\n", (double)n / t_dq * 1e-6);
    printf("    backward         %7.1f Melem/s\n", (double)n / t_bw * 1e-6);
    qg_observer_destroy(obs);
    free(x);
    free(y);
    free(back);
    free(dx);
    free(scale);
    free(zp);
    free(mask);
    free(q);
    return round_trip_bad ? 1 : 0;
}
