/* qgen/spec.h - the quantization spec: what a user asks qgen to generate.
 *
 * A spec is read from JSON (see docs/spec.md) by libqgen; this header only
 * holds the resolved, validated form that every other part consumes. The
 * runtime (libqgen_rt) uses it without any JSON dependency.
 *
 * Pointer arguments: a NULL the function cannot take is refused with
 * QG_ERR_ARG and a message naming the function and the argument
 * (functions without a status return without effect); data pointers may be
 * NULL when their element count is 0; arguments documented as optional
 * (mask, zero_point_float, ...) may always be NULL.
 */
#ifndef QGEN_SPEC_H
#define QGEN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* New dtypes go at the end: the values are part of the ABI. qint4 and
 * quint4 are stored packed, two per byte, the element with the lower index
 * in the low nibble, an odd count's last high nibble 0 (ONNX's layout).
 * fp8_e4m3fn and fp8_e5m2 are the OCP 8-bit floats, one byte of bits per
 * element; their "range" is +-max finite (448, 57344), their zero point 0
 * (docs/semantics.md, "fp8"). */
typedef enum qg_dtype {
    QG_QINT8,
    QG_QUINT8,
    QG_QINT16,
    QG_QINT32,
    QG_QUINT16,
    QG_QINT4,
    QG_QUINT4,
    QG_FP8_E4M3FN,
    QG_FP8_E5M2
} qg_dtype;
#define QG_DTYPE_COUNT 9

typedef enum qg_qscheme {
    QG_PER_TENSOR_AFFINE,
    QG_PER_TENSOR_SYMMETRIC,
    QG_PER_CHANNEL_AFFINE,
    QG_PER_CHANNEL_SYMMETRIC,
    QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS,
    /* Groups of group_size consecutive indices along ch_axis share qparams
     * (ONNX's blocked quantization; docs/semantics.md, "Layouts"). */
    QG_PER_GROUP_AFFINE,
    QG_PER_GROUP_SYMMETRIC
} qg_qscheme;
#define QG_QSCHEME_COUNT 7

typedef enum qg_rounding { QG_ROUND_HALF_EVEN, QG_ROUND_HALF_UP, QG_ROUND_HALF_AWAY } qg_rounding;

typedef enum qg_scale_op { QG_SCALE_MUL_INV, QG_SCALE_DIV } qg_scale_op;

/* What a NaN input becomes. zero_point: q = z, fake-quant 0.0 (docs/semantics.md).
 * propagate: q = z as well, but fake-quant returns the NaN unchanged.
 * unchecked: the caller promises finite inputs; a NaN still gives a code
 * in [qmin, qmax] and a fake-quant value (q - z) * s, which may differ by
 * ISA (docs/semantics.md, "NaN inputs"). */
typedef enum qg_nan_policy { QG_NAN_ZERO_POINT, QG_NAN_PROPAGATE, QG_NAN_UNCHECKED } qg_nan_policy;

typedef enum qg_requant_scheme { QG_REQUANT_FP32, QG_REQUANT_FIXED_POINT } qg_requant_scheme;

/* How the fused training step turns running min/max into qparams
 * (docs/semantics.md, "The fused training step"). observer: the observer's
 * calculate_qparams, as torch's FakeQuantize does. fused_op: ATen's
 * double-precision ChooseQuantizationParams, as torch's
 * FusedMovingAvgObsFakeQuantize (get_default_qat_qconfig's default) does. */
typedef enum qg_train_qparams { QG_TRAIN_QPARAMS_OBSERVER, QG_TRAIN_QPARAMS_FUSED_OP } qg_train_qparams;

/* The element type of the float side of every op (x, y, dy, dx). The
 * arithmetic is float32 on the exactly widened input; float outputs are
 * rounded to the type nearest-even (docs/semantics.md, "Float types").
 * bfloat16 and float16 tensors hold 16-bit patterns (uint16_t). */
typedef enum qg_float_type { QG_FLOAT32, QG_BFLOAT16, QG_FLOAT16 } qg_float_type;
#define QG_FLOAT_TYPE_COUNT 3

