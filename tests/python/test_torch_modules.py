"""qgen's Python package against torch 1.13's own code paths: the
functional fake-quant ops, the modules get_default_qat_qconfig builds, and
a QAT run through prepare_qat. Everything is compared with torch.equal
(bit-identical), on random data of varied scale and offset."""

import copy
import os
import unittest

import numpy as np
import torch
from torch.ao import quantization as tq

import qgen
import qgen.torch as qtorch

BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


def data(gen, shape, k):
    """Random data, scale 10^[-3, 3], offset up to +-2 scales, with exact
    ties and the range edges sprinkled in."""
    scale = 10.0 ** float(torch.empty(1).uniform_(-3, 3, generator=gen))
    offset = float(torch.empty(1).uniform_(-2, 2, generator=gen)) * scale
    x = torch.randn(shape, generator=gen) * scale + offset
    flat = x.view(-1)
    if flat.numel():
        flat[k % flat.numel()] = 0.0
        flat[(3 * k + 1) % flat.numel()] = -0.0
    return x


class KernelsAgainstTorchOps(unittest.TestCase):
    def test_fake_quant_per_tensor(self):
        gen = torch.Generator().manual_seed(1)
        for dtype, qmin, qmax in (("quint8", 0, 255), ("qint8", -128, 127)):
            k = qgen.Kernels({"dtype": dtype})
            for n in (0, 1, 7, 8, 15, 16, 17, 33, 255, 1000):
                x = data(gen, (n,), n)
                scale = float(x.abs().max()) / 100 + 1e-3 if n else 0.5
                zp = (qmin + qmax + 1) // 2 if dtype == "quint8" else 0
                xr = x.clone().requires_grad_(True)
                ref = torch.fake_quantize_per_tensor_affine(xr, scale, zp, qmin, qmax)
                ref.sum().backward()
                y, mask = k.fake_quant(x, [scale], [zp])
                self.assertTrue(torch.equal(y, ref.detach()), f"{dtype} n={n}")
                self.assertTrue(torch.equal(mask.to(torch.float32), xr.grad), f"{dtype} n={n} mask")
                dy = torch.randn(n, generator=gen)
                self.assertTrue(torch.equal(k.fake_quant_backward(dy, mask), dy * xr.grad))

    def test_fake_quant_per_channel(self):
        gen = torch.Generator().manual_seed(2)
        for axis, shape in ((0, (5, 3, 7)), (1, (2, 6, 9)), (2, (3, 4, 5))):
            C = shape[axis]
            k = qgen.Kernels({"dtype": "qint8", "qscheme": "per_channel_affine", "channel_len": C, "ch_axis": axis,
                              "observer": {"type": "per_channel_minmax"}})
            x = data(gen, shape, axis)
            scale = torch.rand(C, generator=gen) * float(x.abs().max()) / 50 + 1e-3
            zp = torch.randint(-20, 20, (C,), generator=gen, dtype=torch.int32)
            ref = torch.fake_quantize_per_channel_affine(x, scale, zp, axis, -128, 127)
            y, _ = k.fake_quant(x, scale, zp)
            self.assertTrue(torch.equal(y, ref), f"axis {axis}")

    def test_numpy_quantize_round_trip(self):
        k = qgen.Kernels({"dtype": "qint8", "qscheme": "per_tensor_symmetric"})
        x = np.linspace(-3, 3, 101, dtype=np.float32)
        q = k.quantize(x, [0.05], [0])
        ref = torch.quantize_per_tensor(torch.from_numpy(x), 0.05, 0, torch.qint8).int_repr().numpy()
        self.assertTrue(np.array_equal(q, ref))
        self.assertTrue(np.array_equal(k.dequantize(q, [0.05], [0]), ref.astype(np.float32) * np.float32(0.05)))

    def test_specs_no_vector_isa_serves(self):
        # qint32 runs on the JIT's scalar kernels, still equal to torch
        k = qgen.Kernels({"dtype": "qint32", "qscheme": "per_tensor_symmetric"})
        self.assertEqual(k.isa, "scalar")
        x = torch.linspace(-1e4, 1e4, 257)
        ref = torch.quantize_per_tensor(x, 0.5, 0, torch.qint32).int_repr()
        self.assertTrue(torch.equal(k.quantize(x, [0.5], [0]), ref))

    def test_bad_input_names_the_argument(self):
        k = qgen.Kernels({"dtype": "quint8"})
        with self.assertRaisesRegex(TypeError, "x: dtype float64"):
            k.fake_quant(torch.zeros(4, dtype=torch.float64), [1.0], [0])
        with self.assertRaisesRegex(ValueError, "x: a non-contiguous"):
            k.fake_quant(torch.zeros(4, 4).t(), [1.0], [0])
        with self.assertRaisesRegex(TypeError, "x: a list"):
            k.fake_quant([1.0], [1.0], [0])
        with self.assertRaisesRegex(qgen.QgenError, "scale"):
            k.fake_quant(torch.zeros(4), [-1.0], [0])
        with self.assertRaisesRegex(qgen.QgenError, "dtype"):
            qgen.Spec.from_dict({"dtype": "qint9"})
        with self.assertRaisesRegex(ValueError, "channel_len 4"):
            qgen.Kernels({"dtype": "qint8", "qscheme": "per_channel_symmetric", "channel_len": 4,
                          "observer": {"type": "per_channel_minmax"}}).fake_quant(torch.zeros(3, 2), [1.0] * 4, [0] * 4)


