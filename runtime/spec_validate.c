/* Cross-field rules of a spec. Every message names the field, the value and
 * what was expected. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "qgen/spec.h"
#include "arg_check.h"
#include "qgen/blocks.h"

static bool is_c_identifier(const char *s) {
    if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

static bool observer_is_per_channel(qg_observer_type t) {
    return t == QG_OBS_PER_CHANNEL_MINMAX || t == QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX;
}

/* The range: inside the dtype, around 0, and reduce_range's halving. */
static qg_status validate_range(const qg_spec *sp, qg_error *err) {
    int64_t dmin, dmax;
    qg_dtype_range(sp->dtype, &dmin, &dmax);
    if (sp->given_quant_min > sp->given_quant_max)
        return qg_error_set(err, QG_ERR_INVALID,
                            "quant_min: got %lld > quant_max %lld; expected quant_min <= quant_max",
                            (long long)sp->given_quant_min, (long long)sp->given_quant_max);
    if (sp->given_quant_min < dmin || sp->given_quant_min > dmax)
        return qg_error_set(err, QG_ERR_INVALID, "quant_min: got %lld; expected a value in %s's range %lld..%lld",
                            (long long)sp->given_quant_min, qg_dtype_name(sp->dtype), (long long)dmin, (long long)dmax);
    if (sp->given_quant_max < dmin || sp->given_quant_max > dmax)
        return qg_error_set(err, QG_ERR_INVALID, "quant_max: got %lld; expected a value in %s's range %lld..%lld",
                            (long long)sp->given_quant_max, qg_dtype_name(sp->dtype), (long long)dmin, (long long)dmax);
    if (sp->given_quant_min > 0)
        return qg_error_set(err, QG_ERR_INVALID,
                            "quant_min: got %lld; expected quant_min <= 0 (0 must be in the range)",
                            (long long)sp->given_quant_min);
    if (sp->given_quant_max < 0)
        return qg_error_set(err, QG_ERR_INVALID,
                            "quant_max: got %lld; expected quant_max >= 0 (0 must be in the range)",
                            (long long)sp->given_quant_max);
    if (sp->reduce_range && sp->dtype == QG_QINT32)
        return qg_error_set(err, QG_ERR_INVALID, "reduce_range: got true; expected false for qint32");
    if (sp->reduce_range && qg_dtype_is_unsigned(sp->dtype) && qg_qscheme_is_symmetric(sp->qscheme))
        return qg_error_set(err, QG_ERR_INVALID,
                            "reduce_range: got true; expected false for symmetric %s (its zero point, the middle of "
                            "the full range, would fall outside the reduced one)",
                            qg_dtype_name(sp->dtype));
    int64_t emin = sp->given_quant_min, emax = sp->given_quant_max;
    if (sp->reduce_range) {
        /* Python's floor division, as torch halves the range. */
        emin = emin / 2 - (emin % 2 < 0);
        emax = emax / 2 - (emax % 2 < 0);
    }
    if (sp->quant_min != emin || sp->quant_max != emax)
        return qg_error_set(err, QG_ERR_INVALID,
                            "quant_min/quant_max: effective range %lld..%lld does not follow from %lld..%lld with "
                            "reduce_range=%s; expected %lld..%lld",
                            (long long)sp->quant_min, (long long)sp->quant_max, (long long)sp->given_quant_min,
                            (long long)sp->given_quant_max, sp->reduce_range ? "true" : "false", (long long)emin,
                            (long long)emax);
    return QG_OK;
}

