#!/usr/bin/env python3
"""Allocation and I/O failures injected into qgen's operations, one at a time
(docs/robustness.md, "Faults injected").

Each scenario runs once without a fault, counting the calls that
tests/faults/fault_inject.c sees (QG_FAULT_LOG), then once per chosen call
with that call failing: by default the first call of each call site
(every allocation and I/O site fails at least once), with --all every
call. An allocation site fails in the first scenario that reaches it (its
failure unwinds the same way whatever the command); an I/O site fails in
every scenario that keeps a state (what was saved before it differs), and
once among the others. Every
faulty run must
  - exit 0, or 2 with one line on stderr (never a signal, never a leak:
    in the sanitizer build LeakSanitizer exits 23);
  - leave each output whole: the files of a watched group are all the old
    ones or all the new ones, and no temporary file is left;
  - report success exactly when the new state was saved (exit 0: the new
    state; exit 2: the old one), and exit 0 only with every output new
    (the JIT's cache aside, whose stores are best effort).
usage: fault_sweep.py --qgen QGEN --jit FAULT_JIT --work DIR [--python-lib LIB --python-path DIR] [--all]
       [--only NAME,...]
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import random
import struct
import sys

SPEC = '{"name": "act", "base": "torch.fbgemm.activation"}'
PC_SPEC = '{"name": "w", "base": "torch.fbgemm.weight", "channel_len": 4, "ch_axis": 1}'
OLD_SPEC = '{"name": "act", "base": "torch.fbgemm.activation", "rounding": "half_up"}'


def snapshot(path):
    """{relative name: sha256} of every file under path."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


class Scenario:
    """A command in a fresh directory: setup() makes the inputs and the old
    outputs, groups() lists the file groups that must each stay whole,
    state() names the files whose content says whether the new state was
    saved."""

    def __init__(self, name, argv, setup, groups, state=(), env=None, one_line=True, best_effort=False):
        self.name, self.argv, self.setup, self.groups = name, argv, setup, groups
        self.state, self.env, self.one_line = state, env or {}, one_line
        # best_effort: outputs a success may leave old (the JIT's cache: a
        # store that failed is counted, not an error); else exit 0 means every
        # output is the new one
        self.best_effort = best_effort


