// torch.ops.qgen.train_step (and train_step_, in place): one forward of
// qgen.torch's FakeQuantize, FusedMovingAvgObsFakeQuantize and Horizon's
// fused FakeQuantize as a single torch operator, so that a module's step
// costs one dispatcher call instead of a Python autograd Function and a
// dozen ctypes calls (docs/python.md, "The torch operator").
//
// Each call puts the module's buffers into the runtime observer, runs the
// fused training step on the JIT kernels (docs/semantics.md, "The fused
// training step") and writes min/max, scale and zero point back, with
// torch's shapes (a per-channel buffer not yet sized takes the channel
// count); an empty X changes nothing, as in torch's modules. The gradient
// is the generated backward kernel on the step's mask. Errors come back as RuntimeError("qgen:<kind>:<message>"),
// which qgen.torch raises as QgenError (kind a qg_status name) or as the
// Python exception the kind names.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "qgen/jit.h"
#include "qgen/runtime.h"

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

[[noreturn]] void fail(const char *kind, const std::string &message) {
    TORCH_CHECK(false, "qgen:", kind, ":", message);
}

void check(qg_status st, const qg_error &err) {
    if (st != QG_OK)
        fail(std::to_string(static_cast<int>(st)).c_str(), err.message); // Python maps the value (_lib.error_of)
}

// Whether the runtime may read or write buffer t's memory as n values of
// `type` (no conversion, no dispatcher call).
bool direct(const at::Tensor &t, int64_t n, at::ScalarType type) {
    return t.numel() == n && t.scalar_type() == type && t.is_contiguous() && t.device().is_cpu();
}

// A buffer's values as `channels` values of T: its own when it holds that
// many, its one value repeated, or `fill` when it is empty (torch's
// per-channel buffers before the first step).
template <typename T>
std::vector<T> channel_values(const at::Tensor &buffer, int64_t channels, T fill, at::ScalarType type,
                              const char *name) {
    const int64_t n = buffer.numel();
    if (n == 0)
        return std::vector<T>(channels, fill);
    if (n != channels && n != 1)
        fail("ValueError", std::string(name) + ": " + std::to_string(n) + " values; expected " +
                               std::to_string(channels) + " (one per channel) or 1");
    at::Tensor converted;
    const T *p;
    if (direct(buffer, n, type)) {
        p = buffer.data_ptr<T>();
    } else {
        converted = buffer.detach().reshape({-1}).to(at::kCPU, type).contiguous();
        p = converted.data_ptr<T>();
    }
    return n == channels ? std::vector<T>(p, p + n) : std::vector<T>(channels, p[0]);
}

// `values` into buffer `dst` as torch's observers store them: in place
// when the count matches (or both are single values), else resized to the
// channel count first.
template <typename T> void store(at::Tensor dst, const std::vector<T> &values, at::ScalarType type) {
    const int64_t n = static_cast<int64_t>(values.size());
    if (direct(dst, n, type)) {
        std::memcpy(dst.data_ptr<T>(), values.data(), values.size() * sizeof(T));
        return;
    }
    const at::Tensor src = at::from_blob(const_cast<T *>(values.data()), {n}, at::TensorOptions().dtype(type));
    if (dst.numel() != n)
        dst.resize_({n});
    dst.copy_(src.view(dst.sizes()));
}

// What one call works on besides X: the module's buffers (written with
// the new state), the runtime observer, the JIT's kernels and the switches.
struct Step {
    at::Tensor min_val, max_val, scale, zero_point;
    qg_observer *obs;
    const qg_kernels *k;
    int64_t channels, inner;
    bool observe_on, fake_quant_on, packed_mask, in_place;
};