/* The observer: matching the qscheme, its numbers in range. */
static qg_status validate_observer(const qg_spec *sp, qg_error *err) {
    const bool per_channel = qg_qscheme_is_per_channel(sp->qscheme);
    const qg_observer_spec *o = &sp->observer;
    const char *oname = qg_observer_type_name(o->type);
    if (!oname)
        return qg_error_set(err, QG_ERR_INVALID, "observer.type: got %d; expected a known observer", (int)o->type);
    if (observer_is_per_channel(o->type) && !per_channel)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.type: got \"%s\"; expected a per-tensor observer for qscheme %s", oname,
                            qg_qscheme_name(sp->qscheme));
    if (!observer_is_per_channel(o->type) && o->type != QG_OBS_PLACEHOLDER && per_channel)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.type: got \"%s\"; expected per_channel_minmax, "
                            "moving_average_per_channel_minmax or placeholder for qscheme %s",
                            oname, qg_qscheme_name(sp->qscheme));
    if (!(o->averaging_constant > 0.0f && o->averaging_constant <= 1.0f))
        return qg_error_set(err, QG_ERR_INVALID, "observer.averaging_constant: got %g; expected a value in (0, 1]",
                            (double)o->averaging_constant);
    if (!(o->eps > 0.0f) || !isfinite(o->eps))
        return qg_error_set(err, QG_ERR_INVALID, "observer.eps: got %g; expected a finite value > 0", (double)o->eps);
    if (o->bins < 1 || o->bins > (1 << 20))
        return qg_error_set(err, QG_ERR_INVALID, "observer.bins: got %d; expected 1..1048576", o->bins);
    if (o->histc_int && o->type != QG_OBS_HISTOGRAM)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.histc_range: got \"int\" for a %s observer; expected \"exact\" (it applies to "
                            "histogram observers only)",
                            qg_observer_type_name(o->type));
    if (o->upsample_rate < 1 || o->upsample_rate > 4096)
        return qg_error_set(err, QG_ERR_INVALID, "observer.upsample_rate: got %d; expected 1..4096", o->upsample_rate);
    if (o->type == QG_OBS_FIXED_QPARAMS) {
        if (!(o->fixed_scale > 0.0f) || !isfinite(o->fixed_scale))
            return qg_error_set(err, QG_ERR_INVALID, "observer.scale: got %g; expected a finite value > 0",
                                (double)o->fixed_scale);
        if (o->fixed_zero_point < sp->quant_min || o->fixed_zero_point > sp->quant_max)
            return qg_error_set(err, QG_ERR_INVALID, "observer.zero_point: got %d; expected a value in %lld..%lld",
                                (int)o->fixed_zero_point, (long long)sp->quant_min, (long long)sp->quant_max);
    }
    return QG_OK;
}

/* How the training step sets qparams. */
static qg_status validate_training(const qg_spec *sp, qg_error *err) {
    const qg_observer_spec *o = &sp->observer;
    const char *oname = qg_observer_type_name(o->type);
    if (!qg_train_qparams_name(sp->train_qparams))
        return qg_error_set(err, QG_ERR_INVALID, "train_qparams: got %d; expected observer or fused_op",
                            (int)sp->train_qparams);
    if (sp->train_qparams == QG_TRAIN_QPARAMS_FUSED_OP) {
        /* torch's fused op runs a moving-average observer on integer
         * zero points, with qmax - qmin in an int. */
        if (o->type != QG_OBS_MOVING_AVERAGE_MINMAX && o->type != QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX)
            return qg_error_set(err, QG_ERR_INVALID,
                                "train_qparams: got \"fused_op\" with observer.type \"%s\"; expected "
                                "moving_average_minmax or moving_average_per_channel_minmax (or train_qparams "
                                "\"observer\")",
                                oname);
        if (sp->dtype == QG_QINT32 || sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
            return qg_error_set(err, QG_ERR_INVALID,
                                "train_qparams: got \"fused_op\" with dtype %s, qscheme %s; expected an 8- or "
                                "16-bit dtype with integer zero points (or train_qparams \"observer\")",
                                qg_dtype_name(sp->dtype), qg_qscheme_name(sp->qscheme));
    }
    return QG_OK;
}

/* group_size: with the per-group qschemes only; their qparams come from
 * the caller or from dynamic quantization, not from a running observer. */
static qg_status validate_groups(const qg_spec *sp, qg_error *err) {
    const char *qs = qg_qscheme_name(sp->qscheme);
    if (!qg_qscheme_is_per_group(sp->qscheme)) {
        if (sp->group_size != 0)
            return qg_error_set(err, QG_ERR_INVALID,
                                "group_size: got %zu; expected it only with qscheme per_group_affine or "
                                "per_group_symmetric (qscheme is %s)",
                                sp->group_size, qs);
        return QG_OK;
    }
    if (sp->group_size < 1)
        return qg_error_set(err, QG_ERR_INVALID, "group_size: got %zu; expected >= 1 for qscheme %s", sp->group_size,
                            qs);
    /* minmax: each group's min/max, as dynamic quantization takes them */
    if (sp->observer.type != QG_OBS_PLACEHOLDER && sp->observer.type != QG_OBS_MINMAX)
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.type: got \"%s\"; expected minmax or placeholder for qscheme %s (per-group "
                            "qparams are given by the caller or computed by dynamic quantization)",
                            qg_observer_type_name(sp->observer.type) ? qg_observer_type_name(sp->observer.type) : "?",
                            qs);
    if (sp->train_qparams != QG_TRAIN_QPARAMS_OBSERVER)
        return qg_error_set(err, QG_ERR_INVALID, "train_qparams: got \"%s\"; expected observer for qscheme %s",
                            qg_train_qparams_name(sp->train_qparams) ? qg_train_qparams_name(sp->train_qparams) : "?",
                            qs);
    return QG_OK;
}

