/* ggml's block formats, one thread: ggml's own kernels (npm's prebuilt
 * libggml-cpu-<level>.so: the level ggml's loader picks for this CPU, its
 * highest ggml_backend_score, and the haswell (AVX2) one) and its
 * dequantizers (libggml-base.so's to_float) against qgen's: the generated
 * kernels where they exist (quantize and dequantize of q8_0, q4_0 and
 * mxfp4, the K-quants' dequantize, through the dispatchers of
 * bench/specs/bench_<fmt>.json: this CPU's best ISA; their
 * bytes and floats must equal the reference's, or the run fails), and the
 * runtime's reference (qg_block_*_ref, scalar C) for every format. Also
 * counts the bytes where ggml's SIMD quantizers differ from ggml's own
 * reference.
 * "paired_ratio" holds the kernels against ggml's measured in turns
 * (bench_paired_ratio), the figure to quote on a shared machine.
 * Usage: bench_ggml GGML_LIB_DIR [--quick]   (prints one JSON object) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgen/blocks.h"
#include "bench_q4_0.h"
#include "bench_q4_K.h"
#include "bench_q6_K.h"
#include "bench_mxfp4.h"
#include "bench_q8_0.h"
#include "bench_timer.h"
#include "ggml_peer.h"

typedef void (*kernel_fn)(const void *in, void *out, size_t n);

/* The generated entry points of one bench spec, as kernel_fns. */
#define DEQUANTIZE(spec)                                                                                               \
    static void spec##_dq(const void *in, void *out, size_t n) { spec##_dequantize(in, out, n, NULL); }
#define KERNELS(spec)                                                                                                  \
    DEQUANTIZE(spec)                                                                                                   \
    static void spec##_q(const void *in, void *out, size_t n) { spec##_quantize(in, out, n, NULL); }
KERNELS(bench_q8_0)
KERNELS(bench_q4_0)
DEQUANTIZE(bench_q4_K)
DEQUANTIZE(bench_q6_K)
KERNELS(bench_mxfp4)

typedef struct format {
    const char *name;
    qg_block_format qgen;
    bool quantize;          /* benchmarked from_float (the Q8_0 and Q4_0, and mxfp4's) */
    kernel_fn generated[2]; /* quantize (NULL: the K-quants' searches run in the runtime), dequantize */
} format;

static const format formats[] = {{"q8_0", QG_BLOCK_Q8_0, true, {bench_q8_0_q, bench_q8_0_dq}},
                                 {"q4_0", QG_BLOCK_Q4_0, true, {bench_q4_0_q, bench_q4_0_dq}},
                                 {"q4_K", QG_BLOCK_Q4_K, false, {NULL, bench_q4_K_dq}},
                                 {"q6_K", QG_BLOCK_Q6_K, false, {NULL, bench_q6_K_dq}},
                                 {"mxfp4", QG_BLOCK_MXFP4, true, {bench_mxfp4_q, bench_mxfp4_dq}}};

static struct {
    qg_ggml_row_fn fn;
    const void *in;
    void *out;
    int64_t n;
    qg_block_format qf;
    kernel_fn kernel;
} call;

static void run_ggml(void) { call.fn(call.in, call.out, call.n); }
static void run_qgen_quantize(void) { qg_block_quantize_ref(call.qf, call.in, (size_t)call.n, call.out, NULL); }
static void run_qgen_dequantize(void) { qg_block_dequantize_ref(call.qf, call.in, (size_t)call.n, call.out, NULL); }
static void run_kernel(void) { call.kernel(call.in, call.out, (size_t)call.n); }

