"""Index expressions normalized to one entry per operand dim, and static slicing.

Input: a NumPy index expression and the indexed shape. Output: `_parse` gives a list of
entries (`_None`, `_Int`, `_Slice`, `_Array`) with the unit axes a scalar boolean adds;
`_basic_take` stages what only static ints, slices and None need (`slice`, `rev`,
`squeeze`, `broadcast_in_dim`). Invariants: negative static ints are wrapped here; traced
values stay traced; boolean masks must be concrete (their result shape depends on them).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import lax
from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.errors import NonConcreteBooleanIndexError
from ember.core.trace import Tracer, get_aval

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


# ---------------------------------------------------------------------------------------------
# Index entries: an index expression normalized to one entry per operand dim (plus None).
# ---------------------------------------------------------------------------------------------

class _None:
    """A new axis of size 1."""


class _Int:
    """A static integer (not yet wrapped); `dtype` is a NumPy integer's canonical dtype,
    None for a Python int (a weakly typed index in JAX)."""

    def __init__(self, value: int, dtype: np.dtype | None = None):
        self.value = value
        self.dtype = dtype


class _Slice:
    """A static slice, resolved against its dim: start, stop, step as range() takes them."""

    def __init__(self, start: int, stop: int, step: int):
        self.start, self.stop, self.step = start, stop, step
        self.size = len(range(start, stop, step))


class _Array:
    """An integer index array: a NumPy array (static) or an Array / tracer (dynamic).

    `source` says how a static one reached the index expression, for the text JAX stages
    for it under a trace: "list" (a Python sequence, an array constant in JAX), "numpy"
    (a NumPy array) or None (built by Ember itself: nothing staged). `source_dtype` is the
    user's index dtype, canonicalized (the value itself is held as int64)."""

    def __init__(self, value: Any, source: str | None = None,
                 source_dtype: np.dtype | None = None):
        self.value = value
        self.static = isinstance(value, np.ndarray)
        self.shape = value.shape if self.static else get_aval(value).shape
        self.source = source
        self.source_dtype = source_dtype


def _is_dynamic(x: Any) -> bool:
    return isinstance(x, (Tracer, ArrayImpl))


def _as_array(x: Any) -> Any:
    """An ember value for x (Arrays and tracers pass through, NumPy values are converted)."""
    if _is_dynamic(x):
        return x
    aval = get_aval(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    value = np.asarray(x) if isinstance(x, (list, tuple)) else x
    return lax.convert_element_type(value, aval.dtype, aval.weak_type)


def _static_slice_part(v: Any, what: str, s: slice) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tracer):
        raise IndexError(
            f"Array slice indices must have static start/stop/step to be used with NumPy "
            f"indexing syntax. Found slice({s.start}, {s.stop}, {s.step}) with a traced {what}. "
            f"To index a statically sized array at a dynamic position, try "
            f"lax.dynamic_slice/dynamic_update_slice (Ember, like JAX, does not support "
            f"dynamically sized arrays within jit compiled functions).")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"slice indices must be integers or None, got {v!r} as the {what} of "
                        f"{s!r}") from None


def _mask_value(x: Any) -> np.ndarray:
    """The concrete value of a boolean index, or NonConcreteBooleanIndexError."""
    if isinstance(x, Tracer):
        raise NonConcreteBooleanIndexError(
            f"Array boolean indices must be concrete; got {x.aval.str_short()}. A boolean "
            f"mask selects a number of elements that depends on its values, and inside jit "
            f"shapes must be static. Use ember.numpy.where(mask, x, fill) to keep the shape, "
            f"or compute the mask outside jit (a concrete mask works under jit too).")
    if isinstance(x, ArrayImpl):
        return np.asarray(x)
    return np.asarray(x, dtype=bool)


