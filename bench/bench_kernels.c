/* Throughput of the generated kernels on this machine, single thread, with
 * memcpy and XNNPACK's convert operators measured in the same run. Prints
 * one JSON object per line; bench/run_bench.py adds PyTorch and the table.
 *
 * usage: bench_kernels [--quick] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xnnpack.h>

#include "qgen/parallel.h"

#include "bench_timer.h"

#include "bench_act.h"
#include "bench_act_unchecked.h"
#include "bench_w.h"
#include "bench_w4.h"

static size_t n_cur;
static float *x, *y;
static int8_t *q;
static uint8_t *mask;
static qg_qparams qp_act, qp_w, qp_w4;
static xnn_operator_t xq, xdq;
static qg_observer *obs;
static qg_parallel par; /* two threads of the built-in pool */

typedef void (*bench_fn)(void);
static void fq_act(void) { bench_act_fake_quant(x, y, mask, n_cur, &qp_act); }
static void fq_act_avx2(void) { bench_act_fake_quant__avx2(x, y, mask, n_cur, &qp_act); }
static void fq_w(void) { bench_w_fake_quant(x, y, mask, n_cur, &qp_w); }
static void quant(void) { bench_act_quantize(x, q, n_cur, &qp_act); }
/* nan: unchecked, the caller's promise of finite inputs (docs/semantics.md, "NaN inputs") */
static void quant_unchecked(void) { bench_act_unchecked_quantize(x, q, n_cur, &qp_act); }
static void fq_unchecked(void) { bench_act_unchecked_fake_quant(x, y, mask, n_cur, &qp_act); }
static void fq_unchecked_avx2(void) { bench_act_unchecked_fake_quant__avx2(x, y, mask, n_cur, &qp_act); }
/* torchao.int4_weight_g32 rows of 4096: a scale per 32 elements, two 4-bit codes per byte */
static void quant_w4(void) { bench_w4_quantize(x, (bench_w4_q_t *)q, n_cur, &qp_w4); }
static void dequant_w4(void) { bench_w4_dequantize((const bench_w4_q_t *)q, y, n_cur, &qp_w4); }
static void dequant(void) { bench_act_dequantize(q, y, n_cur, &qp_act); }
static void observe(void) {
    qg_error err;
    bench_act_observe(x, n_cur, 1, obs, &err);
}
static void fq_act_t(void) {
    qg_parallel_fake_quant(&par, &bench_act_spec, bench_act_fake_quant, x, y, mask, n_cur, &qp_act);
}
static void fq_w_t(void) { qg_parallel_fake_quant(&par, &bench_w_spec, bench_w_fake_quant, x, y, mask, n_cur, &qp_w); }
/* the generated quantize types q by the spec's dtype; the threaded entry takes void * */
static void quant_kernel(const float *in, void *out, size_t n, const qg_qparams *qp) {
    bench_act_quantize(in, out, n, qp);
}
static void quant_t(void) { qg_parallel_quantize(&par, &bench_act_spec, quant_kernel, x, q, n_cur, &qp_act); }
static void observe_t(void) {
    qg_error err;
    qg_parallel_observe(&par, bench_act_observe, obs, x, n_cur, 1, &err);
}
static void copy(void) { memcpy(y, x, n_cur * sizeof(float)); }
static void xnn_quant(void) {
    xnn_setup_convert_nc_f32_qs8(xq, n_cur, x, q, NULL);
    xnn_run_operator(xq, NULL);
}
static void xnn_dequant(void) {
    xnn_setup_convert_nc_qs8_f32(xdq, n_cur, q, y, NULL);
    xnn_run_operator(xdq, NULL);
}

static double measure(bench_fn fn) { return bench_rate(fn, n_cur); }

static void report(const char *op, const char *impl, double rate) {
    printf("{\"op\": \"%s\", \"impl\": \"%s\", \"n\": %zu, \"elem_per_s\": %.6g}\n", op, impl, n_cur, rate);
    fflush(stdout);
}

/* op's kernel against a peer timed in turns (bench_paired_ratio): the
 * figure to quote where the machine's state changes between medians */
