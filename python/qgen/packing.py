"""4-bit q tensors (qint4, quint4) as qgen and ONNX store them: two
elements per byte, the one with the lower index in the low nibble, an odd
count's last high nibble 0 (include/qgen/spec.h)."""

from typing import Any

import numpy as np


def pack4(values: Any) -> Any:
    """Packed bytes (uint8, (n + 1) // 2) of 4-bit values given one per
    element (any integer array; the low four bits of each are kept)."""
    v = np.ravel(np.asarray(values)).astype(np.int64) & 0xF
    if v.size % 2:
        v = np.append(v, 0)
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def unpack4(packed: Any, n: int, signed: bool) -> Any:
    """The n 4-bit values of packed bytes, one per element: int8 in -8..7
    when signed (qint4), else uint8 in 0..15 (quint4)."""
    b = np.ravel(np.asarray(packed, dtype=np.uint8))
    if (n + 1) // 2 != b.size:
        raise ValueError(f"packed: {b.size} bytes; expected {(n + 1) // 2} for {n} elements")
    v = np.empty(2 * b.size, np.int16)
    v[0::2], v[1::2] = b & 0xF, b >> 4
    v = v[:n]
    return np.where(v >= 8, v - 16, v).astype(np.int8) if signed else v.astype(np.uint8)
