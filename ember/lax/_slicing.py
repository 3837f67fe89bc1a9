"""The lax functions for slicing, padding, concatenation, dynamic slices, gather and scatter.

Input: arrays, tracers, NumPy values and Python scalars, with static Python ints for shapes,
bounds and dimension numbers. Output: the result of one primitive (ember/prims/slicing.py,
ember/prims/gather_scatter.py) or of a short composition of them, as `jax.lax` builds it.
Invariants: weakly typed operands (Python scalars) take the dtype of the others, as
elsewhere in ember.lax; dynamic start indices may be negative and count from the end
(`allow_negative_indices=True`, JAX's default), which stages JAX's
`lt i 0; add i d; select_n` before the primitive; gathers default to PROMISE_IN_BOUNDS
(clamped) and scatters to FILL_OR_DROP (out-of-bounds windows dropped), as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.trace import get_aval
from ember.lax._base import aval_of, convert_element_type, to_common_dtype
from ember.lax._ops import add, lt, select_n, squeeze
from ember.lax._ops import full as _full
from ember.lax._ops import reshape as _reshape
from ember.prims import gather_scatter as G
from ember.prims import slicing as P
from ember.prims.gather_scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from ember.prims.split import split_p
from ember.prims.stacking import stack_p, tile_p, unstack_p

__all__ = [
    "slice", "slice_in_dim", "index_in_dim", "pad", "concatenate", "split", "stack", "unstack",
    "tile", "dynamic_slice",
    "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "gather", "scatter",
    "scatter_add", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply",
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
]


def _ints(xs: Sequence[Any], what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(x) for x in xs)
    except TypeError as e:
        raise TypeError(f"{what} must be static integers, got {tuple(xs)!r} ({e})") from None


def _ints_as_given(xs: Sequence[Any], what: str) -> tuple[Any, ...]:
    """Static integers, a NumPy integer kept as it is: JAX keeps jnp.pad's np.int64 widths
    in the equation, and its text prints them as `np.int64(2)`."""
    _ints(xs, what)
    return tuple(x if isinstance(x, np.integer) else operator.index(x) for x in xs)


# ---------------------------------------------------------------------------------------------
# Static slices and padding.
# ---------------------------------------------------------------------------------------------

def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """operand[start:limit:stride] along every dimension (static, in-bounds bounds)."""
    return P.slice_p.bind(operand, start_indices=_ints(start_indices, "slice start_indices"),
                          limit_indices=_ints(limit_indices, "slice limit_indices"),
                          strides=None if strides is None else _ints(strides, "slice strides"))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """lax.slice along one axis; None bounds mean the ends, negative bounds count from the
    end (a Python slice's start and stop, without clipping)."""
    shape = aval_of(operand).shape
    axis = operator.index(axis)
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, None if stride == 1 else strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """operand[..., index, ...] at a static index along `axis` (negative counts from the end)."""
    size = aval_of(operand).shape[axis]
    index = operator.index(index)
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def pad(operand: Any, padding_value: Any,
        padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad with a scalar: (low, high, interior) per dimension; negative low/high crop."""
    config = tuple(_ints_as_given(c, "pad padding_config") for c in padding_config)
    operand, padding_value = to_common_dtype(operand, padding_value)
    return P.pad_p.bind(operand, padding_value, padding_config=config)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Cut `operand` along `axis` into consecutive pieces of the given `sizes` (non-negative,
    summing to the axis length); the inverse of concatenate."""
    ndim = aval_of(operand).ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return split_p.bind(operand, sizes=_ints_as_given(sizes, "split sizes"),
                        axis=axis % ndim)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of one shape and dtype along a new axis `axis` (0 <= axis <= ndim, or
    negative from the end of the result's axes)."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack requires at least one operand")
    ndim = aval_of(operands[0]).ndim + 1
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return stack_p.bind(*to_common_dtype(*operands), axis=axis % ndim)


def unstack(operand: Any, axis: int = 0) -> list[Any]:
    """The slices of `operand` along `axis`, that axis removed (the inverse of stack)."""
    ndim = aval_of(operand).ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return unstack_p.bind(operand, axis=axis % ndim)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`operand` repeated reps[i] times along each axis i (one non-negative count per axis)."""
    return tile_p.bind(operand, reps=_ints(reps, "tile reps"))


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join arrays of one dtype along `dimension` (a single operand is returned as is)."""
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return P.concatenate_p.bind(*to_common_dtype(*operands),
                                dimension=operator.index(dimension))


# ---------------------------------------------------------------------------------------------
# Dynamic slices.
# ---------------------------------------------------------------------------------------------

def _split_indices(start_indices: Any) -> list[Any]:
    """A sequence of scalar indices, or a 1-D index array split into scalars."""
    if isinstance(start_indices, (list, tuple)):
        return list(start_indices)
    aval = get_aval(start_indices)
    if aval.ndim != 1:
        raise TypeError(f"dynamic slice start_indices must be a sequence of scalars or a 1-D "
                        f"array, got shape {aval.shape}")
    return [squeeze(slice(start_indices, [i], [i + 1]), (0,)) for i in range(aval.shape[0])]


def _dynamic_slice_indices(operand_shape: tuple[int, ...], start_indices: Any,
                           allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """Scalar start indices of one integer dtype, negatives wrapped once (i < 0 -> i + d)."""
    indices = _split_indices(start_indices)
    if len(indices) != len(operand_shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(indices)} vs {len(operand_shape)})")
    if isinstance(allow_negative_indices, bool):
        allow = [allow_negative_indices] * len(indices)
    else:
        allow = [bool(a) for a in allow_negative_indices]
    out = []
    for i, d, neg in zip(indices, operand_shape, allow):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            # A static index is wrapped in Python: no equation is staged for it.
            out.append(int(i) + d if neg and i < 0 else int(i))
            continue
        aval = get_aval(i)
        if aval.shape != () or dtypes.kind(aval.dtype) not in "iu":
            raise TypeError(f"dynamic slice indices must be integer scalars, got "
                            f"{aval.str_short()}")
        if neg and dtypes.kind(aval.dtype) == "i":
            # JAX's wrap: select(i < 0, i + d, i), staged as lt, add, select_n.
            is_neg = lt(i, 0)
            i = select_n(is_neg, i, add(i, d))
        out.append(i)
    return _common_index_dtype(out)


def _common_index_dtype(indices: list[Any]) -> list[Any]:
    if not indices:
        return indices
    avals = [get_aval(i) for i in indices]
    strong = {a.dtype for a in avals if not a.weak_type}
    if len(strong) > 1:
        target, _ = dtypes.promote(*[(dt, False) for dt in strong])
        return [convert_element_type(i, target) for i in indices]
    return to_common_dtype(*indices)


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """A window of static `slice_sizes` at dynamic starts, clamped so it fits."""
    shape = aval_of(operand).shape
    starts = _dynamic_slice_indices(shape, start_indices, allow_negative_indices)
    return P.dynamic_slice_p.bind(operand, *starts,
                                  slice_sizes=_ints(slice_sizes, "slice_sizes"))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """operand with `update` written at dynamic starts, clamped so it fits."""
    shape = aval_of(operand).shape
    starts = _dynamic_slice_indices(shape, start_indices, allow_negative_indices)
    operand, update = to_common_dtype(operand, update)
    return P.dynamic_update_slice_p.bind(operand, update, *starts)


def _zero_index_like(index: Any) -> Any:
    if isinstance(index, (int, np.integer)):
        return 0
    # (a NumPy scalar of the index's dtype, as JAX passes: static, so no equation is staged
    # to wrap it)
    return np.dtype(get_aval(index).dtype).type(0)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0,
                         allow_negative_indices: bool = True) -> Any:
    """dynamic_slice along one axis (the other axes taken whole)."""
    shape = aval_of(operand).shape
    starts: list[Any] = [_zero_index_like(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True,
                         allow_negative_indices: bool = True) -> Any:
    """operand[..., index, ...] at a dynamic (clamped) index along `axis`."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int,
                                allow_negative_indices: bool = True) -> Any:
    """dynamic_update_slice along one axis."""
    ndim = aval_of(operand).ndim
    starts: list[Any] = [_zero_index_like(start_index)] * ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int,
                                allow_negative_indices: bool = True) -> Any:
    """Write `update` (with or without the indexed axis) at a dynamic index along `axis`."""
    op_aval, up_aval = aval_of(operand), aval_of(update)
    axis = operator.index(axis)
    if up_aval.ndim == op_aval.ndim - 1:
        shape = list(up_aval.shape)
        shape.insert(axis, 1)
        update = _reshape(update, shape)
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices)


# ---------------------------------------------------------------------------------------------
# Gather and scatter.
# ---------------------------------------------------------------------------------------------

def _canonical_gather_dnums(d: Any) -> GatherDimensionNumbers:
    if not isinstance(d, GatherDimensionNumbers):
        raise TypeError(f"gather dimension_numbers must be a lax.GatherDimensionNumbers, got "
                        f"{type(d).__name__}")
    return GatherDimensionNumbers(*(tuple(int(i) for i in f) for f in d))


def _canonical_scatter_dnums(d: Any) -> ScatterDimensionNumbers:
    if not isinstance(d, ScatterDimensionNumbers):
        raise TypeError(f"scatter dimension_numbers must be a lax.ScatterDimensionNumbers, got "
                        f"{type(d).__name__}")
    return ScatterDimensionNumbers(*(tuple(int(i) for i in f) for f in d))


def _as_index_array(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return x


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Any:
    """XLA's gather (see ember/prims/gather_scatter.py). mode None is PROMISE_IN_BOUNDS
    (clamped); 'fill' returns fill_value (default: NaN, INT_MIN, UINT_MAX or True) for
    windows that do not fit."""
    parsed = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    dtype = aval_of(operand).dtype
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = G.default_fill_value(dtype)
        elif hasattr(fill_value, "_ember_value"):
            fill_value = fill_value._ember_value().item()
        elif isinstance(fill_value, np.ndarray | np.generic):
            fill_value = fill_value.item()
    else:
        fill_value = None
    return G.gather_p.bind(operand, _as_index_array(start_indices),
                           dimension_numbers=_canonical_gather_dnums(dimension_numbers),
                           slice_sizes=_ints(slice_sizes, "gather slice_sizes"),
                           indices_are_sorted=bool(indices_are_sorted),
                           unique_indices=bool(unique_indices), mode=parsed,
                           fill_value=fill_value)


def _scatter(prim: Any, operand: Any, scatter_indices: Any, updates: Any,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: str | GatherScatterMode | None,
             update_jaxpr: Any = None, update_consts: tuple = ()) -> Any:
    operand, updates = to_common_dtype(operand, updates)
    if update_jaxpr is None:
        update_jaxpr = G.combiner_jaxpr(prim, aval_of(operand).dtype)
    return prim.bind(operand, _as_index_array(scatter_indices), updates,
                     dimension_numbers=_canonical_scatter_dnums(dimension_numbers),
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode),
                     update_jaxpr=update_jaxpr, update_consts=update_consts)


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> Any:
    """Scatter-update: updates replace operand values (the last duplicate wins)."""
    return _scatter(G.scatter_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_add(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None
                ) -> Any:
    """Scatter with addition (duplicates accumulate)."""
    return _scatter(G.scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_mul(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None
                ) -> Any:
    """Scatter with multiplication (duplicates accumulate)."""
    return _scatter(G.scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_min(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None
                ) -> Any:
    """Scatter with minimum (NaN propagates, as lax.min)."""
    return _scatter(G.scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_max(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: str | GatherScatterMode | None = None
                ) -> Any:
    """Scatter with maximum (NaN propagates, as lax.max)."""
    return _scatter(G.scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode: str | GatherScatterMode | None = None
                  ) -> Any:
    """operand with func applied at the scattered positions (once per duplicate), as JAX:
    a `scatter` whose update_jaxpr is `lambda x, _: func(x)` on scalars, with unused
    zero updates of `update_shape`."""
    from ember.core.staging import trace_to_jaxpr
    aval = aval_of(operand)
    scalar = aval.update(shape=(), weak_type=False)
    closed, _ = trace_to_jaxpr(lambda x, _: [convert_element_type(func(x), aval.dtype)],
                               [scalar, scalar])
    unused = _full(tuple(update_shape), 0, aval.dtype)
    return _scatter(G.scatter_p, operand, scatter_indices, unused, dimension_numbers,
                    indices_are_sorted, unique_indices, mode, update_jaxpr=closed.jaxpr,
                    update_consts=tuple(closed.consts))
