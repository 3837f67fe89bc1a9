"""intersect1d and setxor1d for ember.numpy: the set operations that sort the distinct
values of both inputs together and read the answer off neighbouring entries.

Input: two array-likes (flattened, promoted to one dtype). Output: sorted 1-D ember arrays
(intersect1d with return_indices: also where each value occurs in each input).
Invariants: without `size=` the result's length comes from concrete input (eager only),
with NumPy's values: NaN is in no intersection, and each input that holds a NaN puts one
NaN in the symmetric difference. With `size=` the program is staged as JAX 0.10.2 stages
it (jit[_intersect1d_size], jit[_setxor1d_size]), so make_jaxpr prints JAX's text, and
the padding is JAX's: fill_value, else the smallest result (0 when there is none).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.core.trace import Tracer, get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes
from ember.numpy._sorting import _unique_core

__all__ = ["intersect1d", "setxor1d"]


def _flat_pair(fname: str, ar1: Any, ar2: Any, promote_first: bool) -> tuple[Any, Any]:
    """Both inputs raveled and promoted to one dtype (in JAX's order for `fname`)."""
    check_arraylike(fname, ar1, ar2)
    a, b = jnp.asarray(ar1), jnp.asarray(ar2)
    if promote_first:
        a, b = promote_dtypes(a, b)
        return jnp.ravel(a), jnp.ravel(b)
    return promote_dtypes(jnp.ravel(a), jnp.ravel(b))


def _size_arg(fname: str, size: Any) -> int | None:
    from ember.numpy._setops import _check_size
    size = _check_size(fname, size)
    if size is not None and size < 0:
        raise ValueError(f"{fname}: size must be non-negative, got {size}")
    return size


def _n(x: Any) -> int:
    return get_aval(x).shape[0]


def _unique_padded(x: Any, want_index: bool) -> tuple[Any, ...]:
    """(x's distinct values padded to len(x), [their first indices], how many there are):
    JAX's _unique(x, size=x.size, return_true_size=True); the padding is 0 with the
    indices (intersect1d's fill_value=0), else unique's (copies of the smallest value)."""
    r = _unique_core(x, _n(x), 0 if want_index else None, want_index, False, False, True,
                     want_true_size=True)
    return (r["values"], r["indices"], r["true_size"]) if want_index else (
        r["values"], r["true_size"])


def _concat_at(first: Any, second: Any, offset: Any) -> Any:
    """zeros(len(first) + len(second)) with first written at 0 and second at offset."""
    dt = np.result_type(get_aval(first).dtype, get_aval(second).dtype)
    arr = jnp.zeros(_n(first) + _n(second), dtype=dt)
    arr = lax.dynamic_update_slice(arr, first, (0,))
    return lax.dynamic_update_slice(arr, second, (offset,))


def _pick_padded(aux: Any, aux_mask: Any, size: int) -> tuple[Any, Any]:
    """(positions of the first `size` True entries of aux_mask, len(aux) past them; aux at
    those positions, 0 past them)."""
    idx = jnp.nonzero(aux_mask, size=size, fill_value=_n(aux))[0]
    return idx, aux.at[idx].get(mode="fill", fill_value=0)


def _take_or_fill(a: Any, idx: Any) -> Any:
    """a[idx], len(a) where idx is out of range (all of it when a is empty, where JAX's
    gather fails)."""
    if _n(a) == 0:
        return jnp.full(get_aval(idx).shape, 0, get_aval(a).dtype)
    return a.at[idx].get(mode="fill", fill_value=_n(a))


def _pad(vals: Any, num_results: Any, fill_value: Any) -> Any:
    """vals past num_results replaced by fill_value; by default with the smallest of the
    results, taken as JAX takes it: the max over vals (whose padding is 0) pads first,
    then the min over that (so 0 without results, and NaN when a result is NaN)."""
    if fill_value is None:
        if _n(vals) == 0:
            return vals  # (JAX's max of the empty result raises)
        vals = jnp.where(jnp.arange(_n(vals)) < num_results, vals, vals.max())
        return jnp.where(jnp.arange(_n(vals)) < num_results, vals, vals.min())
    return jnp.where(jnp.arange(_n(vals)) < num_results, vals, fill_value)


# -- intersect1d ---------------------------------------------------------------------------------

@jit_like_jax("_intersect1d_sorted_mask", static_argnames=("return_indices",))
def _intersect1d_sorted_mask(arr1: Any, arr2: Any, return_indices: bool
                             ) -> tuple[Any, Any, Any]:
    """(sorted concatenation, mask of entries equal to their successor, the sorting
    permutation when return_indices): each input's values being distinct, an entry equal
    to the next is in both."""
    arr = jnp.concatenate((arr1, arr2))
    if return_indices:
        iota = lax.broadcasted_iota(np.int32, (_n(arr),), 0)
        aux, indices = lax.sort_key_val(arr, iota)
    else:
        aux, indices = jnp.sort(arr), None
    return aux, aux[1:] == aux[:-1], indices


@jit_like_jax("_intersect1d_size",
              static_argnames=("fill_value", "assume_unique", "size", "return_indices"))
def _intersect1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool,
                      size: int, return_indices: bool) -> Any:
    """The intersection cut or padded to `size`. Each input's distinct values (unique's
    padding after them) go into one array, sorted with the padding last; an entry equal to
    its successor is a common value, and the permutation of that sort leads back to its
    position in each input."""
    n1, n2 = _n(arr1), _n(arr2)
    if assume_unique:
        ind1, num_unique1 = jnp.arange(n1), n1
        ind2 = jnp.arange(n2)
        arr = jnp.concatenate([arr1, arr2])
        aux, aux_sort_indices = lax.sort([arr, jnp.arange(_n(arr))], is_stable=True,
                                         num_keys=1)
        mask = jnp.ones(_n(arr), dtype=bool)
    else:
        arr1, ind1, num_unique1 = _unique_padded(arr1, True)
        arr2, ind2, num_unique2 = _unique_padded(arr2, True)
        arr = _concat_at(arr1, arr2, num_unique1)
        mask = jnp.arange(_n(arr)) < num_unique1 + num_unique2
        _, aux, aux_sort_indices = lax.sort([~mask, arr, jnp.arange(_n(arr))],
                                            is_stable=True, num_keys=2)
    aux_mask = (aux[1:] == aux[:-1]) & mask[1:]
    num_results = aux_mask.sum()
    if _n(aux):
        val_indices, vals = _pick_padded(aux, aux_mask, size)
    else:
        val_indices, vals = None, jnp.zeros(size, get_aval(aux).dtype)
    vals = _pad(vals, num_results, fill_value)
    if not return_indices:
        return vals
    if val_indices is None:
        # (both inputs empty: every index is padding; JAX returns them with length 0)
        return (vals, jnp.full(size, n1, dtypes.default_int()),
                jnp.full(size, n2, dtypes.default_int()))
    # The first of each equal pair came from arr1 (the sort is stable), the second from
    # arr2, at its position plus unique's count for arr1.
    idx1 = aux_sort_indices.at[val_indices].get(mode="fill", fill_value=n1)
    idx1 = jnp.where(jnp.arange(size) < num_results, idx1, n1)
    idx2 = aux_sort_indices.at[val_indices + 1].get(mode="fill", fill_value=n2) - num_unique1
    idx2 = jnp.where(jnp.arange(size) < num_results, idx2, n2)
    if not assume_unique:
        idx1, idx2 = _take_or_fill(ind1, idx1), _take_or_fill(ind2, idx2)
    return vals, idx1, idx2


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Any:
    """Find the sorted distinct values that occur in both of two arrays.

    The counterpart of :func:`numpy.intersect1d`. The result's length depends on the data,
    so under ``jit`` pass ``size``.

    Args:
        ar1, ar2: the arrays (flattened).
        assume_unique: the inputs hold no repeated value, which saves finding their
            distinct values (with repeats the result is undefined, as in NumPy).
        return_indices: also return where each common value first occurs in ``ar1`` and in
            ``ar2``.
        size: the static length of the result: shorter results are padded, longer ones cut
            (padded indices are the arrays' lengths).
        fill_value: the padding value, a static scalar as in JAX (default: the smallest
            common value, 0 when there is none).

    Returns:
        The sorted intersection, or ``(values, indices_in_ar1, indices_in_ar2)`` with
        ``return_indices``. NaN is in no intersection, as in NumPy.

    Example:
        >>> a, b = jnp.array([4, 1, 3, 1]), jnp.array([3, 1, 5])
        >>> jnp.intersect1d(a, b)
        Array([1, 3], dtype=int32)
        >>> jnp.intersect1d(a, b, return_indices=True)
        (Array([1, 3], dtype=int32), Array([1, 2], dtype=int32), Array([1, 0], dtype=int32))
        >>> jnp.intersect1d(a, b, size=3, fill_value=-1)
        Array([ 1,  3, -1], dtype=int32)
    """
    arr1, arr2 = _flat_pair("intersect1d", ar1, ar2, True)
    size = _size_arg("intersect1d", size)
    if size is not None:
        if isinstance(fill_value, Tracer):
            raise TypeError("intersect1d: fill_value must be a concrete scalar (a static "
                            "argument, as in JAX), got a traced value")
        if fill_value is not None and not isinstance(fill_value, (int, float, complex,
                                                                  bool)):
            fill_value = np.asarray(fill_value).item()  # (hashable, as a static argument)
        return _intersect1d_size(arr1, arr2, return_indices=return_indices, size=size,
                                 fill_value=fill_value, assume_unique=assume_unique)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            arr1, ind1 = jnp.unique(arr1, return_index=True)
            arr2, ind2 = jnp.unique(arr2, return_index=True)
        else:
            arr1, arr2 = jnp.unique(arr1), jnp.unique(arr2)
    aux, mask, aux_sort_indices = _intersect1d_sorted_mask(arr1, arr2, return_indices)
    int1d = aux[:-1][mask]
    if not return_indices:
        return int1d
    idx1 = aux_sort_indices[:-1][mask]
    idx2 = aux_sort_indices[1:][mask] - _n(arr1)
    if not assume_unique:
        idx1, idx2 = ind1[idx1], ind2[idx2]
    return int1d, idx1, idx2