def save_npy(path, descr, fmt, shape, values):
    """A .npy file (format 1.0) of little-endian values."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join(f"{d}, " for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def scenarios(a):
    q = a.qgen
    rng = random.Random(7)
    x = [rng.gauss(0, 3) for _ in range(160)]
    x_old = [rng.gauss(1, 2) for _ in range(160)]
    acc = [rng.randint(-100000, 100000) for _ in range(32)]

    def base(d, spec=SPEC):
        write(os.path.join(d, "s.json"), spec)
        write(os.path.join(d, "old.json"), OLD_SPEC)
        write(os.path.join(d, "w.json"), PC_SPEC)
        save_npy(os.path.join(d, "x.npy"), "<f4", "f", (8, 4, 5), x)
        save_npy(os.path.join(d, "x_old.npy"), "<f4", "f", (8, 4, 5), x_old)
        save_npy(os.path.join(d, "acc.npy"), "<i4", "i", (8, 4), acc)
        save_npy(os.path.join(d, "b.npy"), "<f4", "f", (4,), x[:4])
        os.mkdir(os.path.join(d, "out"))

    def plain(cmd):
        def setup(d):
            base(d)
            subprocess.run([q] + cmd, cwd=d, check=True, capture_output=True)
        return setup

    out = []
    out.append(Scenario("spec_load", [q, "spec", "show", "s.json", "--set", "observer.averaging_constant=0.5"], base, []))
    for emit in ("c", "obj"):
        gen = [q, "generate", "--spec", "s.json", "-o", "out/gen", "--targets", "scalar,avx2", "--emit", emit,
               "--quiet"]
        old = [q, "generate", "--spec", "old.json", "-o", "out/gen", "--targets", "scalar,avx2", "--emit", emit,
               "--quiet"]
        out.append(Scenario("generate_" + emit, gen, lambda d, old=old: (base(d), subprocess.run(
            old, cwd=d, check=True, capture_output=True)), [["out/gen"]]))
    out.append(Scenario("observe_state", [q, "observe", "--spec", "s.json", "--in", "x.npy", "--state", "out/st"],
                        plain(["observe", "--spec", "s.json", "--in", "x_old.npy", "--state", "out/st"]),
                        [["out/st"]], state=["out/st"]))
    out.append(Scenario("observe_state_per_channel",
                        [q, "observe", "--spec", "w.json", "--in", "x.npy", "--state", "out/st"],
                        plain(["observe", "--spec", "w.json", "--in", "x_old.npy", "--state", "out/st"]),
                        [["out/st"]], state=["out/st"]))
    qp = ["--scale", "0.05", "--zero-point", "60"]
    runs = {
        "quantize": ["--in", "x.npy", "--out", "out/y.npy"] + qp,
        "fake_quant": ["--in", "x.npy", "--out", "out/y.npy", "--mask", "out/m.npy"] + qp,
        "fused_train_step": ["--in", "x.npy", "--out", "out/y.npy", "--mask", "out/m.npy", "--state", "out/st"],
        "quantize_dynamic": ["--in", "x.npy", "--out", "out/y.npy"],
        "lsq_forward": ["--in", "x.npy", "--out", "out/y.npy"] + qp,
        "requantize": ["--in", "acc.npy", "--out", "out/y.npy", "--s-in", "0.1", "--s-w", "0.02",
                       "--s-out", "0.3", "--zero-point", "5"],
    }
    for op, args in runs.items():
        old_args = [w.replace("x.npy", "x_old.npy") for w in args]
        groups = [[f] for f in ("out/y.npy", "out/m.npy", "out/st") if f in args]
        out.append(Scenario("run_" + op, [q, "run", "--spec", "s.json", "--op", op] + args,
                            plain(["run", "--spec", "s.json", "--op", op] + old_args), groups,
                            state=["out/st"] if "out/st" in args else []))
    with_mask = plain(["run", "--spec", "s.json", "--op", "fake_quant", "--in", "x.npy", "--out", "out/y0.npy",
                       "--mask", "out/m.npy"] + qp)
    out.append(Scenario("run_fake_quant_backward",
                        [q, "run", "--spec", "s.json", "--op", "fake_quant_backward", "--in", "x.npy", "--mask",
                         "out/m.npy", "--out", "out/y.npy"],
                        lambda d: (with_mask(d), subprocess.run(
                            [q, "run", "--spec", "s.json", "--op", "fake_quant_backward", "--in", "x_old.npy", "--mask",
                             "out/m.npy", "--out", "out/y.npy"], cwd=d, check=True, capture_output=True)),
                        [["out/y.npy"]]))
    out.append(Scenario("run_lsq_backward",
                        [q, "run", "--spec", "s.json", "--op", "lsq_backward", "--in", "x.npy", "--grad", "x_old.npy",
                         "--out", "out/y.npy"] + qp,
                        plain(["run", "--spec", "s.json", "--op", "lsq_backward", "--in", "x_old.npy", "--grad",
                               "x.npy", "--out", "out/y.npy"] + qp), [["out/y.npy"]]))
    out.append(Scenario("run_quantize_bias",
                        [q, "run", "--spec", "s.json", "--op", "quantize_bias", "--in", "b.npy", "--s-in", "0.1",
                         "--s-w", "0.02,0.03,0.05,0.07", "--out", "out/y.npy"],
                        plain(["run", "--spec", "s.json", "--op", "quantize_bias", "--in", "b.npy", "--s-in", "0.2",
                               "--s-w", "0.02,0.03,0.05,0.07", "--out", "out/y.npy"]), [["out/y.npy"]]))
    out.append(Scenario("run_dequantize", [q, "run", "--spec", "s.json", "--op", "dequantize", "--in", "out/q.npy",
                                           "--out", "out/y.npy"] + qp,
                        lambda d: (plain(["run", "--spec", "s.json", "--op", "quantize", "--in", "x.npy", "--out",
                                          "out/q.npy"] + qp)(d),
                                   subprocess.run([q, "run", "--spec", "s.json", "--op", "dequantize", "--in",
                                                   "out/q.npy", "--out", "out/y.npy", "--scale", "0.1",
                                                   "--zero-point", "0"], cwd=d, check=True, capture_output=True)),
                        [["out/y.npy"]]))
    # the JIT: a cold compile that stores its cache entry, and a warm one that loads it
    out.append(Scenario("jit_cold", [a.jit, "s.json", "out/cache"], base, [["out/cache"]], best_effort=True))
    out.append(Scenario("jit_warm", [a.jit, "s.json", "out/cache"],
                        lambda d: (base(d), subprocess.run([a.jit, "s.json", "out/cache"], cwd=d, check=True)),
                        [["out/cache"]], best_effort=True))
    # lazily: each op compiles on its first call, a failed one runs on the
    # reference; each op's entry stands alone
    out.append(Scenario("jit_lazy", [a.jit, "s.json", "out/cache", "lazy"], base, [["out/cache/*"]],
                        best_effort=True))
    return out


def run(argv, cwd, env):
    e = dict(os.environ)
    e.update(env)
    e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1"
    return subprocess.run(argv, cwd=cwd, env=e, capture_output=True, text=True, timeout=300)


def group_files(snap, group):
    return {k: v for k, v in snap.items() if any(k == g or k.startswith(g + "/") for g in group)}


def expand_groups(groups, *snaps):
    """The groups, with ["DIR/*"] standing for one group per file under DIR
    (files that stand alone, such as the lazy JIT's one entry per op)."""
    out = []
    for g in groups:
        if len(g) == 1 and g[0].endswith("/*"):
            top = g[0][len("out/"):-2]
            names = sorted({k for snap in snaps for k in snap if k.startswith(top + "/")})
            out.extend([["out/" + k] for k in names])
        else:
            out.append(g)
    return out


def check(s, d, p, old, new, new_state):
    """Problems of one faulty run (empty: it passed)."""
    problems = []
    if p.returncode not in (0, 2):
        problems.append(f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
    elif p.returncode == 2 and s.one_line and len(p.stderr.strip().splitlines()) != 1:
        problems.append(f"exit 2 with {len(p.stderr.strip().splitlines())} lines: {p.stderr.strip()[-300:]}")
    after = snapshot(os.path.join(d, "out"))
    for g in expand_groups(s.groups, old, new, after):
        g = [x[len("out/"):] for x in g]
        got = group_files(after, g)
        if got != group_files(old, g) and got != group_files(new, g):
            problems.append(f"{g} neither old nor new: {sorted(set(got.items()) ^ set(group_files(new, g).items()))[:4]}")
        elif p.returncode == 0 and not s.best_effort and got != group_files(new, g):
            problems.append(f"exit 0 but {g} is still the old output")
    for f in s.state:
        f = f[len("out/"):]
        if p.returncode == 0 and after.get(f) != new_state.get(f):
            problems.append(f"exit 0 but {f} is not the new state")
        if p.returncode == 2 and after.get(f) != old.get(f):
            problems.append(f"exit 2 but {f} is not the old state")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qgen", required=True)
    ap.add_argument("--jit", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--python-lib")
    ap.add_argument("--python-path")
    ap.add_argument("--all", action="store_true", help="every call, not the first of each site")
    ap.add_argument("--only", help="comma-separated scenario names")
    a = ap.parse_args()
    a.here = os.path.dirname(os.path.abspath(__file__))
    a.qgen, a.jit = os.path.abspath(a.qgen), os.path.abspath(a.jit)
    if a.python_lib:
        a.python_lib, a.python_path = os.path.abspath(a.python_lib), os.path.abspath(a.python_path)
    shutil.rmtree(a.work, ignore_errors=True)
    failures = 0
    failed_allocs = set()  # allocation sites failed so far, by any scenario
    failed_ios = set()  # I/O sites failed so far by scenarios without a state
    print(f"{'operation':28} {'allocs':>7} {'sites':>6} {'failed':>7} {'io':>5} {'sites':>6} {'failed':>7}  problems")
    os.makedirs(a.work)
    for s in scenarios(a):
        if a.only and s.name not in a.only.split(","):
            continue
        d = os.path.join(a.work, s.name)

        def fresh():
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            s.setup(d)
            return snapshot(os.path.join(d, "out"))

        old = fresh()
        log = os.path.join(a.work, s.name + ".log")
        p = run(s.argv, d, dict(s.env, QG_FAULT_LOG=log))
        if p.returncode != 0:
            print(f"{s.name}: the run without a fault failed (exit {p.returncode}): {p.stderr[-400:]}")
            failures += 1
            continue
        new = snapshot(os.path.join(d, "out"))
        calls = open(log).read().splitlines()
        allocs = [c for c in calls if c.startswith("alloc ")]
        ios = [c for c in calls if c.startswith("io ")]

        def chosen(seq, seen):
            if a.all:
                return list(range(1, len(seq) + 1))
            out = []
            for i, c in enumerate(seq):
                if c not in seen:
                    seen.add(c)
                    out.append(i + 1)
            return out

        problems = []
        # an I/O site fails again in each operation that keeps a state (what was
        # saved before it is what differs), once overall elsewhere
        plan = [("QG_FAULT_ALLOC", n) for n in chosen(allocs, failed_allocs)] + \
               [("QG_FAULT_IO", n) for n in chosen(ios, set() if s.state else failed_ios)]
        for k, (var, n) in enumerate(plan):
            fresh()
            env = dict(s.env, **{var: str(n), "QG_FAULT_ERRNO": "EIO" if k % 2 else "ENOSPC"})
            p = run(s.argv, d, env)
            for msg in check(s, d, p, old, new, new):
                site = (allocs if var == "QG_FAULT_ALLOC" else ios)[n - 1]
                problems.append(f"{var}={n} ({site}): {msg}")
        n_alloc = sum(1 for v, _ in plan if v == "QG_FAULT_ALLOC")
        print(f"{s.name:28} {len(allocs):7} {len(set(allocs)):6} {n_alloc:7} {len(ios):5} {len(set(ios)):6} "
              f"{len(plan) - n_alloc:7}  {len(problems)}")
        for msg in problems[:10]:
            print("    " + msg)
        failures += len(problems)
        sys.stdout.flush()
    if a.python_lib and (not a.only or "python_step" in a.only.split(",")):
        # in one process, which arms the faults itself (fault_python.py)
        env = dict(os.environ, QGEN_LIBRARY=a.python_lib, PYTHONPATH=a.python_path, QGEN_TORCH_OPS="0",
                   XDG_CACHE_HOME=os.path.join(a.work, "python", "cache"))
        p = subprocess.run([sys.executable, os.path.join(a.here, "fault_python.py"), os.path.join(a.work, "python")]
                           + (["--all"] if a.all else []), env=env, capture_output=True, text=True, timeout=900)
        print(p.stdout.rstrip() or f"python_step: exit {p.returncode}: {p.stderr[-600:]}")
        failures += p.returncode != 0
    print(f"{'no problems' if failures == 0 else f'{failures} problems'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