// The step itself: y (x itself with in_place) and the mask of x, packed
// or one byte per element; the buffers take the new state. Nothing is
// written when the runtime refuses the batch.
std::pair<at::Tensor, at::Tensor> run_step(const at::Tensor &x, const Step &a) {
    if (x.numel() == 0) /* torch's modules leave their state as it was */
        return {a.in_place ? x : at::empty_like(x), at::empty({0}, x.options().dtype(at::kByte))};
    const float inf = INFINITY;
    std::vector<float> mn = channel_values<float>(a.min_val, a.channels, inf, at::kFloat, "min_val");
    std::vector<float> mx = channel_values<float>(a.max_val, a.channels, -inf, at::kFloat, "max_val");
    std::vector<float> s = channel_values<float>(a.scale, a.channels, 1.0f, at::kFloat, "scale");
    std::vector<int32_t> z = channel_values<int32_t>(a.zero_point, a.channels, 0, at::kInt, "zero_point");
    qg_error err{};
    check(qg_observer_restore(a.obs, mn.data(), mx.data(), s.data(), z.data(), &err), err);
    qg_observer_enable(a.obs, a.observe_on, a.fake_quant_on);

    const size_t n = static_cast<size_t>(x.numel()), inner = static_cast<size_t>(a.inner);
    at::Tensor y = a.in_place ? x : at::empty_like(x, at::MemoryFormat::Contiguous);
    const int64_t mask_bytes = static_cast<int64_t>(a.packed_mask ? (n + 7) / 8 : n);
    at::Tensor mask = at::empty({mask_bytes}, x.options().dtype(at::kByte));
    uint8_t *m = mask.data_ptr<uint8_t>();
    const qg_kernels *k = a.k;
    qg_status st;
    if (x.scalar_type() == at::kFloat)
        st = qg_fused_train_step_with(a.obs, k->observe, k->fake_quant, x.data_ptr<float>(), y.data_ptr<float>(), m, n,
                                      inner, s.data(), z.data(), &err);
    else
        st = qg_fused_train_step16_with(a.obs, k->u16.observe, k->u16.fake_quant,
                                        static_cast<const uint16_t *>(x.data_ptr()),
                                        static_cast<uint16_t *>(y.data_ptr()), m, n, inner, s.data(), z.data(), &err);
    check(st, err);

    if (a.observe_on) {
        qg_observer_minmax(a.obs, mn.data(), mx.data());
        store(a.min_val, mn, at::kFloat);
        store(a.max_val, mx, at::kFloat);
    }
    store(a.scale, s, at::kFloat);
    store(a.zero_point, z, at::kInt);
    return {y, mask};
}

// y = fake_quant(x) for autograd; the module's buffers ride along in the
// Step, without gradients.
struct TrainStep : public torch::autograd::Function<TrainStep> {
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &x, const Step &a) {
        auto [y, mask] = run_step(x, a);
        ctx->save_for_backward({mask});
        ctx->saved_data["kernels"] = reinterpret_cast<int64_t>(a.k);
        if (a.in_place)
            ctx->mark_dirty({x});
        return y;
    }

    static tensor_list backward(AutogradContext *ctx, tensor_list grads) {
        const auto *k = reinterpret_cast<const qg_kernels *>(ctx->saved_data["kernels"].toInt());
        const at::Tensor mask = ctx->get_saved_variables()[0];
        const at::Tensor dy = grads[0].contiguous();
        at::Tensor dx = at::empty_like(dy, at::MemoryFormat::Contiguous);
        const size_t n = static_cast<size_t>(dy.numel());
        if (n == 0)
            return {dx, at::Tensor()};
        if (dy.scalar_type() == at::kFloat)
            k->fake_quant_backward(dy.data_ptr<float>(), mask.data_ptr<uint8_t>(), dx.data_ptr<float>(), n);
        else
            k->u16.fake_quant_backward(static_cast<const uint16_t *>(dy.data_ptr()), mask.data_ptr<uint8_t>(),
                                       static_cast<uint16_t *>(dx.data_ptr()), n);
        return {dx, at::Tensor()};
    }
};

at::Tensor train_step_into(const at::Tensor &x, const Step &a) {
    if (!x.device().is_cpu() || !x.is_contiguous())
        fail("ValueError", "X: expected a contiguous CPU tensor");
    const at::ScalarType t = x.scalar_type();
    if (t != at::kFloat && t != at::kHalf && t != at::kBFloat16)
        fail("TypeError", "X: expected float32, float16 or bfloat16");
    return TrainStep::apply(x, a);
}

// train_step (InPlace false) and train_step_ (true: y written over x, for
// Horizon's in_place; torch spells an in-place op with the trailing
// underscore and returns x).
template <bool InPlace>
at::Tensor train_step(const at::Tensor &x, at::Tensor min_val, at::Tensor max_val, at::Tensor scale,
                      at::Tensor zero_point, int64_t observer, int64_t kernels, int64_t channels, int64_t inner,
                      bool observe_on, bool fake_quant_on, bool packed_mask) {
    const Step a{min_val,
                 max_val,
                 scale,
                 zero_point,
                 reinterpret_cast<qg_observer *>(observer),
                 reinterpret_cast<const qg_kernels *>(kernels),
                 channels,
                 inner,
                 observe_on,
                 fake_quant_on,
                 packed_mask,
                 InPlace};
    return train_step_into(x, a);
}

} // namespace

#define QGEN_STEP_ARGS                                                                                                 \
    "Tensor(a!) min_val, Tensor(b!) max_val, Tensor(c!) scale, Tensor(d!) zero_point, int observer, int kernels, "     \
    "int channels, int inner, bool observe_on, bool fake_quant_on, bool packed_mask"

TORCH_LIBRARY(qgen, m) {
    m.def("train_step(Tensor x, " QGEN_STEP_ARGS ") -> Tensor");
    m.def("train_step_(Tensor(e!) x, " QGEN_STEP_ARGS ") -> Tensor(e!)");
}

TORCH_LIBRARY_IMPL(qgen, CompositeImplicitAutograd, m) {
    m.impl("train_step", train_step<false>);
    m.impl("train_step_", train_step<true>);
}
