"""qgen.Spec: a quantization spec (docs/spec.md) loaded by libqgen, from a
file, a dict or a preset, with `--set`-style overrides."""

import ctypes
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _lib


def _sets(overrides):
    """key=value strings as `qgen --set` takes them: value in JSON."""
    return [f"{k}={json.dumps(v)}" for k, v in overrides.items()]


class Spec:
    """A resolved, validated spec. Build one with Spec.from_file,
    Spec.from_dict or Spec.preset; `with_overrides` makes a changed copy.
    Errors name the field, the value and what was expected."""

    def __init__(self, text: str, origin: str = "<spec>", overrides: Optional[Mapping[str, Any]] = None) -> None:
        self._text, self._origin = text, origin
        self._overrides = dict(overrides or {})
        L = _lib.lib()
        sets = [s.encode() for s in _sets(self._overrides)]
        arr = (ctypes.c_char_p * max(1, len(sets)))(*sets)
        ptr, err = ctypes.c_void_p(), _lib.Error()
        _lib.check(L.qg_spec_new(text.encode(), origin.encode(), arr if sets else None, len(sets), ctypes.byref(ptr),
                                 ctypes.byref(err)), err)
        self._ptr = ptr
        raw = L.qg_spec_to_json(ptr)
        if not raw:
            raise _lib.QgenError("QG_ERR_NOMEM", f"{origin}: out of memory")
        try:
            self._dict = json.loads(ctypes.string_at(raw).decode())
        finally:
            L.free(raw)

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"], **overrides: Any) -> "Spec":
        """The spec in the JSON file `path`, with overrides as --set gives
        them (key a field or "observer.<field>", value any JSON value)."""
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise _lib.QgenError("QG_ERR_IO", f"{path}: cannot read the spec: {e.strerror}") from None
        return cls(text, path, overrides)

    @classmethod
    def from_dict(cls, fields: Dict[str, Any], **overrides: Any) -> "Spec":
        """The spec of a dict of fields as docs/spec.md lists them ("name"
        defaults to "py"), with overrides."""
        if not isinstance(fields, dict):
            raise TypeError(f"fields: got {type(fields).__name__}; expected a dict of spec fields")
        fields = dict(fields)
        fields.setdefault("name", "py")
        return cls(json.dumps(fields), "<dict>", overrides)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> "Spec":
        """A built-in preset (Spec.presets()), with overrides."""
        return cls.from_dict({"name": "py", "base": name}, **overrides)

    @staticmethod
    def presets() -> List[str]:
        """The names of the built-in presets, as "base" takes them."""
        names = _lib.lib().qg_spec_preset_names()
        out, i = [], 0
        while names[i]:
            out.append(names[i].decode())
            i += 1
        return out

    def with_overrides(self, **overrides: Any) -> "Spec":
        """A copy with more overrides (later ones win), the same source."""
        merged = dict(self._overrides)
        merged.update(overrides)
        return Spec(self._text, self._origin, merged)

    def to_dict(self) -> Dict[str, Any]:
        """The resolved spec in canonical form: every field (a copy)."""
        return json.loads(json.dumps(self._dict))

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    @property
    def per_channel(self) -> bool:
        """Whether the qscheme is one of the per_channel_* ones."""
        return self._dict["qscheme"].startswith("per_channel")

    @property
    def per_group(self) -> bool:
        """Whether the qscheme is per_group_affine or per_group_symmetric."""
        return self._dict["qscheme"].startswith("per_group")

    @property
    def group_size(self) -> int:
        """The group size of a per-group spec, else 0."""
        return self._dict.get("group_size", 0)

    @property
    def block(self) -> str:
        """One of ggml's block formats (q8_0, q4_K, ...), or "none"."""
        return self._dict.get("block", "none")

    @property
    def float_type(self) -> str:
        """float32, bfloat16 or float16: the element type of x, y, dy, dx."""
        return self._dict.get("float_type", "float32")

    @property
    def channels(self) -> int:
        """The spec's channel count; per group, the grouped axis' length."""
        return self._dict["channel_len"] if self.per_channel or self.per_group else 1

    def __repr__(self) -> str:
        d = self._dict
        return f"Spec(name={d['name']!r}, dtype={d['dtype']}, qscheme={d['qscheme']}, channel_len={d['channel_len']})"

    def __del__(self):
        if getattr(self, "_ptr", None) and _lib._lib is not None:
            _lib._lib.qg_spec_free(self._ptr)
            self._ptr = None