def assert_nan_refused(test, module):
    """A batch with a NaN raises QgenError naming it and leaves every
    state_dict entry as it was; returns that state."""
    before = copy.deepcopy(module.state_dict())
    with test.assertRaisesRegex(qgen.QgenError, "NaN"):
        module(torch.tensor([1.0, float("nan"), 2.0]))
    for key, v in before.items():
        test.assertTrue(torch.equal(v, module.state_dict()[key]), f"{key} kept after a refused batch")
    return before


def run_pair(test, ref_mod, our_mod, shapes, steps, gen, toggles=()):
    """Same inputs through both modules; outputs, gradients and every
    state_dict entry equal after each step."""
    for step in range(steps):
        if step in toggles:
            for m in (ref_mod, our_mod):
                toggles[step](m)
        shape = shapes[step % len(shapes)]
        x = data(gen, shape, step)
        xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        ya, yb = ref_mod(xa), our_mod(xb)
        dy = torch.randn(shape, generator=gen)
        ya.backward(dy)
        yb.backward(dy)
        test.assertTrue(torch.equal(ya, yb), f"step {step}: outputs")
        test.assertTrue(torch.equal(xa.grad, xb.grad), f"step {step}: gradients")
        sa, sb = ref_mod.state_dict(), our_mod.state_dict()
        test.assertEqual(list(sa), list(sb))
        for key in sa:
            test.assertEqual(sa[key].shape, sb[key].shape, f"step {step}: {key} shape")
            test.assertTrue(torch.equal(sa[key], sb[key]), f"step {step}: {key} {sa[key]} vs {sb[key]}")


