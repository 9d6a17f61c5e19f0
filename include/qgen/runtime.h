/* qgen/runtime.h - libqgen_rt: quantization parameters, observers, quantizer
 * states, and the scalar reference of every op in docs/semantics.md.
 *
 * The reference functions (qg_ref_*) are plain portable C and define what
 * every generated kernel must return, bit for bit. They are also the
 * fallback a host can call when no generated kernel fits.
 *
 * Pointer arguments: a NULL the function cannot take is refused with
 * QG_ERR_ARG and a message naming the function and the argument
 * (functions without a status return without effect); data pointers may be
 * NULL when their element count is 0; arguments documented as optional
 * (mask, zero_point_float, ...) may always be NULL.
 */
#ifndef QGEN_RUNTIME_H
#define QGEN_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgen/spec.h"
#include "qgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Quantization parameters as kernels read them. Element i of a tensor
 * belongs to channel (i / inner) % channels. */
typedef struct qg_qparams {
    const float *scale;            /* 1 value, or `channels` values */
    const int32_t *zero_point;     /* same count; integer zero points */
    const float *zero_point_float; /* per_channel_affine_float_qparams only, else NULL */
    size_t channels;               /* 1 for per-tensor */
    size_t inner;                  /* elements per channel run; 1 = channels-last */
} qg_qparams;

/* Per-group specs (docs/semantics.md, "Layouts"): `channels` is the
 * length of the grouped axis (the spec's channel_len), `inner` the elements
 * after it; scale and zero_point hold qg_qparams_count values, ordered as
 * ONNX's blocked y_scale (the input's shape with the axis length replaced
 * by ceil(channel_len / group_size)). */

/* Values in the scale (and zero point) arrays for a tensor of n elements:
 * 1 per tensor, channel_len per channel, per group as above. */
size_t qg_qparams_count(const qg_spec *spec, size_t n, size_t inner);

/* Checks scale > 0 and finite, zero point inside the spec's range, channel
 * count matching the spec; for per-group specs n a multiple of
 * channel_len * inner and all qg_qparams_count(n) values.
 * qg_qparams_validate takes n = channels * inner (one slice of the axis). */
qg_status qg_qparams_validate_n(const qg_spec *spec, const qg_qparams *qp, size_t n, qg_error *err);
qg_status qg_qparams_validate(const qg_spec *spec, const qg_qparams *qp, qg_error *err);

/* ---- calculate_qparams (torch 1.13 observer formulas) ---------------- */

/* Per channel c < channels: (scale[c], zero_point[c]) from min[c], max[c].
 * zero_point_float receives the float zero point for float_qparams (may be
 * NULL otherwise). Fails on NaN or min > max. */
qg_status qg_calculate_qparams(const qg_spec *spec, const float *min, const float *max, size_t channels, float *scale,
                               int32_t *zero_point, float *zero_point_float, qg_error *err);

/* ---- reference ops ---------------------------------------------------- */

/* q[i] has the spec's dtype: int8_t, uint8_t, int16_t, uint16_t or int32_t. */
void qg_ref_quantize(const qg_spec *spec, const float *x, void *q, size_t n, const qg_qparams *qp);
void qg_ref_dequantize(const qg_spec *spec, const void *q, float *x, size_t n, const qg_qparams *qp);
/* mask may be NULL; byte or packed (compat_mask) per spec. y may equal x. */
void qg_ref_fake_quant(const qg_spec *spec, const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp);
void qg_ref_fake_quant_backward(const qg_spec *spec, const float *dy, const uint8_t *mask, float *dx, size_t n);

/* The OCP fp8 formats (dtype QG_FP8_E4M3FN or QG_FP8_E5M2; docs/semantics.md,
 * "fp8"): v rounded to the nearest code, ties to even; past the largest
 * finite value, +-max finite with saturate, else NaN (e4m3fn) or +-inf
 * (e5m2); a NaN gives 0x7F with v's sign bit. Decoding gives +NaN for
 * every NaN code. */
