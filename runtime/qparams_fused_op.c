/* The qparams of torch's fused training op (fused_moving_avg_obs_fake_quant):
 * ATen's ChooseQuantizationParams, the routine it calls without fbgemm.
 * Unlike the observers' calculate_qparams (qparams.c) it works in double,
 * widens symmetric ranges to preserve sparsity and cuts off small scales.
 * Each step keeps ATen's types: the C float/double mix below is deliberate,
 * every rounding in it is one torch performs (docs/semantics.md, "The fused
 * training step"). */
#include <math.h>
#include <stdlib.h>

#include "rt_internal.h"
#include "arg_check.h"

/* ATen's SMALL_SCALE_THRESHOLD: fp16's smallest normal, so that scales stay
 * out of fp16's subnormal range. */
#define SMALL_SCALE 6.1e-5f

static void choose(float min, float max, int32_t qmin, int32_t qmax, bool preserve_sparsity, float *scale_out,
                   int32_t *zp_out) {
    if (min < 0 && max > 0 && preserve_sparsity) {
        const int sym_qmin = -((qmax - qmin) / 2 + 1), sym_qmax = (qmax - qmin) / 2;
        /* float divisions and fabs on floats, the larger one widened */
        const float a = fabsf(min / (float)sym_qmin), b = fabsf(max / (float)sym_qmax);
        const double max_scale = a < b ? b : a;
        min = (float)(max_scale * sym_qmin);
        max = (float)(max_scale * sym_qmax);
    }
    min = 0.0f < min ? 0.0f : min;
    max = max < 0.0f ? 0.0f : max;
    double scale = ((double)max - min) / (qmax - qmin);
    if ((float)scale == 0.0f || isinf(1.0f / (float)scale))
        scale = 0.1;
    if (scale < SMALL_SCALE) {
        const float org_scale = (float)scale;
        scale = SMALL_SCALE;
        if (min == 0.0f) {
            max = SMALL_SCALE * (float)(qmax - qmin);
        } else if (max == 0.0f) {
            min = -SMALL_SCALE * (float)(qmax - qmin);
        } else {
            const float amplifier = SMALL_SCALE / org_scale;
            min *= amplifier;
            max *= amplifier;
        }
    }
    /* the zero point from the end whose terms are smaller */
    const double from_min = qmin - min / scale, from_max = qmax - max / scale;
    const double err_min = abs(qmin) - fabs(min / scale), err_max = abs(qmax) - fabs(max / scale);
    double zp = err_min < err_max ? from_min : from_max;
    if (min < 0 && max > 0 && preserve_sparsity)
        zp = (double)(qmin + qmax) / 2;
    *zp_out = zp < qmin ? qmin : zp > qmax ? qmax : (int32_t)nearbyint(zp);
    *scale_out = (float)scale;
}

qg_status qg_choose_qparams_fused_op(const qg_spec *sp, const float *min, const float *max, size_t channels,
                                     float *scale, int32_t *zero_point, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec from qg_spec_load_file or qg_spec_validate");
    QG_NEED_DATA(min, channels, err);
    QG_NEED_DATA(max, channels, err);
    QG_NEED_DATA(scale, channels, err);
    QG_NEED_DATA(zero_point, channels, err);
    if (sp->dtype == QG_QINT32 || sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        return qg_error_set(err, QG_ERR_INVALID,
                            "fused-op qparams: dtype %s, qscheme %s; expected an 8- or 16-bit dtype with integer "
                            "zero points",
                            qg_dtype_name(sp->dtype), qg_qscheme_name(sp->qscheme));
    for (size_t c = 0; c < channels; c++) {
        if (isnan(min[c]) || isnan(max[c]))
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: got NaN; expected observed finite data", c);
        if (!(min[c] <= max[c]))
            return qg_error_set(err, QG_ERR_STATE,
                                "min/max[%zu]: got min %g > max %g; expected observed data (torch's fused op "
                                "refuses to fake-quantize before its observer has seen a batch)",
                                c, (double)min[c], (double)max[c]);
        if (!isfinite(min[c]) || !isfinite(max[c]))
            return qg_error_set(err, QG_ERR_INVALID, "min/max[%zu]: got min %g, max %g; expected finite values", c,
                                (double)min[c], (double)max[c]);
        choose(min[c], max[c], (int32_t)sp->quant_min, (int32_t)sp->quant_max, qg_qscheme_is_symmetric(sp->qscheme),
               &scale[c], &zero_point[c]);
    }
    return QG_OK;
}
