/* qgen compare's peer rows for ggml's block formats: ggml's own kernels
 * (ggml_peer.h), timed in this process on the element count and with the
 * timing rule of the test driver's native runs (compare_driver.c): the
 * median of 7 runs of at least 20 ms. The kernels' rows say whether
 * qgen's bytes are ggml's reference's; these rows are speed alone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare_internal.h"
#include "ggml_peer.h"

enum { N_PEER = 65536, RUNS = 7 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Million elements per second of fn on in -> out. */
static double melem_per_s(qg_ggml_row_fn fn, const void *in, void *out) {
    long reps = 1;
    for (;;) {
        const double t0 = now();
        for (long r = 0; r < reps; r++)
            fn(in, out, N_PEER);
        if (now() - t0 > 0.02 || reps > (1L << 20))
            break;
        reps *= 2;
    }
    double v[RUNS];
    for (int k = 0; k < RUNS; k++) {
        const double t0 = now();
        for (long r = 0; r < reps; r++)
            fn(in, out, N_PEER);
        v[k] = 1e-6 * (double)N_PEER * (double)reps / (now() - t0);
    }
    qsort(v, RUNS, sizeof v[0], by_value);
    return v[RUNS / 2];
}

static void add_peer(qg_compare_report *rep, const char *name, qg_kernel_op op, double melem) {
    if (rep->npeers >= (int)(sizeof rep->peers / sizeof rep->peers[0]))
        return;
    qg_compare_peer *p = &rep->peers[rep->npeers++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->op = op;
    p->measured_melem_per_s = melem;
}

void qg_cmp_measure_ggml(ctx *c, unsigned ops) {
    const qg_block_format f = c->sp->block;
    if (f == QG_BLOCK_NONE || !(ops & ((1u << QG_K_QUANTIZE) | (1u << QG_K_DEQUANTIZE))))
        return;
    const char *dir = getenv("QGEN_GGML_LIB_DIR");
    if (!dir || !*dir) {
        qg_cmp_note(c, "ggml: not measured: QGEN_GGML_LIB_DIR names no directory of npm's libggml-base.so and "
                       "libggml-cpu-<level>.so (scripts/install-npm-peers.sh installs them)");
        return;
    }
    qg_ggml g;
    char why[4200];
    if (!qg_ggml_open(dir, &g, why, sizeof why)) {
        qg_cmp_note(c, "ggml: not measured: %.200s", why);
        return;
    }
    const int type = qg_ggml_type(&g, f);
    float *x = malloc(N_PEER * sizeof(float) * 2);
    uint8_t *q = malloc(qg_block_row_bytes(f, N_PEER));
    if (type < 0 || !x || !q) {
        qg_cmp_note(c, "ggml: not measured: %s", type < 0 ? "ggml names this format otherwise" : "out of memory");
        free(x);
        free(q);
        return;
    }
    qg_ggml_sample_row(x, N_PEER);
    qg_ggml_row_fn best = qg_ggml_from_float(g.best, type), haswell = qg_ggml_from_float(g.haswell, type);
    qg_ggml_row_fn ref = qg_ggml_from_float_ref(&g, type), deq = qg_ggml_to_float(&g, type);
    char name[64];
    if ((ops & (1u << QG_K_QUANTIZE)) && best) {
        snprintf(name, sizeof name, "ggml %s (ggml's pick here)", g.best_name);
        add_peer(c->rep, name, QG_K_QUANTIZE, melem_per_s(best, x, q));
        if (haswell && g.haswell != g.best)
            add_peer(c->rep, "ggml haswell (AVX2)", QG_K_QUANTIZE, melem_per_s(haswell, x, q));
    }
    if ((ops & (1u << QG_K_DEQUANTIZE)) && ref && deq) {
        ref(x, q, N_PEER);
        add_peer(c->rep, "ggml to_float", QG_K_DEQUANTIZE, melem_per_s(deq, q, x + N_PEER));
    }
    free(x);
    free(q);
}
