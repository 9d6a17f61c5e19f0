// Runs ONNX models on ONNX Runtime's CPU provider, through npm's
// onnxruntime-node (the library Node users call), for onnx_runtime.py.
// Usage: node ort_run.js <onnxruntime-node dir> <manifest.json>
// The manifest lists cases: {model, inputs: {name: {type, dims, file}},
// outputs: {name: file}}; tensors are raw little-endian files.
'use strict';
const fs = require('fs');

const ort = require(process.argv[2]);
const manifest = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const ARRAYS = {
  float32: Float32Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
};

function tensorOf(t) {
  const A = ARRAYS[t.type];
  if (!A) throw new Error(`${t.file}: type ${t.type}; expected one of ${Object.keys(ARRAYS)}`);
  // a fresh ArrayBuffer: the file's Buffer may sit at an unaligned offset
  const bytes = new Uint8Array(fs.readFileSync(t.file));
  return new ort.Tensor(t.type, new A(bytes.buffer), t.dims);
}

async function main() {
  for (const c of manifest.cases) {
    // one thread: the operators' own loops, in the order users get them
    const session = await ort.InferenceSession.create(c.model, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    const feeds = {};
    for (const [name, t] of Object.entries(c.inputs)) feeds[name] = tensorOf(t);
    const out = await session.run(feeds);
    for (const [name, file] of Object.entries(c.outputs)) {
      const d = out[name].data;
      fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    }
    await session.release();
  }
  console.log(`ort_run: onnxruntime-node ${ort.env.versions.common}, ${manifest.cases.length} models`);
}

main().catch((e) => {
  console.error(`ort_run: ${e.message}`);
  process.exit(1);
});
