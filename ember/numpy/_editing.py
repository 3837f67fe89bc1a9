"""Building and editing arrays for ember.numpy: block, insert, delete, compress, extract,
choose, resize, rollaxis, put_along_axis, place, put (partition: _partition.py).

Input: array-likes; axes, `kth`, `size` and new shapes are static. Output: new ember
arrays (JAX arrays are immutable: the in-place forms ask for inplace=False). Invariants
(JAX's): delete with an array of indices needs them concrete, unless
assume_unique_indices=True (then it is a gather); compress/extract without `size` need a
concrete condition (under jit pass `size=`, with `fill_value` padding); choose's
mode='raise' needs concrete indices.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike
from ember.numpy._reductions import normalize_axes

__all__ = ["block", "insert", "delete", "compress", "extract", "choose", "resize",
           "rollaxis", "put_along_axis", "place", "put"]


def _axis(axis: Any, ndim: int) -> int:
    return normalize_axes(operator.index(axis), ndim)[0]


def _concrete(x: Any, msg: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected\n{msg}")
    return np.asarray(x)


def _block(xs: Any) -> tuple[Any, int]:
    """(the assembled array, the nesting depth of xs)."""
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if not isinstance(xs, list):
        return jnp.asarray(xs), 1
    if len(xs) == 0:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts, depths = builtins.zip(*[_block(x) for x in xs])
    if builtins.any(d != depths[0] for d in depths[1:]):
        raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = builtins.max(depths[0], builtins.max(p.ndim for p in parts))
    # (leading unit axes by broadcast_in_dim, JAX's broadcast_to_rank)
    parts = [p if p.ndim >= rank else lax.broadcast_to_rank(p, rank) for p in parts]
    # The innermost lists join along the last axis, each level out one axis further left.
    return jnp.concatenate(parts, axis=-depths[0]), depths[0] + 1


@jit_like_jax("block")
def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks.

    Args:
        arrays: an array, or nested lists of arrays; the innermost lists are joined along
            the last axis, the next level along the one before it, and so on (all lists at
            one depth, as NumPy requires).

    Returns:
        The assembled array; blocks are made at least as many-dimensional as the nesting.

    Example:
        >>> jnp.block([[jnp.zeros((1, 2), int), jnp.ones((1, 1), int)], [jnp.full((1, 3), 7)]])
        Array([[0, 0, 1],
               [7, 7, 7]], dtype=int32)
    """
    return _block(arrays)[0]


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """Return an array with entries removed along an axis.

    Args:
        arr: an array.
        obj: what to remove: an int, a slice, an integer array of positions or a bool mask
            (static values, since the result's shape depends on them).
        axis: the axis to remove along; None (the default) flattens ``arr`` first.
        assume_unique_indices: a promise that the positions in ``obj`` are unique and in
            range, which lets them be traced (as JAX).

    Returns:
        A new array without the removed entries.

    Example:
        >>> jnp.delete(jnp.array([1, 2, 3, 4]), 1)
        Array([1, 3, 4], dtype=int32)
        >>> jnp.delete(jnp.arange(6).reshape(2, 3), jnp.array([0, 2]), axis=1)
        Array([[1],
               [4]], dtype=int32)
    """
    check_arraylike("delete", arr)
    a = jnp.asarray(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _axis(axis, a.ndim)
    lead = (builtins.slice(None),) * axis
    n = a.shape[axis]
    try:
        i = operator.index(obj)
    except TypeError:
        pass
    else:
        if not -n <= i < n:
            raise ValueError(f"axis {i} is out of bounds for array of dimension {n}")
        i %= n
        return jnp.concatenate([a[lead + (builtins.slice(0, i),)],
                                a[lead + (builtins.slice(i + 1, None),)]], axis=axis)
    if isinstance(obj, builtins.slice):
        obj = np.arange(n)[obj]
        assume_unique_indices = True
    check_arraylike("delete", a, obj)
    o = jnp.asarray(obj) if isinstance(obj, Tracer) else obj
    if jnp.issubdtype(jnp.asarray(o).dtype, np.integer) and assume_unique_indices:
        # Sorted distinct deleted positions d_0 < d_1 < ...; kept output slot i reads input
        # i + #{j : d_j - j <= i} (each earlier deletion shifts it one place right).
        d = jnp.ravel(jnp.asarray(o))
        d = jnp.sort(jnp.clip(jnp.where(d < 0, d + n, d), 0, n))
        d = d - jnp.arange(d.shape[0], dtype=d.dtype)
        keep = jnp.arange(n - d.shape[0], dtype=d.dtype)
        keep = keep + jnp.sum(keep[None, :] >= d[:, None], axis=0, dtype=d.dtype)
        return a[lead + (keep,)]
    host = _concrete(o, "'obj' array argument of jnp.delete()")
    if jnp.issubdtype(host.dtype, np.integer):
        mask = np.ones(n, dtype=bool)
        mask[host] = False
    elif host.dtype == bool:
        if host.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        mask = ~host
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={host.dtype}; must be "
                         "integer or bool.")
    return a[lead + (jnp.asarray(np.nonzero(mask)[0]),)]


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """Return an array with values inserted along an axis.

    Args:
        arr: an array.
        obj: where to insert: an int, a slice or an integer array of positions (before which
            the values go).
        values: the values, broadcast to the inserted block's shape.
        axis: the axis to insert along; None (the default) flattens ``arr`` first.

    Returns:
        A new array with the values in place.

    Example:
        >>> jnp.insert(jnp.array([1, 2, 3]), 1, 9)
        Array([1, 9, 2, 3], dtype=int32)
        >>> jnp.insert(jnp.array([[1, 2], [3, 4]]), 1, jnp.array([7, 8]), axis=1)
        Array([[1, 7, 2],
               [3, 8, 4]], dtype=int32)
    """
    check_arraylike("insert", arr, 0 if isinstance(obj, builtins.slice) else obj, values)
    a = jnp.asarray(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, builtins.slice):
        idx = jnp.arange(*obj.indices(n))
    else:
        idx = jnp.asarray(obj)
    if idx.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not jnp.issubdtype(idx.dtype, np.integer):
        if idx.size == 0 and not isinstance(obj, jnp.ndarray):
            idx = idx.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = jnp.array(values, ndmin=a.ndim, dtype=a.dtype, copy=False)
    if idx.size == 1:
        at = jnp.ravel(idx)[0]
        if idx.ndim == 0:  # a scalar position: values' first axis runs along `axis`
            vals = jnp.moveaxis(vals, 0, axis)
        idx = jnp.full(vals.shape[axis], at)
    n_ins = jnp.broadcast_shapes(idx.shape, (vals.shape[axis],))[0]
    shape = list(a.shape)
    shape[axis] += n_ins
    out = jnp.zeros_like(a, shape=tuple(shape))  # (staged here, as in JAX)
    idx = jnp.clip(jnp.where(idx < 0, idx + n, idx), 0, n)
    # Inserted value k lands at its position plus the number of values inserted before it
    # (in stable sorted order); the input fills the remaining slots in order.
    order = jnp.argsort(idx, stable=True)
    where_vals = idx.at[order].add(jnp.arange(n_ins, dtype=idx.dtype))
    is_input = jnp.ones(n + n_ins, dtype=bool).at[where_vals].set(False)
    where_input = jnp.nonzero(is_input, size=n)[0]
    lead = (builtins.slice(None),) * axis
    out = out.at[lead + (where_vals,)].set(vals)
    return out.at[lead + (where_input,)].set(a)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """Select the slices of an array along an axis where a condition holds.

    Args:
        condition: a 1-d bool array (shorter than the axis: the rest is dropped).
        a: an array.
        axis: the axis to select along; None (the default) flattens ``a`` first.
        size: the static length of the result, needed under ``jit`` (the count depends on
            the data): shorter results are padded with ``fill_value``, longer ones cut.
        fill_value: the padding value with ``size``.
        out: not supported (must be None).

    Returns:
        The selected slices.

    Example:
        >>> jnp.compress(jnp.array([True, False, True]), jnp.array([[1, 2, 3], [4, 5, 6]]),
        ...              axis=1)
        Array([[1, 3],
               [4, 6]], dtype=int32)
        >>> jnp.compress(jnp.array([True, False, True]), jnp.array([1, 2, 3]), size=3,
        ...              fill_value=-1)
        Array([ 1,  3, -1], dtype=int32)
    """
    check_arraylike("compress", condition, a, fill_value)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = jnp.asarray(condition).astype(bool)
    arr = jnp.asarray(a)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis, arr = 0, jnp.ravel(arr)
    else:
        arr = jnp.moveaxis(arr, axis, 0)
    cond, extra = cond[:arr.shape[0]], cond[arr.shape[0]:]
    arr = arr[:cond.shape[0]]
    if size is None:
        host = _concrete(cond, "The error occurred in jnp.compress(): pass a static size= "
                               "to use it under jit.")
        if np.any(_concrete(extra, "")):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[jnp.asarray(np.nonzero(host)[0])]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = cond.reshape(cond.shape + (1,) * (arr.ndim - 1))
        arr = jnp.where(mask, arr, jnp.asarray(fill_value, dtype=arr.dtype))
        result = arr[jnp.argsort(cond, stable=True, descending=True)][:size]
    return jnp.moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """Return the elements of an array where a condition holds.

    Args:
        condition: an array of ``arr``'s size (nonzero means selected); both are flattened.
        arr: an array.
        size: the static length of the result, needed under ``jit``: shorter results are
            padded with ``fill_value``, longer ones cut.
        fill_value: the padding value with ``size``.

    Returns:
        A 1-d array: ``compress(ravel(condition), ravel(arr))``.

    Example:
        >>> jnp.extract(jnp.array([[True, False], [False, True]]), jnp.array([[1, 2], [3, 4]]))
        Array([1, 4], dtype=int32)
    """
    check_arraylike("extreact", condition, arr, fill_value)
    return compress(jnp.ravel(jnp.asarray(condition)), jnp.ravel(jnp.asarray(arr)),
                    size=size, fill_value=fill_value)


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Build an array by picking, at each position, from one of several arrays.

    Args:
        a: an integer array: which choice to take at each position.
        choices: a sequence of arrays, broadcast together with ``a``.
        out: not supported (must be None).
        mode: what an out-of-range ``a`` does: ``'raise'`` (the default: checked when ``a``
            is concrete; under ``jit`` it cannot be, and raises a ConcretizationTypeError),
            ``'wrap'`` (modulo the number of choices) or ``'clip'``.

    Returns:
        ``out[i...] = choices[a[i...]][i...]``.

    Example:
        >>> jnp.choose(jnp.array([0, 1, 2, 1]), [jnp.array([10, 11, 12, 13]),
        ...            jnp.array([20, 21, 22, 23]), jnp.array([30, 31, 32, 33])])
        Array([10, 21, 32, 23], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    idx = jnp.asarray(a)
    opts = [jnp.asarray(c) for c in choices]
    if not jnp.issubdtype(idx.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(opts)
    if mode == "raise":
        host = _concrete(idx, "The error occurred because jnp.choose was jit-compiled with "
                              "mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if np.any((host < 0) | (host >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = jnp.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    idx, *opts = jnp.broadcast_arrays(idx, *opts)
    stacked = jnp.stack(opts)
    return jnp.take_along_axis(stacked, idx[None], axis=0)[0]


def resize(a: Any, new_shape: Any) -> Any:
    """Return an array of a new shape filled with the repeated values of another.

    Args:
        a: an array; it is flattened.
        new_shape: an int or a tuple of ints (static).

    Returns:
        An array of ``new_shape`` holding ``a``'s flattened values repeated cyclically (zeros
        when ``a`` is empty). Unlike ``reshape``, the sizes need not agree.

    Example:
        >>> jnp.resize(jnp.array([1, 2, 3]), (2, 4))
        Array([[1, 2, 3, 1],
               [2, 3, 1, 2]], dtype=int32)
    """
    check_arraylike("resize", a)
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else \
        tuple(operator.index(d) for d in new_shape)
    if builtins.any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = jnp.ravel(jnp.asarray(a))
    size = math.prod(shape)
    if flat.shape[0] == 0 or size == 0:
        return jnp.zeros(shape, flat.dtype)
    reps = -(-size // flat.shape[0])
    return jnp.tile(flat, reps)[:size].reshape(shape)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move an axis to a new position (prefer ``moveaxis``, whose meaning is simpler).

    Args:
        a: an array.
        axis: the axis to move.
        start: the axis goes just before the axis now at position ``start`` (with ``start``
            <= ``axis``: to position ``start``; with ``start`` > ``axis``: to ``start - 1``).

    Returns:
        ``a`` with its axes reordered (a copy, never a view).

    Example:
        >>> jnp.rollaxis(jnp.zeros((2, 3, 4)), 2).shape
        (4, 2, 3)
        >>> jnp.rollaxis(jnp.zeros((2, 3, 4)), 0, 2).shape
        (3, 2, 4)
    """
    check_arraylike("rollaxis", a)
    arr = jnp.asarray(a)
    nd = arr.ndim
    ax = _axis(axis, nd)
    start = operator.index(start)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > ax:
        start -= 1
    return jnp.moveaxis(arr, ax, start)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """Return a copy of an array with values written at per-position indices along an axis.

    Args:
        arr: an array.
        indices: an integer array, as for ``take_along_axis``.
        values: the values, broadcast against ``indices``.
        axis: the axis to index; None works on the flattened ``arr``.
        inplace: must be False: arrays are immutable, so the updated copy is returned;
            the default True raises ``ValueError``, as in JAX.
        mode: out-of-range handling, as in ``take_along_axis``.

    Returns:
        The updated copy: the positions ``take_along_axis(arr, indices, axis)`` reads now
        hold ``values``.

    Example:
        >>> jnp.put_along_axis(jnp.array([[10, 30, 20]]), jnp.array([[1]]), 0, axis=1,
        ...                    inplace=False)
        Array([[10,  0, 20]], dtype=int32)
    """
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "JAX arraysare immutable. Pass inplace=False to instead return an "
                         "updated array.")
    check_arraylike("put_along_axis", arr, indices, values)
    a, idx, v = jnp.asarray(arr), jnp.asarray(indices), jnp.asarray(values)
    shape = a.shape
    if axis is None:
        a, axis = jnp.ravel(a), 0
    if a.ndim != idx.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={a.ndim} and indices.ndim={idx.ndim}.")
    try:
        v = jnp.broadcast_to(v, idx.shape)
    except ValueError as err:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to "
                         f"'indices'. Got values.shape={v.shape} and "
                         f"indices.shape={idx.shape}.") from err
    ax = _axis(axis, a.ndim)
    # Along `axis` the given indices; along the others each position's own coordinate
    # (broadcast against idx's shape, where a size-1 idx axis means all of a's).
    full_idx = []
    for d in builtins.range(a.ndim):
        if d == ax:
            i = idx
            full_idx.append(jnp.where(i < 0, i + a.shape[ax], i))
        else:
            shp = [1] * a.ndim
            shp[d] = idx.shape[d]
            full_idx.append(jnp.arange(idx.shape[d]).reshape(shp))
    out = a.at[tuple(full_idx)].set(v, mode=mode)
    return out.reshape(shape)


def _cycle_to(v: Any, n: int) -> Any:
    """v (1-D, non-empty) repeated cyclically to length n."""
    return jnp.tile(v, -(-n // v.shape[0]))[:n]


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """Return a copy of an array with the entries under a mask replaced, in order.

    Args:
        arr: an array.
        mask: a bool array of ``arr``'s shape.
        vals: the values for the masked entries, taken in order and repeated cyclically.
        inplace: must be False: arrays are immutable, so the updated copy is returned;
            the default True raises ``ValueError``, as in JAX.

    Returns:
        The updated copy.

    Example:
        >>> jnp.place(jnp.array([1, 2, 3, 4]), jnp.array([True, False, True, True]),
        ...           jnp.array([7, 8]), inplace=False)
        Array([7, 2, 8, 7], dtype=int32)
    """
    check_arraylike("place", arr, mask, vals)
    data, m, v = jnp.asarray(arr), jnp.asarray(mask), jnp.ravel(jnp.asarray(vals))
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    if data.size != m.size:
        raise ValueError("place: arr and mask must be the same size")
    if not v.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    # The k-th true position gets vals[k mod len(vals)]; the padding indices fall off.
    where_true = jnp.nonzero(jnp.ravel(m), size=m.size, fill_value=m.size)[0]
    flat = jnp.ravel(data).at[where_true].set(_cycle_to(v, m.size).astype(data.dtype),
                                              mode="drop")
    return flat.reshape(data.shape)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """Return a copy of an array with values written at flat positions.

    Args:
        a: an array.
        ind: the flat positions (integers).
        v: the values, repeated cyclically to the number of positions.
        mode: out-of-range positions are dropped (None, the default), clipped (``'clip'``)
            or wrapped (``'wrap'``); NumPy's ``'raise'`` is not supported.
        inplace: must be False: arrays are immutable, so the updated copy is returned;
            the default True raises ``ValueError``, as in JAX.

    Returns:
        The updated copy.

    Example:
        >>> jnp.put(jnp.array([1, 2, 3, 4]), jnp.array([0, 2]), jnp.array([9, 8]),
        ...         inplace=False)
        Array([9, 2, 8, 4], dtype=int32)
    """
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    check_arraylike("put", a, ind, v)
    arr, idx, vals = jnp.asarray(a), jnp.ravel(jnp.asarray(ind)), jnp.ravel(jnp.asarray(v))
    if not arr.size or not idx.size or not vals.size:
        return arr
    vals = _cycle_to(vals, idx.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        idx, scatter_mode = jnp.clip(idx, 0, arr.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        idx, scatter_mode = idx % arr.size, "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[jnp.unravel_index(idx, arr.shape)].set(vals.astype(arr.dtype),
                                                         mode=scatter_mode)