class ModulesAgainstTorchModules(unittest.TestCase):
    op_path = True

    def pairs(self, version):
        for backend in BACKENDS:
            ref, ours = tq.get_default_qat_qconfig(backend, version), qtorch.get_default_qat_qconfig(backend, version)
            yield backend, "activation", ref.activation, ours.activation
            yield backend, "weight", ref.weight, ours.weight

    def test_default_qat_qconfig_modules(self):
        toggles = {4: lambda m: m.disable_observer(), 6: lambda m: m.disable_fake_quant(),
                   7: lambda m: (m.enable_fake_quant(), m.enable_observer())}
        for version in (1, 0):
            for backend, role, ref_f, our_f in self.pairs(version):
                with self.subTest(backend=backend, role=role, version=version):
                    gen = torch.Generator().manual_seed(hash((backend, role, version)) % 1000)
                    ref_mod, our_mod = ref_f(), our_f()
                    self.assertIsInstance(our_mod, type(ref_mod))
                    shapes = [(8, 3, 5, 5), (8, 3, 1, 7), (8, 3, 4, 4)] if role == "weight" else [(4, 33), (2, 3, 17)]
                    run_pair(self, ref_mod, our_mod, shapes, 9, gen, toggles)
                    self.assertEqual(repr(ref_mod), repr(our_mod))

    def test_channels_last_and_strided_inputs(self):
        gen = torch.Generator().manual_seed(6)
        for role in ("activation", "weight"):
            ref_mod = getattr(tq.get_default_qat_qconfig("fbgemm"), role)()
            our_mod = getattr(qtorch.get_default_qat_qconfig("fbgemm"), role)()
            for step, make in enumerate((lambda x: x.to(memory_format=torch.channels_last),
                                         lambda x: x.transpose(2, 3), lambda x: x[:, :, ::2])):
                x = make(data(gen, (6, 4, 5, 7), step))
                self.assertFalse(x.is_contiguous())
                xa, xb = x.detach().clone().requires_grad_(True), x.detach().clone().requires_grad_(True)
                ya, yb = ref_mod(xa), our_mod(xb)
                ya.sum().backward()
                yb.sum().backward()
                self.assertTrue(torch.equal(ya, yb), f"{role} step {step}")
                self.assertTrue(torch.equal(xa.grad, xb.grad), f"{role} step {step} grad")
                for key, v in ref_mod.state_dict().items():
                    self.assertTrue(torch.equal(v, our_mod.state_dict()[key]), f"{role} step {step} {key}")

    def test_state_dict_both_ways(self):
        gen = torch.Generator().manual_seed(5)
        ref_mod = tq.get_default_qat_qconfig("fbgemm").weight()
        our_mod = qtorch.get_default_qat_qconfig("fbgemm").weight()
        run_pair(self, ref_mod, our_mod, [(6, 2, 3)], 3, gen)
        fresh_ours, fresh_ref = qtorch.get_default_qat_qconfig("fbgemm").weight(), tq.get_default_qat_qconfig(
            "fbgemm").weight()
        fresh_ours.load_state_dict(ref_mod.state_dict())
        fresh_ref.load_state_dict(our_mod.state_dict())
        run_pair(self, fresh_ref, fresh_ours, [(6, 2, 3)], 3, gen)
        copied = copy.deepcopy(our_mod)
        run_pair(self, ref_mod, copied, [(6, 2, 3)], 2, gen)

    def test_sixteen_bit_inputs(self):
        """float16 and bfloat16 X (docs/semantics.md, "Float types"): torch
        1.13's FakeQuantize runs float16 itself and is compared as it is; its
        default QAT modules refuse float16 and every module refuses bfloat16,
        so those run torch's module on X widened to float32 (exact) and
        round its output and gradient to X's type, which is what torch's
        float16 path computes. The observer state is float32 either way."""
        toggles = {3: lambda m: m.disable_observer(), 4: lambda m: m.disable_fake_quant(),
                   5: lambda m: (m.enable_fake_quant(), m.enable_observer())}
        cases = [("FakeQuantize", tq.FakeQuantize, qtorch.FakeQuantize),
                 ("activation", tq.get_default_qat_qconfig("fbgemm").activation,
                  qtorch.get_default_qat_qconfig("fbgemm").activation),
                 ("weight", tq.get_default_qat_qconfig("fbgemm").weight, qtorch.get_default_qat_qconfig("fbgemm").weight)]
        for dt in (torch.float16, torch.bfloat16):
            for name, ref_f, our_f in cases:
                with self.subTest(dtype=dt, module=name):
                    gen = torch.Generator().manual_seed(hash((str(dt), name)) % 1000)
                    ref_mod, our_mod = ref_f(), our_f()
                    direct = dt == torch.float16 and name == "FakeQuantize"
                    for step in range(7):
                        if step in toggles:
                            for m in (ref_mod, our_mod):
                                toggles[step](m)
                        x = data(gen, (6, 3, 9) if step % 2 else (6, 4, 4), step).to(dt)
                        xa = (x.clone() if direct else x.float()).requires_grad_(True)
                        xb = x.clone().requires_grad_(True)
                        ya, yb = ref_mod(xa), our_mod(xb)
                        self.assertEqual(yb.dtype, dt)
                        dy = torch.randn(x.shape, generator=gen).to(dt)
                        ya.backward(dy.to(ya.dtype))
                        yb.backward(dy)
                        self.assertTrue(torch.equal(ya.to(dt), yb), f"step {step}: outputs")
                        self.assertTrue(torch.equal(xa.grad.to(dt), xb.grad), f"step {step}: gradients")
                        for key, v in ref_mod.state_dict().items():
                            self.assertTrue(torch.equal(v, our_mod.state_dict()[key]), f"step {step}: {key}")
        ref, ours = tq.MovingAverageMinMaxObserver(), qtorch.MovingAverageMinMaxObserver()
        for step in range(3):
            x = data(torch.Generator().manual_seed(step), (5, 7), step).to(torch.float16)
            ref(x), ours(x)
            for key, v in ref.state_dict().items():
                self.assertTrue(torch.equal(v, ours.state_dict()[key]), f"observer step {step}: {key}")

    def test_bad_input(self):
        mod = qtorch.get_default_qat_qconfig("fbgemm").activation()
        with self.assertRaisesRegex(TypeError, "X: dtype torch.float64; expected torch.float32 or torch.float16"):
            mod(torch.zeros(3, dtype=torch.float64))
        with self.assertRaisesRegex(TypeError, "X: a list"):
            mod([1.0])
        with self.assertRaisesRegex(TypeError, "observer: HistogramObserver"):
            qtorch.FakeQuantize(observer=tq.HistogramObserver)(torch.ones(4))
        with self.assertRaisesRegex(ValueError, "qscheme: torch.per_channel_affine_float_qparams"):
            qtorch.FakeQuantize(observer=tq.PerChannelMinMaxObserver, qscheme=torch.per_channel_affine_float_qparams,
                                ch_axis=0)(torch.ones(2, 3))
        weight = qtorch.get_default_qat_qconfig("fbgemm").weight()
        weight(torch.ones(3, 2))  # the buffers take 3 channels; torch's module refuses 4 channels after that too
        with self.assertRaisesRegex(ValueError, r"min_val: 3 values; expected 4 \(one per channel\) or 1"):
            weight(torch.ones(4, 2))
        mod(torch.arange(4.0))
        before = assert_nan_refused(self, mod)
        twin = qtorch.get_default_qat_qconfig("fbgemm").activation()
        twin.load_state_dict(before)
        x = torch.arange(-3.0, 5.0) * 7
        self.assertTrue(torch.equal(mod(x), twin(x)), "the step after a refused batch")
        for key, v in twin.state_dict().items():
            self.assertTrue(torch.equal(v, mod.state_dict()[key]), f"{key} after the step that followed")

    def test_empty_input(self):
        """An empty X gives an empty y and leaves the state as it was, as in
        torch's modules, after a first batch and (default QAT modules)
        before it. Torch's version 0 per-channel FakeQuantize raises on an
        empty first batch (one scale for its channels); qgen's returns the
        empty y there too."""
        gen = torch.Generator().manual_seed(9)
        empty = torch.empty(4, 0, 3)
        for version in (1, 0):
            for backend, role, ref_f, our_f in self.pairs(version):
                if backend != "fbgemm":
                    continue
                with self.subTest(role=role, version=version):
                    ref_mod, our_mod = ref_f(), our_f()
                    first = [empty] if version == 1 else []
                    if version == 0:
                        self.assertEqual(tuple(our_mod(empty).shape), tuple(empty.shape))
                    for x in first + [data(gen, (4, 2, 3), 1), empty, data(gen, (4, 2, 3), 2)]:
                        xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
                        ya, yb = ref_mod(xa), our_mod(xb)
                        ya.sum().backward()
                        yb.sum().backward()
                        self.assertTrue(torch.equal(ya, yb) and torch.equal(xa.grad, xb.grad))
                        for key, v in ref_mod.state_dict().items():
                            self.assertTrue(torch.equal(v, our_mod.state_dict()[key]), key)
        if qtorch._ops.available:  # the operator itself, called with an empty X
            mod = qtorch.get_default_qat_qconfig("fbgemm").activation()
            mod(torch.arange(4.0))
            before = copy.deepcopy(mod.state_dict())
            step, C, inner = mod._qgen_step(torch.arange(4.0))
            obs = mod.activation_post_process
            y = qtorch._ops.train_step(torch.empty(0), obs.min_val, obs.max_val, mod.scale, mod.zero_point,
                                       step.obs.value, step.kernels.address, C, inner, True, True, True)
            self.assertEqual(tuple(y.shape), (0,))
            for key, v in before.items():
                self.assertTrue(torch.equal(v, mod.state_dict()[key]), key)

    def test_step_path(self):
        """The step runs through torch.ops.qgen where the build made it
        (QGEN_EXPECT_TORCH_OPS, set by the build's test) and this class
        does not set it aside; else in Python."""
        expect = os.environ.get("QGEN_EXPECT_TORCH_OPS")
        if expect is None:
            self.fail("QGEN_EXPECT_TORCH_OPS: not set; expected 1 or 0 (set by ctest)")
        self.assertEqual(qtorch._ops._qgen is not None, expect == "1", "torch.ops.qgen loaded")
        calls = []
        operator = qtorch._ops.train_step
        qtorch._ops.train_step = lambda *args, **kw: calls.append(1) or operator(*args, **kw)
        try:
            qtorch.get_default_qat_qconfig("fbgemm").activation()(torch.arange(4.0))
        finally:
            qtorch._ops.train_step = operator
        self.assertEqual(len(calls), 1 if expect == "1" and self.op_path else 0)


