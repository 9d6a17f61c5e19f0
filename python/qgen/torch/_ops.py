"""torch.ops.qgen (python/torch_ops): the module step as one torch operator,
where the build made libqgen_torch_ops.so beside this file (it needs
libtorch-dev). `available` is False without it, or with QGEN_TORCH_OPS=0
in the environment; qgen.torch then takes its Python path, with the same
numbers (docs/python.md, "The torch operator")."""

import os
import pathlib

import torch

from .. import _lib

_PYTHON_ERRORS = {"ValueError": ValueError, "TypeError": TypeError}


def _load():
    path = pathlib.Path(__file__).with_name("libqgen_torch_ops.so")
    if os.environ.get("QGEN_TORCH_OPS") == "0" or not path.exists():
        return None
    _lib.lib()  # libqgen first, from the path the package knows, so the operator links to that one
    torch.ops.load_library(str(path))
    return torch.ops.qgen


_qgen = _load()
available = _qgen is not None


def train_step(*args, in_place=False):
    """torch.ops.qgen.train_step(*args) (train_step_ with `in_place`: y
    written over X), with the operator's "qgen:<kind>:<message>" errors
    raised as QgenError or SpecError (kind a qg_status value) or as the
    Python exception named."""
    try:
        return _qgen.train_step_(*args) if in_place else _qgen.train_step(*args)
    except RuntimeError as e:
        text = str(e)
        if not text.startswith("qgen:"):
            raise
        kind, message = text[5:].split(":", 1)
        message = message.splitlines()[0] if message else message
        if kind in _PYTHON_ERRORS:
            raise _PYTHON_ERRORS[kind](message) from None
        raise _lib.error_of(int(kind), message) from None
