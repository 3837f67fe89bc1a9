"""jnp.searchsorted and its three algorithms, staged as JAX 0.10.2 stages them.

Input: a 1-d sorted array `a` and query values `v` (any shape), promoted to one dtype.
Output: int32 insertion indices of `v`'s shape. The order is JAX's sort order (the
total-order comparisons `lt_to`/`le_to` on keys where -0.0 equals +0.0 and every NaN is one
NaN, sorting last; complex values compare by (real, imag)).
Algorithms (`method`): 'scan' (default) and 'scan_unrolled', a binary search of
ceil(log2(n + 1)) halvings carried by `lax.scan` in unsigned integers, one query at a time
(vmapped over the query's dimensions); 'compare_all', every (a[i], v[j]) pair compared and
counted; 'sort', the ranks of the queries among a and among themselves, found by sorting.
Invariants: under a trace each algorithm is the nested `jit[...]` JAX prints (searchsorted >
_searchsorted_scan_impl > ...); eagerly the same code runs primitive by primitive.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, ensure_array, promote_dtypes

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


# -- JAX's sort comparator: total order on canonical keys ---------------------------------------

def _canonical(x: Any) -> Any:
    """-0.0 -> +0.0 and every NaN -> the one NaN, so the total order ties them."""
    zero = np.zeros((), get_aval(x).dtype)
    out = lax.select(lax.eq(x, zero), lax.full_like(x, 0), x)
    return lax.select(lax.ne(x, x), lax.full_like(out, np.nan), out)


def _keys(x: Any) -> list[Any]:
    kind = dtypes.kind(get_aval(x).dtype)
    if kind == "c":
        return [_canonical(lax.real(x)), _canonical(lax.imag(x))]
    return [_canonical(x)] if kind == "f" else [x]


def _before(x: Any, y: Any, *, or_equal: bool) -> Any:
    """x < y (x <= y with or_equal) in the sort order, lexicographic over the keys."""
    from ember.prims.elementwise import eq_to_p, le_to_p, lt_to_p
    out = None
    for kx, ky in reversed(list(zip(_keys(x), _keys(y)))):
        if out is None:
            out = (le_to_p if or_equal else lt_to_p).bind(kx, ky)
        else:
            out = lax.bitwise_or(lt_to_p.bind(kx, ky),
                                 lax.bitwise_and(eq_to_p.bind(kx, ky), out))
    return out


# -- the algorithms -------------------------------------------------------------------------------

@jit_like_jax("_searchsorted_scan_impl", static_argnames=("side", "dtype", "unrolled"))
def _scan_impl(sorted_arr: Any, query: Any, side: str, dtype: Any, unrolled: bool) -> Any:
    n = get_aval(sorted_arr).shape[0]
    if n == 0:
        return lax.full(get_aval(query).shape, 0, dtype)
    if get_aval(query).ndim > 0:  # one query at a time: a vmap per query dimension
        from ember.vmap_api import vmap
        one = functools.partial(_scan_impl, side=side, dtype=dtype, unrolled=unrolled)
        return vmap(one, in_axes=(None, 0))(sorted_arr, query)
    udtype = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32

    def halve(state: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], tuple]:
        low, high = state
        mid = low + (high - low) // 2  # (high + low can overflow)
        go_left = _before(query, sorted_arr[mid], or_equal=side == "left")
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()

    levels = int(np.ceil(np.log2(n + 1)))
    (_, high), _ = lax.scan(halve, (udtype(0), udtype(n)), (), length=levels,
                            unroll=levels if unrolled else 1)
    return lax.convert_element_type(high, dtype)


@jit_like_jax("_searchsorted_compare_all_impl", static_argnames=("side", "dtype"))
def _compare_all_impl(sorted_arr: Any, query: Any, side: str, dtype: Any) -> Any:
    from ember.vmap_api import vmap
    compare = functools.partial(_before, or_equal=side != "left")
    hits = vmap(compare, in_axes=(0, None))(sorted_arr, query)
    from ember.numpy._reductions import sum as _sum
    return _sum(hits, dtype=dtype, axis=0)


def _rank(x: Any, dtype: Any) -> Any:
    """The position of each entry of 1-d x in a stable sort of x."""
    idx = lax.iota(dtype, get_aval(x).shape[0])
    zeros = lax.full_like(idx, 0)
    return zeros.at[lax.sort_key_val(x, idx)[1]].set(idx)


@jit_like_jax("_searchsorted_sort_impl", static_argnames=("side", "dtype"))
def _sort_impl(sorted_arr: Any, query: Any, side: str, dtype: Any) -> Any:
    n, m = get_aval(sorted_arr).shape[0], get_aval(query).size
    work = np.int32 if n + m <= np.iinfo(np.int32).max else np.int64
    flat = lax.reshape(query, (m,))
    if side == "left":
        index = _rank(lax.concatenate([flat, sorted_arr], 0), work)[:m]
    else:
        index = _rank(lax.concatenate([sorted_arr, flat], 0), work)[n:]
    out = lax.reshape(lax.sub(index, _rank(flat, work)), get_aval(query).shape)
    return lax.convert_element_type(out, dtype)


_IMPLS = {"scan": functools.partial(_scan_impl, unrolled=False),
          "scan_unrolled": functools.partial(_scan_impl, unrolled=True),
          "compare_all": _compare_all_impl, "sort": _sort_impl}


@jit_like_jax("searchsorted", static_argnames=("side", "method"))
def _searchsorted(a: Any, v: Any, side: str, sorter: Any, method: str) -> Any:
    a, v = (ensure_array(x) for x in promote_dtypes(a, v))  # (a[mid] must index an Array)
    if sorter is not None:
        a = a[sorter]
    dtype = np.dtype(np.int32 if get_aval(a).shape[0] <= np.iinfo(np.int32).max
                     else dtypes.default_int())
    return _IMPLS[method](a, v, side=side, dtype=dtype)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Find the positions where values would be inserted to keep a sorted array sorted.

    The counterpart of :func:`numpy.searchsorted`.

    Args:
        a: a sorted 1-d array (in JAX's total order, where NaN sorts last and -0.0 equals
            0.0).
        v: the values to place, an array of any shape or a scalar.
        side: ``'left'`` (the default) gives the first valid position, the count of
            entries ``a[i] < v``; ``'right'`` gives the last, the count of ``a[i] <= v``.
        sorter: optional indices that sort ``a`` (such as ``argsort(a)``), used in place
            of ``a`` being sorted itself.
        method: ``'scan'`` (default: a binary search in a ``lax.scan``),
            ``'scan_unrolled'`` (the same loop unrolled), ``'compare_all'`` (every pair
            compared: fast for small ``a``) or ``'sort'`` (ranks found by sorting ``a``
            with ``v``). They all give the same indices.

    Returns:
        An int32 array of ``v``'s shape.

    Example:
        >>> jnp.searchsorted(jnp.array([1, 3, 5, 7]), jnp.array([0, 3, 6, 8]))
        Array([0, 1, 3, 4], dtype=int32)
        >>> jnp.searchsorted(jnp.array([1, 3, 5, 7]), jnp.array([0, 3, 6, 8]), side='right')
        Array([0, 2, 3, 4], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         "['left', 'right'].")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected one "
                         "of ['sort', 'scan', 'scan_unrolled', 'compare_all'].")
    if sorter is None:
        check_arraylike("searchsorted", a, v)
    else:
        check_arraylike("searchsorted", a, v, sorter)
    if get_aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    return _searchsorted(a, v, side=side, sorter=sorter, method=method)