class ModulesOnThePythonPath(ModulesAgainstTorchModules):
    """The same tests with torch.ops.qgen set aside: the Python path, which
    serves hosts built without libtorch-dev."""

    op_path = False

    def setUp(self):
        self.saved = qtorch._ops.available
        qtorch._ops.available = False

    def tearDown(self):
        qtorch._ops.available = self.saved


class OtherModules(unittest.TestCase):
    def test_observers(self):
        gen = torch.Generator().manual_seed(7)
        pairs = [
            (tq.MinMaxObserver, qtorch.MinMaxObserver, {}),
            (tq.MovingAverageMinMaxObserver, qtorch.MovingAverageMinMaxObserver, {"averaging_constant": 0.25}),
            (tq.PerChannelMinMaxObserver, qtorch.PerChannelMinMaxObserver, {"ch_axis": 1}),
            (tq.MovingAveragePerChannelMinMaxObserver, qtorch.MovingAveragePerChannelMinMaxObserver,
             {"ch_axis": 0, "dtype": torch.qint8, "qscheme": torch.per_channel_symmetric}),
        ]
        for ref_cls, our_cls, kw in pairs:
            with self.subTest(observer=ref_cls.__name__):
                ref, ours = ref_cls(**kw), our_cls(**kw)
                for step in range(4):
                    x = data(gen, (5, 3, 7), step)
                    self.assertIs(ours(x), x)
                    ref(x)
                    for key, v in ref.state_dict().items():
                        self.assertTrue(torch.equal(v, ours.state_dict()[key]), f"{key} step {step}")
                    for a, b in zip(ref.calculate_qparams(), ours.calculate_qparams()):
                        self.assertTrue(torch.equal(a, b))

    def test_histogram_observer(self):
        """torch 1.13's histc takes int() of its bounds: data inside (-1, 1),
        constant batches and ranges that grow, shrink or stay put go through
        each of its branches."""
        gen = torch.Generator().manual_seed(11)
        configs = [{}, {"dtype": torch.qint8, "qscheme": torch.per_tensor_symmetric}, {"reduce_range": True},
                   {"quant_min": 0, "quant_max": 127}, {"bins": 256, "upsample_rate": 16}]
        for kw in configs:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                ref, ours = tq.HistogramObserver(**kw), qtorch.HistogramObserver(**kw)
                for step in range(7):
                    x = torch.full((6, 5), 0.375) if step == 2 else data(gen, (6, 5 + step), step)
                    if step == 4:
                        x = torch.rand(40, generator=gen) * 0.5 + 0.25
                    self.assertIs(ours(x), x)
                    ref(x)
                    for key, v in ref.state_dict().items():
                        self.assertTrue(torch.equal(v, ours.state_dict()[key]), f"{key} step {step}")
                    for a, b in zip(ref.calculate_qparams(), ours.calculate_qparams()):
                        self.assertTrue(torch.equal(a, b), f"qparams step {step}")
                # checkpoints load both ways (copies: torch's loader keeps the tensors it is given)
                for src, dst_ref, dst_ours in ((ref, tq.HistogramObserver(**kw), qtorch.HistogramObserver(**kw)),
                                               (ours, tq.HistogramObserver(**kw), qtorch.HistogramObserver(**kw))):
                    dst_ref.load_state_dict(copy.deepcopy(src.state_dict()))
                    dst_ours.load_state_dict(copy.deepcopy(src.state_dict()))
                    x = data(gen, (50,), 3)
                    dst_ref(x), dst_ours(x)
                    for key, v in dst_ref.state_dict().items():
                        self.assertTrue(torch.equal(v, dst_ours.state_dict()[key]), f"loaded {key}")

    def test_histogram_observer_bad_input(self):
        obs = qtorch.HistogramObserver()
        with self.assertRaisesRegex(TypeError, "X: dtype torch.float16; expected torch.float32"):
            obs(torch.zeros(3, dtype=torch.float16))
        obs(torch.arange(4.0))
        assert_nan_refused(self, obs)

    def test_fixed_qparams(self):
        gen = torch.Generator().manual_seed(8)
        ref_f = tq.default_fixed_qparams_range_neg1to1_fake_quant
        ours_f = qtorch.FixedQParamsFakeQuantize.with_args(**ref_f.p.keywords)
        run_pair(self, ref_f(), ours_f(), [(3, 50), (7,)], 5, gen, {3: lambda m: m.disable_fake_quant()})

    def test_learnable(self):
        from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize

        gen = torch.Generator().manual_seed(9)
        cases = [
            dict(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8),
            dict(observer=tq.MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
                 qscheme=torch.per_channel_symmetric, ch_axis=0, channel_len=4, use_grad_scaling=True),
        ]
        for kw in cases:
            with self.subTest(observer=kw["observer"].__name__):
                ref, ours = _LearnableFakeQuantize(**kw), qtorch.LearnableFakeQuantize(**kw)
                for m in (ref, ours):
                    m.toggle_qparam_learning(True)
                for step in range(4):
                    if step == 2:
                        for m in (ref, ours):
                            m.toggle_observer_update(False)
                    x = self.knife_edge_free(data(gen, (4, 60), step), ref)
                    xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
                    ya, yb = ref(xa), ours(xb)
                    dy = torch.randn(x.shape, generator=gen)
                    ya.backward(dy)
                    yb.backward(dy)
                    self.assertTrue(torch.equal(ya, yb), f"step {step}: y")
                    self.assertTrue(torch.equal(xa.grad, xb.grad), f"step {step}: dx")
                    # ds and dz are sums torch takes in fp32: they agree within 1e-5 of the
                    # sum of the terms' magnitudes (docs/semantics.md, LSQ)
                    g = 1.0 / (x.numel() * ours.quant_max) ** 0.5 if ours.use_grad_scaling else 1.0
                    bounds = self.lsq_term_magnitudes(x, dy, ref, g)
                    for name in ("scale", "zero_point"):
                        ga, gb = getattr(ref, name).grad, getattr(ours, name).grad
                        self.assertEqual(ga is None, gb is None, name)
                        if ga is not None:
                            diff = (ga - gb).abs().reshape(-1)
                            self.assertTrue(bool((diff <= 1e-5 * bounds[name]).all()),
                                            f"step {step} {name}: {ga} vs {gb}, bound {1e-5 * bounds[name]}")
                            getattr(ref, name).grad = getattr(ours, name).grad = None

    @staticmethod
    def qparams_of(mod):
        """The module's scale and integral zero point, shaped to broadcast
        over (channels, elements) or over everything."""
        s, z = mod.scale.detach(), mod.zero_point.detach()
        z = torch.clamp(torch.round(z), mod.quant_min, mod.quant_max)
        if s.numel() > 1:
            return s.reshape(-1, 1), z.reshape(-1, 1)
        return s, z

    @classmethod
    def lsq_term_magnitudes(cls, x, dy, mod, g):
        """Per channel (or in all), the sums of |term| that torch adds up
        into the scale and zero-point gradients (docs/semantics.md, LSQ)."""
        s, z = cls.qparams_of(mod)
        qmin, qmax = mod.quant_min, mod.quant_max
        inv = 1.0 / s
        xq = torch.round(z + x * inv)
        fq = (torch.clamp(xq, qmin, qmax) - z) * s
        inside = (xq >= qmin) & (xq <= qmax)
        ts = torch.where(inside, dy * (fq - x) * inv, torch.where(xq < qmin, dy * (qmin - z), dy * (qmax - z))) * g
        tz = torch.where(inside, torch.zeros_like(dy), dy * s) * g
        dims = tuple(range(1, x.dim())) if mod.scale.numel() > 1 else tuple(range(x.dim()))
        return {"scale": ts.abs().sum(dim=dims).reshape(-1), "zero_point": tz.abs().sum(dim=dims).reshape(-1)}

    @classmethod
    def knife_edge_free(cls, x, mod):
        """Elements where torch's FMA-contracted `z + x * inv` and the
        uncontracted one round apart are set to 0 (docs/semantics.md, LSQ),
        with the qparams this step's forward will use (a copy of the module
        observes first); repeated until zeroing changes them no more."""
        for _ in range(4):
            probe = copy.deepcopy(mod)
            probe(x.clone())
            s, z = cls.qparams_of(probe)
            inv = (1.0 / s).to(torch.float32)
            plain = torch.round(z + x * inv)
            fused = torch.round((x.double() * inv.double() + z.double()).float())
            kept = torch.where(plain == fused, x, torch.zeros_like(x))
            if torch.equal(kept, x):
                return x
            x = kept
        return x


class FxQat(unittest.TestCase):
    def test_prepare_qat_fx(self):
        from torch.ao.quantization import quantize_fx

        torch.manual_seed(1)
        base = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                   torch.nn.Linear(4 * 6 * 6, 2), torch.nn.Sigmoid()).train()
        x = torch.randn(2, 3, 8, 8)
        outs = []
        for mapping in (tq.get_default_qat_qconfig_mapping("fbgemm"), qtorch.get_default_qat_qconfig_mapping("fbgemm")):
            m = quantize_fx.prepare_qat_fx(copy.deepcopy(base), mapping, (x,))
            for _ in range(3):
                y = m(x)
                y.sum().backward()
            outs.append((y.detach(), m))
        self.assertTrue(torch.equal(outs[0][0], outs[1][0]))
        kinds = [type(mod) for mod in outs[1][1].modules() if isinstance(mod, tq.FakeQuantizeBase)]
        # every fake quant is qgen's but the sigmoid's, which FX requires to be torch's own
        self.assertEqual(sum(k is tq.FixedQParamsFakeQuantize for k in kinds), 1, kinds)
        self.assertTrue(all(k.__module__.startswith("qgen.torch") for k in kinds if k is not tq.FixedQParamsFakeQuantize))


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.relu = torch.nn.ReLU()
        self.fc = torch.nn.Linear(8 * 6 * 6, 4)

    def forward(self, x):
        x = self.relu(self.conv(self.quant(x)))
        return self.dequant(self.fc(x.flatten(1)))


class QatRun(unittest.TestCase):
    def test_prepare_qat_train_convert(self):
        torch.manual_seed(0)
        base = TinyNet().train()
        models = []
        for qconfig in (tq.get_default_qat_qconfig("fbgemm"), qtorch.get_default_qat_qconfig("fbgemm")):
            m = copy.deepcopy(base)
            m.qconfig = qconfig
            models.append(tq.prepare_qat(m))
        opts = [torch.optim.SGD(m.parameters(), lr=0.01) for m in models]
        gen = torch.Generator().manual_seed(3)
        for step in range(5):
            x, target = torch.randn(4, 3, 8, 8, generator=gen), torch.randn(4, 4, generator=gen)
            losses = []
            for m, opt in zip(models, opts):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(m(x), target)
                loss.backward()
                opt.step()
                losses.append(loss.detach())
            self.assertTrue(torch.equal(losses[0], losses[1]), f"step {step}: loss")
        sa, sb = models[0].state_dict(), models[1].state_dict()
        self.assertEqual(list(sa), list(sb))
        for key in sa:
            self.assertTrue(torch.equal(sa[key], sb[key]), key)
        qa, qb = (tq.convert(m.eval()) for m in models)
        x = torch.randn(2, 3, 8, 8, generator=gen)
        self.assertTrue(torch.equal(qa(x), qb(x)))


if __name__ == "__main__":
    unittest.main()