uint8_t qg_fp8_encode(qg_dtype dtype, float v, bool saturate);
float qg_fp8_decode(qg_dtype dtype, uint8_t bits);

/* bfloat16 and float16 bit patterns (docs/semantics.md, "Float types"):
 * widening is exact (a float16 signaling NaN comes out quiet); narrowing
 * rounds to nearest-even, overflowing to
 * +-inf, and gives NaN as torch 1.13 does (bfloat16 0x7FC0, float16 0x7E00
 * with the sign). The ref functions take float32 tensors; for a spec with a
 * 16-bit float_type an op's result is its float32 result on the widened
 * input, narrowed. widen/narrow of QG_FLOAT32 copy. */
float qg_bf16_to_float(uint16_t h);
uint16_t qg_float_to_bf16(float f);
float qg_f16_to_float(uint16_t h);
uint16_t qg_float_to_f16(float f);
void qg_float_type_widen(qg_float_type type, const void *in, float *out, size_t n);
void qg_float_type_narrow(qg_float_type type, const float *in, void *out, size_t n);

/* The channels-last parameter table of a generated kernel: QG_CHAN_ROWS
 * rows of `padded` (>= channels, > 0) values, in this order: s, 1/s,
 * qmin - z and qmax - z as floats, then z as int32; the columns past
 * `channels` scale 1, bounds and z 0. NULL without memory or with bad
 * arguments; freed by qg_chan_table_free. */
enum { QG_CHAN_S, QG_CHAN_INV, QG_CHAN_LO, QG_CHAN_HI, QG_CHAN_Z, QG_CHAN_ROWS };
float *qg_chan_table_new(const qg_qparams *qp, size_t channels, size_t padded, int64_t qmin, int64_t qmax);
void qg_chan_table_free(float *table);

/* Bytes a mask of n elements takes for this spec. */
size_t qg_mask_bytes(const qg_spec *spec, size_t n);

/* LSQ backward (torch _fake_quantize_learnable_*_backward). scale and
 * zero_point_f are the learnable float parameters (1 or channels values);
 * ds and dz receive per-channel sums (1 value for per-tensor). */
typedef struct qg_lsq_grads {
    float *dx;
    double *ds;
    double *dz;
} qg_lsq_grads;
void qg_ref_lsq_forward(const qg_spec *spec, const float *x, float *y, size_t n, const float *scale,
                        const float *zero_point_f, size_t channels, size_t inner);
void qg_ref_lsq_backward(const qg_spec *spec, const float *x, const float *dy, size_t n, const float *scale,
                         const float *zero_point_f, size_t channels, size_t inner, float grad_factor,
                         qg_lsq_grads *out);
/* The same at speed (what qgen.torch runs): dx identical, ds and dz summed
 * in another order, within docs/semantics.md's tolerance for them. */
void qg_lsq_backward(const qg_spec *spec, const float *x, const float *dy, size_t n, const float *scale,
                     const float *zero_point_f, size_t channels, size_t inner, float grad_factor, qg_lsq_grads *out);

/* Bias to int32: bq = rne(b * (1 / (s_in * s_w[c]))), zero point 0. */
void qg_ref_quantize_bias(const float *bias, int32_t *bq, size_t channels, float s_in, const float *s_w);

/* Requantization of int32 accumulators (one per element, channel c =
 * (i / inner) % channels) to the output spec's dtype. The spec's `requant`
 * picks the fp32 or the fixed-point scheme (docs/semantics.md). */
typedef struct qg_requant_params {
    float s_in;
    const float *s_w;      /* channels values */
    const int32_t *bias_q; /* channels values, or NULL */
    float s_out;
    int32_t z_out;
    size_t channels;
    size_t inner;
} qg_requant_params;
void qg_ref_requantize(const qg_spec *out_spec, const int32_t *acc, void *y, size_t n, const qg_requant_params *rp);
/* Checks finite scales > 0, z_out inside the spec's range, and every
 * channel's multiplier s_in * s_w / s_out a normal float (below 2^31 for
 * the fixed-point scheme). Kernels assume it passed. */
