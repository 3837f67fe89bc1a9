"""`x.at[idx].set/add/multiply/min/max/apply/get`: functional index updates.

Input: an array, an index expression and values. Output: a new array built by one lax
scatter (or a gather for `.get`). Invariants: values are cast to x's dtype and broadcast
to the indexed shape; out-of-range windows are dropped unless `mode` says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core import traceback_util
from ember.core.dtypes import canonicalize
from ember.core.trace import get_aval
from ember.numpy._index_entries import _as_array, _parse
from ember.numpy._indexer import _Indexer
from ember.numpy._indexing import _rewriting_take

__all__ = ["_IndexUpdateHelper", "_IndexUpdateRef"]


# ---------------------------------------------------------------------------------------------
# x.at[idx]
# ---------------------------------------------------------------------------------------------

def _scatter_update(x: Any, idx: Any, values: Any, scatter: Callable[..., Any], *,
                    indices_are_sorted: bool, unique_indices: bool, mode: Any) -> Any:
    """x with `values` combined in at x[idx] by a lax scatter function."""
    x = _as_array(x)
    aval = get_aval(x)
    entries, unit_axes = _parse(idx, aval.shape)
    operand = lax.expand_dims(x, unit_axes) if unit_axes else x
    ix = _Indexer(get_aval(operand).shape, entries)
    if isinstance(values, (list, tuple)):
        values = _as_array(values)
    if type(values) is int and not _fits_unsigned_default(values, aval.dtype):
        get_aval(values)  # a weakly typed int must fit the default int (JAX's OverflowError)
    # As JAX: x and the values promote together, the scatter combines in that dtype, and
    # the result converts back to x's dtype and weak type (a weak x scatters strongly).
    # NumPy values and Python scalars convert right away (no equation is staged for them).
    from ember.numpy._manipulation import broadcast_to
    from ember.numpy._promote import promote_dtypes
    if isinstance(values, (bool, int, float, complex)):
        # (a weak Python scalar takes x's dtype, as promotion would give it; a uint32 x
        # takes ints that fit it but not the default int)
        values = lax.convert_element_type(values, aval.dtype, aval.weak_type)
    operand, values = promote_dtypes(operand, values)
    updates = lax.reshape(broadcast_to(values, ix.shape), ix.squeezed)
    out = scatter(operand, ix.indices, updates, ix.scatter_dnums(),
                  indices_are_sorted=bool(indices_are_sorted or ix.sorted),
                  unique_indices=bool(unique_indices or ix.unique), mode=mode)
    out = lax.reshape(out, aval.shape) if unit_axes else out
    return lax.convert_element_type(out, aval.dtype, aval.weak_type)


def _fits_unsigned_default(value: int, dtype: Any) -> bool:
    """Whether `value` fits `dtype` when that is the unsigned type as wide as the default
    int (uint32, or uint64 under x64): JAX takes such values into such an array
    (`x.at[0].set(2**32 - 1)` for uint32 x) though they do not fit the default int."""
    dt = np.dtype(dtype)
    default = np.dtype(canonicalize(np.int64))
    return dt.kind == "u" and dt.itemsize == default.itemsize and 0 <= value <= np.iinfo(dt).max


class _IndexUpdateHelper:
    """What `x.at` returns: `x.at[idx]` is an _IndexUpdateRef."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: functional versions of `x[idx] = v`, `x[idx] += v`, ...

    Each method returns a new array; out-of-bounds updates are dropped unless `mode` says
    otherwise ('clip' clamps the indices; 'promise_in_bounds' drops, as XLA does).
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, out_sharding: Any = None) -> Any:
        """x[idx], with the chosen out-of-bounds `mode` ('fill' uses `fill_value`)."""
        return _rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode,
                               fill_value=fill_value)

    def _update(self, values: Any, scatter: Callable[..., Any], indices_are_sorted: bool,
                unique_indices: bool, mode: Any) -> Any:
        return _scatter_update(self.array, self.index, values, scatter,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = values (for duplicate indices the last value wins)."""
        return self._update(values, lax.scatter, indices_are_sorted, unique_indices, mode)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] += values (duplicates accumulate)."""
        return self._update(values, lax.scatter_add, indices_are_sorted, unique_indices, mode)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] *= values (duplicates accumulate)."""
        return self._update(values, lax.scatter_mul, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] /= values, as JAX: x / ones_like(x).at[idx].multiply(values)."""
        from ember import numpy as jnp
        x = _as_array(self.array)
        denom = _scatter_update(jnp.ones_like(x), self.index, values, lax.scatter_mul,
                                indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices, mode=mode)
        return jnp.divide(x, denom)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] **= values, as JAX: x ** ones_like(x).at[idx].multiply(values)."""
        from ember import numpy as jnp
        x = _as_array(self.array)
        exponent = _scatter_update(jnp.ones_like(x), self.index, values, lax.scatter_mul,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode)
        return jnp.power(x, exponent)

    def min(self, values: Any, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = minimum(x[idx], values) (duplicates accumulate)."""
        return self._update(values, lax.scatter_min, indices_are_sorted, unique_indices, mode)

    def max(self, values: Any, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = maximum(x[idx], values) (duplicates accumulate)."""
        return self._update(values, lax.scatter_max, indices_are_sorted, unique_indices, mode)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = func(x[idx]), applied once per occurrence of a duplicate index."""
        x = _as_array(self.array)

        def scatter(operand: Any, indices: Any, updates: Any, dnums: Any, **kw: Any) -> Any:
            return lax.scatter_apply(operand, indices, func, dnums,
                                     update_shape=get_aval(updates).shape, **kw)
        return _scatter_update(x, self.index, lax.full((), 0, get_aval(x).dtype), scatter,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)


# `x.at[idx].set(v)` is the user's call: an error in it shows the user's frames only
traceback_util.wrap_methods(_IndexUpdateRef)


