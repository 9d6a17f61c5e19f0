/* The kernels of one generated spec, on this machine: every ISA this build
 * has is run on the same data and compared with the runtime's reference;
 * with `--time`, fake_quant throughput is measured too (median of 7), and
 * a last line "dispatch: ISA MELEM_PER_S SCALE ZERO_POINT CHANNELS QMIN QMAX" gives
 * the dispatcher's rate for scripts/demo.sh to set beside PyTorch's.
 *
 * Built by scripts/demo.sh with -DDEMO_SPEC=<name> -DDEMO_HEADER="<name>.h"
 * and -DDEMO_ISAS="X(isa, QG_ISA_ISA) ..." for the vector ISAs of the target
 * architecture (from `qgen targets`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include DEMO_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SYM(op, isa) CAT(DEMO_SPEC, CAT(_##op##__, isa))

typedef void (*fq_fn)(const float *, float *, uint8_t *, size_t, const qg_qparams *);
typedef struct demo_isa {
    const char *name;
    qg_isa id;
    fq_fn fake_quant;
} demo_isa;

#ifndef DEMO_ISAS
#define DEMO_ISAS
#endif
#define X(isa, id) {#isa, id, SYM(fake_quant, isa)},
static const demo_isa isas[] = {{"scalar", QG_ISA_SCALAR, SYM(fake_quant, scalar)}, DEMO_ISAS};
#undef X

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of 7 runs, in Melem/s. */
static double rate(fq_fn fq, const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp) {
    double t[7];
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        fq(x, y, mask, n, qp);
        t[r] = now() - t0;
    }
    qsort(t, 7, sizeof t[0], cmp_double);
    return (double)n / t[3] * 1e-6;
}

int main(int argc, char **argv) {
    const int timed = argc > 1 && strcmp(argv[1], "--time") == 0;
    const qg_spec *sp = &CAT(DEMO_SPEC, _spec);
    const size_t n = (size_t)1 << 20, ch = CAT(DEMO_SPEC, _CHANNELS);
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *ref = malloc(n * sizeof(float));
    uint8_t *mask = malloc(n), *rmask = malloc(n);
    float *scale = malloc(ch * sizeof(float));
    int32_t *zp = malloc(ch * sizeof(int32_t));
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) { /* xorshift: a spread of values with exact ties mixed in */
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = i % 7 == 0 ? (float)((int)(s % 64) - 32) * 0.03125f + 0.015625f
                          : (float)((int64_t)(s >> 40) - 8388608) / 1e6f;
    }
    qg_observer *obs;
    qg_error err;
    if (qg_observer_create(sp, &obs, &err) || CAT(DEMO_SPEC, _observe)(x, n, n / ch, obs, &err) ||
        qg_observer_qparams(obs, scale, zp, NULL, &err)) {
        fprintf(stderr, "kernel_demo: %s\n", err.message);
        return 2;
    }
    qg_qparams qp = {scale, zp, NULL, ch, n / ch};
    qg_ref_fake_quant(sp, x, ref, rmask, n, &qp);
    const size_t mbytes = qg_mask_bytes(sp, n);
    int bad_total = 0;
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        const demo_isa *d = &isas[k];
        if (!qg_cpu_has(d->id) && d->id != QG_ISA_RVV) {
            printf("    %-7s not available on this CPU\n", d->name);
            continue;
        }
        d->fake_quant(x, y, mask, n, &qp);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += memcmp(&y[i], &ref[i], 4) != 0;
        bad += memcmp(mask, rmask, mbytes) != 0;
        bad_total += bad != 0;
        printf("    %-7s fake_quant of %zu elements: %s", d->name, n,
               bad ? "MISMATCH" : "bit-exact with the reference");
        if (timed)
            printf(", %.0f Melem/s (median of 7)", rate(d->fake_quant, x, y, mask, n, &qp));
        printf("\n");
    }
    if (timed)
        printf("dispatch: %s %.1f %.9g %d %zu %lld %lld\n", CAT(DEMO_SPEC, _isa)(),
               rate(CAT(DEMO_SPEC, _fake_quant), x, y, mask, n, &qp), (double)scale[0], (int)zp[0], ch,
               (long long)CAT(DEMO_SPEC, _QUANT_MIN), (long long)CAT(DEMO_SPEC, _QUANT_MAX));
    qg_observer_destroy(obs);
    return bad_total ? 1 : 0;
}
