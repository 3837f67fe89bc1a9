"""`ember.ops`: segment reductions, as `jax.ops` (segment_sum, segment_prod, segment_max,
segment_min).

Input: `data` (an array whose leading axis is indexed by `segment_ids`) and `segment_ids`
(integers, usually one per row of `data`). Output: an array of shape
`(num_segments,) + data.shape[1:]` where row `s` combines every row of `data` whose id is
`s` (as `out.at[segment_ids].add(data)` would, so ids of higher rank broadcast `data` as
JAX's indexing does):

    out[s] = reduce(op, [data[i] for i where segment_ids[i] == s], identity)

Each is one scatter (`scatter-add`, `scatter-mul`, `scatter-max`, `scatter-min`) into an
array filled with the operation's identity (0, 1, the dtype's lowest / highest value or
-inf / inf, False / True for bools), so an empty segment holds the identity. Ids are used
as they are, never wrapped: a negative id or one >= num_segments is dropped under the
default mode (FILL_OR_DROP), as in JAX. `num_segments` must be static (a Python int); when
it is None it is `max(segment_ids) + 1`, which needs concrete ids (outside jit).
`bucket_size` splits the ids into buckets of that many consecutive entries, scatters each
bucket into its own row of a `(num_buckets, num_segments, ...)` array and reduces over the
buckets: the same result, computed as JAX computes it (shorter scatter chains per row).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.core import dtypes
from ember.core.trace import Tracer

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(op: str, dtype: np.dtype) -> Any:
    """The value an empty segment holds: op's identity in `dtype`."""
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if dtype == np.bool_:
        return op == "min"
    if dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return int(info.max if op == "min" else info.min)
    return float("inf") if op == "min" else float("-inf")


_SCATTERS: dict[str, Callable[..., Any]] = {
    "add": lax.scatter_add, "mul": lax.scatter_mul, "max": lax.scatter_max,
    "min": lax.scatter_min}
_REDUCERS: dict[str, Callable[..., Any]] = {
    "add": jnp.sum, "mul": jnp.prod, "max": jnp.max, "min": jnp.min}


def _num_segments(name: str, num_segments: Any, segment_ids: Any) -> int:
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            raise segment_ids._trace.concretization_error(
                segment_ids, f"{name}() `num_segments` argument (it is max(segment_ids) + 1 "
                "when not given: pass num_segments as a static Python int under jit)")
        num_segments = int(np.max(np.asarray(segment_ids))) + 1
    if isinstance(num_segments, Tracer):
        raise num_segments._trace.concretization_error(
            num_segments, f"{name}() `num_segments` argument")
    num_segments = operator.index(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment(name: str, op: str, data: Any, segment_ids: Any, num_segments: Any,
             indices_are_sorted: bool, unique_indices: bool, bucket_size: int | None,
             mode: Any) -> Any:
    for arg, what in ((data, "data"), (segment_ids, "segment_ids")):
        if isinstance(arg, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(arg)} "
                            f"at position {0 if what == 'data' else 1}.")
    data = jnp.asarray(data)
    ids = jnp.asarray(segment_ids)
    if not dtypes.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {ids.dtype}")
    dtype = data.dtype
    n = _num_segments(name, num_segments, segment_ids)
    k = ids.ndim
    # out[ids] = data, with JAX's indexing rules: out has one row per segment, each of
    # data's row shape, and `data` broadcasts against out[ids]'s shape ids.shape + row.
    row = data.shape[1:]
    fill = _identity(op, dtype)
    scatter = _SCATTERS[op]
    if bucket_size is None:
        out = lax.full((n, *row), fill, dtype)
        # indices[..., 0] = ids: one scalar index per update row, into out's axis 0
        indices = lax.broadcast_in_dim(ids, (*ids.shape, 1), tuple(range(k)))
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(range(k, k + len(row))), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,))
        updates = jnp.broadcast_to(data, (*ids.shape, *row))
        return scatter(out, indices, updates, dnums, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)
    if k != 1:
        raise ValueError(f"{name}: bucket_size needs one-dimensional segment_ids, got shape "
                         f"{ids.shape}")
    bucket_size = operator.index(bucket_size)
    if bucket_size <= 0:
        raise ValueError(f"{name}: bucket_size must be positive, got {bucket_size}")
    count = ids.shape[0]
    buckets = -(-count // bucket_size)
    out = lax.full((buckets, n, *row), fill, dtype)
    # entry i goes to (bucket i // bucket_size, segment ids[i])
    bucket_of = lax.div(lax.iota(ids.dtype, count), np.asarray(bucket_size, ids.dtype))
    indices = lax.concatenate([lax.broadcast_in_dim(bucket_of, (count, 1), (0,)),
                               lax.broadcast_in_dim(ids, (count, 1), (0,))], 1)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, 1 + len(row))), inserted_window_dims=(0, 1),
        scatter_dims_to_operand_dims=(0, 1))
    out = scatter(out, indices, data, dnums, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    # (the identity as `initial` keeps zero buckets, i.e. no ids, well defined)
    initial = fill if op in ("max", "min") else None
    return _REDUCERS[op](out, axis=0, initial=initial).astype(dtype)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """Sum of the rows of `data` in each segment (as jax.ops.segment_sum).

    Args:
      data: the values; its leading axis is indexed by `segment_ids`.
      segment_ids: integer ids, one per row of `data`.
      num_segments: static number of segments; None: `max(segment_ids) + 1` (concrete ids
        only).
      indices_are_sorted: promise that the ids are sorted (passed to the scatter).
      unique_indices: promise that no id repeats (passed to the scatter).
      bucket_size: compute per bucket of this many ids, then reduce the buckets.
      mode: the scatter's out-of-bounds mode; None: FILL_OR_DROP (out-of-range and
        negative ids are dropped).

    Returns:
      An array of `data`'s dtype and shape `(num_segments,) + data.shape[1:]`;
      an empty segment is 0.

    Example:
      >>> segment_sum(jnp.arange(5), jnp.array([0, 0, 1, 1, 2]), 3)
      Array([1, 5, 4], dtype=int32)
    """
    return _segment("segment_sum", "add", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Any:
    """Product of the rows of `data` in each segment (as jax.ops.segment_prod); an empty
    segment is 1. Arguments as :func:`segment_sum`."""
    return _segment("segment_prod", "mul", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """Maximum of the rows of `data` in each segment (as jax.ops.segment_max); an empty
    segment is -inf (the dtype's lowest integer, False for bools). Arguments as
    :func:`segment_sum`."""
    return _segment("segment_max", "max", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """Minimum of the rows of `data` in each segment (as jax.ops.segment_min); an empty
    segment is inf (the dtype's highest integer, True for bools). Arguments as
    :func:`segment_sum`."""
    return _segment("segment_min", "min", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
