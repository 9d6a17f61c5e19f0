/* The program `qgen compare` builds for each ISA and backend (and once
 * with -DCMP_REFERENCE, on the runtime's reference): it runs every op on
 * the same deterministic inputs and prints one line per op, "<op> <XXH64
 * of the outputs>"; with --time (native runs only) also "time <op>
 * <Melem/s>", the median of 7 runs of at least 20 ms each.
 *
 * Built with -DCMP_NAME=<spec name> -DCMP_HEADER="<name>.h" -DCMP_ISA=<isa>.
 * This file is embedded in the qgen binary; it is not part of libqgen. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include CMP_HEADER

#define XXH_INLINE_ALL
#include "xxhash.h"

#define CMP_CAT2(a, b) a##b
#define CMP_CAT(a, b) CMP_CAT2(a, b)
#define CMP_Q CMP_CAT(CMP_NAME, _q_t)
#define CMP_SPEC CMP_CAT(CMP_NAME, _spec)
#define CMP_K(op) CMP_CAT(CMP_NAME, CMP_CAT(_##op##__, CMP_ISA))

static const qg_spec *SP = &CMP_SPEC;

enum { N_CHECK = 4099, N_TIME = 65536, CH_MAX = 4096 };

/* Per group (docs/semantics.md, "Layouts"), the tensor is rows of the
 * grouped axis (channel_len elements, inner 1): its length a whole number
 * of rows, one scale per group of each row. */
static int per_group(void) { return qg_qscheme_is_per_group(SP->qscheme); }
static size_t whole_rows(size_t n) {
    if (!per_group())
        return n;
    const size_t d = SP->channel_len;
    return n < d ? d : n / d * d;
}

/* The kernels' float tensors: float, or the 16-bit patterns of the spec's
 * float_type (docs/semantics.md, "Float types"). Inputs are made in float
 * and narrowed; outputs are hashed as the kernels write them. */
#if CMP_CAT(CMP_NAME, _FLOAT_BITS) == 16
typedef uint16_t cmp_f;
#else
typedef float cmp_f;
#endif

#ifdef CMP_REFERENCE
/* the reference on float32, between widening and narrowing (a copy for
 * float32 specs) */
static float wide_in[N_TIME], wide_out[N_TIME];
static const float *widen(const cmp_f *x, size_t n) {
    qg_float_type_widen(SP->float_type, x, wide_in, n);
    return wide_in;
}
static void narrow(cmp_f *y, size_t n) { qg_float_type_narrow(SP->float_type, wide_out, y, n); }
static void quantize(const cmp_f *x, CMP_Q *q, size_t n, const qg_qparams *qp) {
    qg_ref_quantize(SP, widen(x, n), q, n, qp);
}
static void dequantize(const CMP_Q *q, cmp_f *y, size_t n, const qg_qparams *qp) {
    qg_ref_dequantize(SP, q, wide_out, n, qp);
    narrow(y, n);
}
static void fake_quant(const cmp_f *x, cmp_f *y, uint8_t *m, size_t n, const qg_qparams *qp) {
    qg_ref_fake_quant(SP, widen(x, n), wide_out, m, n, qp);
    narrow(y, n);
}
static void backward(const cmp_f *dy, const uint8_t *m, cmp_f *dx, size_t n) {
    qg_ref_fake_quant_backward(SP, widen(dy, n), m, wide_out, n);
    narrow(dx, n);
}
static void requantize(const int32_t *acc, CMP_Q *q, size_t n, const qg_requant_params *rp) {
    qg_ref_requantize(SP, acc, q, n, rp);
}
static qg_status observe(const cmp_f *x, size_t n, size_t inner, qg_observer *o, qg_error *err) {
    return qg_observer_update(o, widen(x, n), n, inner, err);
}
#else
#define quantize CMP_K(quantize)
#define dequantize CMP_K(dequantize)
#define fake_quant CMP_K(fake_quant)
#define backward CMP_K(fake_quant_backward)
#define requantize CMP_K(requantize)
#define observe CMP_K(observe)
#endif

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float scale[N_TIME], zf[N_TIME];
static int32_t zp[N_TIME];
static size_t channels;