/* block formats (docs/semantics.md, "Block formats"): the fields a format
 * fixes hold what the JSON loader sets for it. */
static qg_status validate_block(const qg_spec *sp, qg_error *err) {
    if (sp->block == QG_BLOCK_NONE)
        return QG_OK;
    const char *name = qg_block_format_name(sp->block);
    if (!name || !qg_block_row_bytes(sp->block, qg_block_elems(sp->block)))
        return qg_error_set(err, QG_ERR_INVALID, "block: got %d; expected one of ggml's block formats", (int)sp->block);
    const bool with_min = sp->block == QG_BLOCK_Q4_1 || sp->block == QG_BLOCK_Q5_1 || sp->block == QG_BLOCK_Q4_K;
    const qg_qscheme qs = with_min ? QG_PER_GROUP_AFFINE : QG_PER_GROUP_SYMMETRIC;
    if (sp->qscheme != qs || sp->group_size != qg_block_elems(sp->block) || sp->ch_axis != -1 || sp->dtype != QG_QINT8)
        return qg_error_set(err, QG_ERR_INVALID,
                            "block %s: got qscheme %s, group_size %zu, ch_axis %d, dtype %s; expected %s, %zu, -1, "
                            "qint8 (as the spec loader sets them)",
                            name, qg_qscheme_name(sp->qscheme) ? qg_qscheme_name(sp->qscheme) : "?", sp->group_size,
                            sp->ch_axis, qg_dtype_name(sp->dtype) ? qg_dtype_name(sp->dtype) : "?", qg_qscheme_name(qs),
                            qg_block_elems(sp->block));
    return QG_OK;
}

/* fp8 dtypes (docs/semantics.md, "fp8"): values round to the format
 * nearest-even and saturate at +-max finite, so the range is the format's
 * and the zero point 0. */
static qg_status validate_float8(const qg_spec *sp, qg_error *err) {
    if (!qg_dtype_is_float8(sp->dtype))
        return QG_OK;
    const char *dt = qg_dtype_name(sp->dtype);
    int64_t dmin, dmax;
    qg_dtype_range(sp->dtype, &dmin, &dmax);
    if (!qg_qscheme_is_symmetric(sp->qscheme))
        return qg_error_set(err, QG_ERR_INVALID,
                            "qscheme: got %s with dtype %s; expected per_tensor_symmetric, per_channel_symmetric or "
                            "per_group_symmetric (an fp8 zero point is 0)",
                            qg_qscheme_name(sp->qscheme) ? qg_qscheme_name(sp->qscheme) : "?", dt);
    if (sp->given_quant_min != dmin || sp->given_quant_max != dmax || sp->reduce_range)
        return qg_error_set(err, QG_ERR_INVALID,
                            "quant_min/quant_max: got %lld..%lld%s with dtype %s; expected the format's range "
                            "%lld..%lld without reduce_range",
                            (long long)sp->given_quant_min, (long long)sp->given_quant_max,
                            sp->reduce_range ? " and reduce_range" : "", dt, (long long)dmin, (long long)dmax);
    if (sp->rounding != QG_ROUND_HALF_EVEN)
        return qg_error_set(err, QG_ERR_INVALID, "rounding: got %s with dtype %s; expected half_even",
                            qg_rounding_name(sp->rounding) ? qg_rounding_name(sp->rounding) : "?", dt);
    if (sp->train_qparams != QG_TRAIN_QPARAMS_OBSERVER)
        return qg_error_set(err, QG_ERR_INVALID,
                            "train_qparams: got fused_op with dtype %s; expected observer (ATen's fused op has "
                            "integer dtypes only)",
                            dt);
    if (sp->requant != QG_REQUANT_FP32)
        return qg_error_set(err, QG_ERR_INVALID, "requant: got fixed_point with dtype %s; expected fp32", dt);
    if (sp->observer.type == QG_OBS_HISTOGRAM) /* its search assumes a uniform grid */
        return qg_error_set(err, QG_ERR_INVALID,
                            "observer.type: got histogram with dtype %s; expected a min/max observer, fixed_qparams "
                            "or placeholder",
                            dt);
    if (sp->observer.type == QG_OBS_FIXED_QPARAMS && sp->observer.fixed_zero_point != 0)
        return qg_error_set(err, QG_ERR_INVALID, "observer.zero_point: got %d with dtype %s; expected 0",
                            (int)sp->observer.fixed_zero_point, dt);
    return QG_OK;
}

