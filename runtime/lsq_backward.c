/* LSQ backward at speed: qg_ref_lsq_backward's arithmetic (docs/semantics.md,
 * "LSQ"), four elements at a time in GCC/clang vector types (16 bytes: one
 * register on every target the runtime builds for). dx is that
 * reference's to the bit; the sums ds and dz are taken in per-lane double
 * accumulators, an order the page's tolerance for them allows. Rounding
 * modes other than half_even, and the tails, take the reference's element
 * arithmetic (qg_lsq_element); on x86 with AVX2 the whole vectors of
 * eight take lsq_backward_x86.c's loop first. */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "arg_check.h"
#include "rt_internal.h"

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef double v2d __attribute__((vector_size(16)));

static v4f splat(float v) { return (v4f){v, v, v, v}; }

static v4f select4(v4i m, v4f a, v4f b) { return (v4f)((m & (v4i)a) | (~m & (v4i)b)); }

/* Round half to even, exactly as nearbyintf in the default mode: |t| is
 * rounded by adding and removing 2^23 (exact below 2^23, where the sum's
 * ulp is 1), the sign put back (so -0.3 gives -0.0); |t| >= 2^23 is
 * integral already. NaN stays NaN. */
static v4f round_even4(v4f t) {
    const v4i sign = (v4i)t & (v4i)splat(-0.0f);
    const v4f a = (v4f)((v4i)t & ~(v4i)splat(-0.0f));
    const v4f two23 = splat(8388608.0f);
    const v4f r = (v4f)((v4i)((a + two23) - two23) | sign);
    return select4(a >= two23, t, r);
}

/* acc[0] += the low two lanes in double, acc[1] += the high two. GCC
 * spells the generic conversion one lane at a time; the instructions that
 * widen two lanes at once are taken where the target has them. */
static void add_halves(v2d *acc, v4f v) {
#if defined(__SSE2__)
    acc[0] += (v2d)_mm_cvtps_pd((__m128)v);
    acc[1] += (v2d)_mm_cvtps_pd(_mm_movehl_ps((__m128)v, (__m128)v));
#elif defined(__aarch64__)
    acc[0] += (v2d)vcvt_f64_f32(vget_low_f32((float32x4_t)v));
    acc[1] += (v2d)vcvt_high_f64_f32((float32x4_t)v);
#else
    v2f lo, hi;
    memcpy(&lo, &v, sizeof lo);
    memcpy(&hi, (const char *)&v + sizeof lo, sizeof hi);
    acc[0] += __builtin_convertvector(lo, v2d);
    acc[1] += __builtin_convertvector(hi, v2d);
#endif
}

static double lanes_sum(const v2d *acc) { return (acc[0][0] + acc[1][0]) + (acc[0][1] + acc[1][1]); }

/* Four elements: dx stored, the ds and dz terms added per lane
 * (out-of-range lanes add 0 to ds_in's select, in-range ones 0 to dz). */
/* inlined: a call per four elements would pass the accumulators through memory */
__attribute__((always_inline)) static inline void block4(const qg_lsq_params *r, const float *x, const float *dy,
                                                         float *dx, v2d ds[2], v2d dz[2]) {
    v4f xv, d;
    memcpy(&xv, x, sizeof xv);
    memcpy(&d, dy, sizeof d);
    const v4f z = splat(r->z), s = splat(r->s), inv = splat(r->inv), g = splat(r->g);
    const v4f xq = round_even4(z + xv * inv);
    const v4i below = xq < splat(r->qmin);
    const v4i out = below | (xq > splat(r->qmax));
    const v4f grad = select4(out, splat(0.0f), d);
    memcpy(dx, &grad, sizeof grad);
    const v4f bound = select4(below, splat(r->qmin), splat(r->qmax));
    const v4f ds_out = d * (bound - z) * g;
    const v4f ds_in = d * ((xq - z) * s - xv) * inv * g;
    add_halves(ds, select4(out, ds_out, ds_in));
    add_halves(dz, select4(out, d * splat(-1.0f) * s * g, splat(0.0f)));
}

/* A loop over a run's whole wide vectors (lsq_backward_x86.c): returns how
 * many elements it took. */
typedef size_t (*lsq_wide_fn)(const qg_lsq_params *p, const float *x, const float *dy, float *dx, size_t len,
                              double *ds, double *dz);

static lsq_wide_fn wide_loop(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    return qg_cpu_has(QG_ISA_AVX2) ? qg_x86_lsq_run : NULL;
#else
    return NULL;
#endif
}

/* One run: the wide loop where there is one, then four lanes, then the
 * reference's element arithmetic. */
static void run_backward(const qg_spec *sp, const qg_lsq_params *r, lsq_wide_fn wide, const float *x, const float *dy,
                         float *dx, size_t len, double *ds, double *dz) {
    size_t i = 0;
    if (sp->rounding == QG_ROUND_HALF_EVEN) {
        if (wide)
            i = wide(r, x, dy, dx, len, ds, dz);
        v2d ds_acc[2] = {{0}}, dz_acc[2] = {{0}};
        for (; i + 4 <= len; i += 4)
            block4(r, x + i, dy + i, dx + i, ds_acc, dz_acc);
        *ds += lanes_sum(ds_acc);
        *dz += lanes_sum(dz_acc);
    }
    for (; i < len; i++)
        dx[i] = qg_lsq_element(sp, r->s, r->inv, r->z, r->g, x[i], dy[i], ds, dz);
}

void qg_lsq_backward(const qg_spec *sp, const float *x, const float *dy, size_t n, const float *scale,
                     const float *zero_point_f, size_t channels, size_t inner, float g, qg_lsq_grads *out) {
    QG_NEED_OR_RETURN(sp && scale && zero_point_f && out && out->dx && out->ds && out->dz && ((x && dy) || n == 0));
    const size_t C = channels ? channels : 1;
    const size_t run_len = C == 1 ? n : inner ? inner : 1;
    const lsq_wide_fn wide = wide_loop();
    for (size_t c = 0; c < C; c++)
        out->ds[c] = out->dz[c] = 0.0;
    for (size_t c = 0, base = 0; base < n; c = c + 1 == C ? 0 : c + 1, base += run_len) {
        const qg_lsq_params r = {.s = scale[c],
                                 .inv = 1.0f / scale[c],
                                 .z = qg_lsq_zero_point(sp, zero_point_f[c], true),
                                 .qmin = (float)sp->quant_min,
                                 .qmax = (float)sp->quant_max,
                                 .g = g};
        const size_t len = n - base < run_len ? n - base : run_len;
        run_backward(sp, &r, wide, x + base, dy + base, out->dx + base, len, &out->ds[c], &out->dz[c]);
    }
}
