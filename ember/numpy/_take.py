"""`take` and `take_along_axis`, with NumPy's and JAX's index modes.

Input: an array, integer indices and an axis. Output: a gather. Invariants: the default mode
fills out-of-range reads (NaN for floats) as JAX does; "wrap" and "clip" as NumPy.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.lax._slicing import GatherScatterMode
from ember.numpy._index_entries import _Array, _as_array, _Slice
from ember.numpy._indexer import _gather, _wrap_negative
from ember.numpy._jit_wrap import jit_like_jax

__all__ = ["take", "take_along_axis"]


# ---------------------------------------------------------------------------------------------
# take, take_along_axis
# ---------------------------------------------------------------------------------------------

def _index_operand(indices: Any, fname: str) -> Any:
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    if isinstance(indices, (np.ndarray, np.generic, int)) and not isinstance(indices, bool):
        value = np.asarray(indices)
        if dtypes.kind(value.dtype) not in "iu":
            raise TypeError(f"{fname} indices must be integers, got {value.dtype.name}")
        return value.astype(np.int64)
    dt = get_aval(indices).dtype
    if dtypes.kind(dt) not in "iu":
        raise TypeError(f"{fname} indices must be integers, got {dt.name}")
    return indices


def _mode_for_take(mode: Any, fname: str) -> tuple[Any, bool, bool]:
    """(gather mode, wrap negatives once, wrap modulo the size) for take's mode strings."""
    if mode is None or mode == "fill" or mode is GatherScatterMode.FILL_OR_DROP:
        return GatherScatterMode.FILL_OR_DROP, True, False
    if mode == "promise_wrapped":  # (take's fill mode once it wrapped the negatives)
        return GatherScatterMode.FILL_OR_DROP, False, False
    if mode == "promise_in_range":  # (take's wrap mode once it took the indices mod n)
        return GatherScatterMode.PROMISE_IN_BOUNDS, False, False
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{fname} is not supported.")
    if mode == "wrap":
        return GatherScatterMode.PROMISE_IN_BOUNDS, False, True
    if mode == "clip" or mode is GatherScatterMode.CLIP:
        return GatherScatterMode.CLIP, False, False
    if mode == "promise_in_bounds" or mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        return GatherScatterMode.PROMISE_IN_BOUNDS, True, False
    raise ValueError(f"Invalid mode '{mode}' for np.{fname}")


def _mod_index(value: Any, size: int) -> Any:
    """value mod size, in [0, size) (NumPy's 'wrap')."""
    if isinstance(value, np.ndarray):
        return np.mod(value, size)
    r = lax.rem(value, lax.convert_element_type(size, get_aval(value).dtype))
    if dtypes.kind(get_aval(value).dtype) == "u":
        return r
    return lax.select_n(lax.lt(r, 0), r, lax.add(r, size))


def _take_on_axis(a: Any, idx_entry: Any, axis: int, fname: str, mode: Any,
                  fill_value: Any, unique_indices: bool = False,
                  indices_are_sorted: bool = False, other: list[Any] | None = None) -> Any:
    gmode, normalize, wrap = _mode_for_take(mode, fname)
    size = get_aval(a).shape[axis]
    if wrap:
        if size == 0:
            raise IndexError(f"Cannot do a non-empty jnp.{fname}() from an empty axis.")
        idx_entry = _mod_index(idx_entry, size)
    entries = list(other) if other is not None else [_Slice(0, s, 1)
                                                     for s in get_aval(a).shape]
    entries[axis] = _Array(idx_entry)
    if size == 0 and int(np.prod(entries[axis].shape, dtype=np.int64)):
        raise IndexError(f"Cannot do a non-empty jnp.{fname}() from an empty axis.")
    return _gather(a, entries, mode=gmode, fill_value=fill_value,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   normalize=normalize)


