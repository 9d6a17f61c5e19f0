/* calculate_qparams: torch 1.13's UniformQuantizationObserverBase formulas,
 * evaluated in fp32 in torch's order (a tensor divided by a Python float is
 * a true fp32 division there, not a multiply by the reciprocal). */
#include <math.h>

#include "rt_internal.h"
#include "arg_check.h"

qg_status qg_calculate_qparams(const qg_spec *sp, const float *min, const float *max, size_t channels, float *scale,
                               int32_t *zero_point, float *zero_point_float, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec from qg_spec_load_file or qg_spec_validate");
    QG_NEED_DATA(min, channels, err);
    QG_NEED_DATA(max, channels, err);
    QG_NEED_DATA(scale, channels, err);
    QG_NEED_DATA(zero_point, channels, err);
    const float eps = sp->observer.eps;
    const int64_t qmin = sp->quant_min, qmax = sp->quant_max;
    /* torch: float(quant_max - quant_min), a Python float, then fp32. */
    const float range = (float)(double)(qmax - qmin);
    const float half_range = (float)((double)(qmax - qmin) / 2.0);
    for (size_t c = 0; c < channels; c++) {
        float lo = min[c], hi = max[c];
        if (isnan(lo) || isnan(hi))
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: got NaN; expected observed finite data", c);
        if (lo == INFINITY && hi == -INFINITY) { /* no data yet */
            scale[c] = 1.0f;
            zero_point[c] = 0;
            if (zero_point_float)
                zero_point_float[c] = 0.0f;
            continue;
        }
        if (lo > hi)
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: got min %g > max %g; expected min <= max", c,
                                (double)lo, (double)hi);
        if (!isfinite(lo) || !isfinite(hi))
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: got min %g, max %g; expected finite values", c,
                                (double)lo, (double)hi);
        float min_neg = lo < 0.0f ? lo : 0.0f;
        float max_pos = hi > 0.0f ? hi : 0.0f;
        float s;
        int64_t z = 0;
        if (qg_qscheme_is_symmetric(sp->qscheme)) {
            float m = -min_neg > max_pos ? -min_neg : max_pos;
            s = m / half_range;
            s = s > eps ? s : eps;
            if (qg_dtype_is_unsigned(sp->dtype))
                z = sp->custom_range ? (qmin + qmax) / 2 : (qmax + 1) / 2;
        } else if (sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS) {
            s = (hi - lo) / range;
            s = s > eps ? s : 1.0f;
            if (zero_point_float)
                zero_point_float[c] = -1.0f * lo / s;
            z = 0;
        } else {
            s = (max_pos - min_neg) / range;
            s = s > eps ? s : eps;
            /* quant_min - round(min_neg / scale) in int32, then clamp. */
            float r = nearbyintf(min_neg / s);
            double zz = (double)qmin - (double)r;
            z = zz < (double)qmin ? qmin : zz > (double)qmax ? qmax : (int64_t)zz;
        }
        scale[c] = s;
        zero_point[c] = (int32_t)z;
    }
    return QG_OK;
}
