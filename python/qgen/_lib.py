"""libqgen.so through ctypes: the library, the public structs it shares with
Python, and the error type. Every call that can fail goes through `check`,
which turns a qg_status into a QgenError carrying the library's message."""

import ctypes
import os
import pathlib


# qg_status values (qgen/status.h) by their names in the header.
STATUS_NAMES = {1: "QG_ERR_INVALID", 2: "QG_ERR_IO", 3: "QG_ERR_FORMAT", 4: "QG_ERR_STATE", 5: "QG_ERR_NOMEM",
                6: "QG_ERR_BACKEND", 7: "QG_ERR_ARG"}


class QgenError(RuntimeError):
    """An error reported by libqgen: `status` is the qg_status name of
    qgen/status.h ("QG_ERR_IO", "QG_ERR_NOMEM", ...). A RuntimeError, as torch's errors
    are, so that code catching those catches these."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class SpecError(QgenError, ValueError):
    """A spec, qparams or argument libqgen refused (QG_ERR_INVALID,
    QG_ERR_ARG): the message names the field, the value and what was
    expected."""


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 512)]


class QParams(ctypes.Structure):
    _fields_ = [
        ("scale", ctypes.c_void_p),
        ("zero_point", ctypes.c_void_p),
        ("zero_point_float", ctypes.c_void_p),
        ("channels", ctypes.c_size_t),
        ("inner", ctypes.c_size_t),
    ]


class Kernels(ctypes.Structure):
    # qgen/jit.h's qg_kernels; the entries are read as addresses and called
    # through the prototypes below.
    _fields_ = [
        ("spec", ctypes.c_void_p),
        ("isa", ctypes.c_int),
        ("quantize", ctypes.c_void_p),
        ("dequantize", ctypes.c_void_p),
        ("fake_quant", ctypes.c_void_p),
        ("fake_quant_backward", ctypes.c_void_p),
        ("observe", ctypes.c_void_p),
        ("requantize", ctypes.c_void_p),
    ]


class JitOptions(ctypes.Structure):
    _fields_ = [("isa", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("no_disk_cache", ctypes.c_bool),
                ("eager", ctypes.c_bool), ("background", ctypes.c_bool)]


class JitStats(ctypes.Structure):
    # qgen/jit.h's qg_jit_stats
    _fields_ = [(name, ctypes.c_uint) for name in ("compiled", "disk_hits", "memory_hits", "corrupt_entries",
                                                   "cache_errors", "lazy_tables", "fallbacks")]


class LsqGrads(ctypes.Structure):
    _fields_ = [("dx", ctypes.c_void_p), ("ds", ctypes.c_void_p), ("dz", ctypes.c_void_p)]


vp, sz = ctypes.c_void_p, ctypes.c_size_t
QUANTIZE = ctypes.CFUNCTYPE(None, vp, vp, sz, vp)
FAKE_QUANT = ctypes.CFUNCTYPE(None, vp, vp, vp, sz, vp)
BACKWARD = ctypes.CFUNCTYPE(None, vp, vp, vp, sz)
OBSERVE = ctypes.CFUNCTYPE(ctypes.c_int, vp, sz, sz, vp, vp)

_lib = None


def _library_path():
    env = os.environ.get("QGEN_LIBRARY")
    if env:
        return env
    beside = pathlib.Path(__file__).with_name("libqgen.so")  # a pip-installed package carries it
    if beside.exists():
        return str(beside)
    hint = pathlib.Path(__file__).with_name("_libpath.txt")
    if hint.exists():  # absolute (a build tree) or relative to the package (an install)
        return str(pathlib.Path(__file__).parent / hint.read_text().strip())
    raise QgenError(
        "QG_ERR_IO",
        "libqgen.so: not found; expected QGEN_LIBRARY to name it, the package installed by pip (which carries "
        "it), or the package from a qgen build tree (<build>/python) or install",
    )


def _declare(lib):
    c = ctypes
    E = c.POINTER(Error)
    sigs = {
        "qg_spec_new": (c.c_int, [c.c_char_p, c.c_char_p, c.c_void_p, sz, c.POINTER(vp), E]),
        "qg_spec_free": (None, [vp]),
        "qg_spec_to_json": (c.c_void_p, [vp]),
        "qg_spec_preset_names": (c.POINTER(c.c_char_p), []),
        "qg_jit_create": (c.c_int, [vp, c.POINTER(vp), E]),
        "qg_jit_compile": (c.c_int, [vp, vp, c.c_uint, c.POINTER(c.POINTER(Kernels)), E]),
        "qg_jit_destroy": (None, [vp]),
        "qg_jit_settle": (None, [vp]),
        "qg_jit_prepare": (c.c_int, [vp, c.POINTER(Kernels), c.c_uint, E]),
        "qg_jit_get_stats": (None, [vp, c.POINTER(JitStats)]),
        "qg_observer_create": (c.c_int, [vp, c.POINTER(vp), E]),
        "qg_observer_destroy": (None, [vp]),
        "qg_observer_enable": (None, [vp, c.c_bool, c.c_bool]),
        "qg_observer_minmax": (None, [vp, vp, vp]),
        "qg_observer_train_qparams": (None, [vp, vp, vp]),
        "qg_observer_qparams": (c.c_int, [vp, vp, vp, vp, E]),
        "qg_observer_restore": (c.c_int, [vp, vp, vp, vp, vp, E]),
        "qg_observer_histogram": (None, [vp, vp, vp, vp]),
        "qg_observer_restore_histogram": (c.c_int, [vp, vp, c.c_float, c.c_float, E]),
        "qg_fused_train_step_with": (c.c_int, [vp, vp, vp, vp, vp, vp, sz, sz, vp, vp, E]),
        "qg_fused_train_step16_with": (c.c_int, [vp, vp, vp, vp, vp, vp, sz, sz, vp, vp, E]),
        "qg_qparams_validate": (c.c_int, [vp, c.POINTER(QParams), E]),
        "qg_qparams_validate_n": (c.c_int, [vp, c.POINTER(QParams), c.c_size_t, E]),
        "qg_qparams_count": (c.c_size_t, [vp, c.c_size_t, c.c_size_t]),
        "qg_quantize_dynamic": (c.c_int, [vp, vp, vp, vp, vp, sz, sz, vp, vp, E]),
        "qg_ref_quantize": (None, [vp, vp, vp, sz, c.POINTER(QParams)]),
        "qg_ref_dequantize": (None, [vp, vp, vp, sz, c.POINTER(QParams)]),
        "qg_ref_fake_quant": (None, [vp, vp, vp, vp, sz, c.POINTER(QParams)]),
        "qg_ref_fake_quant_backward": (None, [vp, vp, vp, vp, sz]),
        "qg_float_type_widen": (None, [c.c_int, vp, vp, sz]),
        "qg_block_quantize_ref": (c.c_int, [c.c_int, vp, sz, vp, E]),
        "qg_block_dequantize_ref": (c.c_int, [c.c_int, vp, sz, vp, E]),
        "qg_block_row_bytes": (sz, [c.c_int, sz]),
        "qg_block_elems": (sz, [c.c_int]),
        "qg_float_type_narrow": (None, [c.c_int, vp, vp, sz]),
        "qg_ref_lsq_forward": (None, [vp, vp, vp, sz, vp, vp, sz, sz]),
        "qg_ref_lsq_backward": (None, [vp, vp, vp, sz, vp, vp, sz, sz, c.c_float, c.POINTER(LsqGrads)]),
        "qg_lsq_backward": (None, [vp, vp, vp, sz, vp, vp, sz, sz, c.c_float, c.POINTER(LsqGrads)]),
        "qg_status_name": (c.c_char_p, [c.c_int]),
        "qg_isa_name": (c.c_char_p, [c.c_int]),
        "qg_abi_sizeof_qparams": (sz, []),
        "qg_abi_sizeof_jit_options": (sz, []),
        "qg_abi_sizeof_kernels": (sz, []),
        "qg_abi_sizeof_error": (sz, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    mirrors = (("qparams", QParams), ("kernels", Kernels), ("error", Error), ("jit_options", JitOptions))
    for name, struct in mirrors:
        got = getattr(lib, "qg_abi_sizeof_" + name)()
        if got != ctypes.sizeof(struct):
            raise QgenError(
                "QG_ERR_STATE",
                f"libqgen.so: qg_{name} is {got} bytes there and {ctypes.sizeof(struct)} here; "
                "expected the package and library of one build",
            )
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [vp]
    lib.free = libc.free


def isas():
    """The ISA names in qg_isa order, from the library's ISA table."""
    L, names = lib(), []
    while L.qg_isa_name(len(names)):
        names.append(L.qg_isa_name(len(names)).decode())
    return names


def lib():
    """The loaded library (once per process)."""
    global _lib
    if _lib is None:
        path = _library_path()
        try:
            loaded = ctypes.CDLL(path)
        except OSError as e:
            raise QgenError("QG_ERR_IO", f"{path}: cannot load libqgen: {e}") from None
        _declare(loaded)
        _lib = loaded
    return _lib


def check(status, err):
    if status:
        raise error_of(status, err.message.decode(errors="replace"))


def error_of(status: int, message: str) -> QgenError:
    """The exception for a qg_status: SpecError for bad input and
    arguments, QgenError for the rest."""
    name = STATUS_NAMES.get(status, f"qg_status {status}")
    return (SpecError if name in ("QG_ERR_INVALID", "QG_ERR_ARG") else QgenError)(name, message)