def _classify(item: Any) -> Any:
    """One raw index item -> None / Ellipsis / slice / _Int / ('mask', ndarray) / _Array."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        return slice(_static_slice_part(item.start, "start", item),
                     _static_slice_part(item.stop, "stop", item),
                     _static_slice_part(item.step, "step", item))
    if isinstance(item, (bool, np.bool_)):
        return ("mask", np.asarray(item, dtype=bool))
    if isinstance(item, (int, np.integer)):
        return _Int(int(item), None if isinstance(item, int)
                    else dtypes.canonicalize(np.asarray(item).dtype))
    source = "numpy"
    if isinstance(item, (list, tuple)):
        source = "list"
        try:
            item = np.asarray(item)
        except Exception:  # a sequence holding tracers: let ember.numpy stack it
            from ember import numpy as jnp
            item = jnp.asarray(item)
        if isinstance(item, np.ndarray) and item.dtype == object:
            raise TypeError(f"Indexer must be an integer or boolean array, or a sequence of "
                            f"them; got a sequence that is not a rectangular array: {item!r}")
        if isinstance(item, np.ndarray) and item.size == 0 and dtypes.kind(item.dtype) == "f":
            item = item.astype(np.int64)  # `[]` is an empty integer index, as in NumPy
    if isinstance(item, (np.ndarray, np.generic)) or _is_dynamic(item):
        dtype = item.dtype if isinstance(item, (np.ndarray, np.generic)) else get_aval(item).dtype
        if dtypes.kind(dtype) == "b":
            return ("mask", _mask_value(item))
        if dtypes.kind(dtype) not in "iu":
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                            f"{dtype.name}.")
        if isinstance(item, (np.ndarray, np.generic)):
            arr = np.asarray(item)
            if arr.ndim == 0:
                return _Int(int(arr), dtypes.canonicalize(arr.dtype))
            return _Array(arr.astype(np.int64), source, dtypes.canonicalize(arr.dtype))
        return _Array(item)
    if hasattr(item, "__jax_array__"):
        return _classify(item.__jax_array__())
    raise TypeError(f"Indexing with an object of type {type(item).__name__} is not supported: "
                    f"use integers, slices, None, Ellipsis, or integer or boolean arrays. Got "
                    f"{item!r}.")


def _parse(idx: Any, shape: tuple[int, ...]) -> tuple[list[Any], tuple[int, ...]]:
    """Normalize an index against `shape`.

    Returns the entries (one per operand dim, plus _None) and the positions where scalar
    booleans insert a unit axis into the operand (NumPy treats `True` as a mask over a new
    axis of size 1, so x[True] has shape (1, *x.shape) and x[False] (0, *x.shape)).
    """
    items = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def consumed(i: Any) -> int:
        if i is None or i is Ellipsis:
            return 0
        if isinstance(i, tuple):
            return i[1].ndim
        return 1

    used = sum(consumed(i) for i in items)
    if used > len(shape):
        raise IndexError(f"Too many indices: {len(shape)}-dimensional array indexed with "
                         f"{used} regular indices.")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (len(shape) - used)
    else:
        items += [slice(None)] * (len(shape) - used)
    # Scalar booleans add an operand axis of size 1; find where, then resolve every entry.
    entries: list[Any] = []
    unit_axes: list[int] = []
    dim = 0
    for i in items:
        if i is None:
            entries.append(_None())
        elif isinstance(i, tuple):
            mask = i[1]
            if mask.ndim == 0:
                unit_axes.append(dim + len(unit_axes))
                entries.append(_Array(np.zeros(1 if mask else 0, np.int64)))
                continue
            got, want = mask.shape, shape[dim:dim + mask.ndim]
            if got != want:
                raise IndexError(f"boolean index did not match shape of indexed array in index "
                                 f"{dim}: got {got}, expected {want}")
            # (JAX reads a mask as its np.nonzero arrays, NumPy index arrays from then on)
            idt = dtypes.canonicalize(np.dtype(np.int64))
            entries.extend(_Array(nz.astype(np.int64), "numpy", idt) for nz in np.nonzero(mask))
            dim += mask.ndim
        elif isinstance(i, slice):
            entries.append(_Slice(*i.indices(shape[dim])))
            dim += 1
        else:
            entries.append(i)
            dim += 1
    return entries, tuple(unit_axes)


def _operand_dims(entries: list[Any]) -> list[int | None]:
    """The operand dim each entry indexes (None for new axes)."""
    out, d = [], 0
    for e in entries:
        if isinstance(e, _None):
            out.append(None)
        else:
            out.append(d)
            d += 1
    return out


# ---------------------------------------------------------------------------------------------
# Static slicing: `slice` + `rev` for the slices, `squeeze` for ints, new axes for None.
# ---------------------------------------------------------------------------------------------

def _apply_static_slices(x: Any, entries: list[Any]) -> Any:
    """Apply every _Slice (and every in-range _Int as a length-1 slice) with one `slice`
    and one `rev`; the dims stay (ints keep a size-1 dim)."""
    shape = get_aval(x).shape
    starts, limits, strides, revs = [], [], [], []
    for e, d in zip(entries, _operand_dims(entries)):
        if d is None:
            continue
        size = shape[d]
        # The start, limit and stride JAX stages: a forward slice runs from its start to its
        # stop (its stride kept even for one element); a backward one is sliced forward
        # from its lowest element, then reversed (an empty one at its stop + 1).
        if isinstance(e, _Slice) and e.step > 0:
            starts.append(e.start)
            limits.append(max(e.start, e.stop))
            strides.append(e.step)
        elif isinstance(e, _Slice):
            low = e.start + (e.size - 1) * e.step if e.size else max(e.stop, e.start) + 1
            starts.append(low)
            limits.append(e.start + 1 if e.size else low)
            strides.append(-e.step)
            revs.append(d)
        elif isinstance(e, _Int):
            i = e.value + size if e.value < 0 else e.value
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(size)
            strides.append(1)
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(
            st != 1 for st in strides):
        x = lax.slice(x, starts, limits, None if all(st == 1 for st in strides) else strides)
    if revs:
        x = lax.rev(x, revs)
    return x


def _basic_take(x: Any, entries: list[Any]) -> Any:
    x = _apply_static_slices(x, entries)
    dims = [d for e, d in zip(entries, _operand_dims(entries)) if isinstance(e, _Int)]
    if dims:
        x = lax.squeeze(x, dims)
    return _insert_new_axes(x, entries)


def _insert_new_axes(x: Any, entries: list[Any]) -> Any:
    """Add the None axes, at their positions among the non-int entries."""
    kept = [e for e in entries if not isinstance(e, _Int)]
    new = [i for i, e in enumerate(kept) if isinstance(e, _None)]
    return lax.expand_dims(x, new) if new else x
