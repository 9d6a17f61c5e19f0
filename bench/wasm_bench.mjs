// qgen's wasm SIMD kernels in node against a plain JS loop, one thread, on
// data already in the module's memory (examples/wasm-node builds the module:
// per-tensor quint8). Medians of 7 runs, Melem/s.
// Usage: node bench/wasm_bench.mjs kernels.wasm
import { loadKernels } from '../examples/wasm-node/kernels.mjs';

const { k, memory, alloc, qparams } = await loadKernels(process.argv[2]);
const scale = 0.02, zp = 128;
const qp = qparams(scale, zp);

function median(f, reps) {
  for (let i = 0; i < reps; i++) f(); // past node's baseline tiers
  const t = [];
  for (let r = 0; r < 7; r++) {
    const s = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) f();
    t.push(Number(process.hrtime.bigint() - s) / reps);
  }
  return t.sort((a, b) => a - b)[3];
}

// the plain JS loops: round half to even as nearbyint does
const rne = (v) => { const r = Math.round(v); return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r; };
function jsQuantize(x, q) {
  const inv = 1 / scale;
  for (let i = 0; i < x.length; i++) q[i] = Math.min(255, Math.max(0, rne(x[i] * inv) + zp));
}
function jsDequantize(q, y) { for (let i = 0; i < q.length; i++) y[i] = (q[i] - zp) * scale; }
function jsFakeQuant(x, y) {
  const inv = 1 / scale;
  for (let i = 0; i < x.length; i++) y[i] = (Math.min(255, Math.max(0, rne(x[i] * inv) + zp)) - zp) * scale;
}

console.log('op\tn\tqgen wasm Melem/s\tJS loop Melem/s\tratio');
for (const n of [65536, 1 << 20]) {
  const x = alloc(4 * n), q = alloc(n), y = alloc(4 * n), m = alloc(n);
  const xs = new Float32Array(memory.buffer, x, n);
  for (let i = 0; i < n; i++) xs[i] = Math.fround(Math.sin(i) * 3);
  const xa = new Float32Array(xs), qa = new Uint8Array(n), ya = new Float32Array(n);
  const reps = n < 1e6 ? 200 : 12;
  const rows = [
    ['quantize', () => k.act_quantize__wasm(x, q, n, qp), () => jsQuantize(xa, qa)],
    ['dequantize', () => k.act_dequantize__wasm(q, y, n, qp), () => jsDequantize(qa, ya)],
    ['fake_quant', () => k.act_fake_quant__wasm(x, y, m, n, qp), () => jsFakeQuant(xa, ya)],
  ];
  for (const [op, w, j] of rows) {
    const tw = median(w, reps), tj = median(j, reps);
    console.log(`${op}\t${n}\t${(n / tw * 1e3).toFixed(0)}\t${(n / tj * 1e3).toFixed(0)}\t${(tj / tw).toFixed(2)}`);
  }
}
