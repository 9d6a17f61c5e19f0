/* The main loop of qg_lsq_backward (lsq_backward.c) on x86 with AVX2:
 * eight elements at a time, the same fp32 expressions in the same order
 * (docs/semantics.md, "LSQ"), so dx is the reference's to the bit; ds and
 * dz go to a double accumulator per lane, an order the page's tolerance
 * for the sums allows. Rounding half to even is one instruction here
 * (vroundps, as nearbyintf in the default mode: ties to even, -0.0 and
 * NaN kept, |t| >= 2^23 unchanged). */
#include "qg_isa_facts.h"
#include "rt_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define X86 __attribute__((target(QG_TARGET_AVX2))) /* the avx2 ISA's features, as qg_cpu_has counts them */

/* acc[0] += the low four lanes in double, acc[1] += the high four. */
X86 static void add_halves8(__m256d acc[2], __m256 v) {
    acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

X86 static double lanes_sum8(const __m256d acc[2]) {
    const __m256d both = _mm256_add_pd(acc[0], acc[1]);
    const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(both), _mm256_extractf128_pd(both, 1));
    return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

X86 size_t qg_x86_lsq_run(const qg_lsq_params *p, const float *x, const float *dy, float *dx, size_t len, double *ds,
                          double *dz) {
    const __m256 z = _mm256_set1_ps(p->z), s = _mm256_set1_ps(p->s), inv = _mm256_set1_ps(p->inv);
    const __m256 g = _mm256_set1_ps(p->g), qmin = _mm256_set1_ps(p->qmin), qmax = _mm256_set1_ps(p->qmax);
    const __m256 minus_one = _mm256_set1_ps(-1.0f);
    __m256d ds_acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256d dz_acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i), d = _mm256_loadu_ps(dy + i);
        const __m256 xq =
            _mm256_round_ps(_mm256_add_ps(z, _mm256_mul_ps(xv, inv)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 below = _mm256_cmp_ps(xq, qmin, _CMP_LT_OQ);
        const __m256 out = _mm256_or_ps(below, _mm256_cmp_ps(xq, qmax, _CMP_GT_OQ));
        _mm256_storeu_ps(dx + i, _mm256_andnot_ps(out, d));
        const __m256 bound = _mm256_blendv_ps(qmax, qmin, below);
        const __m256 ds_out = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_sub_ps(bound, z)), g);
        const __m256 xfq = _mm256_mul_ps(_mm256_sub_ps(xq, z), s);
        const __m256 ds_in = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(d, _mm256_sub_ps(xfq, xv)), inv), g);
        add_halves8(ds_acc, _mm256_blendv_ps(ds_in, ds_out, out));
        const __m256 dz_out = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(d, minus_one), s), g);
        add_halves8(dz_acc, _mm256_and_ps(out, dz_out));
    }
    *ds += lanes_sum8(ds_acc);
    *dz += lanes_sum8(dz_acc);
    return i;
}
#endif
