"""Shape manipulation and selection: reshape, ravel, transpose, broadcast_to, where, astype,
squeeze, expand_dims, stack, ...

All static-shape operations; shapes and axes must be Python ints (or concrete values).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._promote import check_arraylike, promote_dtypes


def _ensure_array(a: Any) -> Any:
    if hasattr(a, "_ember_aval") or hasattr(a, "_trace"):
        return a
    aval = get_aval(a)
    return lax.convert_element_type(a, aval.dtype, aval.weak_type)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    x = _ensure_array(x)
    return lax.convert_element_type(x, dtypes.canonicalize(dtype), False)


def _resolve_shape(shape: Any, size: int) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "__index__")
                                                and not isinstance(shape, (tuple, list))):
        shape = (operator.index(shape),)
    shape = [operator.index(s) for s in shape]
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[unknown[0]] = size // known
    if math.prod(shape) != size:
        raise TypeError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None) -> Any:
    a = _ensure_array(a)
    if shape is None:
        shape = newshape
    aval = get_aval(a)
    new = _resolve_shape(shape, aval.size)
    if order == "F":
        rev = tuple(reversed(range(aval.ndim)))
        out = lax.reshape(lax.transpose(a, rev), tuple(reversed(new)))
        return lax.transpose(out, tuple(reversed(range(len(new)))))
    if order != "C":
        raise NotImplementedError(f"reshape order={order!r}")
    return lax.reshape(a, new)


def ravel(a: Any, order: str = "C") -> Any:
    a = _ensure_array(a)
    return reshape(a, (get_aval(a).size,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    a = _ensure_array(a)
    ndim = get_aval(a).ndim
    if axes is None:
        perm = tuple(reversed(range(ndim)))
    else:
        perm = tuple(operator.index(ax) % ndim if ndim else 0 for ax in axes)
        if sorted(perm) != list(range(ndim)):
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {ndim}")
    return lax.transpose(a, perm)


permute_dims = transpose


def matrix_transpose(x: Any, /) -> Any:
    ndim = get_aval(x).ndim
    if ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {ndim=}")
    perm = (*range(ndim - 2), ndim - 1, ndim - 2)
    return lax.transpose(x, perm)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_to(a: Any, shape: Any) -> Any:
    a = _ensure_array(a)
    aval = get_aval(a)
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(
        operator.index(s) for s in shape)
    if aval.shape == shape:
        return a
    lead = len(shape) - aval.ndim
    if lead < 0 or any(s not in (1, t) for s, t in zip(aval.shape, shape[lead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {aval.shape} and requested "
                         f"shape {shape}")
    squeeze_dims = tuple(i for i, (s, t) in enumerate(zip(aval.shape, shape[lead:]))
                         if s == 1 and t != 1)
    if squeeze_dims:
        a = lax.squeeze(a, squeeze_dims)
    kept = tuple(lead + i for i in range(aval.ndim) if i not in squeeze_dims)
    return lax.broadcast_in_dim(a, shape, kept)


def broadcast_arrays(*args: Any) -> list[Any]:
    shape = broadcast_shapes(*[get_aval(a).shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    """where(c, x, y): x where c else y, broadcast together. One-argument where needs a
    static `size` (see nonzero)."""
    if x is None and y is None:
        from ember.numpy import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided")
    check_arraylike("where", condition, x, y)
    x, y = promote_dtypes(x, y)
    cond = _ensure_array(condition)
    if get_aval(cond).dtype.kind != "b":
        cond = lax.ne(cond, lax.full_like(cond, 0))
    shape = broadcast_shapes(get_aval(cond).shape, get_aval(x).shape, get_aval(y).shape)
    cond, x, y = (broadcast_to(v, shape) for v in (cond, x, y))
    return lax.select(cond, x, y)


def squeeze(a: Any, axis: Any = None) -> Any:
    a = _ensure_array(a)
    aval = get_aval(a)
    if axis is None:
        dims = tuple(i for i, s in enumerate(aval.shape) if s == 1)
    else:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        dims = tuple(operator.index(ax) % aval.ndim for ax in axes)
    return lax.squeeze(a, dims)


def expand_dims(a: Any, axis: Any) -> Any:
    a = _ensure_array(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return lax.expand_dims(a, tuple(operator.index(ax) for ax in axes))


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    from ember.lax import concatenate as lax_concatenate
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else [_ensure_array(arrays[0])]
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    ndim = get_aval(arrays[0]).ndim
    if ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if len(arrays) == 1:
        return arrays[0]
    return lax_concatenate(arrays, operator.index(axis) % ndim)


concat = concatenate


def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Any:
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    arrays = [_ensure_array(a) for a in arrays]
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError("All input arrays must have the same shape.")
    nd = get_aval(arrays[0]).ndim + 1
    ax = operator.index(axis) % nd
    expanded = [lax.expand_dims(a, (ax,)) for a in arrays]
    if len(expanded) == 1:
        return expanded[0] if dtype is None else astype(expanded[0], dtype)
    return concatenate(expanded, ax, dtype)


