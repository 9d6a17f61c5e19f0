/* The JIT's latency (cold compile per op and per pack, disk-cache hit,
 * in-process hit) and the speed of its kernels against the C backend's on
 * the same ISA, and the time to a first fake_quant from a fresh process,
 * lazy and eager, measured in one run. Prints markdown; medians throughout.
 *
 * usage: bench_jit
 *        bench_jit --first lazy|eager CACHE_DIR|- (one fresh-process sample) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_act.h"
#include "bench_w.h"
#include "bench_timer.h"
#include "qgen/jit.h"

static void die(const qg_error *err) {
    fprintf(stderr, "bench_jit: %s\n", err->message);
    exit(1);
}

static char cache_dir[256];

/* Seconds to compile `ops` of sp in a fresh JIT (its creation not timed). */
static double compile_time(const qg_spec *sp, unsigned ops, bool disk) {
    qg_jit_options opt = {QG_JIT_BEST_ISA, disk ? cache_dir : NULL, !disk, true, false};
    qg_jit *j;
    qg_error err;
    const qg_kernels *k;
    if (qg_jit_create(&opt, &j, &err))
        die(&err);
    double t0 = bench_now();
    if (qg_jit_compile(j, sp, ops, &k, &err))
        die(&err);
    double t = bench_now() - t0;
    qg_jit_destroy(j);
    return t;
}

static double median_compile(const qg_spec *sp, unsigned ops, bool disk) {
    double t[BENCH_RUNS];
    for (int r = 0; r < BENCH_RUNS; r++)
        t[r] = compile_time(sp, ops, disk);
    return bench_median(t, BENCH_RUNS);
}

static double create_time(void) {
    double t[BENCH_RUNS];
    for (int r = 0; r < BENCH_RUNS; r++) {
        qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
        qg_jit *j;
        qg_error err;
        double t0 = bench_now();
        if (qg_jit_create(&opt, &j, &err))
            die(&err);
        t[r] = bench_now() - t0;
        qg_jit_destroy(j);
    }
    return bench_median(t, BENCH_RUNS);
}

static double memory_hit_time(const qg_spec *sp) {
    qg_jit_options opt = {QG_JIT_BEST_ISA, NULL, true, true, false};
    qg_jit *j;
    qg_error err;
    const qg_kernels *k;
    if (qg_jit_create(&opt, &j, &err) || qg_jit_compile(j, sp, 0, &k, &err))
        die(&err);
    double t[BENCH_RUNS];
    enum { CALLS = 1000 };
    for (int r = 0; r < BENCH_RUNS; r++) {
        double t0 = bench_now();
        for (int c = 0; c < CALLS; c++)
            qg_jit_compile(j, sp, 0, &k, &err);
        t[r] = (bench_now() - t0) / CALLS;
    }
    qg_jit_destroy(j);
    return bench_median(t, BENCH_RUNS);
}

/* ---- kernel speed ------------------------------------------------------- */

static size_t n_cur = 65536;
static float *x, *y;
static int8_t *q;
static uint8_t *mask;
static qg_qparams qp_act, qp_w;
static const qg_kernels *jk_act, *jk_w;
typedef void (*bench_fn)(void);

#define C_KERNELS(isa)                                                                                                 \
    static void c_fq_##isa(void) { bench_act_fake_quant__##isa(x, y, mask, n_cur, &qp_act); }                          \
    static void c_fqw_##isa(void) { bench_w_fake_quant__##isa(x, y, mask, n_cur, &qp_w); }                             \
    static void c_q_##isa(void) { bench_act_quantize__##isa(x, q, n_cur, &qp_act); }                                   \
    static void c_dq_##isa(void) { bench_act_dequantize__##isa(q, y, n_cur, &qp_act); }
C_KERNELS(avx2)
C_KERNELS(avx512)
static void j_fq(void) { jk_act->fake_quant(x, y, mask, n_cur, &qp_act); }
static void j_fqw(void) { jk_w->fake_quant(x, y, mask, n_cur, &qp_w); }
static void j_q(void) { jk_act->quantize(x, q, n_cur, &qp_act); }
static void j_dq(void) { jk_act->dequantize(q, y, n_cur, &qp_act); }