def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Take the elements of an array at given indices along an axis.

    Args:
        a: an array of at least one dimension.
        indices: an integer array (or nested sequence) of positions; its shape replaces
            ``axis`` in the result.
        axis: the axis to index. None (the default) indexes the flattened array.
        out: not supported (must be None), as in JAX.
        mode: what an out-of-range index does. None or ``'fill'`` (the default) gives
            ``fill_value`` there, negative in-range indices counting from the end;
            ``'clip'`` clamps into range (negatives go to 0); ``'wrap'`` wraps modulo the
            size. ``'raise'`` is not supported: unlike NumPy, an error cannot depend on
            the values of traced indices.
        unique_indices: a promise that the indices do not repeat (a hint, unchecked).
        indices_are_sorted: a promise that the indices are sorted (a hint, unchecked).
        fill_value: the value of out-of-range positions in ``'fill'`` mode; the default
            is NaN for inexact dtypes, the most negative value for signed integers, the
            largest for unsigned ones and True for bool.

    Returns:
        ``a``'s elements at ``indices``, with ``a``'s dtype and shape
        ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    Example:
        >>> x = jnp.array([10.0, 20.0, 30.0])
        >>> jnp.take(x, jnp.array([2, 0, 5]))
        Array([30., 10., nan], dtype=float32)
        >>> jnp.take(x, jnp.array([2, 0, 5]), mode='clip')
        Array([30., 10., 30.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    # (under a trace: one jit[name=_take] equation with the options static, as in JAX;
    # a list of indices enters it as one array, not as a list of scalars)
    return _take(a, _index_operand(indices, "take"), axis=axis, mode=mode,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 fill_value=fill_value)


@jit_like_jax("_take", static_argnames=("axis", "mode", "unique_indices",
                                         "indices_are_sorted", "fill_value"))
def _take(a: Any, indices: Any, axis: int | None, mode: Any, unique_indices: bool,
          indices_are_sorted: bool, fill_value: Any) -> Any:
    a = _as_array(a)
    idx = _index_operand(indices, "take")
    if axis is None:
        a = lax.reshape(a, (get_aval(a).size,))
        axis = 0
    ndim = get_aval(a).ndim
    if ndim == 0:
        raise ValueError("take: the array must have at least one dimension (axis=None "
                         "flattens it)")
    axis = _canonical_axis(axis, ndim)
    gmode = _mode_for_take(mode, "take")[0]
    if gmode is GatherScatterMode.FILL_OR_DROP and not isinstance(idx, np.ndarray):
        # Negative indices count from the end: wrapped here through jnp.where (JAX's
        # staging), so the gather does not wrap them again.
        from ember.numpy._manipulation import where
        from ember.numpy._ufuncs import add, less
        size = get_aval(a).shape[axis]
        idx = where(less(idx, 0), add(idx, size), idx)
        mode = "promise_wrapped"
    elif mode == "wrap" and not isinstance(idx, np.ndarray) and get_aval(a).shape[axis]:
        # (jnp.remainder by the size as a strongly typed constant, as JAX stages it)
        from ember.numpy._ufuncs import remainder
        idx = remainder(idx, np.array(get_aval(a).shape[axis], get_aval(idx).dtype))
        mode = "promise_in_range"
    return _take_on_axis(a, idx, axis, "take", mode, fill_value, unique_indices,
                         indices_are_sorted)


def _canonical_axis(axis: Any, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None, *, wrap_negative_indices: bool | None = None
                    ) -> Any:
    """Take the elements of an array at per-position indices along one axis.

    The result holds ``out[..., i, ...] = arr[..., indices[..., i, ...], ...]`` with ``i``
    at ``axis``: the natural partner of ``argsort``, ``argmax`` with ``keepdims`` and the
    like.

    Args:
        arr: an array.
        indices: an integer array with ``arr``'s number of dimensions; along the other
            axes it broadcasts with ``arr``.
        axis: the axis to index; None indexes the flattened ``arr`` (then ``indices``
            must be 1-d).
        mode: out-of-range handling, as in ``jnp.take`` (by default such positions give
            ``fill_value``; unlike NumPy, nothing raises). As in JAX, negative indices
            count from the end first, in every mode but ``'promise_in_bounds'``; then
            ``'clip'`` clamps into range and ``'wrap'`` (Ember's, as ``jnp.take``'s) takes
            the index modulo the axis length.
        fill_value: the value of out-of-range positions, as in ``jnp.take``.
        wrap_negative_indices: whether negative indices count from the end; None (the
            default) means yes unless ``mode='promise_in_bounds'``, as in JAX.

    Returns:
        An array of ``arr``'s dtype, with the broadcast shape and ``indices``' length at
        ``axis``.

    Example:
        >>> a = jnp.array([[3, 1, 2], [9, 7, 8]])
        >>> jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1)
        Array([[1, 2, 3],
               [7, 8, 9]], dtype=int32)
    """
    a = _as_array(arr)
    idx = _index_operand(indices, "take_along_axis")
    _mode_for_take(mode, "take_along_axis")  # (an unknown mode, or 'raise', fails here)
    if not isinstance(fill_value, (np.ndarray, list)):
        # As JAX 0.10.2 stages it in every mode: jit[take_along_axis] of a gather whose
        # matching dimensions are batching dimensions (no iota index columns)
        if isinstance(idx, np.ndarray):
            import ember.numpy as jnp
            idx = jnp.asarray(idx.astype(np.int64))
        return _take_along_axis_batched(a, idx, axis=axis, mode=mode, fill_value=fill_value,
                                        wrap_negative_indices=wrap_negative_indices)
    # An array fill_value (Ember's extension; JAX's must be a static scalar): one gather
    # with explicit iota index columns for the other dimensions.
    if wrap_negative_indices is False:
        raise NotImplementedError("take_along_axis: wrap_negative_indices=False with an "
                                  "array fill_value")
    idx_shape = idx.shape if isinstance(idx, np.ndarray) else get_aval(idx).shape
    if axis is None:
        a, axis = _flat_for_axis_none(a, idx_shape)
    shape = get_aval(a).shape
    if len(idx_shape) != len(shape):
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{len(idx_shape)} vs. {len(shape)}")
    axis = _canonical_axis(axis, len(shape))
    for d, (s, t) in enumerate(zip(shape, idx_shape)):
        if d != axis and s != t and 1 not in (s, t):
            raise ValueError(f"indices and arr shapes are not broadcast-compatible: "
                             f"{idx_shape} vs. {shape}")
    # Every other dim d is read through iota(shape[d]) aligned on dim d, so all index arrays
    # broadcast to the result shape and the gather collapses every operand dim.
    rank = len(shape)
    other: list[Any] = []
    for d, s in enumerate(shape):
        line = np.arange(s, dtype=np.int64).reshape([s if i == d else 1 for i in range(rank)])
        other.append(_Array(line))
    return _take_on_axis(a, idx, axis, "take_along_axis", mode, fill_value, other=other)


def _flat_for_axis_none(a: Any, idx_shape: tuple[int, ...]) -> tuple[Any, int]:
    """take_along_axis with axis=None: the array flattened, read along axis 0 by a 1-D
    index."""
    if len(idx_shape) != 1:
        raise ValueError(f"when axis=None, `indices` must have a single dimension, got "
                         f"shape {idx_shape}")
    return lax.reshape(a, (get_aval(a).size,)), 0


@jit_like_jax("take_along_axis", static_argnames=("axis", "mode", "fill_value",
                                                 "wrap_negative_indices"))
def _take_along_axis_batched(a: Any, idx: Any, axis: Any, mode: Any, fill_value: Any,
                             wrap_negative_indices: bool | None) -> Any:
    """take_along_axis by one gather: the index's axis is the gathered one, a dimension
    where the index has length 1 is taken whole (an offset dimension), one where the array
    has length 1 is squeezed away, and the others pair array and index dimensions as
    batching dimensions. Negative indices are wrapped first unless the mode is
    'promise_in_bounds' (JAX's legacy default); 'wrap' then takes them mod the length."""
    idx_shape = get_aval(idx).shape
    if axis is None:
        a, axis = _flat_for_axis_none(a, idx_shape)
    shape = get_aval(a).shape
    rank = len(shape)
    if len(idx_shape) != rank:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{len(idx_shape)} vs. {rank}")
    axis = _canonical_axis(axis, rank)
    arr_shape = tuple(1 if d == axis else s for d, s in enumerate(shape))
    for s, t in zip(arr_shape, idx_shape):
        if s != t and 1 not in (s, t):
            raise ValueError(f"indices and arr shapes are not broadcast-compatible: "
                             f"{idx_shape} vs. {shape}")
    out_shape = tuple(max(s, t) if 0 not in (s, t) else 0
                      for s, t in zip(arr_shape, idx_shape))
    size = shape[axis]
    gmode, _, wrap = _mode_for_take(mode, "take_along_axis")
    if size == 0:
        if wrap and int(np.prod(out_shape)):
            raise IndexError("Cannot do a non-empty jnp.take_along_axis() from an empty "
                             "axis.")
        return lax.full(out_shape, 0, get_aval(a).dtype)
    # As JAX: the indices in the smallest signed type that holds the axis's positions
    # (unsigned ones too), then negative ones count from the end
    it = np.dtype(np.int64 if size > np.iinfo(np.int32).max else np.int32)
    if get_aval(idx).dtype != it:
        idx = lax.convert_element_type(idx, it)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap:
        idx = _mod_index(idx, size)  # (NumPy's 'wrap': every index taken mod the length)
    elif wrap_negative_indices:
        idx = _wrap_negative(idx, size)  # (negative indices count from the end)
    index_dims = [d for d, t in enumerate(idx_shape) if d == axis or t != 1]
    idx = lax.reshape(idx, tuple(out_shape[d] for d in index_dims) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
    obatch, ibatch, squeeze = [], [], []
    new_d = j = 0
    for d in range(rank):
        if d == axis:
            slice_sizes.append(1)
            start_index_map.append(new_d)
            collapsed.append(new_d)
            new_d += 1
            j += 1
        elif idx_shape[d] == 1:
            offset_dims.append(d)
            slice_sizes.append(arr_shape[d])
            new_d += 1
        elif arr_shape[d] == 1:
            squeeze.append(d)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[d] == 0 else 1)
            obatch.append(new_d)
            ibatch.append(j)
            new_d += 1
            j += 1
    a = lax.squeeze(a, squeeze)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(obatch),
        start_indices_batching_dims=tuple(ibatch))
    return lax.gather(a, idx, dnums, tuple(slice_sizes), mode=gmode,
                      fill_value=fill_value if gmode is GatherScatterMode.FILL_OR_DROP
                      else None)