/* ggml's block formats (docs/semantics.md, "Block formats"): every block of
 * 32 (K-quants: 256) consecutive values of a row stores its own scale, computed
 * from the block, next to its codes. QG_BLOCK_NONE: the spec's qparams come
 * from outside, as for every other spec. */
typedef enum qg_block_format {
    QG_BLOCK_NONE,
    QG_BLOCK_Q8_0,
    QG_BLOCK_Q8_1,
    QG_BLOCK_Q4_0,
    QG_BLOCK_Q4_1,
    QG_BLOCK_Q5_0,
    QG_BLOCK_Q5_1,
    QG_BLOCK_MXFP4,
    QG_BLOCK_Q4_K,
    QG_BLOCK_Q6_K
} qg_block_format;
#define QG_BLOCK_FORMAT_COUNT 10

typedef enum qg_observer_type {
    QG_OBS_MINMAX,
    QG_OBS_MOVING_AVERAGE_MINMAX,
    QG_OBS_PER_CHANNEL_MINMAX,
    QG_OBS_MOVING_AVERAGE_PER_CHANNEL_MINMAX,
    QG_OBS_HISTOGRAM,
    QG_OBS_FIXED_QPARAMS,
    QG_OBS_PLACEHOLDER
} qg_observer_type;

/* Instruction sets kernels can be generated for; a spec's `targets` is a
 * bit set of (1u << qg_isa). */
typedef enum qg_isa {
    QG_ISA_SCALAR,
    QG_ISA_AVX2,
    QG_ISA_AVX512,
    QG_ISA_NEON,
    QG_ISA_RVV,
    QG_ISA_SVE,
    QG_ISA_WASM,
    QG_ISA_COUNT
} qg_isa;

#define QG_NAME_MAX 64

typedef struct qg_observer_spec {
    qg_observer_type type;
    float averaging_constant; /* moving-average observers; torch default 0.01 */
    float eps;                /* lower bound of a computed scale; 2^-23 */
    int bins;                 /* histogram bins; 2048 */
    int upsample_rate;        /* histogram merge grid; 128 */
    float fixed_scale;        /* fixed_qparams only */
    int32_t fixed_zero_point; /* fixed_qparams only */
    bool histc_int;           /* histogram: histc's bounds truncated by int(), as torch 1.13's forward
                                 does ("histc_range": "int"); else the exact fp32 range */
} qg_observer_spec;

typedef struct qg_spec {
    char name[QG_NAME_MAX]; /* a C identifier; prefixes every generated symbol */
    qg_dtype dtype;
    qg_qscheme qscheme;
    int ch_axis;        /* per-channel and per-group only */
    size_t channel_len; /* 1 for per-tensor; per-group: the length of axis ch_axis */
    /* The range kernels clamp to, after reduce_range. */
    int64_t quant_min, quant_max;
    /* True when the user gave quant_min/quant_max; torch then centres the
     * symmetric quint8 zero point at (qmin+qmax)/2 instead of 128. */
    bool custom_range;
    int64_t given_quant_min, given_quant_max; /* before reduce_range */
    bool reduce_range;
    bool saturate;    /* false: the gradient mask is all ones */
    bool compat_mask; /* true: mask packed 1 bit per element, LSB first */
    bool in_place;    /* kernels may be called with output == input */
    bool fast_training;
    qg_train_qparams train_qparams;
    qg_rounding rounding;
    qg_scale_op scale_op;
    qg_nan_policy nan_policy;
    qg_requant_scheme requant;
    qg_observer_spec observer;
    unsigned targets;  /* bit set of 1u << qg_isa */
    size_t group_size; /* per-group qschemes only (>= 1), else 0 */
    qg_float_type float_type;
    qg_block_format block; /* QG_BLOCK_NONE unless the spec is one of ggml's formats */
} qg_spec;

static inline bool qg_qscheme_is_per_channel(qg_qscheme s) {
    return s == QG_PER_CHANNEL_AFFINE || s == QG_PER_CHANNEL_SYMMETRIC || s == QG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
}

