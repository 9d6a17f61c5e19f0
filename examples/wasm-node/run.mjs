// Loads kernels.wasm (build.sh) and quantizes, dequantizes and fake-quantizes
// a Float32Array with the wasm SIMD kernels, then checks every value against
// the scalar kernels of the same spec in the same module (the portable C
// that the test suite holds bit for bit to docs/semantics.md).
// Usage: node run.mjs kernels.wasm
import { loadKernels } from './kernels.mjs';

const { k, memory, alloc, qparams } = await loadKernels(process.argv[2]);

const n = 1003; // not a multiple of the 16-element main loop: the tail runs too
const x = alloc(4 * n), q = alloc(n), qRef = alloc(n), y = alloc(4 * n), yRef = alloc(4 * n);
const mask = alloc(n), maskRef = alloc(n);
const input = new Float32Array(memory.buffer, x, n);
for (let i = 0; i < n; i++) input[i] = Math.fround(Math.sin(i) * 3 + (i % 7) * 0.0625);
input[0] = 0.125 / 2; // a tie
input[1] = 1e30; // saturates
const qp = qparams(0.02, 128);

k.act_quantize__wasm(x, q, n, qp);
k.act_quantize__scalar(x, qRef, n, qp);
k.act_dequantize__wasm(q, y, n, qp);
k.act_dequantize__scalar(q, yRef, n, qp);
const same = (a, b, bytes) =>
  Buffer.compare(Buffer.from(memory.buffer, a, bytes), Buffer.from(memory.buffer, b, bytes)) === 0;
let ok = same(q, qRef, n) && same(y, yRef, 4 * n);
k.act_fake_quant__wasm(x, y, mask, n, qp);
k.act_fake_quant__scalar(x, yRef, maskRef, n, qp);
ok = ok && same(y, yRef, 4 * n) && same(mask, maskRef, n);

const codes = new Uint8Array(memory.buffer, q, n), fq = new Float32Array(memory.buffer, y, n);
console.log(`x[0..4]          ${Array.from(input.subarray(0, 4), (v) => v.toPrecision(6)).join(' ')}`);
console.log(`quantize         ${Array.from(codes.subarray(0, 4)).join(' ')}`);
console.log(`fake_quant       ${Array.from(fq.subarray(0, 4), (v) => v.toPrecision(6)).join(' ')}`);
console.log(`${n} elements: wasm SIMD and scalar kernels ${ok ? 'agree bit for bit' : 'DIFFER'}`);
process.exitCode = ok ? 0 : 1;
