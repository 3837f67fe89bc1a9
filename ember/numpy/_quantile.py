"""jnp.quantile, jnp.percentile and jnp.median, staged as JAX 0.10.2 stages them (one
`jit[name=quantile]` equation, `jit[name=median]` / `jit[name=percentile]` around it).

Input: an array (integers promote to the default float), quantiles ``q`` in [0, 1] (a
scalar or 1-d; percentiles in [0, 100]), an axis (None, an int or a tuple) and a method.
Output: one result per quantile, ``q``'s axis first. Invariants: a slice holding a NaN
gives NaN; the position of quantile q in a sorted slice of n values is q (n - 1), and the
methods pick or mix the values at its floor and ceiling ('linear' weighs them as JAX does:
low (1 - w) + high w).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.lax._slicing import GatherDimensionNumbers, GatherScatterMode
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, ensure_array, promote_dtypes_inexact

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


@jit_like_jax("quantile", static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def quantile(a: Any, q: Any, axis: Any = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False) -> Any:
    """Compute the ``q``-th quantiles of the values along the given axes.

    Args:
        a: an array; integers and bools promote to the default float type.
        q: a quantile or 1-d array of quantiles, in [0, 1].
        axis: an int, a tuple of ints, or None (the default) for the flattened array.
        out: not supported (must be None), as in JAX.
        overwrite_input: must be False, as in JAX.
        method: how to combine the sorted values at the floor and ceiling of the
            position ``q (n - 1)``: ``'linear'`` (interpolate), ``'lower'``,
            ``'higher'``, ``'midpoint'`` (their mean) or ``'nearest'`` (the position
            rounded half to even, as NumPy; JAX takes the lower value at a half).
            NumPy's other methods are not supported.
        keepdims: keep the reduced axes with length 1.

    Returns:
        One result per quantile, ``q``'s axis first; NaN for a slice holding a NaN.
        'linear' computes ``low (1 - w) + high w`` (JAX's formula), which can differ from
        NumPy's in the last bit.

    Example:
        >>> jnp.quantile(jnp.array([1.0, 2.0, 4.0, 8.0]), 0.5)
        Array(3., dtype=float32)
        >>> jnp.quantile(jnp.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]]),
        ...              jnp.array([0.0, 0.75]), axis=1)
        Array([[1., 3.],
               [3., 6.]], dtype=float32)
    """
    check_arraylike("quantile", a, q)
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.quantile does not support overwrite_input=True "
                         "or out != None")
    return _quantile(ensure_array(a), ensure_array(q), axis, method, keepdims)


@jit_like_jax("percentile", static_argnames=("axis", "overwrite_input", "keepdims",
                                              "method"))
def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """Compute the ``q``-th percentiles of the values along the given axes.

    Args:
        a: an array; integers and bools promote to the default float type.
        q: a percentile or 1-d array of percentiles, in [0, 100].
        axis: an int, a tuple of ints, or None (the default) for the flattened array.
        out: not supported (must be None), as in JAX.
        overwrite_input: must be False, as in JAX.
        method: as for ``quantile``.
        keepdims: keep the reduced axes with length 1.

    Returns:
        ``quantile(a, q / 100, ...)``: one result per percentile, ``q``'s axis first.

    Example:
        >>> jnp.percentile(jnp.array([1.0, 2.0, 4.0, 8.0]), jnp.array([0.0, 50.0, 100.0]))
        Array([1., 3., 8.], dtype=float32)
    """
    check_arraylike("percentile", a, q)
    (q,) = promote_dtypes_inexact(ensure_array(q))
    return quantile(a, q / 100, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims)


@jit_like_jax("median", static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """Compute the median of the values along the given axes.

    Args:
        a: an array; integers and bools promote to the default float type.
        axis: an int, a tuple of ints, or None (the default) for the flattened array.
        out: not supported (must be None), as in JAX.
        overwrite_input: must be False, as in JAX.
        keepdims: keep the reduced axes with length 1.

    Returns:
        The middle value, or the mean of the two middle values for an even count
        (``quantile(a, 0.5, method='midpoint')``); NaN for a slice holding a NaN.

    Example:
        >>> jnp.median(jnp.array([[3.0, 1.0, 2.0], [4.0, 8.0, 6.0]]), axis=1)
        Array([2., 6.], dtype=float32)
        >>> jnp.median(jnp.array([1, 2, 4, 8]))
        Array(3., dtype=float32)
    """
    check_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              squash_nans: bool = False) -> Any:
    """The quantiles of a along axis; with squash_nans (nanquantile) of its non-NaN values
    only, the positions scaled by each slice's own count."""
    from ember.numpy._manipulation import where
    from ember.numpy._reductions import any as _any
    from ember.numpy._reductions import sum as _sum
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', or "
                         "'nearest'")
    (a,) = promote_dtypes_inexact(a)
    if dtypes.kind(get_aval(a).dtype) == "c":
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    shape = get_aval(a).shape
    nd = len(shape)
    keep_shape: list[int] = []
    if axis is None:
        if keepdims:
            keep_shape = [1] * nd
        a = lax.reshape(a, (math.prod(shape),))
        axis = 0
    elif isinstance(axis, (tuple, list)):
        # The reduced axes, flattened, become the last one (the kept ones in order first).
        axes = tuple(_canonical(ax, nd) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        keep_shape = [1 if i in axes else d for i, d in enumerate(shape)]
        kept = [i for i in range(nd) if i not in axes]
        perm = list(range(nd))
        for i, s in enumerate(kept):
            perm[i], perm[s] = perm[s], perm[i]
        a = lax.reshape(a, tuple(shape[i] for i in kept)
                        + (math.prod(shape[i] for i in axes),), perm)
        axis = get_aval(a).ndim - 1
    else:
        axis = _canonical(axis, nd)
    q_shape = get_aval(q).shape
    q_ndim = len(q_shape)
    if q_ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    a_shape = get_aval(a).shape
    if a_shape[axis] == 0:
        raise ValueError("quantile of an empty axis")
    qdt = get_aval(q).dtype
    one = lax.convert_element_type(1, qdt)
    zero = lax.convert_element_type(0, qdt)
    if squash_nans:
        # NaNs (made positive) sort last; each slice's count of the others scales q.
        a = where(lax.ne(a, a), np.nan, a)
        a = lax.sort(a, dimension=axis)
        counts = _sum(lax.bitwise_not(lax.ne(a, a)), axis=axis, dtype=qdt, keepdims=keepdims)
        reduced = get_aval(counts).shape
        q = lax.expand_dims(q, tuple(range(q_ndim, len(reduced) + q_ndim)))
        counts = lax.expand_dims(counts, tuple(range(q_ndim)))
        pos = lax.mul(q, lax.sub(counts, one))
        low = lax.floor(pos)
        high = lax.ceil(pos)
        low_pos = low
        high_weight = lax.sub(pos, low)
        low_weight = lax.sub(one, high_weight)
        low = lax.max(zero, lax.min(low, lax.sub(counts, one)))
        high = lax.max(zero, lax.min(high, lax.sub(counts, one)))
        low = lax.convert_element_type(low, dtypes.default_int())
        high = lax.convert_element_type(high, dtypes.default_int())
        # a[index] with an iota per result dimension and the position along `axis`
        out_shape = tuple(q_shape) + tuple(reduced)
        index = [lax.broadcasted_iota(dtypes.default_int(), out_shape, d + q_ndim)
                 for d in range(len(reduced))]
        if keepdims:
            index[axis] = low
        else:
            index.insert(axis, low)
        low_value = a[tuple(index)]
        index[axis] = high
        high_value = a[tuple(index)]
    else:
        # A slice holding a NaN becomes all NaN (NaN sorts last, so it would be picked
        # only near q = 1 otherwise).
        a = where(_any(lax.ne(a, a), axis=axis, keepdims=True), np.nan, a)
        a = lax.sort(a, dimension=axis)
        n = lax.convert_element_type(a_shape[axis], qdt)
        pos = lax.mul(q, lax.sub(n, one))
        low = lax.floor(pos)
        high = lax.ceil(pos)
        low_pos = low
        high_weight = lax.sub(pos, low)
        low_weight = lax.sub(one, high_weight)
        low = lax.clamp(zero, low, lax.sub(n, one))
        high = lax.clamp(zero, high, lax.sub(n, one))
        low = lax.convert_element_type(low, dtypes.default_int())
        high = lax.convert_element_type(high, dtypes.default_int())
        slice_sizes = list(a_shape)
        slice_sizes[axis] = 1
        out_nd = len(a_shape) + q_ndim if keepdims else len(a_shape) + q_ndim - 1
        dnums = GatherDimensionNumbers(offset_dims=tuple(range(q_ndim, out_nd)),
                                       collapsed_slice_dims=() if keepdims else (axis,),
                                       start_index_map=(axis,))

        def pick(index: Any) -> Any:
            idx = lax.broadcast_in_dim(index, (*q_shape, 1), tuple(range(q_ndim)))
            return lax.gather(a, idx, dnums, slice_sizes,
                              mode=GatherScatterMode.PROMISE_IN_BOUNDS)

        low_value, high_value = pick(low), pick(high)
        if q_ndim == 1:
            low_weight = lax.broadcast_in_dim(low_weight, get_aval(low_value).shape, (0,))
            high_weight = lax.broadcast_in_dim(high_weight, get_aval(high_value).shape,
                                               (0,))
    if method == "nearest":
        # NumPy's rule: the position rounded half to even (JAX takes the lower value at a
        # half, so its 'nearest' differs from NumPy's there).
        take_low = lax.eq(lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN), low_pos)
        if get_aval(take_low).shape != get_aval(low_value).shape:
            take_low = lax.broadcast_in_dim(take_low, get_aval(low_value).shape,
                                            tuple(range(get_aval(take_low).ndim)))
    if method == "linear":
        result = lax.add(lax.mul(lax.convert_element_type(low_value, qdt), low_weight),
                         lax.mul(lax.convert_element_type(high_value, qdt), high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select(take_low, low_value, high_value)
    else:
        half = lax.convert_element_type(0.5, get_aval(low_value).dtype)
        result = lax.mul(lax.add(low_value, high_value), half)
    if keepdims and keep_shape:
        if q_ndim > 0:
            keep_shape = [q_shape[0], *keep_shape]
        result = lax.reshape(result, tuple(keep_shape))
    return lax.convert_element_type(result, get_aval(a).dtype)


def _canonical(axis: Any, ndim: int) -> int:
    import operator
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim
