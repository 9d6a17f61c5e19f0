"""qgen.torch.horizon.FakeQuantize against a plain-torch transcription of
Horizon's documented fake quant: qparams from torch 1.13's own symmetric
observer, y = clamp(floor(x / scale + 0.5), qmin, qmax) * scale, gradient
mask by `saturate`. Outputs, gradients and buffers compared with
torch.equal, over several batches."""

import copy
import itertools
import unittest

import torch
from torch.ao import quantization as tq

import qgen.torch as qtorch
from qgen.torch import horizon

RANGES = {"qint8": (-128, 127), "qint16": (-32768, 32767)}


def data(gen, shape):
    """Random data of scale 10^[-3, 3] and offset up to +-2 scales, with
    zeros of both signs."""
    scale = 10.0 ** float(torch.empty(1).uniform_(-3, 3, generator=gen))
    offset = float(torch.empty(1).uniform_(-2, 2, generator=gen)) * scale
    x = torch.randn(shape, generator=gen) * scale + offset
    flat = x.view(-1)
    flat[0] = 0.0
    flat[-1] = -0.0
    return x


class Transcription:
    """The documented formula in plain torch, qparams by torch's observer."""

    def __init__(self, dtype, per_channel, ch_axis, saturate):
        self.qmin, self.qmax = RANGES[dtype]
        cls = tq.MovingAveragePerChannelMinMaxObserver if per_channel else tq.MovingAverageMinMaxObserver
        kwargs = {"ch_axis": ch_axis} if per_channel else {}
        self.obs = cls(dtype=torch.qint8 if dtype == "qint8" else torch.qint32,
                       qscheme=torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric,
                       quant_min=self.qmin, quant_max=self.qmax, **kwargs)
        self.per_channel, self.ch_axis, self.saturate = per_channel, ch_axis, saturate
        self.scale = torch.ones(1)

    def step(self, x, observe=True):
        if observe:
            self.obs(x)
            self.scale = self.obs.calculate_qparams()[0]
        s = self.scale
        if self.per_channel:
            shape = [1] * x.dim()
            shape[self.ch_axis] = -1
            s = s.reshape(shape)
        t = torch.floor(x / s + 0.5)
        y = torch.clamp(t, self.qmin, self.qmax) * s
        mask = (t >= self.qmin) & (t <= self.qmax) if self.saturate else torch.ones_like(x, dtype=torch.bool)
        return y, mask.to(torch.float32)


CASES = [  # (dtype, per_channel, shape, ch_axis)
    ("qint8", False, (1000,), 0),
    ("qint16", False, (4, 3, 5, 5), 0),
    ("qint8", True, (6, 3, 4, 4), 0),
    ("qint16", True, (2, 5, 7), 1),
    ("qint8", True, (3, 17), 1),
]


def make(dtype, per_channel, shape, ch_axis, **kwargs):
    if per_channel:
        return horizon.FakeQuantize(observer=qtorch.MovingAveragePerChannelMinMaxObserver, dtype=dtype,
                                    channel_len=shape[ch_axis], ch_axis=ch_axis, **kwargs)
    return horizon.FakeQuantize(dtype=dtype, **kwargs)


class AgainstTranscription(unittest.TestCase):
    def run_steps(self, fq, ref, gen, shape, in_place, steps=3):
        for b in range(steps):
            x0 = data(gen, shape)
            dy = torch.randn(shape, generator=gen)
            leaf = x0.clone().requires_grad_(True)
            x = leaf * 1.0  # in place needs a non-leaf input
            y = fq(x)
            if in_place:
                self.assertEqual(y.data_ptr(), x.data_ptr(), "in_place: y is x's storage")
            y.backward(dy)
            ry, rmask = ref.step(x0)
            self.assertTrue(torch.equal(y.detach(), ry), f"batch {b}: y")
            self.assertTrue(torch.equal(leaf.grad, dy * rmask), f"batch {b}: dx")
            self.assertTrue(torch.equal(fq.scale, ref.scale.reshape(fq.scale.shape)), f"batch {b}: scale")
            self.assertTrue(torch.equal(fq.zero_point, torch.zeros_like(fq.zero_point)))
            self.assertTrue(torch.equal(fq.activation_post_process.min_val, ref.obs.min_val), f"batch {b}: min")
            self.assertTrue(torch.equal(fq.activation_post_process.max_val, ref.obs.max_val), f"batch {b}: max")

    def test_every_combination(self):
        gen = torch.Generator().manual_seed(15)
        switches = itertools.product((True, False), repeat=4)  # in_place, compat_mask, fast_training, saturate
        for (dtype, per_channel, shape, axis), (in_place, compat, fast, sat) in itertools.product(CASES, switches):
            with self.subTest(dtype=dtype, per_channel=per_channel, shape=shape, in_place=in_place,
                              compat_mask=compat, fast_training=fast, saturate=sat):
                fq = make(dtype, per_channel, shape, axis, saturate=sat, in_place=in_place, compat_mask=compat,
                          fast_training=fast)
                self.run_steps(fq, Transcription(dtype, per_channel, axis, sat), gen, shape, in_place)

    def test_fast_training_switched_between_batches(self):
        gen = torch.Generator().manual_seed(16)
        for dtype, per_channel, shape, axis in CASES[:3]:
            fq = make(dtype, per_channel, shape, axis)
            ref = Transcription(dtype, per_channel, axis, True)
            for fast in (True, False, True, False):
                fq.fast_training = fast
                self.run_steps(fq, ref, gen, shape, False, steps=1)
            fq.disable_observer()  # the qparams the last (separate) step took serve the fused one
            fq.fast_training = True
            x = data(gen, shape)
            self.assertTrue(torch.equal(fq(x), ref.step(x, observe=False)[0]), f"{dtype} {shape}")

    def test_ties_and_range_edges(self):
        """Fixed qparams (observer off): exact ties k + 1/2 round up, the
        ends of the range and one step past them."""
        for dtype, compat in itertools.product(RANGES, (True, False)):
            qmin, qmax = RANGES[dtype]
            fq = horizon.FakeQuantize(dtype=dtype, compat_mask=compat)
            fq.disable_observer()
            fq.set_qparams(0.0625)
            ks = torch.tensor([qmin - 2, qmin - 1, qmin, -3, -1, 0, 1, 2, qmax - 1, qmax, qmax + 1],
                              dtype=torch.float32)
            x = torch.cat([(ks + 0.5) * 0.0625, (ks - 0.5) * 0.0625, ks * 0.0625, torch.tensor([-0.0, 1e30, -1e30])])
            leaf = x.clone().requires_grad_(True)
            fq(leaf).backward(torch.ones_like(x))
            ref = Transcription(dtype, False, 0, True)
            ref.scale = torch.tensor([0.0625])
            ry, rmask = ref.step(x, observe=False)
            self.assertTrue(torch.equal(fq(x), ry), dtype)
            self.assertTrue(torch.equal(leaf.grad, rmask), dtype)


