// qgen's wasm SIMD kernels in node, one thread, against a plain JS loop and,
// given its folder, onnxruntime-web's wasm backend (numThreads 1, SIMD) on
// the models bench/ort_web_models.py writes. qgen's kernels run on data
// already in the module's memory; the copies a caller makes into and out of
// it (what ONNX Runtime's run does inside) are timed apart, and qgen with
// them is a column of its own. Each op's results from ONNX Runtime must equal
// qgen's bit for bit. Medians of 7 runs, Melem/s.
// Usage: node bench/wasm_bench.mjs KERNELS.wasm [ORT_WEB_DIR MODELS_DIR]
//   KERNELS.wasm from examples/wasm-node/build.sh (onnx.uint8),
//   ORT_WEB_DIR  the onnxruntime-web package (scripts/install-npm-peers.sh),
//   MODELS_DIR   from python3 bench/ort_web_models.py MODELS_DIR 0.02 128
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { instantiateKernels } from '../examples/wasm-node/kernels.mjs';

const [kernelsPath, ortDir, modelsDir] = process.argv.slice(2);
const { k, memory, alloc, qparams } = await instantiateKernels(readFileSync(kernelsPath));
const scale = 0.02, zp = 128;
const qp = qparams(scale, zp);

let ort = null;
const sessions = {};
if (ortDir) {
  ort = await import(pathToFileURL(join(ortDir, 'dist', 'ort.wasm.min.mjs')).href);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  for (const op of ['quantize', 'dequantize', 'fake_quant'])
    sessions[op] = await ort.InferenceSession.create(readFileSync(join(modelsDir, `${op}.onnx`)), { executionProviders: ['wasm'] });
}

async function median(f, reps) {
  for (let i = 0; i < reps; i++) await f(); // past node's baseline tiers
  const t = [];
  for (let r = 0; r < 7; r++) {
    const s = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) await f();
    t.push(Number(process.hrtime.bigint() - s) / reps);
  }
  return t.sort((a, b) => a - b)[3];
}

// the plain JS loops: x / scale as ONNX's QuantizeLinear (the spec is
// onnx.uint8), rounded half to even as nearbyint does
const rne = (v) => { const r = Math.round(v); return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r; };
function jsQuantize(x, q) {
  for (let i = 0; i < x.length; i++) q[i] = Math.min(255, Math.max(0, rne(Math.fround(x[i] / scale)) + zp));
}
function jsDequantize(q, y) { for (let i = 0; i < q.length; i++) y[i] = (q[i] - zp) * scale; }
function jsFakeQuant(x, y) {
  for (let i = 0; i < x.length; i++) y[i] = (Math.min(255, Math.max(0, rne(Math.fround(x[i] / scale)) + zp)) - zp) * scale;
}

function sameBits(a, b) {
  const ua = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), ub = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return ua.length === ub.length && ua.every((v, i) => v === ub[i]);
}

const rate = (n, ns) => (n / ns * 1e3).toFixed(0);
const head = ['op', 'n', 'qgen wasm', 'copies', 'qgen+copies', 'JS loop', 'vs JS'];
if (ort) head.push('onnxruntime-web', 'vs ORT', 'qgen+copies vs ORT');
console.log(head.join('\t'));
let failed = false;
for (const n of [65536, 1 << 20]) {
  const x = alloc(4 * n), q = alloc(n), y = alloc(4 * n), m = alloc(n);
  const xs = new Float32Array(memory.buffer, x, n);
  for (let i = 0; i < n; i++) xs[i] = Math.fround(Math.sin(i) * 3);
  const xa = new Float32Array(xs), qa = new Uint8Array(n), ya = new Float32Array(n);
  k.act_quantize__wasm(x, q, n, qp);
  qa.set(new Uint8Array(memory.buffer, q, n));
  const reps = n < 1e6 ? 200 : 12;
  const view = (T, at) => new T(memory.buffer, at, n);
  // ins and outs: what a caller holding JS arrays copies around each op
  const rows = [
    ['quantize', () => k.act_quantize__wasm(x, q, n, qp), () => jsQuantize(xa, qa),
      () => { view(Float32Array, x).set(xa); qa.set(view(Uint8Array, q)); }, 'x', xa, 'q', () => view(Uint8Array, q)],
    ['dequantize', () => k.act_dequantize__wasm(q, y, n, qp), () => jsDequantize(qa, ya),
      () => { view(Uint8Array, q).set(qa); ya.set(view(Float32Array, y)); }, 'q', qa, 'y', () => view(Float32Array, y)],
    ['fake_quant', () => k.act_fake_quant__wasm(x, y, m, n, qp), () => jsFakeQuant(xa, ya),
      () => { view(Float32Array, x).set(xa); ya.set(view(Float32Array, y)); }, 'x', xa, 'y', () => view(Float32Array, y)],
  ];
  for (const [op, w, j, copy, inName, inArr, outName, qgenOut] of rows) {
    const a = await median(w, reps), b = await median(j, reps), c = await median(copy, reps);
    const cells = [op, n, rate(n, a), rate(n, c), rate(n, a + c), rate(n, b), (b / a).toFixed(2)];
    if (ort) {
      const s = sessions[op];
      const feed = { [inName]: new ort.Tensor(inArr instanceof Float32Array ? 'float32' : 'uint8', inArr, [n]) };
      w();
      const got = (await s.run(feed))[outName].data;
      if (!sameBits(got, qgenOut())) {
        console.error(`wasm_bench: onnxruntime-web's ${op} of ${n} elements differs from qgen's`);
        failed = true;
      }
      const to = await median(() => s.run(feed), reps);
      cells.push(rate(n, to), (to / a).toFixed(2), (to / (a + c)).toFixed(2));
    }
    console.log(cells.join('\t'));
  }
}
if (failed) process.exit(1);
