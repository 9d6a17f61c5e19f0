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
 * Usage: bench_ggml GGML_LIB_DIR [--quick]   (prints one JSON object) */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
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

typedef void (*row_fn)(const void *in, void *out, int64_t k);
typedef struct type_traits {
    const char *type_name;
    int64_t blck_size, blck_size_interleave;
    size_t type_size;
    bool is_quantized;
    row_fn to_float, from_float_ref;
} type_traits;
typedef struct type_traits_cpu {
    row_fn from_float;
} type_traits_cpu;

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
    int ggml_type;
    qg_block_format qgen;
    bool quantize;          /* benchmarked from_float (the Q8_0 and Q4_0, and mxfp4's) */
    kernel_fn generated[2]; /* quantize (NULL: the K-quants' searches run in the runtime), dequantize */
} format;

static const format formats[] = {{"q8_0", 8, QG_BLOCK_Q8_0, true, {bench_q8_0_q, bench_q8_0_dq}},
                                 {"q4_0", 2, QG_BLOCK_Q4_0, true, {bench_q4_0_q, bench_q4_0_dq}},
                                 {"q4_K", 12, QG_BLOCK_Q4_K, false, {NULL, bench_q4_K_dq}},
                                 {"q6_K", 14, QG_BLOCK_Q6_K, false, {NULL, bench_q6_K_dq}},
                                 {"mxfp4", 39, QG_BLOCK_MXFP4, true, {bench_mxfp4_q, bench_mxfp4_dq}}};

static struct {
    row_fn fn;
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

static void *open_lib(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "bench_ggml: cannot load %s: %s (scripts/install-npm-peers.sh installs it)\n", path, dlerror());
        exit(2);
    }
    return h;
}

/* ggml's choice among its CPU variants: the highest ggml_backend_score. */
static void *best_variant(const char *dir, char *name, size_t cap) {
    DIR *d = opendir(dir);
    if (!d)
        exit(2);
    int best = 0;
    void *pick = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "libggml-cpu-", 12) != 0)
            continue;
        void *h = open_lib(dir, e->d_name);
        int (*score)(void) = (int (*)(void))dlsym(h, "ggml_backend_score");
        const int s = score ? score() : 0;
        if (s > best) {
            best = s;
            pick = h;
            snprintf(name, cap, "%.*s", (int)(strlen(e->d_name) - 15), e->d_name + 12);
        }
    }
    closedir(d);
    return pick;
}

static row_fn from_float_of(void *cpu, int type) {
    void (*init)(void) = (void (*)(void))dlsym(cpu, "ggml_cpu_init");
    const type_traits_cpu *(*traits)(int) = (const type_traits_cpu *(*)(int))dlsym(cpu, "ggml_get_type_traits_cpu");
    if (!init || !traits)
        exit(2);
    init();
    return traits(type)->from_float;
}

static double rate(void (*fn)(void)) { return bench_rate(fn, (size_t)call.n) * 1e-9; }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ggml GGML_LIB_DIR [--quick]\n");
        return 2;
    }
    const bool quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    void *base = open_lib(argv[1], "libggml-base.so"), *haswell = open_lib(argv[1], "libggml-cpu-haswell.so");
    char best_name[64] = "";
    void *best = best_variant(argv[1], best_name, sizeof best_name);
    const type_traits *(*traits)(int) = (const type_traits *(*)(int))dlsym(base, "ggml_get_type_traits");
    if (!best || !traits)
        return 2;
    static const size_t sizes[] = {4096, 65536, 1 << 20, 1 << 24};
    const size_t nsizes = quick ? 2 : 4, maxn = sizes[nsizes - 1];
    float *x = bench_alloc(maxn * sizeof(float)), *y = bench_alloc(maxn * sizeof(float));
    uint8_t *q = bench_alloc(maxn * 2), *r = bench_alloc(maxn * 2);
    uint64_t state = 0x9E3779B97F4A7C15ull; /* blocks of random values, each at its own scale 2^-8 .. 2^8 */
    float scale = 1.0f;
    for (size_t i = 0; i < maxn; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        if (i % 32 == 0)
            scale = ldexpf(1.0f, (int)(state >> 59) - 8);
        x[i] = ((float)(state >> 40) * 0x1p-24f * 2.0f - 1.0f) * scale;
    }
    printf("{\"ggml_best_variant\": \"%s\", \"rows\": [\n", best_name);
    const char *sep = "";
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        const format *fm = &formats[f];
        const type_traits *t = traits(fm->ggml_type);
        if (!t || strcmp(t->type_name, fm->name) != 0) {
            fprintf(stderr, "bench_ggml: ggml type %d is %s; expected %s\n", fm->ggml_type, t ? t->type_name : "?",
                    fm->name);
            return 2;
        }
        row_fn simd[2] = {from_float_of(best, fm->ggml_type), from_float_of(haswell, fm->ggml_type)};
        for (size_t s = 0; s < nsizes; s++) {
            const size_t n = sizes[s], bytes = qg_block_row_bytes(fm->qgen, n);
            call.n = (int64_t)n;
            call.qf = fm->qgen;
            call.in = x;
            call.out = q;
            const bool kernels = fm->generated[0] != NULL, deq_kernels = fm->generated[1] != NULL;
            double quantize[5] = {0, 0, 0, 0, 0}, deq_kernel = 0;
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
                call.fn = t->from_float_ref;
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
            call.fn = t->to_float;
            const double deq_ggml = rate(run_ggml);
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
                       quantize[0], quantize[3], best_name, quantize[1], quantize[2], best_name, differing[0],
                       differing[1]);
            printf("\"dequantize_gelem_s\": {\"qgen_reference\": %.4f, \"ggml_to_float\": %.4f}}", deq_qgen, deq_ggml);
            sep = ",\n";
        }
    }
    printf("\n]}\n");
    return 0;
}
