"""Sorting, searching, counting and scans for ember.numpy: sort, argsort, lexsort,
searchsorted, unique (and the Array API unique_*), nonzero, argwhere, flatnonzero,
count_nonzero, cumsum, cumprod, nancumsum, nancumprod, cumulative_sum, cumulative_prod.

Input: array-likes; `axis=None` flattens. Output: ember arrays/tracers; indices in the
default int dtype (int32, int64 under x64). Sorting follows JAX's total order (NaN last,
-0.0 == +0.0, stable). Functions whose result shape depends on the data (unique, nonzero,
argwhere, flatnonzero) compute it from the concrete input in eager mode; under jit they
need a static `size=` (results are cut to `size` or padded with `fill_value`), else they
raise a ConcretizationTypeError. Everything is written with primitives, so eager and jit
share one definition.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.lax._sorting import argsort as _lax_argsort
from ember.lax._sorting import masked_pick, take_prefix
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes
from ember.numpy._searchsorted import searchsorted

__all__ = ["sort", "argsort", "lexsort", "searchsorted", "unique", "unique_values",
           "unique_counts", "unique_inverse", "unique_all", "nonzero", "argwhere",
           "flatnonzero", "count_nonzero", "cumsum", "cumprod", "nancumsum", "nancumprod",
           "cumulative_sum", "cumulative_prod"]


def _array(fname: str, a: Any) -> Any:
    check_arraylike(fname, a)
    return promote_dtypes(a)[0]


def _flatten(a: Any) -> Any:
    return lax.reshape(a, (get_aval(a).size,))


def _norm_axis(axis: Any, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def _check_order(fname: str, kind: Any, order: Any) -> None:
    if order is not None:
        raise TypeError(f"'order' argument to {fname} is not supported.")


# -- sorting -----------------------------------------------------------------------------------

@jit_like_jax("sort", static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
         stable: bool = True, descending: bool = False) -> Any:
    """Return a sorted copy of an array.

    Args:
        a: an array (a 0-d array needs ``axis=None``).
        axis: the axis to sort along; None sorts the flattened array.
        kind: NumPy's algorithm choice; ignored, as in JAX (``stable`` chooses).
        order: not supported (structured dtypes); must be None.
        stable: whether equal elements keep their input order (default True).
        descending: sort from largest to smallest (the ascending result reversed).

    Returns:
        The sorted array; NaNs go last (first when ``descending``), as in NumPy. Under a
        trace it is one ``jit[name=sort]`` equation, as JAX prints it.

    Example:
        >>> jnp.sort(jnp.array([3.0, jnp.nan, 1.0, 2.0]))
        Array([ 1.,  2.,  3., nan], dtype=float32)
    """
    _check_order("sort", kind, order)
    a = _array("sort", a)
    if axis is None:
        a, axis = _flatten(a), 0
    if get_aval(a).ndim == 0:
        raise ValueError("Cannot sort a 0-d array; use axis=None")
    ax = _norm_axis(axis, get_aval(a).ndim)
    out = lax.sort(a, ax, is_stable=stable)
    return lax.rev(out, (ax,)) if descending else out


@jit_like_jax("argsort", static_argnames=("axis", "kind", "order", "stable", "descending"))
def argsort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
            stable: bool = True, descending: bool = False) -> Any:
    """Return the indices that sort an array.

    Args:
        a: an array or scalar.
        axis: the axis to sort along; None sorts the flattened array.
        kind: NumPy's algorithm choice; ignored, as in JAX.
        order: not supported; must be None.
        stable: accepted for the Array API; the order is always stable.
        descending: sort from largest to smallest (still stable: equal entries keep their
            input order, unlike reversing an ascending argsort).

    Returns:
        int32 indices (int64 with x64) such that ``take_along_axis(a, i, axis)`` is sorted.

    Example:
        >>> jnp.argsort(jnp.array([30, 10, 20]))
        Array([1, 2, 0], dtype=int32)
    """
    _check_order("argsort", kind, order)
    a = _array("argsort", a)
    if axis is None:
        a, axis = _flatten(a), 0
    if get_aval(a).ndim == 0:
        raise ValueError("Cannot argsort a 0-d array; use axis=None")
    ax = _norm_axis(axis, get_aval(a).ndim)
    return _lax_argsort(a, ax, dtypes.default_int(), descending=descending, stable=stable)


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Return the indices that sort by several keys, the last key first.

    The counterpart of :func:`numpy.lexsort`: the sort is stable, by ``keys[-1]``, then
    ties by ``keys[-2]``, and so on.

    Args:
        keys: a sequence of arrays of one shape, or an array whose first axis indexes the
            keys.
        axis: the axis to sort along (default the last).

    Returns:
        An int32 array of indices, shaped like one key.

    Example:
        >>> surname = jnp.array([2, 1, 2, 1])
        >>> first = jnp.array([0, 5, 3, 4])
        >>> jnp.lexsort((first, surname))
        Array([3, 1, 0, 2], dtype=int32)
    """
    if isinstance(keys, (tuple, list)):
        ks: Any = [_array("lexsort", k) for k in keys]
    else:
        ks = _array("lexsort", keys)
        if get_aval(ks).ndim == 0:
            raise TypeError("lexsort keys must be a sequence or an array of rank >= 1")
    return _lexsort(ks, operator.index(axis))