/* which scale element i of the tensor takes */
static size_t param_of(size_t i) {
    if (per_group()) {
        const size_t d = SP->channel_len, g = SP->group_size;
        return i / d * ((d + g - 1) / g) + i % d / g;
    }
    return channels > 1 ? i % channels : 0;
}

static void make_qparams(void) {
    channels = qg_qscheme_is_per_channel(SP->qscheme) || per_group() ? SP->channel_len : 1;
    const size_t count = per_group() ? qg_qparams_count(SP, whole_rows(N_TIME), 1) : channels;
    const int symmetric = SP->qscheme == QG_PER_TENSOR_SYMMETRIC || SP->qscheme == QG_PER_CHANNEL_SYMMETRIC ||
                          SP->qscheme == QG_PER_GROUP_SYMMETRIC;
    for (size_t c = 0; c < count && c < N_TIME; c++) {
        scale[c] = c % 3 == 0 ? 0.03125f : 0.0137f * (float)(1 + c % 5);
        zp[c] = symmetric ? 0 : (int32_t)(SP->quant_min + (SP->quant_max - SP->quant_min) / 3);
        zf[c] = (float)zp[c] + 0.25f;
    }
    if (SP->observer.type == QG_OBS_FIXED_QPARAMS) {
        scale[0] = SP->observer.fixed_scale;
        zp[0] = SP->observer.fixed_zero_point;
    }
}

