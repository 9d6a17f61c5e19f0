/* LSQ (learnable scale) reference, torch 1.13's
 * _fake_quantize_learnable_per_{tensor,channel}_affine and their backward.
 * Element values follow torch's fp32 expressions; the per-channel sums of
 * ds and dz are accumulated in double. */
#include <math.h>
#include <stdlib.h>

#include "rt_internal.h"
#include "arg_check.h"

static float clampf_range(const qg_spec *sp, float v) {
    float lo = (float)sp->quant_min, hi = (float)sp->quant_max;
    return v < lo ? lo : v > hi ? hi : v;
}

float qg_lsq_zero_point(const qg_spec *sp, float zf, bool backward) {
    if (backward && !qg_qscheme_is_per_channel(sp->qscheme))
        return truncf(clampf_range(sp, zf + 0.5f));
    return clampf_range(sp, nearbyintf(zf));
}

void qg_ref_lsq_forward(const qg_spec *sp, const float *x, float *y, size_t n, const float *scale,
                        const float *zero_point_f, size_t channels, size_t inner) {
    QG_NEED_OR_RETURN(sp && scale && zero_point_f && ((x && y) || n == 0));
    /* run by run of one channel's elements: no allocation, so nothing to fail */
    const size_t C = channels ? channels : 1, run = C > 1 ? (inner ? inner : 1) : (n ? n : 1);
    for (size_t base = 0, c = 0; base < n; base += run, c = c + 1 == C ? 0 : c + 1) {
        const int32_t z = (int32_t)qg_lsq_zero_point(sp, zero_point_f[c], false);
        const qg_qparams qp = {&scale[c], &z, NULL, 1, 1};
        qg_ref_fake_quant(sp, x + base, y + base, NULL, n - base < run ? n - base : run, &qp);
    }
}

void qg_ref_lsq_backward(const qg_spec *sp, const float *x, const float *dy, size_t n, const float *scale,
                         const float *zero_point_f, size_t channels, size_t inner, float g, qg_lsq_grads *out) {
    QG_NEED_OR_RETURN(sp && scale && zero_point_f && out && out->dx && out->ds && out->dz && ((x && dy) || n == 0));
    for (size_t c = 0; c < channels; c++)
        out->ds[c] = out->dz[c] = 0.0;
    for (size_t i = 0; i < n; i++) {
        size_t c = qg_channel_of(i, inner ? inner : 1, channels);
        const float s = scale[c], inv = 1.0f / s;
        const float z = qg_lsq_zero_point(sp, zero_point_f[c], true);
        out->dx[i] = qg_lsq_element(sp, s, inv, z, g, x[i], dy[i], &out->ds[c], &out->dz[c]);
    }
}