qg_status qg_requant_params_validate(const qg_spec *out_spec, const qg_requant_params *rp, qg_error *err);

/* The fixed-point multiplier of a real multiplier m in (0, 1) (TFLite's
 * QuantizeMultiplier): m ~= mult * 2^(shift - 31). */
void qg_quantize_multiplier(double m, int32_t *mult, int *shift);
int32_t qg_multiply_by_quantized_multiplier(int32_t x, int32_t mult, int shift);

/* ---- observers -------------------------------------------------------- */

typedef struct qg_observer qg_observer; /* opaque */

qg_status qg_observer_create(const qg_spec *spec, qg_observer **out, qg_error *err);
void qg_observer_destroy(qg_observer *obs);
void qg_observer_reset(qg_observer *obs);
/* Observes n values; element i is in channel (i / inner) % channel_len.
 * NaN in x is refused with an error and the state is left unchanged. */
qg_status qg_observer_update(qg_observer *obs, const float *x, size_t n, size_t inner, qg_error *err);
/* Folds one batch's min/max (already reduced, NaN-free; channel_len values
 * for per-channel observers, else 1) into the state, as update() does. The
 * generated observe kernels reduce, then call this. */
qg_status qg_observer_fold(qg_observer *obs, const float *batch_min, const float *batch_max, qg_error *err);
/* scale/zero_point hold channel_len values (1 for per-tensor). */
qg_status qg_observer_qparams(const qg_observer *obs, float *scale, int32_t *zero_point, float *zero_point_float,
                              qg_error *err);
const qg_spec *qg_observer_spec_of(const qg_observer *obs);
/* How many non-empty batches the observer has taken in (saved in state files). */
uint64_t qg_observer_batches(const qg_observer *obs);
/* The running min/max (channel_len values each); +inf/-inf before data. */
void qg_observer_minmax(const qg_observer *obs, float *min, float *max);

/* State files: versioned, checksummed, written atomically (a failed save
 * leaves the previous file intact). Loading refuses a corrupt file, or one
 * written for another observer type, dtype, qscheme or channel count. */
qg_status qg_observer_save(const qg_observer *obs, const char *path, qg_error *err);
qg_status qg_observer_load(qg_observer *obs, const char *path, qg_error *err);

/* ---- the fused training step (docs/semantics.md) ----------------------
 *
 * observe(x), new qparams, fake_quant(x) in one call, as torch's QAT modules
 * do: FakeQuantize for the spec's train_qparams "observer",
 * FusedMovingAvgObsFakeQuantize for "fused_op". The observer object keeps
 * the module's state besides min/max: the qparams of the last step (1.0 and
 * 0 before the first) and the two switches, all saved in state files.
 * scale/zero_point receive the qparams after the step (channel_len values
 * for per-channel observers, else 1). With fake quant off, y = x and the
 * mask is all ones. NaN in x is refused and nothing changes. */
qg_status qg_ref_fused_train_step(qg_observer *obs, const float *x, float *y, uint8_t *mask, size_t n, size_t inner,
                                  float *scale, int32_t *zero_point, qg_error *err);

/* The same step on generated kernels (NULL: the reference's): the
 * dispatcher's NAME_fused_train_step and qg_kernels_fused_train_step
 * (qgen/jit.h) call it with theirs. */
