"""Array creation: array, asarray, zeros, ones, full, empty, arange, linspace, eye, ...

Outside jit these return ember.Arrays right away; under jit, constants are staged the way
JAX stages them (`arange` is an `iota`, `zeros` a broadcast of a scalar literal).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import lax
from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.trace import Tracer, get_aval


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__") and not isinstance(
            shape, (tuple, list)):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def _dtype(dtype: Any, default: np.dtype | None = None) -> np.dtype:
    if dtype is None:
        return default if default is not None else dtypes.default_float()
    return dtypes.canonicalize(dtype)


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = None,
          ndmin: int = 0) -> Any:
    """An array from a value: Arrays and tracers pass through (cast if `dtype`); NumPy
    values, scalars and nested sequences are copied into a new ember.Array."""
    if isinstance(object, (Tracer, ArrayImpl)):
        out = object if dtype is None else lax.convert_element_type(object, dtype)
    elif isinstance(object, (list, tuple)) and _contains_traced(object):
        from ember.numpy._manipulation import stack
        out = stack([array(o, dtype) for o in object])
    else:
        if hasattr(object, "__jax_array__"):
            object = object.__jax_array__()
        if dtypes.is_python_scalar(object) and dtype is None:
            aval = get_aval(object)
            out = ArrayImpl._from_user(np.asarray(object, dtype=aval.dtype), weak_type=True)
        else:
            value = np.asarray(object) if dtype is None else np.asarray(object, dtype=dtype)
            if value.dtype == object_dtype:
                raise TypeError(f"ember.numpy.array: cannot convert {object!r} to an array")
            if dtype is None and isinstance(object, (list, tuple)) and value.dtype.kind in "iuf":
                value = value.astype(_infer_list_dtype(object, value.dtype))
            out = ArrayImpl._from_user(value)
    if ndmin and get_aval(out).ndim < ndmin:
        out = lax.broadcast_to_rank(out, ndmin)
    return out


object_dtype = np.dtype(object)


def _contains_traced(seq: Any) -> bool:
    if isinstance(seq, (list, tuple)):
        return any(_contains_traced(s) for s in seq)
    return isinstance(seq, (Tracer, ArrayImpl))


def _infer_list_dtype(obj: Any, np_dtype: np.dtype) -> np.dtype:
    """Python lists of ints/floats take the default int/float dtypes (as in JAX)."""
    if np_dtype.kind == "f":
        return dtypes.default_float()
    if np_dtype.kind == "i":
        return dtypes.default_int()
    return dtypes.canonicalize(np_dtype)


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None) -> Any:
    if isinstance(a, (Tracer, ArrayImpl)) and dtype is None:
        return a
    return array(a, dtype=dtype)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    return lax.full(_shape(shape), 0, _dtype(dtype))


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    return lax.full(_shape(shape), 1, _dtype(dtype))


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    fill_aval = get_aval(fill_value)
    if fill_aval.ndim:
        from ember.numpy._manipulation import broadcast_to
        value = fill_value if dtype is None else lax.convert_element_type(fill_value, dtype)
        return broadcast_to(value, _shape(shape))
    dt = dtypes.canonicalize(dtype) if dtype is not None else (
        fill_aval.dtype if not fill_aval.weak_type else fill_aval.dtype)
    return lax.full(_shape(shape), fill_value, dt)


def _like(a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], np.dtype]:
    aval = get_aval(a)
    return (aval.shape if shape is None else _shape(shape),
            aval.dtype if dtype is None else dtypes.canonicalize(dtype))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    s, d = _like(a, dtype, shape)
    return lax.full(s, 0, d)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    s, d = _like(a, dtype, shape)
    return lax.full(s, 1, d)


def empty_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    return zeros_like(a, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None) -> Any:
    s, d = _like(a, dtype, shape)
    return full(s, fill_value, d)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None) -> Any:
    """Evenly spaced values; with static bounds, an `iota` (scaled and shifted if needed)."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise lax_concrete_error("arange", v)
    if stop is None and step is None:
        size = int(np.ceil(_static(start)))
        dt = _dtype(dtype, _arange_dtype(start))
        return lax.iota(dt, max(size, 0))
    start_v = _static(start)
    stop_v = _static(stop) if stop is not None else None
    step_v = 1 if step is None else _static(step)
    values = np.arange(start_v, stop_v, step_v)
    dt = _dtype(dtype, _arange_dtype(start, stop, step))
    if values.size and dt.kind in "iuf" and values.size > 1:
        base = lax.iota(dt, values.size)
        if step_v != 1:
            base = lax.mul(base, lax.convert_element_type(step_v, dt))
        if start_v != 0:
            base = lax.add(base, lax.convert_element_type(start_v, dt))
        return base
    return array(values, dtype=dt)


def lax_concrete_error(fname: str, tracer: Tracer) -> Exception:
    from ember.core.errors import ConcretizationTypeError
    return ConcretizationTypeError(
        f"{fname} requires concrete (static) arguments, got a traced value "
        f"{tracer.aval.str_short()}. Its result shape would depend on data.")


def _static(v: Any) -> Any:
    if isinstance(v, ArrayImpl):
        return v.item()
    return v.item() if isinstance(v, (np.ndarray, np.generic)) else v


def _arange_dtype(*vals: Any) -> np.dtype:
    kinds = []
    for v in vals:
        if v is None:
            continue
        if isinstance(v, (ArrayImpl, np.ndarray, np.generic)):
            kinds.append(np.asarray(v).dtype.kind)
        else:
            kinds.append("f" if isinstance(v, float) else "i")
    return dtypes.default_float() if "f" in kinds else dtypes.default_int()