static double rate(void (*fn)(void)) { return bench_rate(fn, (size_t)call.n) * 1e-9; }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ggml GGML_LIB_DIR [--quick]\n");
        return 2;
    }
    const bool quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    qg_ggml g;
    char why[4200];
    if (!qg_ggml_open(argv[1], &g, why, sizeof why)) {
        fprintf(stderr, "bench_ggml: %s\n", why);
        return 2;
    }
    static const size_t sizes[] = {4096, 65536, 1 << 20, 1 << 24};
    const size_t nsizes = quick ? 2 : 4, maxn = sizes[nsizes - 1];
    float *x = bench_alloc(maxn * sizeof(float)), *y = bench_alloc(maxn * sizeof(float));
    uint8_t *q = bench_alloc(maxn * 2), *r = bench_alloc(maxn * 2);
    qg_ggml_sample_row(x, maxn);
    printf("{\"ggml_best_variant\": \"%s\", \"rows\": [\n", g.best_name);
    const char *sep = "";
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        const format *fm = &formats[f];
        const int type = qg_ggml_type(&g, fm->qgen);
        if (type < 0) {
            fprintf(stderr, "bench_ggml: ggml has no type named %s\n", fm->name);
            return 2;
        }
        qg_ggml_row_fn simd[2] = {qg_ggml_from_float(g.best, type), qg_ggml_from_float(g.haswell, type)};
        for (size_t s = 0; s < nsizes; s++) {
            const size_t n = sizes[s], bytes = qg_block_row_bytes(fm->qgen, n);
            call.n = (int64_t)n;
            call.qf = fm->qgen;
            call.in = x;
            call.out = q;
            const bool kernels = fm->generated[0] != NULL, deq_kernels = fm->generated[1] != NULL;
            double quantize[5] = {0, 0, 0, 0, 0}, deq_kernel = 0, paired_q = 0, paired_dq = 0;
            size_t differing[2] = {0, 0};
            if (fm->quantize) {
                quantize[0] = rate(run_qgen_quantize);
                memcpy(r, q, bytes);
                if (kernels) {
                    call.kernel = fm->generated[0];
                    quantize[4] = rate(run_kernel);
                    if (memcmp(q, r, bytes) != 0) {
                        fprintf(stderr, "bench_ggml: the %s kernel's bytes differ from the reference's at n %zu\n",
                                fm->name, n);
                        return 1;
                    }
                }
                if (kernels) { /* against ggml's pick for this CPU, in turns */
                    call.fn = simd[0];
                    paired_q = bench_paired_ratio(run_kernel, run_ggml, n);
                }
                call.fn = qg_ggml_from_float_ref(&g, type);
                quantize[3] = rate(run_ggml);
                for (int v = 0; v < 2; v++) {
                    call.fn = simd[v];
                    quantize[1 + v] = rate(run_ggml);
                    for (size_t b = 0; b < bytes; b++)
                        differing[v] += q[b] != r[b];
                }
            }
            qg_block_quantize_ref(fm->qgen, x, n, q, NULL);
            call.in = q;
            call.out = y;
            const double deq_qgen = rate(run_qgen_dequantize);
            if (deq_kernels) {
                float *want = malloc(n * sizeof(float));
                if (!want)
                    return 2;
                memcpy(want, y, n * sizeof(float));
                call.kernel = fm->generated[1];
                deq_kernel = rate(run_kernel);
                const int same = memcmp(want, y, n * sizeof(float)) == 0;
                free(want);
                if (!same) {
                    fprintf(stderr, "bench_ggml: the %s kernel's floats differ from the reference's at n %zu\n",
                            fm->name, n);
                    return 1;
                }
            }
            call.fn = qg_ggml_to_float(&g, type);
            const double deq_ggml = rate(run_ggml);
            if (deq_kernels)
                paired_dq = bench_paired_ratio(run_kernel, run_ggml, n);
            printf("%s  {\"format\": \"%s\", \"n\": %zu, ", sep, fm->name, n);
            if (kernels)
                printf("\"qgen_kernels_gelem_s\": {\"quantize\": %.4f, \"dequantize\": %.4f}, ", quantize[4],
                       deq_kernel);
            else if (deq_kernels)
                printf("\"qgen_kernels_gelem_s\": {\"dequantize\": %.4f}, ", deq_kernel);
            if (fm->quantize)
                printf("\"quantize_gelem_s\": {\"qgen_reference\": %.4f, \"ggml_reference\": %.4f, \"ggml_%s\": %.4f, "
                       "\"ggml_haswell\": %.4f}, \"ggml_simd_bytes_differing_from_reference\": {\"%s\": %zu, "
                       "\"haswell\": %zu}, ",
                       quantize[0], quantize[3], g.best_name, quantize[1], quantize[2], g.best_name, differing[0],
                       differing[1]);
            printf("\"dequantize_gelem_s\": {\"qgen_reference\": %.4f, \"ggml_to_float\": %.4f}", deq_qgen, deq_ggml);
            if (deq_kernels) /* the kernels against ggml's, measured in turns */
                printf(", \"paired_ratio\": {\"dequantize_vs_to_float\": %.3f", paired_dq);
            if (deq_kernels && kernels && fm->quantize)
                printf(", \"quantize_vs_ggml_%s\": %.3f", g.best_name, paired_q);
            printf(deq_kernels ? "}}" : "}");
            sep = ",\n";
        }
    }
    printf("\n]}\n");
    return 0;
}
