"""What `python -m ember explain` explains: a function in a file and argument types.

Input: `path/to/file.py:function` (a dotted attribute path after the colon is allowed:
`file.py:Model.apply`) and an argument spec such as `"f32[1000000], f32[1000000], i32[]"`.
Output: `load_function(target)` -> the callable (the file runs as a module named after
its stem, its directory first on sys.path, so its own imports work);
`parse_arg_specs(text)` -> [ShapeDtypeStruct]; `example_arrays(specs, seed)` -> random
arrays of those types (floats standard normal, integers in [-100, 100], bools fair).
Invariants: dtype names are JAX's short names (f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64
bool, also `pred` and NumPy's names such as float32); a bad spec raises ValueError naming
the piece it could not read.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

_SHORT = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8",
          "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
          "u32": "uint32", "u64": "uint64", "bool": "bool", "pred": "bool",
          "c64": "complex64", "c128": "complex128"}
_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*([0-9,\s]*)\]\s*")


def load_function(target: str) -> Callable:
    """The function named by `path/to/file.py:function`."""
    path, sep, attr = target.rpartition(":")
    if not sep or not path or not attr:
        raise ValueError(f"expected path/to/file.py:function, got {target!r}")
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{path} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{target} is not callable")
    return obj


def parse_arg_specs(text: str) -> list[Any]:
    """`"f32[1000000], i32[]"` -> [ShapeDtypeStruct((1000000,), float32), ...]."""
    from ember.api import ShapeDtypeStruct

    out = []
    rest = text.strip()
    while rest:
        m = _SPEC.match(rest)
        if m is None:
            raise ValueError(f"cannot read an argument type at {rest!r} "
                             "(expected e.g. f32[1000000] or i32[3,4] or f32[])")
        name, dims = m.group(1), m.group(2)
        try:
            dtype = np.dtype(_SHORT.get(name, name))
        except TypeError:
            raise ValueError(f"unknown dtype {name!r} in {m.group(0).strip()!r}") from None
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        out.append(ShapeDtypeStruct(shape, dtype))
        rest = rest[m.end():]
        if rest.startswith(","):
            rest = rest[1:]
        elif rest:
            raise ValueError(f"expected ',' between argument types at {rest!r}")
    return out


def example_arrays(specs: list[Any], seed: int = 0) -> list[np.ndarray]:
    from ember.explain.roofline import random_array

    rng = np.random.default_rng(seed)
    return [random_array(rng, s.shape, s.dtype) for s in specs]