static inline bool qg_qscheme_is_per_group(qg_qscheme s) {
    return s == QG_PER_GROUP_AFFINE || s == QG_PER_GROUP_SYMMETRIC;
}

static inline bool qg_qscheme_is_symmetric(qg_qscheme s) {
    return s == QG_PER_TENSOR_SYMMETRIC || s == QG_PER_CHANNEL_SYMMETRIC || s == QG_PER_GROUP_SYMMETRIC;
}

/* Names as they appear in JSON; NULL for an out-of-range value. */
const char *qg_dtype_name(qg_dtype d);
const char *qg_qscheme_name(qg_qscheme s);
const char *qg_rounding_name(qg_rounding r);
const char *qg_scale_op_name(qg_scale_op s);
const char *qg_nan_policy_name(qg_nan_policy p);
const char *qg_requant_name(qg_requant_scheme r);
const char *qg_train_qparams_name(qg_train_qparams r);
const char *qg_observer_type_name(qg_observer_type t);
const char *qg_isa_name(qg_isa isa);
const char *qg_float_type_name(qg_float_type f);
const char *qg_block_format_name(qg_block_format f);

/* The dtype's full range, its element size in bytes (1 for the 4-bit
 * dtypes: their kernels work on one byte per element before packing), and
 * whether it is unsigned or packed. */
void qg_dtype_range(qg_dtype d, int64_t *qmin, int64_t *qmax);
size_t qg_dtype_size(qg_dtype d);
bool qg_dtype_is_unsigned(qg_dtype d);
bool qg_dtype_is_packed(qg_dtype d);
bool qg_dtype_is_float8(qg_dtype d);
/* An fp8 dtype's bit layout: mantissa bits, exponent bias, and whether the
 * top exponent holds infinities and NaNs (e5m2) rather than finite values
 * and one NaN magnitude (e4m3fn). False for other dtypes. */
bool qg_dtype_float8_layout(qg_dtype d, int *mantissa_bits, int *bias, bool *has_inf);
/* Bytes per element of the float side: 4, or 2 for bfloat16 and float16. */
size_t qg_float_type_size(qg_float_type f);
/* Bytes a q tensor of n elements takes: (n + 1) / 2 for the 4-bit dtypes. */
size_t qg_q_bytes(qg_dtype d, size_t n);

/* Checks the cross-field rules (range inside the dtype, 0 inside the range,
 * observer matching the qscheme, ...). Parsing calls it; so should anyone who
 * builds a qg_spec by hand. */
qg_status qg_spec_validate(const qg_spec *spec, qg_error *err);

/* ---- JSON (provided by libqgen, not by the runtime) -------------------
 *
 * Loading layers three sources, later ones winning: the preset named by the
 * spec's "base" field, the spec's own fields, then `sets`, each "key=value"
 * with key a field name or "observer.<field>" and value JSON (a bare word
 * is taken as a string). Errors name the file, line and column, the field,
 * the value and what was expected. */
qg_status qg_spec_load_file(const char *path, const char *const *sets, size_t nsets, qg_spec *out, qg_error *err);
qg_status qg_spec_load_string(const char *json, const char *origin, const char *const *sets, size_t nsets, qg_spec *out,
                              qg_error *err);
/* The resolved spec as canonical JSON (fixed key order, every field, 2-space
 * indent, trailing newline). The caller frees it with free(). */
char *qg_spec_to_json(const qg_spec *spec);
/* qg_spec_load_string into a spec on the heap, for hosts that hold specs
 * by pointer (the Python package); release it with qg_spec_free. */
qg_status qg_spec_new(const char *json, const char *origin, const char *const *sets, size_t nsets, qg_spec **out,
                      qg_error *err);
void qg_spec_free(qg_spec *spec);
/* Names of the built-in presets usable as "base", NULL-terminated. */
const char *const *qg_spec_preset_names(void);

#ifdef __cplusplus
}
#endif
#endif