static void report_paired(const char *op, const char *impl, const char *peer, bench_fn a, bench_fn b) {
    printf("{\"op\": \"%s\", \"impl\": \"%s\", \"n\": %zu, \"paired_ratio_vs\": \"%s\", \"paired_ratio\": %.4f}\n", op,
           impl, n_cur, peer, bench_paired_ratio(a, b, n_cur));
    fflush(stdout);
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    static const size_t sizes[] = {4096, 65536, 1 << 20, 1 << 24};
    const size_t nmax = quick ? 1 << 20 : 1 << 24;
    /* QGEN_BENCH_OFFSET=16 places every buffer as malloc does (docs/performance.md, "Alignment") */
    const char *off_env = getenv("QGEN_BENCH_OFFSET");
    const size_t off = off_env ? (size_t)strtoul(off_env, NULL, 10) / 4 * 4 % 64 : 0;
    x = (float *)((char *)bench_alloc(nmax * sizeof(float) + off) + off);
    y = (float *)((char *)bench_alloc(nmax * sizeof(float) + off) + off);
    q = (int8_t *)bench_alloc(nmax + off) + off;
    mask = (uint8_t *)bench_alloc(nmax + off) + off;
    for (size_t i = 0; i < nmax; i++)
        x[i] = (float)((double)((i * 2654435761u) % 2000003) / 1e5 - 10.0);
    static float s_act = 0.05f, s_w[64];
    static int32_t z_act = 3, z_w[64];
    for (int c = 0; c < 64; c++)
        s_w[c] = 0.01f + 0.001f * (float)c;
    const size_t groups = qg_qparams_count(&bench_w4_spec, nmax, 1);
    float *s_w4 = bench_alloc(groups * sizeof(float));
    int32_t *z_w4 = bench_alloc(groups * sizeof(int32_t));
    for (size_t g = 0; g < groups; g++) {
        s_w4[g] = 1.2f + 0.01f * (float)(g % 37); /* max |x| / 7.5 for x in [-10, 10) */
        z_w4[g] = 0;
    }
    qp_act = (qg_qparams){&s_act, &z_act, NULL, 1, 1};
    qg_error err;
    if (xnn_initialize(NULL) != xnn_status_success ||
        xnn_create_convert_nc_f32_qs8(1, 1, 1, s_act, (int8_t)z_act, -128, 127, 0, &xq) != xnn_status_success ||
        xnn_create_convert_nc_qs8_f32(1, 1, 1, s_act, (int8_t)z_act, 0, &xdq) != xnn_status_success ||
        qg_observer_create(&bench_act_spec, &obs, &err)) {
        fprintf(stderr, "bench: setup failed\n");
        return 2;
    }
    qg_pool *pool;
    if (qg_pool_create(2, &pool, &err)) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    par = qg_pool_parallel(pool);
    fprintf(stderr, "bench: dispatch picked %s\n", bench_act_isa());
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && sizes[k] <= nmax; k++) {
        n_cur = sizes[k];
        qp_w = (qg_qparams){s_w, z_w, NULL, 64, n_cur / 64};
        qp_w4 = (qg_qparams){s_w4, z_w4, NULL, bench_w4_spec.channel_len, 1};
        bench_act_quantize(x, q, n_cur, &qp_act);
        report("fake_quant_per_tensor", bench_act_isa(), measure(fq_act));
        report("fake_quant_per_tensor", "avx2", measure(fq_act_avx2));
        report("fake_quant_per_channel", bench_w_isa(), measure(fq_w));
        report("quantize_qs8", bench_act_isa(), measure(quant));
        report("quantize_qs8", "xnnpack", measure(xnn_quant));
        report("quantize_qs8_unchecked", bench_act_unchecked_isa(), measure(quant_unchecked));
        report("fake_quant_per_tensor_unchecked", bench_act_unchecked_isa(), measure(fq_unchecked));
        report("fake_quant_per_tensor_unchecked", "avx2", measure(fq_unchecked_avx2));
        report("quantize_int4_g32", bench_w4_isa(), measure(quant_w4));
        report("dequantize_qs8", bench_act_isa(), measure(dequant));
        report("dequantize_qs8", "xnnpack", measure(xnn_dequant));
        report("dequantize_int4_g32", bench_w4_isa(), measure(dequant_w4)); /* q: quantize_int4_g32's */
        report("observe_minmax", bench_act_isa(), measure(observe));
        report("memcpy", "memcpy", measure(copy));
        report_paired("quantize_qs8", bench_act_isa(), "xnnpack", quant, xnn_quant);
        report_paired("quantize_qs8_unchecked", bench_act_unchecked_isa(), "xnnpack", quant_unchecked, xnn_quant);
        report_paired("fake_quant_per_tensor", bench_act_isa(), "memcpy", fq_act, copy);
        report_paired("fake_quant_per_tensor_unchecked", bench_act_unchecked_isa(), "memcpy", fq_unchecked, copy);
        if (n_cur < (1 << 20))
            continue;
        /* the same kernels cut across the pool's two threads (qgen/parallel.h) */
        report("fake_quant_per_tensor_2threads", bench_act_isa(), measure(fq_act_t));
        report("fake_quant_per_channel_2threads", bench_w_isa(), measure(fq_w_t));
        report("quantize_qs8_2threads", bench_act_isa(), measure(quant_t));
        report("observe_minmax_2threads", bench_act_isa(), measure(observe_t));
    }
    xnn_delete_operator(xq);
    xnn_delete_operator(xdq);
    qg_observer_destroy(obs);
    qg_pool_destroy(pool);
    return 0;
}
