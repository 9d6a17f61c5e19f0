/* x86 forms of the float16 and bfloat16 loops of float16.c, for CPUs with
 * AVX2 and F16C: the same bits as the portable code (docs/semantics.md,
 * "Float types"). F16C's conversions are exact widening and nearest-even
 * narrowing; NaN is set to torch's NaN afterwards (the instruction keeps
 * the payload), and widening quiets a signaling NaN as the portable code
 * does. bfloat16 is integer arithmetic either way. */
#include "qg_isa_facts.h"
#include "rt_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* AVX2 as the kernels' dispatcher counts it includes F16C (cpu.c). */
bool qg_x86_convert_ok(void) { return qg_cpu_has(QG_ISA_AVX2); }

#define X86 __attribute__((target(QG_TARGET_AVX2))) /* the avx2 ISA's features, as qg_cpu_has counts them */

X86 size_t qg_x86_f16_widen(const uint16_t *h, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    return i;
}

/* 8 int32 lanes to 8 uint16, in order. */
X86 static __m128i pack_u16(__m256i v) {
    return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

X86 size_t qg_x86_f16_narrow(const float *in, uint16_t *h, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(in + i);
        const __m128i r = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 16), _mm256_set1_epi32(0x8000));
        const __m128i nan_code = pack_u16(_mm256_or_si256(sign, _mm256_set1_epi32(0x7E00)));
        const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
        _mm_storeu_si128((__m128i *)(h + i), _mm_blendv_epi8(r, nan_code, nan16));
    }
    return i;
}

X86 size_t qg_x86_bf16_widen(const uint16_t *h, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + i)));
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_slli_epi32(v, 16));
    }
    return i;
}

X86 size_t qg_x86_bf16_narrow(const float *in, uint16_t *h, size_t n) {
    size_t i = 0;
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7FFF);
    const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    for (; i + 8 <= n; i += 8) {
        const __m256i u = _mm256_loadu_si256((const __m256i *)(in + i));
        const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, bias), odd), 16);
        const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
        _mm_storeu_si128((__m128i *)(h + i), pack_u16(_mm256_blendv_epi8(r, _mm256_set1_epi32(0x7FC0), nan)));
    }
    return i;
}
#endif
