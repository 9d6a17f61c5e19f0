// A module built by build.sh, instantiated from its bytes (node reads the
// file, a page fetches it), with what a caller needs to hand it data: a bump
// allocator over its memory from __heap_base up, and qg_qparams as wasm32
// lays it out (scale*, zero_point*, zero_point_float*, channels, inner:
// 4 bytes each).
export async function instantiateKernels(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes);
  const k = instance.exports;
  const memory = k.memory;
  let top = k.__heap_base.value;
  function alloc(bytes) {
    const at = (top + 15) & ~15;
    top = at + bytes;
    const need = Math.ceil(top / 65536) - memory.buffer.byteLength / 65536;
    if (need > 0) memory.grow(need);
    return at;
  }
  function qparams(scale, zeroPoint) {
    const s = alloc(4), z = alloc(4), qp = alloc(20);
    new Float32Array(memory.buffer, s, 1)[0] = scale;
    new Int32Array(memory.buffer, z, 1)[0] = zeroPoint;
    new Uint32Array(memory.buffer, qp, 5).set([s, z, 0, 1, 1]);
    return qp;
  }
  return { k, memory, alloc, qparams };
}
