"""Reductions: sum, prod, max, min, mean, var, std, all, any, argmax, argmin, ...

`axis` may be None, an int or a tuple (negative axes count from the end); `keepdims`
broadcasts the result back with size-1 dimensions, as JAX does (a reduce then a
broadcast_in_dim); `where=` masks elements out with the reduction's identity; `dtype=`
casts before reducing. Sums of bool and small integers accumulate in the default int, as
in JAX.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._promote import check_arraylike, promote_dtypes_inexact


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = [int(a) for a in axis]
    else:
        axes = [int(axis.__index__() if hasattr(axis, "__index__") else axis)]
    out = []
    for a in axes:
        if not -ndim <= a < builtins.max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in reduction: {axis}")
    return tuple(sorted(out)) if ndim else ()


def _keepdims(out: Any, in_shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    shape = tuple(1 if i in axes else s for i, s in enumerate(in_shape))
    kept = tuple(i for i in range(len(in_shape)) if i not in axes)
    return lax.broadcast_in_dim(out, shape, kept)


def _upcast_small_int(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < dtypes.default_int().itemsize):
        return dtypes.default_int()
    if dtype.kind == "u" and dtype.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dtype


def _reduction(a: Any, name: str, lax_reduce: Callable[[Any, tuple[int, ...]], Any],
               identity: Callable[[np.dtype], Any], axis: Any, dtype: Any, keepdims: bool,
               initial: Any, where: Any, upcast: bool = False, bool_op: bool = False) -> Any:
    check_arraylike(name, a)
    a = lax.convert_element_type(a, get_aval(a).dtype, get_aval(a).weak_type) \
        if not hasattr(a, "_ember_aval") and not hasattr(a, "_trace") else a
    aval = get_aval(a)
    if bool_op:
        if aval.dtype.kind != "b":
            a = lax.ne(a, lax.full_like(a, 0))
    elif dtype is not None:
        a = lax.convert_element_type(a, dtype)
    elif upcast:
        target = _upcast_small_int(aval.dtype)
        if target != aval.dtype:
            a = lax.convert_element_type(a, target)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim)
    if where is not None:
        from ember.numpy._manipulation import where as _where
        a = _where(where, a, lax.full_like(a, identity(aval.dtype)))
        aval = get_aval(a)
    out = lax_reduce(a, axes) if axes else a
    if initial is not None:
        from ember.numpy._ufuncs import maximum, minimum
        combine = {"max": maximum, "min": minimum}.get(name, lax.add if name == "sum" else lax.mul)
        out = combine(out, lax.convert_element_type(initial, get_aval(out).dtype))
    if keepdims:
        out = _keepdims(out, aval.shape, axes)
    return out


def _lowest(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return -np.inf
    return False if dtype.kind == "b" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return np.inf
    return True if dtype.kind == "b" else np.iinfo(dtype).max


def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    return _reduction(a, "sum", lax.reduce_sum, lambda d: 0, axis, dtype, keepdims, initial,
                      where, upcast=promote_integers)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    return _reduction(a, "prod", lax.reduce_prod, lambda d: 1, axis, dtype, keepdims, initial,
                      where, upcast=promote_integers)


def max(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    _check_nonempty("max", a, axis, initial, where)
    return _reduction(a, "max", lax.reduce_max, _lowest, axis, None, keepdims, initial, where)


def min(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    _check_nonempty("min", a, axis, initial, where)
    return _reduction(a, "min", lax.reduce_min, _highest, axis, None, keepdims, initial, where)


amax, amin = max, min


def _check_nonempty(name: str, a: Any, axis: Any, initial: Any, where: Any) -> None:
    aval = get_aval(a)
    if initial is not None or where is not None:
        return
    axes = normalize_axes(axis, aval.ndim)
    if builtins.any(aval.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def all(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    return _reduction(a, "all", lax.reduce_and, lambda d: True, axis, None, keepdims, None,
                      where, bool_op=True)


def any(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    return _reduction(a, "any", lax.reduce_or, lambda d: False, axis, None, keepdims, None,
                      where, bool_op=True)


def _count(aval_shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= aval_shape[i]
    return n


def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    check_arraylike("mean", a)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim)
    if dtype is None:
        (a,) = promote_dtypes_inexact(a)
    total = sum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    if where is None:
        count: Any = _count(aval.shape, axes)
        return lax.div(total, lax.convert_element_type(count, get_aval(total).dtype))
    from ember.numpy._manipulation import broadcast_to
    n = sum(broadcast_to(where, aval.shape), axis, dtype=get_aval(total).dtype,
            keepdims=keepdims)
    return lax.div(total, n)


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    if correction is not None:
        ddof = correction
    (a,) = promote_dtypes_inexact(a)
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim)
    centered = lax.sub(a, mean(a, axis, keepdims=True, where=where))
    sq = lax.mul(centered, centered)
    total = sum(sq, axis, keepdims=keepdims, where=where)
    if where is None:
        n = _count(aval.shape, axes) - ddof
        return lax.div(total, lax.convert_element_type(n, get_aval(total).dtype))
    from ember.numpy._manipulation import broadcast_to
    n = sum(broadcast_to(where, aval.shape), axis, dtype=get_aval(total).dtype,
            keepdims=keepdims)
    return lax.div(total, lax.sub(n, lax.convert_element_type(ddof, get_aval(n).dtype)))


def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    return lax.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where,
                        correction=correction))


def _arg_reduce(a: Any, axis: Any, keepdims: bool, lax_fn: Callable[..., Any],
                name: str) -> Any:
    check_arraylike(name, a)
    aval = get_aval(a)
    if axis is None:
        from ember.numpy._manipulation import ravel
        a = ravel(a)
        axis = 0
        if aval.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
    ax = normalize_axes(axis, get_aval(a).ndim)[0]
    out = lax_fn(a, ax, dtypes.default_int())
    if keepdims:
        if aval.ndim == get_aval(a).ndim:
            out = _keepdims(out, aval.shape, (ax,))
        else:
            out = lax.broadcast_in_dim(out, (1,) * aval.ndim, ())
    return out


def argmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    return _arg_reduce(a, axis, keepdims, lax.argmax, "argmax")


def argmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    return _arg_reduce(a, axis, keepdims, lax.argmin, "argmin")
