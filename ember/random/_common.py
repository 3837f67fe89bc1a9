"""Argument checks and dtype rules shared by the samplers.

Input: the user's shape / dtype / parameter arguments. Output: canonical tuples and NumPy
dtypes, or JAX's error. Invariants: the texts are JAX 0.10.2's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core import dtypes as core_dtypes
from ember.random.prng import canonical_shape


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    """JAX's ValueError unless broadcasting the parameters' shapes with `shape` is `shape`."""
    if param_shapes:
        out = broadcast_shapes(shape, *param_shapes)
        if out != shape:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with "
                             "shape argument, and the result of broadcasting the shapes must "
                             f"equal the shape argument, but got result {out} for shape "
                             f"argument {shape}.")


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of shapes, with JAX's error text."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(s) for s in shapes]}") from None


def broadcast_shape(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    """`shape` checked against the parameters, or their broadcast shape when None."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonical_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def float_dtype(name: str, dtype: Any, *, allow_complex: bool = False) -> np.dtype:
    """The requested float dtype (the default float when None), JAX's error otherwise."""
    dt = core_dtypes.default_float() if dtype is None else (
        core_dtypes.canonicalize_requested(dtype, name))
    ok = dtypes.issubdtype(dt, np.inexact) if allow_complex else dtypes.issubdtype(dt, np.floating)
    if not ok:
        kind = "a float or complex dtype" if allow_complex else "a float dtype"
        raise ValueError(f"dtype argument to `{name}` must be {kind}, got {dt}")
    return dt


def int_dtype(dtype: Any, name: str) -> np.dtype:
    """The requested integer dtype (the default int when None)."""
    return core_dtypes.default_int() if dtype is None else (
        core_dtypes.canonicalize_requested(dtype, name))
