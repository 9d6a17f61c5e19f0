/* The JSON spellings of the spec's enums, and per-dtype facts. */
#include "qgen/spec.h"
#include "arg_check.h"

#define NAME_OF(table, v) ((unsigned)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : NULL)

static const char *const dtype_names[] = {"qint8", "quint8", "qint16",     "qint32",  "quint16",
                                          "qint4", "quint4", "fp8_e4m3fn", "fp8_e5m2"};
static const char *const qscheme_names[] = {"per_tensor_affine",
                                            "per_tensor_symmetric",
                                            "per_channel_affine",
                                            "per_channel_symmetric",
                                            "per_channel_affine_float_qparams",
                                            "per_group_affine",
                                            "per_group_symmetric"};
static const char *const rounding_names[] = {"half_even", "half_up", "half_away"};
static const char *const scale_op_names[] = {"mul_inv", "div"};
static const char *const nan_names[] = {"zero_point", "propagate", "unchecked"};
static const char *const requant_names[] = {"fp32", "fixed_point"};
static const char *const train_qparams_names[] = {"observer", "fused_op"};
static const char *const observer_names[] = {
    "minmax",    "moving_average_minmax", "per_channel_minmax", "moving_average_per_channel_minmax",
    "histogram", "fixed_qparams",         "placeholder"};
static const char *const float_type_names[] = {"float32", "bfloat16", "float16"};
static const char *const block_names[] = {"none", "q8_0", "q8_1",  "q4_0", "q4_1",
                                          "q5_0", "q5_1", "mxfp4", "q4_K", "q6_K"};
static const char *const isa_names[] = {"scalar", "avx2", "avx512", "neon", "rvv", "sve", "wasm"};

const char *qg_dtype_name(qg_dtype d) { return NAME_OF(dtype_names, d); }
const char *qg_qscheme_name(qg_qscheme s) { return NAME_OF(qscheme_names, s); }
const char *qg_rounding_name(qg_rounding r) { return NAME_OF(rounding_names, r); }
const char *qg_scale_op_name(qg_scale_op s) { return NAME_OF(scale_op_names, s); }
const char *qg_nan_policy_name(qg_nan_policy p) { return NAME_OF(nan_names, p); }
const char *qg_requant_name(qg_requant_scheme r) { return NAME_OF(requant_names, r); }
const char *qg_train_qparams_name(qg_train_qparams r) { return NAME_OF(train_qparams_names, r); }
const char *qg_observer_type_name(qg_observer_type t) { return NAME_OF(observer_names, t); }
const char *qg_isa_name(qg_isa isa) { return NAME_OF(isa_names, isa); }
const char *qg_float_type_name(qg_float_type f) { return NAME_OF(float_type_names, f); }
const char *qg_block_format_name(qg_block_format f) { return NAME_OF(block_names, f); }
size_t qg_float_type_size(qg_float_type f) { return f == QG_FLOAT32 ? 4 : 2; }

void qg_dtype_range(qg_dtype d, int64_t *qmin, int64_t *qmax) {
    QG_NEED_OR_RETURN(qmin && qmax);
    switch (d) {
    case QG_QINT8:
        *qmin = -128;
        *qmax = 127;
        return;
    case QG_QUINT8:
        *qmin = 0;
        *qmax = 255;
        return;
    case QG_QINT16:
        *qmin = -32768;
        *qmax = 32767;
        return;
    case QG_QUINT16:
        *qmin = 0;
        *qmax = 65535;
        return;
    case QG_QINT4:
        *qmin = -8;
        *qmax = 7;
        return;
    case QG_QUINT4:
        *qmin = 0;
        *qmax = 15;
        return;
    case QG_FP8_E4M3FN: /* +-max finite: the observers' symmetric range */
        *qmin = -448;
        *qmax = 448;
        return;
    case QG_FP8_E5M2:
        *qmin = -57344;
        *qmax = 57344;
        return;
    case QG_QINT32:
    default:
        *qmin = INT32_MIN;
        *qmax = INT32_MAX;
        return;
    }
}

size_t qg_dtype_size(qg_dtype d) {
    switch (d) {
    case QG_QINT8:
    case QG_QUINT8:
    case QG_QINT4:
    case QG_QUINT4:
    case QG_FP8_E4M3FN:
    case QG_FP8_E5M2: return 1;
    case QG_QINT16:
    case QG_QUINT16: return 2;
    case QG_QINT32:
    default: return 4;
    }
}

bool qg_dtype_is_unsigned(qg_dtype d) { return d == QG_QUINT8 || d == QG_QUINT16 || d == QG_QUINT4; }

bool qg_dtype_is_packed(qg_dtype d) { return d == QG_QINT4 || d == QG_QUINT4; }

bool qg_dtype_is_float8(qg_dtype d) { return d == QG_FP8_E4M3FN || d == QG_FP8_E5M2; }

bool qg_dtype_float8_layout(qg_dtype d, int *mantissa_bits, int *bias, bool *has_inf) {
    if (!mantissa_bits || !bias || !has_inf || !qg_dtype_is_float8(d))
        return false;
    const bool e5m2 = d == QG_FP8_E5M2;
    *mantissa_bits = e5m2 ? 2 : 3;
    *bias = e5m2 ? 15 : 7;
    *has_inf = e5m2;
    return true;
}

size_t qg_q_bytes(qg_dtype d, size_t n) { return qg_dtype_is_packed(d) ? n / 2 + n % 2 : n * qg_dtype_size(d); }
