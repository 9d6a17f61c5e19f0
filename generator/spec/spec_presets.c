/* Built-in presets a spec can name as "base". The torch ones are the QAT
 * defaults of torch 1.13: torch.<backend>.* are
 * get_default_qat_qconfig(backend), version 1, whose modules are
 * FusedMovingAvgObsFakeQuantize (train_qparams "fused_op");
 * torch.<backend>.v0.* are version 0, FakeQuantize (train_qparams
 * "observer"). The test suite checks them against torch itself. Horizon's are its documented symmetric
 * FakeQuantize: clamp(floor(x / scale + 0.5), qmin, qmax) * scale. The onnx ones
 * are QuantizeLinear/DequantizeLinear of opset 21 (x / y_scale rounded half to
 * even, then the zero point, saturated to the dtype), per tensor; the
 * conformance suite runs them against ONNX Runtime (docs/onnx.md). The
 * torchao ones are symmetric per-group int4 weights as torchao's
 * IntxFakeQuantizeConfig(torch.int4, group_size, is_symmetric=True)
 * computes them: groups along the last axis, scale = max|w| / 7.5 floored
 * at fp32 eps, q = clamp(rne(w * fl(1 / scale)), -8, 7) (docs/spec.md).
 * onnx.fp8_* are QuantizeLinear-21 to the OCP fp8 formats (docs/onnx.md).
 * ggml.* are ggml's block formats, bit for bit with ggml's reference
 * quantizers (docs/semantics.md, "Block formats"). */
#include <stddef.h>
#include <string.h>

#include "spec_internal.h"

#define TORCH_ACT(reduce, rule)                                                                                        \
    "{\"train_qparams\":\"" rule                                                                                       \
    "\",\"dtype\":\"quint8\",\"qscheme\":\"per_tensor_affine\",\"quant_min\":0,\"quant_max\":255,"                     \
    "\"reduce_range\":" reduce ",\"fast_training\":true,"                                                              \
    "\"observer\":{\"type\":\"moving_average_minmax\",\"averaging_constant\":0.01}}"
#define TORCH_WEIGHT_PER_CHANNEL(rule)                                                                                 \
    "{\"train_qparams\":\"" rule                                                                                       \
    "\",\"dtype\":\"qint8\",\"qscheme\":\"per_channel_symmetric\",\"quant_min\":-128,\"quant_max\":127,"               \
    "\"ch_axis\":0,\"fast_training\":true,"                                                                            \
    "\"observer\":{\"type\":\"moving_average_per_channel_minmax\",\"averaging_constant\":0.01}}"
#define TORCH_WEIGHT_PER_TENSOR(rule)                                                                                  \
    "{\"train_qparams\":\"" rule                                                                                       \
    "\",\"dtype\":\"qint8\",\"qscheme\":\"per_tensor_symmetric\",\"quant_min\":-128,\"quant_max\":127,"                \
    "\"fast_training\":true,"                                                                                          \
    "\"observer\":{\"type\":\"moving_average_minmax\",\"averaging_constant\":0.01}}"
#define HORIZON(dt)                                                                                                    \
    "{\"dtype\":\"" dt "\",\"qscheme\":\"per_tensor_symmetric\",\"rounding\":\"half_up\",\"scale_op\":\"div\","        \
    "\"observer\":{\"type\":\"moving_average_minmax\",\"averaging_constant\":0.01}}"

#define ONNX(dt)                                                                                                       \
    "{\"dtype\":\"" dt "\",\"qscheme\":\"per_tensor_affine\",\"rounding\":\"half_even\",\"scale_op\":\"div\","         \
    "\"observer\":{\"type\":\"minmax\"}}"

/* QuantizeLinear-21 to fp8: x / y_scale rounded to the format nearest-even,
 * saturate = 1 (+-max finite on overflow), zero point 0. */
