"""Set operations on flattened arrays for ember.numpy: isin, intersect1d, union1d,
setdiff1d, setxor1d.

Input: array-likes (flattened; promoted to one dtype). Output: sorted 1-D ember arrays of
distinct values (isin: a bool array shaped like `element`). Invariants: the result length
depends on the data, so in eager mode it comes from the concrete input and under jit a
static `size=` is required (results are cut to `size` or padded with `fill_value`, JAX's
defaults: setdiff1d 0, intersect1d and setxor1d the smallest result (0 when none), union1d
unique's); NaNs count as one value, as NumPy's unique. Each operation is one sort of the
candidates, a mask of the wanted entries and one stable compaction of that mask.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes
from ember.numpy._sorting import _compact, _fill_tail, _static_size

__all__ = ["isin", "intersect1d", "union1d", "setdiff1d", "setxor1d"]


@jit_like_jax("_in1d", static_argnames=("invert", "method", "assume_unique"))
def _in1d(a: Any, b: Any, invert: bool, method: str = "auto",
          assume_unique: bool = False) -> Any:
    """For each entry of flat a: is it in flat b (not in, when invert)."""
    a, b = promote_dtypes(jnp.asarray(a), jnp.asarray(b))
    a, b = jnp.ravel(a), jnp.ravel(b)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return (jnp.ones if invert else jnp.zeros)(a.shape, dtype=bool)
    if method in ("auto", "compare_all"):
        # (every pair compared: not-equal to all when inverted, as JAX stages it)
        if invert:
            return (a[:, None] != b[None, :]).all(-1)
        return (a[:, None] == b[None, :]).any(-1)
    if method in ("binary_search", "sort"):
        sb = jnp.sort(b)
        pos = jnp.clip(jnp.searchsorted(sb, a), 0, sb.shape[0] - 1)
        hit = a == sb[pos]
        return ~hit if invert else hit
    raise ValueError(f"method={method!r} is not implemented; options are "
                     "'compare_all', 'binary_search', 'sort', and 'auto'")


def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Any:
    """Test which elements of an array occur in a second array.

    The counterpart of :func:`numpy.isin`.

    Args:
        element: the array whose entries are tested.
        test_elements: the values to look for (flattened).
        assume_unique: accepted for NumPy compatibility; the result does not depend on it.
        invert: return the complement: True where an entry does *not* occur.
        method: ``"auto"`` or ``"compare_all"`` (every pair compared: fast for small
            inputs, memory ``len(element) * len(test_elements)``), or ``"binary_search"`` /
            ``"sort"`` (search a sorted copy of ``test_elements``).

    Returns:
        A bool array shaped like ``element``. NaN occurs in nothing, as in NumPy.

    Example:
        >>> jnp.isin(jnp.array([[1, 2], [3, 4]]), jnp.array([2, 3, 7]))
        Array([[False,  True],
               [ True, False]], dtype=bool)
        >>> jnp.isin(jnp.array([1, 2, 3]), jnp.array([2]), invert=True)
        Array([ True, False,  True], dtype=bool)
    """
    check_arraylike("isin", element, test_elements)
    out = _in1d(element, test_elements, invert=invert, method=method,
                assume_unique=assume_unique)
    return out.reshape(np.shape(element))


def _flat_pair(fname: str, ar1: Any, ar2: Any) -> tuple[Any, Any]:
    check_arraylike(fname, ar1, ar2)
    a, b = promote_dtypes(jnp.asarray(ar1), jnp.asarray(ar2))
    return jnp.ravel(a), jnp.ravel(b)


def _first_of_runs(s: Any) -> Any:
    """For sorted s: True at the first entry of each run of equal values (NaNs equal)."""
    if s.shape[0] == 0:
        return jnp.zeros((0,), bool)
    differs = s[1:] != s[:-1]
    if jnp.issubdtype(s.dtype, np.floating):
        differs = differs & ~(jnp.isnan(s[1:]) & jnp.isnan(s[:-1]))
    return jnp.concatenate([jnp.ones((1,), bool), differs])


def _check_size(fname: str, size: Any) -> Any:
    if isinstance(size, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            f"The error arose in {fname}()")
    return None if size is None else operator.index(size)


def _select(fname: str, vals: Any, mask: Any, size: Any, fill_value: Any,
            smallest_default: bool) -> Any:
    """vals[mask] in order, cut or padded to `size` (the concrete count when None)."""
    count = jnp.sum(mask, dtype=jnp.int32)
    n = _static_size(fname, mask, size, lambda: count)
    if vals.shape[0] == 0:
        fill = 0 if fill_value is None else fill_value
        return jnp.full((n,), fill, vals.dtype)
    (packed,) = _compact(mask, [vals])
    if fill_value is None and smallest_default:
        # The smallest result (the first: they are sorted), 0 when there is none.
        fill_value = jnp.where(count > 0, packed[0], jnp.zeros((), vals.dtype))
    return _fill_tail(packed, lax.convert_element_type(count, jnp.int32), n,
                      jnp.zeros((), vals.dtype) if fill_value is None else
                      jnp.asarray(fill_value).astype(vals.dtype))


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Find the sorted distinct values that occur in either of two arrays.

    The counterpart of :func:`numpy.union1d`. The result's length depends on the data, so
    under ``jit`` pass ``size``.

    Args:
        ar1, ar2: the arrays (flattened).
        size: the static length of the result: shorter results are padded, longer ones cut.
        fill_value: the padding value (default: the smallest value of the union).

    Returns:
        The sorted union, 1-D.

    Example:
        >>> jnp.union1d(jnp.array([3, 1, 3]), jnp.array([2, 1]))
        Array([1, 2, 3], dtype=int32)
        >>> jnp.union1d(jnp.array([3, 1, 3]), jnp.array([2, 1]), size=5, fill_value=-1)
        Array([ 1,  2,  3, -1, -1], dtype=int32)
    """
    check_arraylike("union1d", ar1, ar2)
    size = _check_size("union1d", size)
    both = jnp.concatenate((jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))))
    return jnp.unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """Find the sorted distinct values of one array that are not in another.

    The counterpart of :func:`numpy.setdiff1d`. The result's length depends on the data, so
    under ``jit`` pass ``size``.

    Args:
        ar1: the array whose values are kept (flattened).
        ar2: the values to remove (flattened).
        assume_unique: accepted for NumPy compatibility; the result does not depend on it.
        size: the static length of the result: shorter results are padded, longer ones cut.
        fill_value: the padding value (default 0).

    Returns:
        The sorted values of ``ar1`` absent from ``ar2``, each once.

    Example:
        >>> jnp.setdiff1d(jnp.array([5, 1, 4, 1, 2]), jnp.array([4, 2]))
        Array([1, 5], dtype=int32)
        >>> jnp.setdiff1d(jnp.array([5, 1, 4, 1, 2]), jnp.array([4, 2]), size=4)
        Array([1, 5, 0, 0], dtype=int32)
    """
    a, b = _flat_pair("setdiff1d", ar1, ar2)
    size = _check_size("setdiff1d", size)
    s = jnp.sort(a)
    mask = _first_of_runs(s) & _in1d(s, b, invert=True)
    return _select("setdiff1d", s, mask, size, 0 if fill_value is None else fill_value,
                   False)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """Find the sorted distinct values that occur in exactly one of two arrays.

    The counterpart of :func:`numpy.setxor1d`. The result's length depends on the data, so
    under ``jit`` pass ``size``.

    Args:
        ar1, ar2: the arrays (flattened).
        assume_unique: accepted for NumPy compatibility; the result does not depend on it.
        size: the static length of the result: shorter results are padded, longer ones cut.
        fill_value: the padding value (default: the smallest value of the result).

    Returns:
        The sorted symmetric difference, 1-D. Each input that holds a NaN contributes one
        NaN, as in NumPy.

    Example:
        >>> jnp.setxor1d(jnp.array([1, 2, 3, 2]), jnp.array([3, 4]))
        Array([1, 2, 4], dtype=int32)
    """
    a, b = _flat_pair("setxor1d", ar1, ar2)
    size = _check_size("setxor1d", size)
    s = jnp.sort(jnp.concatenate((a, b)))
    # A value is in the xor when it is in exactly one input. NaN equals nothing, so each
    # input holding a NaN contributes one (unique collapses NaNs), as in NumPy and JAX.
    in_a = _member_sorted(s, jnp.sort(a))
    in_b = _member_sorted(s, jnp.sort(b))
    mask = _first_of_runs(s) & (in_a != in_b)
    if jnp.issubdtype(s.dtype, np.floating):
        nan = jnp.isnan(s)
        n_nan = jnp.any(jnp.isnan(a)).astype(jnp.int32) + jnp.any(jnp.isnan(b)).astype(
            jnp.int32)
        mask = jnp.where(nan, jnp.cumsum(nan.astype(jnp.int32)) <= n_nan, mask)
    return _select("setxor1d", s, mask, size, fill_value, True)