static void speed_rows(qg_isa isa) {
    qg_jit_options opt = {isa, NULL, true, true, false};
    qg_jit *j;
    qg_error err;
    if (qg_jit_create(&opt, &j, &err))
        return; /* this CPU lacks the ISA */
    if (qg_jit_compile(j, &bench_act_spec, 0, &jk_act, &err) || qg_jit_compile(j, &bench_w_spec, 0, &jk_w, &err))
        die(&err);
    const bool avx512 = isa == QG_ISA_AVX512;
    const struct {
        const char *op;
        bench_fn c, llvm;
    } rows[] = {
        {"fake_quant per tensor", avx512 ? c_fq_avx512 : c_fq_avx2, j_fq},
        {"fake_quant per channel (64)", avx512 ? c_fqw_avx512 : c_fqw_avx2, j_fqw},
        {"quantize qint8", avx512 ? c_q_avx512 : c_q_avx2, j_q},
        {"dequantize qint8", avx512 ? c_dq_avx512 : c_dq_avx2, j_dq},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        /* interleaved, twice, to spread the machine's noise over both */
        double c1 = bench_rate(rows[r].c, n_cur), l1 = bench_rate(rows[r].llvm, n_cur),
               l2 = bench_rate(rows[r].llvm, n_cur), c2 = bench_rate(rows[r].c, n_cur);
        double c = c1 > c2 ? c1 : c2, l = l1 > l2 ? l1 : l2;
        printf("| %s | %s | %.0f | %.0f | %.2f |\n", qg_isa_name(isa), rows[r].op, c / 1e6, l / 1e6, l / c);
    }
    qg_jit_destroy(j);
}

/* One fresh process's sample: JIT creation, compile and a first
 * fake_quant of the per-channel spec, then the same again from memory, and
 * (background mode) the moment the compiled kernel is ready; prints the
 * three in ms. */
static int first_kernel(const char *mode, const char *dir) {
    const double t0 = bench_now();
    const bool no_disk = strcmp(dir, "-") == 0;
    qg_jit_options opt = {QG_JIT_BEST_ISA, no_disk ? NULL : dir, no_disk, strcmp(mode, "eager") == 0,
                          strcmp(mode, "background") == 0};
    qg_jit *j;
    qg_error err;
    const qg_kernels *k = NULL;
    enum { N = 4096 };
    static float fx[N], fy[N];
    static uint8_t fm[N];
    static float s[64];
    static int32_t z[64];
    for (int c = 0; c < 64; c++)
        s[c] = 0.05f;
    const qg_qparams qp = {s, z, NULL, 64, N / 64};
    if (qg_jit_create(&opt, &j, &err) || qg_jit_compile(j, &bench_w_spec, 0, &k, &err))
        die(&err);
    k->fake_quant(fx, fy, fm, N, &qp);
    const double t1 = bench_now();
    if (qg_jit_prepare(j, k, QG_JIT_FAKE_QUANT, &err))
        die(&err);
    const double t2 = bench_now();
    if (qg_jit_compile(j, &bench_w_spec, 0, &k, &err))
        die(&err);
    k->fake_quant(fx, fy, fm, N, &qp);
    const double t3 = bench_now();
    printf("%.4f %.4f %.4f\n", (t1 - t0) * 1e3, (t3 - t2) * 1e3, (t2 - t0) * 1e3);
    qg_jit_destroy(j);
    return 0;
}

/* Medians of fresh-process samples: [0] first call, [1] memory hit, [2]
 * the compiled kernel ready. */
static void first_kernel_samples(const char *mode, const char *dir, double out[3]) {
    double t[3][BENCH_RUNS];
    char self[400] = "", cmd[900];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* popen's shell would be /proc/self/exe */
    if (len > 0)
        self[len] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --first %s '%s'", self, mode, dir);
    for (int r = 0; r < BENCH_RUNS; r++) {
        FILE *p = popen(cmd, "r");
        if (!p || fscanf(p, "%lf %lf %lf", &t[0][r], &t[1][r], &t[2][r]) != 3 || pclose(p) != 0) {
            fprintf(stderr, "bench_jit: %s failed\n", cmd);
            exit(1);
        }
    }
    for (int i = 0; i < 3; i++)
        out[i] = bench_median(t[i], BENCH_RUNS);
}