@jit_like_jax("lexsort", static_argnames=("axis",))
def _lexsort(keys: Any, axis: int) -> Any:
    if not isinstance(keys, (tuple, list)):
        # An array's keys are its rows along axis 0, each cut out by a unit-stride slice
        # and squeezed (as iterating over an array stages it).
        shape = get_aval(keys).shape
        keys = [lax.squeeze(lax.slice(keys, (i, *[0] * (len(shape) - 1)),
                                      (i + 1, *shape[1:]), (1,) * len(shape)), (0,))
                for i in range(shape[0])]
    ks = list(keys)
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = get_aval(ks[0]).shape
    if any(get_aval(k).shape != shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        return lax.full((), 0, dtypes.default_int())
    ax = _norm_axis(axis, len(shape))
    iota = lax.broadcasted_iota(dtypes.default_int(), shape, ax)
    outs = lax.sort((*ks[::-1], iota), ax, True, len(ks))
    return outs[-1]


# -- searching ---------------------------------------------------------------------------------

def _take_1d(a: Any, idx: Any) -> Any:
    """a[idx] for a 1-D a and 1-D integer idx in range (a one-hot select, exact)."""
    idx = promote_dtypes(idx)[0]
    n, m = get_aval(a).shape[0], get_aval(idx).shape[0]
    pos = lax.broadcasted_iota(np.int32, (m, n), 1)
    want = lax.broadcast_in_dim(lax.convert_element_type(idx, np.int32), (m, n), (0,))
    ae = lax.broadcast_in_dim(a, (m, n), (1,))
    return masked_pick(ae, lax.eq(pos, want), (1,))


# -- data-dependent sizes: nonzero and unique ----------------------------------------------------

def _static_size(fname: str, traced: Any, size: Any, concrete_count: Any) -> int:
    """The output length: `size` if given, else the concrete count (eager only)."""
    if size is not None:
        size = operator.index(size)
        if size < 0:
            raise ValueError(f"{fname}: size must be non-negative, got {size}")
        return size
    if isinstance(traced, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where a concrete value is expected: the "
            f"size of the result of {fname}() depends on the values of an argument that is "
            f"traced ({get_aval(traced).str_short()}). Under jit, pass a static size= "
            f"(and optionally fill_value=) to {fname}().")
    return int(np.asarray(concrete_count()))


def _compact(mask: Any, operands: Sequence[Any]) -> list[Any]:
    """Operands permuted so that the entries where mask (1-D bool) is True come first, in
    their original order (a stable sort keyed on not-mask)."""
    key = lax.bitwise_not(mask)
    outs = lax.sort((key, *operands), 0, True, 1)
    return list(outs[1:])


def _fill_tail(x: Any, count: Any, size: int, fill: Any) -> Any:
    """x (length >= size after take_prefix) with entries at positions >= count set to fill."""
    x = take_prefix(x, size, 0, 0 if fill is None else fill)
    if fill is None:
        fill = 0
    valid = lax.lt(lax.broadcasted_iota(dtypes.default_int(), (size,), 0),
                   lax.broadcast_in_dim(count, (size,), ()))
    return lax.select(valid, x, lax.full((size,), fill, get_aval(x).dtype))


def nonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Return the indices of an array's nonzero entries.

    The counterpart of :func:`numpy.nonzero`.

    Args:
        a: an array of at least one dimension (0-d raises ``ValueError``, as in NumPy 2).
        size: the static number of indices, needed under ``jit`` (the count depends on the
            data): fewer are padded with ``fill_value``, more are cut.
        fill_value: the padding index (default 0), or a tuple with one per dimension.

    Returns:
        A tuple with one int32 index array per dimension of ``a``, in row-major order, so
        that ``a[nonzero(a)]`` holds the nonzero entries.

    Example:
        >>> x = jnp.array([[0, 3], [5, 0]])
        >>> jnp.nonzero(x)
        (Array([0, 1], dtype=int32), Array([1, 0], dtype=int32))
        >>> jnp.nonzero(jnp.array([0, 7, 0]), size=3, fill_value=-1)
        (Array([ 1, -1, -1], dtype=int32),)
    """
    a = _array("nonzero", a)
    aval = get_aval(a)
    if aval.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d "
                         "(scalar) instead.")
    import ember.numpy as jnp
    mask = a if dtypes.kind(aval.dtype) == "b" else jnp.not_equal(a, 0)
    n = _static_size("nonzero", a, size, lambda: jnp.sum(mask))
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != aval.ndim:
            raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length "
                             f"{aval.ndim}, got {fill_value!r}")
        fills = list(fill_value)
    else:
        fills = [fill_value] * aval.ndim
    if aval.size == 0 or n == 0:
        # (JAX returns zeros here even with a fill_value; the padding is kept as documented)
        return tuple(jnp.full(n, 0 if f is None else f, dtypes.default_int()) for f in fills)
    # Staged as JAX stages it: c = cumsum(mask) counts the nonzeros up to each entry, so
    # bincount(c)[k] is how many entries have exactly k before-or-at them, and its cumsum
    # at j is the flat position of the (j+1)-th nonzero (the size past the last one, which
    # the remainders below turn into index 0, the default padding).
    from ember.numpy._histograms import bincount
    flat = jnp.cumsum(bincount(jnp.cumsum(mask), length=n))
    strides = (np.cumprod(aval.shape[::-1])[::-1] // aval.shape).astype(
        get_aval(flat).dtype)
    out = [jnp.remainder(jnp.floor_divide(flat, st), int(dim))
           for st, dim in zip(strides, aval.shape)]
    if any(f is not None for f in fills):
        if any(np.shape(f) != () for f in fills):
            raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length "
                             f"{aval.ndim}, got {fill_value!r}")
        pad = jnp.arange(n) >= jnp.sum(mask)
        out = [o if f is None else jnp.where(pad, f, o) for f, o in zip(fills, out)]
    return tuple(out)


def flatnonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """Return the indices of the nonzero entries of the flattened array.

    The counterpart of :func:`numpy.flatnonzero`: ``nonzero(ravel(a))[0]``.

    Args:
        a: an array.
        size: the static number of indices, needed under ``jit``: fewer are padded with
            ``fill_value``, more are cut.
        fill_value: the padding index (default 0).

    Returns:
        A 1-D int32 array of positions in ``ravel(a)``.

    Example:
        >>> jnp.flatnonzero(jnp.array([[0, 3], [5, 0]]))
        Array([1, 2], dtype=int32)
        >>> jnp.flatnonzero(jnp.array([0, 1, 1]), size=4, fill_value=9)
        Array([1, 2, 9, 9], dtype=int32)
    """
    return nonzero(_flatten(_array("flatnonzero", a)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """Return the indices of the nonzero entries, one row per entry.

    The counterpart of :func:`numpy.argwhere`: the arrays of :func:`nonzero` stacked as
    columns.

    Args:
        a: an array (a 0-d one gives shape ``(N, 0)``).
        size: the static number of rows, needed under ``jit``: fewer are padded with
            ``fill_value``, more are cut.
        fill_value: the padding index (default 0).

    Returns:
        An int32 array of shape ``(N, a.ndim)``.

    Example:
        >>> jnp.argwhere(jnp.array([[0, 3], [5, 0]]))
        Array([[0, 1],
               [1, 0]], dtype=int32)
        >>> jnp.argwhere(jnp.array([1, 0, 1]), size=3)
        Array([[0],
               [2],
               [0]], dtype=int32)
    """
    import ember.numpy as jnp
    a = _array("argwhere", a)
    # Staged as JAX stages it: nonzero of atleast_1d(a), the index arrays stacked as rows
    # by vstack (one jit[atleast_2d] each) and transposed into columns.
    result = jnp.transpose(jnp.vstack(nonzero(jnp.atleast_1d(a), size=size,
                                              fill_value=fill_value)))
    ndim = get_aval(a).ndim
    if ndim == 0:
        return jnp.reshape(result[:0], (get_aval(result).shape[0], 0))
    return jnp.reshape(result, (get_aval(result).shape[0], ndim))


@jit_like_jax("count_nonzero", static_argnames=("axis", "keepdims"))
def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Count the non-zero elements of an array.

    Args:
        a: an array or scalar (a NaN counts as non-zero, as in NumPy).
        axis: an int or tuple of ints: the axes to count along; None counts them all.
        keepdims: keep the counted axes with size 1.

    Returns:
        The counts in the default integer dtype (int32 unless x64 is enabled; NumPy
        returns int64 and, with ``axis=None``, a Python int).

    Example:
        >>> jnp.count_nonzero(jnp.array([[0, 1, 2], [3, 0, 0]]), axis=1)
        Array([2, 1], dtype=int32)
    """
    from ember.numpy._reductions import sum as _sum
    a = _array("count_nonzero", a)
    # a != 0 against a 0-d zero of a's dtype (a literal in the jaxpr), bools included.
    zero = lax.convert_element_type(0, get_aval(a).dtype)
    return _sum(lax.ne(a, zero), axis=axis, dtype=dtypes.default_int(), keepdims=keepdims)


@jit_like_jax("_unique_sorted_mask", static_argnames=("equal_nan",))
def _unique_sorted_mask(x: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """(sorted x, mask of the first entry of each run of equal values, the sorting
    permutation) for a 1-D x, staged as JAX stages it: a lexsort of x's single key, a
    gather by that permutation, and neighbours compared with `ne` (NaNs equal when
    equal_nan, so they form one run; -0.0 equals 0.0, as in NumPy)."""
    import ember.numpy as jnp
    if dtypes.kind(get_aval(x).dtype) == "c":
        # Every complex NaN becomes the same NaN, so equal_nan groups them as NumPy does.
        x = jnp.where(jnp.isnan(x), lax.full((), np.nan, get_aval(x).dtype), x)
    n = get_aval(x).shape[0]
    perm = lexsort(jnp.reshape(x, (n, 1)).T[::-1])
    srt = x[perm]
    if not n:
        return srt, jnp.zeros(0, dtype=bool), perm
    ones = jnp.ones(n, dtype=bool)
    hi, lo = srt[1:], srt[:-1]
    new_run = lax.ne(hi, lo)
    if equal_nan and dtypes.kind(get_aval(x).dtype) in "fc":
        new_run = new_run & ~(jnp.isnan(hi) & jnp.isnan(lo))
    mask = ones.at[1:].set(jnp.any(new_run, ()))
    return srt, mask, perm


def _unique_core(ar: Any, size: Any, fill_value: Any, want_index: bool, want_inverse: bool,
                 want_counts: bool, equal_nan: bool, want_true_size: bool = False
                 ) -> dict[str, Any]:
    """Sorted unique values of ravel(ar), with first indices, inverse, counts and (for the
    set operations) the number of unique values, under "true_size".

    The runs' first entries of the sorted values are picked by nonzero(mask, size=size)
    (padded with position 0: the smallest value, its first index); a given fill_value
    replaces the padding. The inverse scatters cumsum(mask) - 1 back through the
    permutation; counts are the differences of the run starts, with n after the last.
    """
    import ember.numpy as jnp
    x = jnp.ravel(ar)
    n = get_aval(x).shape[0]
    m = _static_size("unique", ar, size, lambda: 0)  # (checks size, or that ar is concrete)
    srt, mask, perm = _unique_sorted_mask(x, equal_nan)
    ind = nonzero(mask, size=size)[0]
    res: dict[str, Any] = {}
    if n:
        values = srt[ind]
        if size is not None and fill_value is not None:
            dt = get_aval(values).dtype
            # A concrete fill is converted now (a constant in the trace, as in JAX).
            fill = (fill_value.astype(dt) if isinstance(fill_value, Tracer)
                    else np.asarray(fill_value).astype(dt))
            values = jnp.where(jnp.arange(m) < mask.sum(), values, fill)
    elif m == 0 and fill_value is None:
        values = srt  # (empty, as JAX's: no equation)
    else:
        # (JAX asks for a fill_value when m > 0; without one the padding is 0)
        values = jnp.full(m, 0 if fill_value is None else fill_value, get_aval(x).dtype)
    res["values"] = values
    if want_index:
        res["indices"] = perm[ind] if n else (
            perm if m == 0 else jnp.zeros(m, dtypes.default_int()))
    if want_inverse:
        if n:
            imask = jnp.cumsum(mask) - 1
            inv = jnp.zeros(n, dtypes.default_int()).at[perm].set(imask)
        else:
            inv = jnp.zeros(0, dtypes.default_int())
        res["inverse"] = inv  # (reshaped to ar's shape by the caller, after the counts)
    if want_counts:
        if not n:
            res["counts"] = jnp.zeros(m, dtypes.default_int())
        else:
            if size is None:
                starts = jnp.append(nonzero(mask)[0], n)
            else:
                starts = nonzero(mask, size=m + 1)[0]
                starts = starts.at[1:].set(jnp.where(starts[1:], starts[1:], n))
            res["counts"] = jnp.diff(starts)
    if want_true_size:
        res["true_size"] = mask.sum()
    return res


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           size: Any = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """Find the sorted unique elements of an array.

    Args:
        ar: an array; it is flattened (``axis`` other than None is not supported yet).
        return_index: also return the index of each unique value's first occurrence.
        return_inverse: also return, for each element of ``ar``, the index of its value in
            the result (shaped like ``ar``), so ``values[inverse]`` rebuilds ``ar``.
        return_counts: also return how often each unique value occurs.
        axis: only None is supported.
        equal_nan: treat all NaNs as one value (the default, as NumPy 2); False keeps each.
        size: the static length of the result, needed under ``jit`` (the number of unique
            values depends on the data): shorter results are padded, longer ones cut.
        fill_value: the padding value when ``size`` is larger (default: the smallest unique
            value).
        sorted: accepted for NumPy compatibility; the values are always sorted.

    Returns:
        The unique values, or a tuple of it with the requested extras in the order above.
        Eagerly the length is the number of unique values; under ``jit`` pass ``size=``
        (as in JAX), else a ``ConcretizationTypeError`` says so.

    Example:
        >>> jnp.unique(jnp.array([3, 1, 3, 2, 1]))
        Array([1, 2, 3], dtype=int32)
        >>> jnp.unique(jnp.array([3, 1, 3, 2, 1]), return_counts=True)
        (Array([1, 2, 3], dtype=int32), Array([2, 1, 2], dtype=int32))
        >>> jnp.unique(jnp.array([3, 1, 3, 2, 1]), size=5, fill_value=0)
        Array([1, 2, 3, 0, 0], dtype=int32)
    """
    if axis is not None:
        raise NotImplementedError("jnp.unique with axis= is not supported by Ember yet")
    ar = _array("unique", ar)
    r = _unique_core(ar, size, fill_value, return_index, return_inverse, return_counts,
                     equal_nan)
    outs = [r["values"]]
    if return_index:
        outs.append(r["indices"])
    if return_inverse:
        outs.append(lax.reshape(r["inverse"], get_aval(ar).shape))
    if return_counts:
        outs.append(r["counts"])
    return outs[0] if len(outs) == 1 else tuple(outs)


class UniqueAllResult(tuple):
    """(values, indices, inverse_indices, counts) with named fields, as the Array API."""

    __slots__ = ()

    def __new__(cls, values: Any, indices: Any, inverse_indices: Any, counts: Any):
        return super().__new__(cls, (values, indices, inverse_indices, counts))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    inverse_indices = property(lambda self: self[2])
    counts = property(lambda self: self[3])


class UniqueCountsResult(tuple):
    __slots__ = ()

    def __new__(cls, values: Any, counts: Any):
        return super().__new__(cls, (values, counts))

    values = property(lambda self: self[0])
    counts = property(lambda self: self[1])


class UniqueInverseResult(tuple):
    __slots__ = ()

    def __new__(cls, values: Any, inverse_indices: Any):
        return super().__new__(cls, (values, inverse_indices))

    values = property(lambda self: self[0])
    inverse_indices = property(lambda self: self[1])


def unique_values(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """Find the unique elements of an array (the Array API's form of ``unique``).

    Args:
        x: an array; it is flattened.
        size: the static length of the result, needed under ``jit`` (the number of unique
            values depends on the data): shorter results are padded, longer ones cut.
        fill_value: the padding value when ``size`` is larger (default: the smallest unique
            value).

    Returns:
        The sorted unique values, as ``unique(x)`` gives them.

    Example:
        >>> jnp.unique_values(jnp.array([3, 1, 3, 2]))
        Array([1, 2, 3], dtype=int32)
    """
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """Find the unique elements of an array and how often each occurs.

    Args:
        x: an array; it is flattened.
        size: the static length of the result, needed under ``jit`` (the number of unique
            values depends on the data): shorter results are padded, longer ones cut.
        fill_value: the padding value when ``size`` is larger (default: the smallest unique
            value).

    Returns:
        A named tuple ``(values, counts)``.

    Example:
        >>> values, counts = jnp.unique_counts(jnp.array([3, 1, 3, 2]))
        >>> counts
        Array([1, 1, 2], dtype=int32)
    """
    v, c = unique(x, return_counts=True, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """Find the unique elements of an array and the indices that rebuild it.

    Args:
        x: an array; it is flattened.
        size: the static length of the result, needed under ``jit`` (the number of unique
            values depends on the data): shorter results are padded, longer ones cut.
        fill_value: the padding value when ``size`` is larger (default: the smallest unique
            value).

    Returns:
        A named tuple ``(values, inverse_indices)`` with ``values[inverse_indices]`` equal
        to ``x`` (``inverse_indices`` has ``x``'s shape).

    Example:
        >>> values, inverse = jnp.unique_inverse(jnp.array([3, 1, 3, 2]))
        >>> inverse
        Array([2, 0, 2, 1], dtype=int32)
    """
    v, i = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, i)


def unique_all(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
    """Find the unique elements of an array with their first indices, the inverse
    indices and the counts.

    Args:
        x: an array; it is flattened.
        size: the static length of the result, needed under ``jit`` (the number of unique
            values depends on the data): shorter results are padded, longer ones cut.
        fill_value: the padding value when ``size`` is larger (default: the smallest unique
            value).

    Returns:
        A named tuple ``(values, indices, inverse_indices, counts)``: ``indices`` holds each
        value's first position in the flattened ``x``; the others as ``unique_inverse`` and
        ``unique_counts`` give them.

    Example:
        >>> result = jnp.unique_all(jnp.array([3, 1, 3, 2]))
        >>> result.indices
        Array([1, 3, 0], dtype=int32)
    """
    v, idx, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True,
                            size=size, fill_value=fill_value)
    return UniqueAllResult(v, idx, inv, c)


# -- cumulative reductions ---------------------------------------------------------------------

def _upcast_small_int(dtype: np.dtype) -> np.dtype:
    # Like jnp.sum: bool and narrow ints accumulate in the default (u)int.
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < dtypes.default_int().itemsize):
        return dtypes.default_int()
    if dtype.kind == "u" and dtype.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dtype


def _cumulative(fname: str, scan: Any, a: Any, axis: Any, dtype: Any,
                nan_fill: Any = None) -> Any:
    a = _array(fname, a)
    if axis is None:
        a, axis = _flatten(a), 0
    aval = get_aval(a)
    if aval.ndim == 0:
        a, aval = lax.reshape(a, (1,)), get_aval(lax.reshape(a, (1,)))
    ax = _norm_axis(axis, aval.ndim)
    if nan_fill is not None:
        from ember.numpy._manipulation import where
        # a != a (complex: either part NaN; never for integers, where JAX stages it too)
        # through jnp.where's jit[_where] with a 0-d fill, as JAX stages it
        a = where(lax.ne(a, a), lax.convert_element_type(nan_fill, aval.dtype), a)
    target = dtypes.canonicalize(dtype) if dtype is not None else _upcast_small_int(aval.dtype)
    if dtypes.kind(target) == "b":
        # A bool result: x != 0, accumulated in int, then != 0 again (as JAX does).
        if dtypes.kind(aval.dtype) != "b":
            a = lax.ne(a, lax.full_like(a, 0))
        out = scan(lax.convert_element_type(a, dtypes.default_int()), ax)
        return lax.convert_element_type(out, np.bool_)
    return scan(lax.convert_element_type(a, target), ax)


@jit_like_jax("cumsum", static_argnames=("axis", "dtype"))
def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Return the running sum of the elements along an axis.

    Args:
        a: an array or scalar.
        axis: an int; None runs over the flattened array.
        dtype: the accumulation and result dtype (default: small integers and bools
            accumulate in the default integer type, as in NumPy).
        out: not supported (must be None), as in JAX.

    Returns:
        An array of ``a``'s shape (1-d when ``axis`` is None) whose entry ``i`` is the sum
        of the entries up to and including ``i``. Under a trace it is one
        ``jit[name=cumsum]`` equation, as JAX prints it.

    Example:
        >>> jnp.cumsum(jnp.array([[1, 2], [3, 4]]), axis=1)
        Array([[1, 3],
               [3, 7]], dtype=int32)
    """
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype)


@jit_like_jax("cumprod", static_argnames=("axis", "dtype"))
def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Return the running product of the elements along an axis.

    Args:
        a: an array or scalar.
        axis: an int; None runs over the flattened array.
        dtype: the accumulation and result dtype (default: small integers and bools
            accumulate in the default integer type, as in NumPy).
        out: not supported (must be None), as in JAX.

    Returns:
        An array whose entry ``i`` is the product of the entries up to and including ``i``.
        Under a trace it is one ``jit[name=cumprod]`` equation, as JAX prints it.

    Example:
        >>> jnp.cumprod(jnp.array([1.0, 2.0, 3.0, 4.0]))
        Array([ 1.,  2.,  6., 24.], dtype=float32)
    """
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype)


@jit_like_jax("nancumsum", static_argnames=("axis", "dtype"))
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Compute the cumulative sum along an axis, with NaNs counted as 0.

    The counterpart of :func:`numpy.nancumsum`.

    Args:
        a: the array.
        axis: the axis to accumulate along; None (default) flattens ``a`` first.
        dtype: the accumulation and result dtype.
        out: unsupported; must be None.

    Returns:
        The running sums, shaped like ``a`` (flat when ``axis`` is None).

    Example:
        >>> jnp.nancumsum(jnp.array([1.0, jnp.nan, 2.0, 3.0]))
        Array([1., 1., 3., 6.], dtype=float32)
        >>> jnp.nancumsum(jnp.array([[1.0, jnp.nan], [2.0, 3.0]]), axis=0)
        Array([[1., 0.],
               [3., 3.]], dtype=float32)
    """
    return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, nan_fill=0)


@jit_like_jax("nancumprod", static_argnames=("axis", "dtype"))
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Compute the cumulative product along an axis, with NaNs counted as 1.

    The counterpart of :func:`numpy.nancumprod`.

    Args:
        a: the array.
        axis: the axis to accumulate along; None (default) flattens ``a`` first.
        dtype: the accumulation and result dtype.
        out: unsupported; must be None.

    Returns:
        The running products, shaped like ``a`` (flat when ``axis`` is None).

    Example:
        >>> jnp.nancumprod(jnp.array([2.0, jnp.nan, 3.0, 0.5]))
        Array([2., 2., 6., 3.], dtype=float32)
    """
    return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, nan_fill=1)