def _member_sorted(x: Any, sorted_ref: Any) -> Any:
    """For each x: does it occur in the sorted reference (NaN matches NaN)?"""
    if sorted_ref.shape[0] == 0 or x.shape[0] == 0:
        return jnp.zeros(x.shape, bool)
    pos = jnp.clip(jnp.searchsorted(sorted_ref, x), 0, sorted_ref.shape[0] - 1)
    found = sorted_ref[pos]
    hit = found == x
    if jnp.issubdtype(x.dtype, np.floating):
        hit = hit | (jnp.isnan(found) & jnp.isnan(x))
    return hit


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Any:
    """Find the sorted distinct values that occur in both of two arrays.

    The counterpart of :func:`numpy.intersect1d`. The result's length depends on the data,
    so under ``jit`` pass ``size``.

    Args:
        ar1, ar2: the arrays (flattened).
        assume_unique: accepted for NumPy compatibility; the result does not depend on it.
        return_indices: also return where each common value first occurs in ``ar1`` and in
            ``ar2``.
        size: the static length of the result: shorter results are padded, longer ones cut
            (padded indices are the arrays' lengths).
        fill_value: the padding value (default: the smallest common value).

    Returns:
        The sorted intersection, or ``(values, indices_in_ar1, indices_in_ar2)`` with
        ``return_indices``. NaN is in no intersection.

    Example:
        >>> a, b = jnp.array([4, 1, 3, 1]), jnp.array([3, 1, 5])
        >>> jnp.intersect1d(a, b)
        Array([1, 3], dtype=int32)
        >>> jnp.intersect1d(a, b, return_indices=True)
        (Array([1, 3], dtype=int32), Array([1, 2], dtype=int32), Array([1, 0], dtype=int32))
    """
    a, b = _flat_pair("intersect1d", ar1, ar2)
    size = _check_size("intersect1d", size)
    # Stable argsorts: the first of a run of equal values has the smallest original index.
    perm_a = jnp.argsort(a, stable=True)
    s = a[perm_a]
    sb_perm = jnp.argsort(b, stable=True)
    sb = b[sb_perm]
    mask = _first_of_runs(s) & _member_sorted(s, sb)
    if jnp.issubdtype(s.dtype, np.floating):
        mask = mask & ~jnp.isnan(s)  # NaN equals nothing: never in the intersection
    vals = _select("intersect1d", s, mask, size, fill_value, True)
    if not return_indices:
        return vals
    n = vals.shape[0]
    count = jnp.sum(mask, dtype=jnp.int32)
    valid = jnp.arange(n) < count
    if a.shape[0] == 0 or b.shape[0] == 0:
        return (vals, jnp.full((n,), a.shape[0], perm_a.dtype),
                jnp.full((n,), b.shape[0], sb_perm.dtype))
    (ia,) = _compact(mask, [perm_a])
    ia = _fill_tail(ia, count, n, jnp.asarray(a.shape[0], ia.dtype))
    pos_b = jnp.clip(jnp.searchsorted(sb, vals), 0, b.shape[0] - 1)
    ib = jnp.where(valid, sb_perm[pos_b], b.shape[0])
    return vals, ia, ib