static void first_kernel_rows(void) {
    printf("Time to the first fake_quant from a fresh process (qg_jit_create, qg_jit_compile of every op, "
           "one call on 4096 elements), per-channel spec bench_w, ms, median of %d processes; background: "
           "the first call on the reference, then the compiled kernel ready:\n\n",
           BENCH_RUNS);
    printf("| cache | lazy (default) | eager | background: first call | background: kernel ready |\n"
           "|---|---|---|---|---|\n");
    static const char *const modes[3] = {"lazy", "eager", "background"};
    double r[3][3], fill[3];
    for (int m = 0; m < 3; m++)
        first_kernel_samples(modes[m], "-", r[m]);
    printf("| cold (no disk cache) | %.2f | %.2f | %.2f | %.2f |\n", r[0][0], r[1][0], r[2][0], r[2][2]);
    for (int m = 0; m < 3; m++) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/%s", cache_dir, modes[m]);
        first_kernel_samples(modes[m], dir, fill); /* the first sample fills the cache */
        first_kernel_samples(modes[m], dir, r[m]);
    }
    printf("| disk-cache hit | %.2f | %.2f | %.2f | %.2f |\n", r[0][0], r[1][0], r[2][0], r[2][2]);
    printf("| memory hit (the same spec again, then a call) | %.4f | %.4f | %.4f | |\n\n", r[0][1], r[1][1], r[2][1]);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--first") == 0)
        return first_kernel(argv[2], argv[3]);
    snprintf(cache_dir, sizeof cache_dir, "%s/qgen-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    qg_jit_options best = {QG_JIT_BEST_ISA, NULL, true, true, false};
    qg_jit *probe;
    qg_error err;
    if (qg_jit_create(&best, &probe, &err))
        die(&err);
    const char *isa = qg_isa_name(qg_jit_isa(probe));
    qg_jit_destroy(probe);

    printf("JIT latency, spec bench_act (qint8 per tensor) on %s, the JIT's pipeline, median of %d:\n\n", isa,
           BENCH_RUNS);
    printf("| what | ms |\n|---|---|\n");
    printf("| qg_jit_create (LLJIT set-up, once per JIT) | %.2f |\n", create_time() * 1e3);
    static const char *const op_names[] = {"quantize", "dequantize", "fake_quant", "fake_quant_backward",
                                           "observe",  "requantize"};
    for (int op = 0; op < 6; op++)
        printf("| cold compile, %s only | %.2f |\n", op_names[op],
               median_compile(&bench_act_spec, 1u << op, false) * 1e3);
    printf("| cold compile, full pack (6 ops) | %.2f |\n", median_compile(&bench_act_spec, 0, false) * 1e3);
    printf("| cold compile, full pack, per-channel spec bench_w | %.2f |\n",
           median_compile(&bench_w_spec, 0, false) * 1e3);
    compile_time(&bench_act_spec, 0, true); /* fills the disk cache */
    printf("| disk-cache hit, full pack | %.2f |\n", median_compile(&bench_act_spec, 0, true) * 1e3);
    printf("| in-process hit | %.6f |\n\n", memory_hit_time(&bench_act_spec) * 1e3);
    first_kernel_rows();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_jit: could not remove %s\n", cache_dir);

    x = bench_alloc(n_cur * sizeof(float));
    y = bench_alloc(n_cur * sizeof(float));
    q = bench_alloc(n_cur);
    mask = bench_alloc(n_cur);
    static float s_act = 0.05f, s_w[64];
    static int32_t z_act = 3, z_w[64];
    for (int c = 0; c < 64; c++)
        s_w[c] = 0.01f + 0.001f * (float)c;
    qp_act = (qg_qparams){&s_act, &z_act, NULL, 1, 1};
    qp_w = (qg_qparams){s_w, z_w, NULL, 64, n_cur / 64};
    for (size_t i = 0; i < n_cur; i++)
        x[i] = (float)sin((double)i * 0.37) * 8.0f;
    bench_act_quantize(x, q, n_cur, &qp_act);
    printf("Kernel speed, %zu elements, Melem/s (best of two interleaved medians):\n\n", n_cur);
    printf("| ISA | op | C backend | LLVM backend (JIT) | LLVM / C |\n|---|---|---|---|---|\n");
    speed_rows(QG_ISA_AVX2);
    speed_rows(QG_ISA_AVX512);
    return 0;
}
