"""Set operations on flattened arrays for ember.numpy: isin, union1d, setdiff1d
(intersect1d and setxor1d: _set_pairs.py).

Input: array-likes (flattened; promoted to one dtype). Output: sorted 1-D ember arrays of
distinct values (isin: a bool array shaped like `element`). Invariants: the result length
depends on the data, so in eager mode it comes from the concrete input and under jit a
static `size=` is required (results are cut to `size` or padded with `fill_value`, JAX's
defaults: setdiff1d 0, union1d unique's); NaNs count as one value, as NumPy's unique. Each
is staged as JAX 0.10.2 stages it (jit[_in1d], unique's jits), so make_jaxpr prints JAX's
text; setdiff1d's docstring states its one difference.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes

__all__ = ["isin", "union1d", "setdiff1d"]


_COMPARE_ALL_MAX = 1 << 22  # pairs: about 4 ms of comparisons


@jit_like_jax("_in1d", static_argnames=("invert", "method", "assume_unique"))
def _in1d(a: Any, b: Any, invert: bool, method: str = "auto",
          assume_unique: bool = False) -> Any:
    """For each entry of flat a: is it in flat b (not in, when invert)."""
    a, b = promote_dtypes(jnp.asarray(a), jnp.asarray(b))
    a, b = jnp.ravel(a), jnp.ravel(b)
    if a.shape[0] == 0 or b.shape[0] == 0:
        return (jnp.ones if invert else jnp.zeros)(a.shape, dtype=bool)
    if method == "auto":
        # JAX compares every pair (its text, which small programs print alike); past
        # _COMPARE_ALL_MAX pairs Ember searches a sorted copy instead, the same answers in
        # O((n + m) log m) (setdiff1d of 1e5 values each: 13 s eagerly, 2 s under jit, by
        # pairs)
        many = a.shape[0] * b.shape[0] > _COMPARE_ALL_MAX
        method = "binary_search" if many else "compare_all"
    if method == "compare_all":
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
        method: ``"compare_all"`` (every pair compared: fast for small inputs), or
            ``"binary_search"`` / ``"sort"`` (search a sorted copy of ``test_elements``);
            ``"auto"`` compares all pairs as JAX does up to 2**22 pairs, and searches past
            that (so a large program's jaxpr differs from JAX's, which compares all).

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


def _check_size(fname: str, size: Any) -> Any:
    if isinstance(size, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            f"The error arose in {fname}()")
    return None if size is None else operator.index(size)


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
        assume_unique: ``ar1`` holds no repeated value: its values are kept in their
            order, unsorted, as in NumPy (with repeats the result is undefined).
        size: the static length of the result: shorter results are padded, longer ones cut.
        fill_value: the padding value (default 0).

    Returns:
        The sorted values of ``ar1`` absent from ``ar2``, each once. NaN is absent from
        everything, as in NumPy.

    Example:
        >>> jnp.setdiff1d(jnp.array([5, 1, 4, 1, 2]), jnp.array([4, 2]))
        Array([1, 5], dtype=int32)
        >>> jnp.setdiff1d(jnp.array([5, 1, 4, 1, 2]), jnp.array([4, 2]), size=4)
        Array([1, 5, 0, 0], dtype=int32)

    With ``size``, the program is JAX 0.10.2's, except for one term: unique's padding
    (copies of its first value) is told from the distinct values by comparing with that
    first value, and for floats a NaN first value counts as equal to the NaN padding
    (JAX's plain ``==`` gives ``setdiff1d([nan, nan], [1.0], size=2)`` as ``[nan, nan]``;
    Ember gives NumPy's ``[nan]`` padded: ``[nan, 0.0]``).
    """
    check_arraylike("setdiff1d", ar1, ar2)
    # (not promoted: the result keeps ar1's dtype, as NumPy's and JAX's)
    arr1, arr2 = jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))
    size = _check_size("setdiff1d", size)
    if size is not None and size < 0:
        raise ValueError(f"setdiff1d: size must be non-negative, got {size}")
    fill = jnp.full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    n = arr1.shape[0]
    if n == 0 or size == 0:
        # (size=0: JAX's unique(size=0) leaves no first value to index and fails)
        return jnp.full_like(arr1, fill, shape=size or 0)
    if not assume_unique:
        arr1 = jnp.unique(arr1, size=size and n)
    mask = _in1d(arr1, arr2, invert=True, assume_unique=assume_unique)
    if size is None:
        return arr1[mask]
    if not assume_unique:
        # unique pads with copies of its first (smallest) value: the distinct values are
        # n + 1 minus how many entries equal that first value.
        first = arr1[0]
        same = arr1 == first
        if jnp.issubdtype(arr1.dtype, np.inexact):
            same = same | (jnp.isnan(arr1) & jnp.isnan(first))  # (all-NaN input)
        n_unique = n + 1 - same.sum()
        mask = jnp.where(jnp.arange(n) < n_unique, mask, False)
    return jnp.where(jnp.arange(size) < mask.sum(), arr1[jnp.where(mask, size=size)], fill)
