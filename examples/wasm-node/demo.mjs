// What the node program (run.mjs) and the page (index.html) both run:
// quantize, dequantize and fake-quantize a Float32Array with the wasm SIMD
// kernels, and check every code, value and mask byte against the scalar
// kernels of the same spec in the same module (the portable C the test
// suite holds bit for bit to docs/semantics.md). Returns the lines to print,
// whether the two agree, and a digest of every output byte, so that a page's
// run can be checked against node's.
export function runDemo({ k, memory, alloc, qparams }) {
  const n = 1003; // not a multiple of the 16-element main loop: the tail runs too
  const x = alloc(4 * n), q = alloc(n), qRef = alloc(n), y = alloc(4 * n), yRef = alloc(4 * n);
  const fq = alloc(4 * n), fqRef = alloc(4 * n), mask = alloc(n), maskRef = alloc(n);
  const input = new Float32Array(memory.buffer, x, n);
  for (let i = 0; i < n; i++) input[i] = Math.fround(Math.sin(i) * 3 + (i % 7) * 0.0625);
  input[0] = 0.125 / 2; // a tie
  input[1] = 1e30; // saturates
  const qp = qparams(0.02, 128);

  k.act_quantize__wasm(x, q, n, qp);
  k.act_quantize__scalar(x, qRef, n, qp);
  k.act_dequantize__wasm(q, y, n, qp);
  k.act_dequantize__scalar(q, yRef, n, qp);
  k.act_fake_quant__wasm(x, fq, mask, n, qp);
  k.act_fake_quant__scalar(x, fqRef, maskRef, n, qp);

  const bytes = (at, len) => new Uint8Array(memory.buffer, at, len);
  const same = (a, b, len) => {
    const u = bytes(a, len), v = bytes(b, len);
    return u.every((byte, i) => byte === v[i]);
  };
  const agree = same(q, qRef, n) && same(y, yRef, 4 * n) && same(fq, fqRef, 4 * n) && same(mask, maskRef, n);
  let digest = 0x811c9dc5; // FNV-1a over q, y, fake_quant's y and its mask
  for (const [at, len] of [[q, n], [y, 4 * n], [fq, 4 * n], [mask, n]])
    for (const b of bytes(at, len)) digest = Math.imul(digest ^ b, 0x01000193) >>> 0;
  const codes = new Uint8Array(memory.buffer, q, n), fake = new Float32Array(memory.buffer, fq, n);
  const six = (v) => v.toPrecision(6);
  const lines = [
    `x[0..4]          ${Array.from(input.subarray(0, 4), six).join(' ')}`,
    `quantize         ${Array.from(codes.subarray(0, 4)).join(' ')}`,
    `fake_quant       ${Array.from(fake.subarray(0, 4), six).join(' ')}`,
    `digest           ${digest.toString(16).padStart(8, '0')}`,
    `${n} elements: wasm SIMD and scalar kernels ${agree ? 'agree bit for bit' : 'DIFFER'}`,
  ];
  return { lines, agree, digest };
}