def _array_api_cumulative(fname: str, scan: Any, identity: int, x: Any, axis: Any,
                          dtype: Any, include_initial: bool) -> Any:
    x = _array(fname, x)
    ndim = get_aval(x).ndim
    if axis is None:
        if ndim > 1:
            raise ValueError(f"{fname}: axis must be specified for arrays of rank > 1, got "
                             f"shape {get_aval(x).shape}")
        axis = 0
    if ndim == 0:
        raise ValueError(f"{fname}: the input must have rank >= 1")
    out = _cumulative(fname, scan, x, axis, dtype)
    if not include_initial:
        return out
    # Prepend the identity: reverse, extend by one (filled with the identity), reverse.
    ax = _norm_axis(axis, ndim)
    n = get_aval(out).shape[ax]
    return lax.rev(take_prefix(lax.rev(out, (ax,)), n + 1, ax, identity), (ax,))


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Compute the cumulative sum along an axis (the Array API's form).

    The counterpart of :func:`numpy.cumulative_sum` (NumPy 2.1): unlike :func:`cumsum` it
    never flattens, and it can start with the sum of nothing.

    Args:
        x: an array of at least one dimension.
        axis: the axis; may be omitted only for a 1-D ``x``.
        dtype: the accumulation and result dtype.
        include_initial: prepend a 0, so the axis grows by one.

    Returns:
        The running sums.

    Example:
        >>> jnp.cumulative_sum(jnp.array([1, 2, 3]))
        Array([1, 3, 6], dtype=int32)
        >>> jnp.cumulative_sum(jnp.array([[1, 2], [3, 4]]), axis=1, include_initial=True)
        Array([[0, 1, 3],
               [0, 3, 7]], dtype=int32)
    """
    return _array_api_cumulative("cumulative_sum", lax.cumsum, 0, x, axis, dtype,
                                 include_initial)


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Compute the cumulative product along an axis (the Array API's form).

    The counterpart of :func:`numpy.cumulative_prod` (NumPy 2.1): unlike :func:`cumprod` it
    never flattens, and it can start with the product of nothing.

    Args:
        x: an array of at least one dimension.
        axis: the axis; may be omitted only for a 1-D ``x``.
        dtype: the accumulation and result dtype.
        include_initial: prepend a 1, so the axis grows by one.

    Returns:
        The running products.

    Example:
        >>> jnp.cumulative_prod(jnp.array([1, 2, 3, 4]))
        Array([ 1,  2,  6, 24], dtype=int32)
        >>> jnp.cumulative_prod(jnp.array([2.0, 3.0]), include_initial=True)
        Array([1., 2., 6.], dtype=float32)
    """
    return _array_api_cumulative("cumulative_prod", lax.cumprod, 1, x, axis, dtype,
                                 include_initial)