class ModuleBehaviour(unittest.TestCase):
    def test_state_dict_round_trip(self):
        gen = torch.Generator().manual_seed(3)
        for dtype, per_channel, shape, axis in CASES:
            fq = make(dtype, per_channel, shape, axis)
            for _ in range(2):
                fq(data(gen, shape))
            other = make(dtype, per_channel, shape, axis)
            other.load_state_dict(fq.state_dict())
            x = data(gen, shape)
            self.assertTrue(torch.equal(fq(x), other(x)), f"{dtype} {shape}")
            for (k, a), b in zip(fq.state_dict().items(), other.state_dict().values()):
                self.assertTrue(torch.equal(a, b), k)
            self.assertEqual(list(fq.state_dict()), [
                "fake_quant_enabled", "observer_enabled", "scale", "zero_point", "activation_post_process.eps",
                "activation_post_process.min_val", "activation_post_process.max_val"])

    def test_observer_without_a_range_named(self):
        with self.assertRaises(TypeError) as caught:
            horizon.FakeQuantize(observer=tq.PlaceholderObserver)
        self.assertIn("observer: PlaceholderObserver does not take quant_min", str(caught.exception))
        self.assertIn("MinMaxObserver", str(caught.exception))

    def test_empty_input(self):
        """An empty batch: y empty (X itself in place), the state as it was."""
        gen = torch.Generator().manual_seed(5)
        for in_place in (False, True):
            fq = horizon.FakeQuantize(in_place=in_place)
            fq(data(gen, (64,)))
            before = copy.deepcopy(fq.state_dict())
            x = torch.empty(3, 0)
            y = fq(x)
            self.assertEqual(tuple(y.shape), (3, 0))
            self.assertEqual(y is x, in_place)
            for key, v in before.items():
                self.assertTrue(torch.equal(v, fq.state_dict()[key]), key)

    def test_switches(self):
        gen = torch.Generator().manual_seed(4)
        fq = horizon.FakeQuantize()
        fq(data(gen, (64,)))
        s = fq.scale.clone()
        fq.disable_fake_quant()
        x = data(gen, (64,)) * 1000
        self.assertIs(fq(x), x)  # the data passes; the observer still moves
        self.assertFalse(torch.equal(fq.scale, s))
        fq.enable_fake_quant()
        fq.disable_observer()
        s, mx = fq.scale.clone(), fq.activation_post_process.max_val.clone()
        fq(data(gen, (64,)) * 1e6)
        self.assertTrue(torch.equal(fq.scale, s))
        self.assertTrue(torch.equal(fq.activation_post_process.max_val, mx))

    def test_with_args_and_repr(self):
        fq = horizon.FakeQuantize.with_args(dtype="qint16", saturate=False, compat_mask=False, averaging_constant=0.5)()
        self.assertEqual((fq.dtype, fq.quant_min, fq.quant_max, fq.saturate), ("qint16", -32768, 32767, False))
        self.assertEqual(fq.activation_post_process.averaging_constant, 0.5)
        for word in ("dtype=qint16", "saturate=False", "compat_mask=False", "channel_len=1", "fast_training=True"):
            self.assertIn(word, repr(fq))
        self.assertIs(copy.deepcopy(fq)(torch.ones(3)).dtype, torch.float32)

    def test_bad_arguments_are_named(self):
        cases = [
            (lambda: horizon.FakeQuantize(dtype="quint8"), ValueError, "dtype"),
            (lambda: horizon.FakeQuantize(dtype=torch.quint8), ValueError, "dtype"),
            (lambda: horizon.FakeQuantize(quant_min=0), ValueError, "quant_min"),
            (lambda: horizon.FakeQuantize(channel_len=4), ValueError, "channel_len"),
            (lambda: horizon.FakeQuantize(channel_len=0), ValueError, "channel_len"),
            (lambda: horizon.FakeQuantize(observer=qtorch.MovingAveragePerChannelMinMaxObserver, channel_len=4)(
                torch.ones(3, 5)), ValueError, "channel_len"),
            (lambda: horizon.FakeQuantize().set_qparams(0.0), ValueError, "scale"),
            (lambda: horizon.FakeQuantize().set_qparams(-1.0), ValueError, "scale"),
            (lambda: horizon.FakeQuantize().set_qparams(1.0, 3), ValueError, "zero_point"),
            (lambda: horizon.FakeQuantize()(torch.ones(3, dtype=torch.float64)), TypeError, "X"),
        ]
        for make_bad, exc, word in cases:
            with self.assertRaises(exc) as ctx:
                make_bad()
            self.assertIn(word, str(ctx.exception))


class OnThePythonPath(AgainstTranscription):
    """The same tests with torch.ops.qgen set aside (the path of builds
    without libtorch-dev)."""

    def setUp(self):
        self.saved = qtorch._ops.available
        qtorch._ops.available = False

    def tearDown(self):
        qtorch._ops.available = self.saved


if __name__ == "__main__":
    unittest.main()