# -- setxor1d ------------------------------------------------------------------------------------

@jit_like_jax("_setxor1d_size", static_argnames=("assume_unique", "size"))
def _setxor1d_size(arr1: Any, arr2: Any, fill_value: Any, *, assume_unique: bool,
                   size: int) -> Any:
    """The symmetric difference cut or padded to `size`: in the sorted distinct values of
    both inputs (unique's padding kept after them), an entry that equals neither
    neighbour is in exactly one input."""
    if assume_unique:
        jnp.concatenate([arr1, arr2])  # (unused; JAX stages it, so its text holds it too)
        aux = jnp.sort(jnp.concatenate([arr1, arr2]))
        flag = jnp.concatenate((bool(_n(aux)), aux[1:] != aux[:-1], True), axis=None)
    else:
        arr1, num_unique1 = _unique_padded(arr1, False)
        arr2, num_unique2 = _unique_padded(arr2, False)
        arr = _concat_at(arr1, arr2, num_unique1)
        num_unique = num_unique1 + num_unique2
        mask = jnp.arange(_n(arr) + 1) < num_unique + 1
        _, aux = lax.sort([~mask[1:], arr], is_stable=True, num_keys=2)
        # (the entry past the last distinct value counts as a differing neighbour)
        flag = mask & jnp.concatenate((bool(_n(aux)), aux[1:] != aux[:-1], False),
                                      axis=None).at[num_unique].set(True)
    aux_mask = flag[1:] & flag[:-1]
    num_results = aux_mask.sum()
    if _n(aux):
        vals = _pick_padded(aux, aux_mask, size)[1]
    else:
        vals = jnp.zeros(size, get_aval(aux).dtype)
    return _pad(vals, num_results, fill_value)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """Find the sorted distinct values that occur in exactly one of two arrays.

    The counterpart of :func:`numpy.setxor1d`. The result's length depends on the data, so
    under ``jit`` pass ``size``.

    Args:
        ar1, ar2: the arrays (flattened).
        assume_unique: the inputs hold no repeated value, which saves finding their
            distinct values (with repeats the result is undefined, as in NumPy).
        size: the static length of the result: shorter results are padded, longer ones cut.
        fill_value: the padding value (default, as in JAX: the smallest value of the
            result, found with ``min``, so NaN when the result holds a NaN; 0 when the
            result is empty).

    Returns:
        The sorted symmetric difference, 1-D. Each input that holds a NaN contributes one
        NaN, as in NumPy.

    Example:
        >>> jnp.setxor1d(jnp.array([1, 2, 3, 2]), jnp.array([3, 4]))
        Array([1, 2, 4], dtype=int32)
        >>> jnp.setxor1d(jnp.array([1, 2, 3, 2]), jnp.array([3, 4]), size=5)
        Array([1, 2, 4, 1, 1], dtype=int32)
    """
    arr1, arr2 = _flat_pair("setxor1d", ar1, ar2, False)
    size = _size_arg("setxor1d", size)
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value=fill_value,
                              assume_unique=assume_unique, size=size)
    if not assume_unique:
        arr1, arr2 = jnp.unique(arr1), jnp.unique(arr2)
    aux = jnp.concatenate((arr1, arr2))
    if _n(aux) == 0:
        return aux
    aux = jnp.sort(aux)
    flag = jnp.concatenate((True, aux[1:] != aux[:-1], True), axis=None)
    return aux[flag[1:] & flag[:-1]]