/* ties, near-ties, grid points, saturation, specials, plain values */
static void fill(float *x, size_t n, int specials) {
    for (size_t i = 0; i < n; i++) {
        const double s = scale[param_of(i)], k = (double)((int64_t)(next() % 700) - 350);
        switch (next() % 8) {
        case 0: x[i] = (float)((k + 0.5) * s); break;
        case 1: x[i] = nextafterf((float)((k + 0.5) * s), (next() & 1) ? INFINITY : -INFINITY); break;
        case 2: x[i] = (float)(k * s); break;
        case 3: x[i] = (float)(k * s * 1000.0); break;
        case 4:
            if (specials) {
                static const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
                x[i] = sp[next() % 5];
                break;
            }
            /* fall through */
        default: x[i] = (float)((double)(int64_t)(next() % 100000 - 50000) * s / 97.0); break;
        }
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Cache-line aligned, so that both backends' timings see the same
 * alignment: where the link put them decided whether a 32-byte store split
 * cache lines (AVX2 dequantize measured 17.5 or 22 Gelem/s by that alone). */
#define CMP_ALIGNED _Alignas(64)
static CMP_ALIGNED float xs[N_TIME]; /* made in float, narrowed into xf */
static CMP_ALIGNED cmp_f xf[N_TIME];
static CMP_ALIGNED cmp_f yf[N_TIME];
static CMP_ALIGNED cmp_f dyf[N_TIME];
static CMP_ALIGNED CMP_Q qs[N_TIME];
static CMP_ALIGNED uint8_t ms[N_TIME];
static CMP_ALIGNED int32_t accs[N_TIME];
static size_t n_cur;
static qg_qparams qp;
static qg_requant_params rp;
static float s_w[4] = {0.5f, 0.25f, 0.75f, 0.3f};
static int32_t bias_q[4] = {-1000, 0, 12345, -7};

typedef void (*op_fn)(void);
static size_t q_bytes(size_t n) { return qg_q_bytes(SP->dtype, n); } /* 4-bit: packed */
static void run_quantize(void) { quantize(xf, qs, n_cur, &qp); }
static void run_dequantize(void) { dequantize(qs, yf, n_cur, &qp); }
static void run_fake_quant(void) { fake_quant(xf, yf, ms, n_cur, &qp); }
static void run_backward(void) { backward(dyf, ms, yf, n_cur); }
static void run_requantize(void) { requantize(accs, qs, n_cur, &rp); }
static qg_observer *obs;
static void run_observe(void) {
    qg_error err;
    observe(xf, n_cur, 1, obs, &err);
}

static double melem_per_s(op_fn fn) {
    int reps = 1;
    for (;;) {
        double t0 = now();
        for (int r = 0; r < reps; r++)
            fn();
        if (now() - t0 > 0.02 || reps > (1 << 20))
            break;
        reps *= 2;
    }
    double v[7];
    for (int k = 0; k < 7; k++) {
        double t0 = now();
        for (int r = 0; r < reps; r++)
            fn();
        v[k] = (double)n_cur * reps / (now() - t0) / 1e6;
    }
    qsort(v, 7, sizeof v[0], cmp_double);
    return v[3];
}

static void hash_line(const char *op, const void *a, size_t na, const void *b, size_t nb) {
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, a, na);
    if (b)
        XXH64_update(st, b, nb);
    printf("%s %016llx\n", op, (unsigned long long)XXH64_digest(st));
    XXH64_freeState(st);
}

static void hash_observe(void) {
    qg_error err;
    fill(xs, n_cur, 0);
    qg_float_type_narrow(SP->float_type, xs, xf, n_cur);
    const size_t n_obs = channels > 1 ? n_cur / channels * channels : n_cur;
    qg_status st = observe(xf, n_obs, 1, obs, &err);
    static float mn[CH_MAX + 1], mx[CH_MAX];
    qg_observer_minmax(obs, mn, mx);
    const size_t nc = SP->channel_len < CH_MAX ? SP->channel_len : CH_MAX;
    int32_t status = (int32_t)st;
    memcpy(mn + nc, &status, sizeof status);
    hash_line("observe", mn, nc * sizeof mn[0] + sizeof status, mx, nc * sizeof mx[0]);
    qg_observer_reset(obs);
}

int main(int argc, char **argv) {
    const int timing = argc > 1 && strcmp(argv[1], "--time") == 0;
    qg_error err;
    make_qparams();
    const int fqp = SP->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
    /* per channel: the channels-last layout (inner 1) */
    qp = (qg_qparams){scale, zp, fqp ? zf : NULL, channels, 1};
    rp = (qg_requant_params){0.02f, s_w, bias_q, 0.05f, (int32_t)(SP->quant_min + SP->quant_max + 1) / 2, 4, 7};
    if (per_group() && SP->channel_len > N_TIME) {
        printf("error channel_len %u: a row longer than the driver's %d elements\n", (unsigned)SP->channel_len, N_TIME);
        return 1;
    }
    n_cur = whole_rows(N_CHECK);
    fill(xs, n_cur, 1);
    qg_float_type_narrow(SP->float_type, xs, xf, n_cur);
    for (size_t i = 0; i < n_cur; i++) {
        xs[i] = (float)(int64_t)(next() % 2001 - 1000) / 64.0f;
        accs[i] = (int32_t)(next() % 4000001) - 2000000;
    }
    qg_float_type_narrow(SP->float_type, xs, dyf, n_cur);
    const size_t mask_bytes = SP->compat_mask ? (n_cur + 7) / 8 : n_cur;
    memset(ms, 0, sizeof ms);
    run_fake_quant();
    hash_line("fake_quant", yf, n_cur * sizeof yf[0], ms, mask_bytes);
    run_backward();
    hash_line("fake_quant_backward", yf, n_cur * sizeof yf[0], NULL, 0);
    run_quantize();
    hash_line("quantize", qs, q_bytes(n_cur), NULL, 0);
    run_dequantize();
    hash_line("dequantize", yf, n_cur * sizeof yf[0], NULL, 0);
    run_requantize();
    hash_line("requantize", qs, q_bytes(n_cur), NULL, 0);
    if (qg_observer_create(SP, &obs, &err) == QG_OK) /* refused (per group): qgen compare leaves observe out */
        hash_observe();
    if (timing) {
        n_cur = whole_rows(N_TIME);
        fill(xs, n_cur, 0);
        qg_float_type_narrow(SP->float_type, xs, xf, n_cur);
        qg_float_type_narrow(SP->float_type, xs, dyf, n_cur);
        for (size_t i = 0; i < n_cur; i++)
            accs[i] = (int32_t)(next() % 4000001) - 2000000;
        const struct {
            const char *name;
            op_fn fn;
        } ops[] = {{"fake_quant", run_fake_quant}, {"fake_quant_backward", run_backward}, {"quantize", run_quantize},
                   {"dequantize", run_dequantize}, {"requantize", run_requantize},        {"observe", run_observe}};
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (obs || ops[k].fn != run_observe)
                printf("time %s %.1f\n", ops[k].name, melem_per_s(ops[k].fn));
    }
    if (obs)
        qg_observer_destroy(obs);
    return 0;
}