typedef qg_status (*qg_observe_fn)(const float *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
typedef void (*qg_fake_quant_fn)(const float *x, float *y, uint8_t *mask, size_t n, const qg_qparams *qp);
qg_status qg_fused_train_step_with(qg_observer *obs, qg_observe_fn observe, qg_fake_quant_fn fake_quant, const float *x,
                                   float *y, uint8_t *mask, size_t n, size_t inner, float *scale, int32_t *zero_point,
                                   qg_error *err);

/* The step of a spec whose float_type is bfloat16 or float16: x and y hold
 * its bit patterns, and the kernels are that spec's (NULL: the reference's,
 * on the widened values with the result narrowed). Each of the two
 * functions refuses an observer of the other's float types. */
typedef qg_status (*qg_observe16_fn)(const uint16_t *x, size_t n, size_t inner, qg_observer *obs, qg_error *err);
typedef void (*qg_fake_quant16_fn)(const uint16_t *x, uint16_t *y, uint8_t *mask, size_t n, const qg_qparams *qp);
qg_status qg_fused_train_step16_with(qg_observer *obs, qg_observe16_fn observe, qg_fake_quant16_fn fake_quant,
                                     const uint16_t *x, uint16_t *y, uint8_t *mask, size_t n, size_t inner,
                                     float *scale, int32_t *zero_point, qg_error *err);

/* ---- dynamic quantization (docs/semantics.md) -------------------------
 *
 * Each of `rows` rows of `row_len` consecutive elements is quantized with
 * qparams of its own: its min/max, the qparams of the spec's train_qparams
 * rule (qg_calculate_qparams; with "fused_op" qg_choose_qparams_fused_op,
 * as torch's dynamic quantize), then quantize.
 * rows = 1 is torch.quantize_per_tensor_dynamic; one row per token is
 * per-token quantization. scale/zero_point receive one value per row. The
 * spec is per tensor (affine or symmetric) or per group, 8 or 16 bits. Per
 * group, row_len must be the spec's channel_len: each group of group_size
 * elements of a row gets its own qparams, ceil(row_len / group_size) per
 * row in scale/zero_point (ONNX's blocked order); observe and
 * quantize are its kernels (NULL: the reference). NaN or inf is refused
 * naming the row and element; the rows before it are written. */
typedef void (*qg_quantize_fn)(const float *x, void *q, size_t n, const qg_qparams *qp);
/* QG_OK when qg_quantize_dynamic serves the spec; else why not (the field). */
qg_status qg_quantize_dynamic_check(const qg_spec *spec, qg_error *err);
qg_status qg_quantize_dynamic(const qg_spec *spec, qg_observe_fn observe, qg_quantize_fn quantize, const float *x,
                              void *q, size_t rows, size_t row_len, float *scale, int32_t *zero_point, qg_error *err);

/* torch's enable/disable_observer and enable/disable_fake_quant; both on
 * after create and reset. */
void qg_observer_enable(qg_observer *obs, bool observe, bool fake_quant);
void qg_observer_enabled(const qg_observer *obs, bool *observe, bool *fake_quant);
/* The qparams the training step holds now (torch's scale and zero_point
 * buffers). */
void qg_observer_train_qparams(const qg_observer *obs, float *scale, int32_t *zero_point);
/* Puts a module's buffers back into the observer (a checkpoint, or a host
 * that keeps the state itself, as the Python package's torch modules do):
 * running min/max and the training step's qparams, channel_len values each
 * for per-channel observers, else 1. Min/max of +inf/-inf mean "nothing
 * observed yet"; the batch count (which torch does not keep) becomes 1 when
 * channel 0 has data, else 0. Refused for histogram observers (their state
 * is more than min/max) and for a zero point outside the spec's range. */
qg_status qg_observer_restore(qg_observer *obs, const float *min, const float *max, const float *scale,
                              const int32_t *zero_point, qg_error *err);
/* A histogram observer's state as torch's HistogramObserver buffers hold
 * it: spec.observer.bins counts, min and max (+inf/-inf: nothing observed
 * yet). Restoring refuses other observers, NaN bounds and counts that are
 * negative or not finite. */
void qg_observer_histogram(const qg_observer *obs, float *hist, float *min, float *max);
qg_status qg_observer_restore_histogram(qg_observer *obs, const float *hist, float min, float max, qg_error *err);

/* ATen's ChooseQuantizationParams as torch.fused_moving_avg_obs_fake_quant
 * calls it: double precision, symmetric ranges widened to keep 0 exact,
 * scales below 6.1e-5 raised to it. The API's other qparams rule is
 * qg_calculate_qparams (the observers' formula, which torch's convert
 * uses). Fails on NaN and on min > max (nothing observed yet). */
qg_status qg_choose_qparams_fused_op(const qg_spec *spec, const float *min, const float *max, size_t channels,
                                     float *scale, int32_t *zero_point, qg_error *err);

/* ---- CPU ------------------------------------------------------------------ */

/* Whether this CPU and OS can run kernels of `isa` (scalar: always). */
bool qg_cpu_has(qg_isa isa);

/* The head of an entry of a generated dispatcher's table (NAME_dispatch.c). */
typedef struct qg_dispatch_head {
    const char *isa;
    qg_isa id;
} qg_dispatch_head;

/* The entry of a generated dispatcher's table to run: `count` entries of
 * `stride` bytes, each starting with a qg_dispatch_head, best first. The
 * one the environment's QGEN_ISA names where it is set (a warning on
 * stderr when the table lacks it, falling back to the CPU's choice, or
 * when the CPU does not report it), else the first this CPU runs; NULL
 * when none does. `spec` names the spec in the warnings. */
const void *qg_dispatch_pick(const void *table, size_t count, size_t stride, const char *spec);

/* ---- quantizer states (PPQ's TensorQuantizationConfig) ----------------- */

typedef enum qg_quant_state {
    QG_STATE_INITIAL,     /* no qparams yet: pass-through */
    QG_STATE_ACTIVATED,   /* fake-quantizes with its qparams */
    QG_STATE_BAKED,       /* its parameter tensor holds fake-quantized values */
    QG_STATE_DEQUANTIZED, /* temporarily pass-through; restore() undoes it */
    QG_STATE_PASSIVE,     /* qparams come from elsewhere (bias, shared); quantizes */
    QG_STATE_FP32         /* never quantized */
} qg_quant_state;

typedef struct qg_quantizer qg_quantizer; /* opaque */

qg_status qg_quantizer_create(const qg_spec *spec, qg_quantizer **out, qg_error *err);
void qg_quantizer_destroy(qg_quantizer *qz);
qg_quant_state qg_quantizer_state(const qg_quantizer *qz);
const char *qg_quant_state_name(qg_quant_state s);
/* INITIAL/ACTIVATED -> ACTIVATED with these qparams (copied). */
qg_status qg_quantizer_activate(qg_quantizer *qz, const float *scale, const int32_t *zero_point, qg_error *err);
qg_status qg_quantizer_set_passive(qg_quantizer *qz, const float *scale, const int32_t *zero_point, qg_error *err);
qg_status qg_quantizer_set_fp32(qg_quantizer *qz, qg_error *err);
/* y = fake_quant(x) when ACTIVATED, BAKED or PASSIVE; y = x otherwise. */
qg_status qg_quantizer_apply(const qg_quantizer *qz, const float *x, float *y, size_t n, size_t inner, qg_error *err);
/* ACTIVATED -> BAKED: param[0..n) becomes fake_quant(param); the originals
 * are kept inside the quantizer. */
qg_status qg_quantizer_bake(qg_quantizer *qz, float *param, size_t n, size_t inner, qg_error *err);
/* ACTIVATED/BAKED/PASSIVE -> DEQUANTIZED (a baked parameter gets its
 * original values back). Already DEQUANTIZED: no change. */
qg_status qg_quantizer_dequantize(qg_quantizer *qz, qg_error *err);
/* DEQUANTIZED -> the state before it (re-baking a baked parameter);
 * BAKED -> ACTIVATED with the parameter's original values, bit-exact. */
qg_status qg_quantizer_restore(qg_quantizer *qz, qg_error *err);

#ifdef __cplusplus
}
#endif
#endif