#define ONNX_FP8(dt)                                                                                                   \
    "{\"dtype\":\"" dt "\",\"qscheme\":\"per_tensor_symmetric\",\"rounding\":\"half_even\",\"scale_op\":\"div\","      \
    "\"saturate\":true,\"observer\":{\"type\":\"minmax\"}}"

#define TORCHAO_INT4(g)                                                                                                \
    "{\"dtype\":\"qint4\",\"qscheme\":\"per_group_symmetric\",\"group_size\":" g ",\"ch_axis\":-1,"                    \
    "\"rounding\":\"half_even\",\"scale_op\":\"mul_inv\",\"observer\":{\"type\":\"minmax\"}}"

#define GGML(fmt) "{\"block\":\"" fmt "\",\"observer\":{\"type\":\"minmax\"}}"

static const struct {
    const char *name;
    const char *json;
} presets[] = {
    {"torch.fbgemm.activation", TORCH_ACT("true", "fused_op")},
    {"torch.fbgemm.weight", TORCH_WEIGHT_PER_CHANNEL("fused_op")},
    {"torch.x86.activation", TORCH_ACT("true", "fused_op")},
    {"torch.x86.weight", TORCH_WEIGHT_PER_CHANNEL("fused_op")},
    {"torch.qnnpack.activation", TORCH_ACT("false", "fused_op")},
    {"torch.qnnpack.weight", TORCH_WEIGHT_PER_TENSOR("fused_op")},
    {"torch.onednn.activation", TORCH_ACT("false", "fused_op")},
    {"torch.onednn.weight", TORCH_WEIGHT_PER_CHANNEL("fused_op")},
    {"torch.fbgemm.v0.activation", TORCH_ACT("true", "observer")},
    {"torch.fbgemm.v0.weight", TORCH_WEIGHT_PER_CHANNEL("observer")},
    {"torch.x86.v0.activation", TORCH_ACT("true", "observer")},
    {"torch.x86.v0.weight", TORCH_WEIGHT_PER_CHANNEL("observer")},
    {"torch.qnnpack.v0.activation", TORCH_ACT("false", "observer")},
    {"torch.qnnpack.v0.weight", TORCH_WEIGHT_PER_TENSOR("observer")},
    {"torch.onednn.v0.activation", TORCH_ACT("false", "observer")},
    {"torch.onednn.v0.weight", TORCH_WEIGHT_PER_CHANNEL("observer")},
    {"horizon.qint8", HORIZON("qint8")},
    {"horizon.qint16", HORIZON("qint16")},
    {"onnx.int8", ONNX("qint8")},
    {"onnx.uint8", ONNX("quint8")},
    {"onnx.int16", ONNX("qint16")},
    {"onnx.uint16", ONNX("quint16")},
    {"onnx.int4", ONNX("qint4")},
    {"onnx.uint4", ONNX("quint4")},
    {"onnx.fp8_e4m3fn", ONNX_FP8("fp8_e4m3fn")},
    {"onnx.fp8_e5m2", ONNX_FP8("fp8_e5m2")},
    {"torchao.int4_weight_g32", TORCHAO_INT4("32")},
    {"torchao.int4_weight_g128", TORCHAO_INT4("128")},
    {"ggml.q8_0", GGML("q8_0")},
    {"ggml.q8_1", GGML("q8_1")},
    {"ggml.q4_0", GGML("q4_0")},
    {"ggml.q4_1", GGML("q4_1")},
    {"ggml.q5_0", GGML("q5_0")},
    {"ggml.q5_1", GGML("q5_1")},
    {"ggml.mxfp4", GGML("mxfp4")},
    {"ggml.q4_K", GGML("q4_K")},
    {"ggml.q6_K", GGML("q6_K")},
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

const char *qg_preset_json(const char *name) {
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return presets[i].json;
    return NULL;
}

const char *const *qg_spec_preset_names(void) {
    static const char *names[N_PRESETS + 1];
    for (size_t i = 0; i < N_PRESETS; i++)
        names[i] = presets[i].name;
    names[N_PRESETS] = NULL;
    return names;
}