/* bfloat16/float16 tensors run the float32 kernels between exact widening
 * and nearest-even narrowing (docs/semantics.md, "Float types"); specs
 * whose scalar kernels are the reference itself take float32 only. */
static qg_status validate_float_type(const qg_spec *sp, qg_error *err) {
    const char *ft = qg_float_type_name(sp->float_type);
    if (!ft)
        return qg_error_set(err, QG_ERR_INVALID, "float_type: got %d; expected float32, bfloat16 or float16",
                            (int)sp->float_type);
    if (sp->float_type == QG_FLOAT32)
        return QG_OK;
    if (sp->dtype == QG_QINT32 || sp->qscheme == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS)
        return qg_error_set(err, QG_ERR_INVALID,
                            "float_type: got %s with dtype %s, qscheme %s; expected float32 (these specs run on the "
                            "reference, which takes float32 tensors)",
                            ft, qg_dtype_name(sp->dtype), qg_qscheme_name(sp->qscheme));
    return QG_OK;
}

qg_status qg_spec_validate(const qg_spec *sp, qg_error *err) {
    QG_NEED_AS(sp, "spec", err, "a spec");
    if (!is_c_identifier(sp->name))
        return qg_error_set(err, QG_ERR_INVALID, "name: got \"%s\"; expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)",
                            sp->name);
    if (!qg_dtype_name(sp->dtype))
        return qg_error_set(err, QG_ERR_INVALID,
                            "dtype: got %d; expected qint8, quint8, qint16, quint16, qint32, qint4, quint4, "
                            "fp8_e4m3fn or fp8_e5m2",
                            (int)sp->dtype);
    qg_status st = validate_range(sp, err);
    if (st)
        return st;
    if (!qg_qscheme_name(sp->qscheme))
        return qg_error_set(err, QG_ERR_INVALID, "qscheme: got %d; expected a known qscheme", (int)sp->qscheme);
    bool per_channel = qg_qscheme_is_per_channel(sp->qscheme) || qg_qscheme_is_per_group(sp->qscheme);
    if ((st = validate_groups(sp, err)))
        return st;
    if (per_channel && sp->channel_len < 1)
        return qg_error_set(err, QG_ERR_INVALID, "channel_len: got %zu; expected >= 1 for qscheme %s", sp->channel_len,
                            qg_qscheme_name(sp->qscheme));
    if (!per_channel && sp->channel_len != 1)
        return qg_error_set(err, QG_ERR_INVALID, "channel_len: got %zu; expected 1 for qscheme %s", sp->channel_len,
                            qg_qscheme_name(sp->qscheme));
    if (!qg_rounding_name(sp->rounding) || !qg_scale_op_name(sp->scale_op) || !qg_nan_policy_name(sp->nan_policy) ||
        !qg_requant_name(sp->requant))
        return qg_error_set(err, QG_ERR_INVALID, "rounding/scale_op/nan/requant: out-of-range enum value");
    if ((st = validate_observer(sp, err)) || (st = validate_training(sp, err)) || (st = validate_float8(sp, err)) ||
        (st = validate_float_type(sp, err)) || (st = validate_block(sp, err)))
        return st;
    if (sp->targets == 0 || sp->targets >= (1u << QG_ISA_COUNT))
        return qg_error_set(err, QG_ERR_INVALID,
                            "targets: got an empty or unknown set; expected some of the ISAs `qgen targets` lists");
    return QG_OK;
}
