"""Statistics for ember.numpy: cov, corrcoef, and the NaN-ignoring nanvar, nanstd,
nanquantile, nanpercentile, nanmedian.

Input: array-likes; axes, ddof, keepdims, method are static. Output: inexact ember arrays.
Invariants (JAX's): the nan-functions treat NaN as missing (a slice with nothing left, or
with count - ddof <= 0, gives NaN); nanquantile sorts each slice (NaNs last) and
interpolates between the floor and ceil of q (count - 1), or with method='inverted_cdf'
(the only one taking `weights`) picks the first value whose cumulative weight reaches q
times the total; nanmedian is its 'midpoint' at q = 1/2. cov centers with the (weighted)
mean and divides X X^T by the weights' sum minus the ddof correction; corrcoef divides by
the outer product of the standard deviations and clips to [-1, 1]. Written with sorts,
gathers and sums, so grad and vmap go through.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import _to_inexact, check_arraylike, promote_dtypes_inexact
from ember.numpy._reductions import normalize_axes

__all__ = ["cov", "corrcoef", "nanvar", "nanstd", "nanquantile", "nanpercentile",
           "nanmedian"]


@jit_like_jax("cov", static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None,
        dtype: Any = None) -> Any:
    """Estimate the covariance matrix of variables from their observations.

    The counterpart of :func:`numpy.cov`.

    Args:
        m: a 1-D or 2-D array: each row is one variable and each column one observation
            (the other way round when ``rowvar`` is False).
        y: optional further variables in the same layout, appended to ``m``'s.
        rowvar: whether rows (True, default) or columns hold the variables.
        bias: divide by N instead of N - 1.
        ddof: the divisor is ``N - ddof``; overrides ``bias``.
        fweights: optional integer repeat counts, one per observation.
        aweights: optional observation weights, one per observation.
        dtype: the result's inexact dtype.

    Returns:
        The ``(V, V)`` covariance matrix of the V variables (a 0-d array when there is one
        variable), in the inexact dtype of the inputs.

    Example:
        >>> x = jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
        >>> jnp.cov(x)
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
        >>> jnp.cov(jnp.array([1.0, 2.0, 4.0]), bias=True)
        Array(1.5555557, dtype=float32)
    """
    if y is not None:
        check_arraylike("cov", m, y)
        m, y = promote_dtypes_inexact(jnp.asarray(m), jnp.asarray(y))
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        check_arraylike("cov", m)
        (m,) = promote_dtypes_inexact(jnp.asarray(m))
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not jnp.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype!r}")
    x = jnp.atleast_2d(m)
    if not rowvar and m.ndim != 1:
        x = x.T
    if x.shape[0] == 0:
        return jnp.zeros((0, 0), x.dtype)
    if y is not None:
        y2 = jnp.atleast_2d(y)
        if not rowvar and y2.shape[0] != 1:
            y2 = y2.T
        x = jnp.concatenate((x, y2), axis=0)
    if x.shape[1] == 0:
        shape = () if x.shape[0] == 1 else (x.shape[0], x.shape[0])
        return jnp.full(shape, np.nan, dtype=x.dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        check_arraylike("cov", fweights)
        fw = jnp.asarray(fweights)
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not jnp.issubdtype(fw.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = jnp.abs(fw)
    aw = None
    if aweights is not None:
        check_arraylike("cov", aweights)
        aw = jnp.asarray(aweights)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = jnp.abs(aw)
        w = aw if w is None else w * aw
    if dtype is not None:
        x = x.astype(dtype)
        w = None if w is None else w.astype(dtype)
    avg, w_sum = jnp.average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    # The normalizer: N - ddof unweighted; with weights v = f a, sum v - ddof sum(v a)/sum v.
    if w is None:
        f: Any = x.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aw is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * jnp.sum(w * aw) / w_sum
    xc = x - avg[:, None]
    xt = xc.T if w is None else (xc * w[None, :]).T
    return jnp.squeeze(jnp.true_divide(jnp.dot(xc, xt), f))


@jit_like_jax("corrcoef", static_argnames=("rowvar", "dtype"))
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """Compute the Pearson correlation coefficients of variables.

    The counterpart of :func:`numpy.corrcoef`: :func:`cov` normalized by the standard
    deviations, with the results clipped to ``[-1, 1]``.

    Args:
        x: a 1-D or 2-D array of variables (rows) and observations (columns).
        y: optional further variables, appended to ``x``'s.
        rowvar: whether rows (True, default) or columns hold the variables.
        dtype: the result's inexact dtype.

    Returns:
        The ``(V, V)`` matrix of correlation coefficients (NaN for a variable that does not
        vary).

    Example:
        >>> x = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.5], [3.0, 2.0, 1.0]])
        >>> jnp.corrcoef(x)
        Array([[ 1.       ,  0.9979487, -1.       ],
               [ 0.9979487,  1.       , -0.9979487],
               [-1.       , -0.9979487,  1.       ]], dtype=float32)
    """
    check_arraylike("corrcoef", x)
    if dtype is not None and not jnp.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype!r}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return jnp.divide(c, c)
    sd = jnp.sqrt(jnp.diagonal(c))
    return jnp.clip(c / sd[:, None] / sd[None, :], -1, 1)


def _var_dtypes(a: Any, dtype: Any) -> tuple[np.dtype, np.dtype]:
    comp = _to_inexact(np.dtype(a.dtype))
    out = comp if dtype is None else np.dtype(dtype)
    return comp, out


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Compute the variance along the given axes, ignoring NaNs.

    The counterpart of :func:`numpy.nanvar`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        dtype: the result's dtype (by default the inexact dtype of ``a``).
        out: unsupported; must be None.
        ddof: delta degrees of freedom: the divisor is ``count - ddof``, ``count`` being
            the number of non-NaN values.
        keepdims: whether to keep the reduced axes with size 1.
        where: a bool mask of the elements to include.
        mean: a precomputed mean (with the reduced axes kept), used instead of ``nanmean``.

    Returns:
        The variance of the non-NaN values; NaN where ``count - ddof <= 0``.

    Example:
        >>> x = jnp.array([[1.0, jnp.nan, 3.0], [2.0, 2.0, jnp.nan]])
        >>> jnp.nanvar(x)
        Array(0.5, dtype=float32)
        >>> jnp.nanvar(x, axis=1, ddof=1)
        Array([2., 0.], dtype=float32)
    """
    check_arraylike("nanvar", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    a = jnp.asarray(a)
    comp, out_dtype = _var_dtypes(a, dtype)
    a = a.astype(comp)
    if mean is None:
        mean = jnp.nanmean(a, axis, keepdims=True, where=where)
    else:
        mean = jnp.asarray(mean).astype(comp)
    nan = jnp.isnan(a)
    centered = jnp.where(nan, 0, a - mean)
    count = jnp.sum(~nan, axis=axis, keepdims=keepdims, where=where) - ddof
    empty = count <= 0
    total = jnp.sum(centered * centered, axis=axis, keepdims=keepdims, where=where)
    res = jnp.where(empty, np.nan, total) / jnp.where(empty, 1, count).astype(comp)
    return res.astype(out_dtype)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Compute the standard deviation along the given axes, ignoring NaNs.

    The counterpart of :func:`numpy.nanstd`: the square root of :func:`nanvar`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        dtype: the result's dtype (by default the inexact dtype of ``a``).
        out: unsupported; must be None.
        ddof: delta degrees of freedom: the divisor is ``count - ddof``.
        keepdims: whether to keep the reduced axes with size 1.
        where: a bool mask of the elements to include.
        mean: a precomputed mean (with the reduced axes kept).

    Returns:
        The standard deviation of the non-NaN values; NaN where ``count - ddof <= 0``.

    Example:
        >>> jnp.nanstd(jnp.array([1.0, jnp.nan, 3.0]))
        Array(1., dtype=float32)
    """
    check_arraylike("nanstd", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanstd is not supported.")
    return jnp.sqrt(nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where,
                           mean=mean))


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


@jit_like_jax("nanquantile", static_argnames=("axis", "overwrite_input", "keepdims",
                                               "method"))
def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None) -> Any:
    """Compute quantiles along the given axes, ignoring NaNs.

    The counterpart of :func:`numpy.nanquantile`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        q: the quantile(s) to compute, a scalar or a 1-D array of values in ``[0, 1]``.
        out, overwrite_input: unsupported; must be None and False.
        method: how to pick a value between two data points: ``"linear"`` (default),
            ``"lower"``, ``"higher"``, ``"midpoint"``, ``"nearest"`` or ``"inverted_cdf"``.
        keepdims: whether to keep the reduced axes with size 1.
        weights: observation weights, only with ``method="inverted_cdf"``.

    Returns:
        The quantiles of the non-NaN values; a 1-D ``q`` adds a leading axis with one entry
        per quantile. A slice that is all NaN gives NaN.

    Example:
        >>> x = jnp.array([1.0, jnp.nan, 2.0, 4.0])
        >>> jnp.nanquantile(x, 0.5)
        Array(2., dtype=float32)
        >>> jnp.nanquantile(x, jnp.array([0.0, 0.25, 1.0]))
        Array([1. , 1.5, 4. ], dtype=float32)
    """
    check_arraylike("nanquantile", a, q)
    if overwrite_input or out is not None:
        raise ValueError("jax.numpy.nanquantile does not support overwrite_input=True or "
                         "out != None")
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  "'inverted_cdf' supports weights.")
    if (weights is None and method != "inverted_cdf" and 0 not in np.shape(a)
            and not isinstance(axis, list)):
        # (JAX's staging, shared with quantile; weights and empty slices below)
        from ember.numpy._quantile import _quantile
        return _quantile(jnp.asarray(a), jnp.asarray(q), axis, method, keepdims,
                         squash_nans=True)
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    q = jnp.asarray(q)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    nd, orig = a.ndim, a.shape
    axes = tuple(builtins.range(nd)) if axis is None else normalize_axes(axis, nd)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    keep = [i for i in builtins.range(nd) if i not in axes]
    kept_shape = tuple(a.shape[i] for i in keep)
    # The reduced axes, flattened, become the last one: (kept..., n).
    n = math.prod(orig[i] for i in axes)
    a = jnp.transpose(a, (*keep, *axes)).reshape((*kept_shape, n))
    w = None
    if weights is not None:
        w = _weights_like(jnp.asarray(weights), a.dtype, orig, axes, axis, keep, kept_shape, n)
    if n == 0:  # nothing to pick from: NaN, as for an all-NaN slice
        a = jnp.full((*kept_shape, 1), np.nan, a.dtype)
        w = None if w is None else jnp.ones((*kept_shape, 1), a.dtype)
    qf = q.astype(a.dtype).reshape(q.shape + (1,) * len(kept_shape))
    if method == "inverted_cdf":
        res = _inverted_cdf(a, qf, w)
    else:
        res = _interpolated(a, qf, q.shape, method)
    if keepdims:
        res = res.reshape(q.shape + tuple(1 if i in axes else d for i, d in enumerate(orig)))
    return res


def _interpolated(a: Any, qf: Any, q_shape: tuple[int, ...], method: str) -> Any:
    """The quantiles of each row of a (..., n) between the sorted non-NaN values at
    floor and ceil of q (count - 1)."""
    s = jnp.sort(a, axis=-1)  # NaNs last
    count = jnp.sum(~jnp.isnan(s), axis=-1).astype(a.dtype)  # (kept...)
    pos = qf * (count - 1)
    lo_f, hi_f = jnp.floor(pos), jnp.ceil(pos)
    hi_w = pos - lo_f
    top = jnp.maximum(count - 1, 0)
    lo = jnp.clip(lo_f, 0, top).astype(np.int32)
    hi = jnp.clip(hi_f, 0, top).astype(np.int32)
    sb = jnp.broadcast_to(s, q_shape + s.shape)

    def pick(i: Any) -> Any:
        return jnp.take_along_axis(sb, i[..., None], axis=-1)[..., 0]

    if method == "lower":
        return pick(lo)
    if method == "higher":
        return pick(hi)
    if method == "nearest":
        return jnp.where(hi_w <= 0.5, pick(lo), pick(hi))
    if method == "midpoint":
        return (pick(lo) + pick(hi)) * 0.5
    return pick(lo) * (1 - hi_w) + pick(hi) * hi_w


def _weights_like(w: Any, dtype: np.dtype, orig: tuple[int, ...], axes: tuple[int, ...],
                  axis: Any, keep: list[int], kept_shape: tuple[int, ...], n: int) -> Any:
    """weights (shaped like a, or like a's reduced axes) laid out as a's rows (..., n)."""
    w = w.astype(dtype)
    if w.shape != orig:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        want = tuple(orig[ax] for ax in axes)
        if w.shape != want:
            raise ValueError(f"Weights shape {w.shape} must match reduction axes {want}")
        w = jnp.broadcast_to(w.reshape((1,) * len(keep) + want),
                             kept_shape + want).reshape((*kept_shape, n))
        return w
    return jnp.transpose(w, (*keep, *axes)).reshape((*kept_shape, n))


def _inverted_cdf(a: Any, qf: Any, w: Any) -> Any:
    """The first sorted value whose cumulative weight (NaN data and bad weights count 0)
    reaches q times the total; NaN where a weight is negative or NaN, or no data is left."""
    if w is None:
        w = jnp.ones_like(a)
    order = jnp.argsort(a, axis=-1, stable=True)  # NaNs last
    s = jnp.take_along_axis(a, order, axis=-1)
    ws = jnp.take_along_axis(w, order, axis=-1)
    bad = (ws < 0) | jnp.isnan(ws)
    missing = jnp.isnan(s)
    clean = jnp.where(bad | missing, 0, ws)
    cum = jnp.cumsum(clean, axis=-1)
    target = qf * cum[..., -1]
    idx = jnp.sum(cum < target[..., None], axis=-1)
    valid = jnp.sum(~missing, axis=-1)
    idx = jnp.clip(idx, 0, jnp.maximum(valid - 1, 0))
    sb = jnp.broadcast_to(s, idx.shape + s.shape[-1:])
    res = jnp.take_along_axis(sb, idx[..., None].astype(np.int32), axis=-1)[..., 0]
    nan = jnp.any(bad, axis=-1) | (valid == 0)
    return jnp.where(nan, np.nan, res)


@jit_like_jax("nanpercentile", static_argnames=("axis", "overwrite_input", "keepdims",
                                                 "method"))
def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Any:
    """Compute percentiles along the given axes, ignoring NaNs.

    The counterpart of :func:`numpy.nanpercentile`: :func:`nanquantile` of ``q / 100``.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        q: the percentile(s), a scalar or a 1-D array of values in ``[0, 100]``.
        out, overwrite_input: unsupported; must be None and False.
        method: the interpolation method, as for :func:`nanquantile`.
        keepdims: whether to keep the reduced axes with size 1.
        weights: observation weights, only with ``method="inverted_cdf"``.

    Returns:
        The percentiles of the non-NaN values; a 1-D ``q`` adds a leading axis.

    Example:
        >>> jnp.nanpercentile(jnp.array([[10.0, jnp.nan], [30.0, 40.0]]), 50, axis=0)
        Array([20., 40.], dtype=float32)
    """
    check_arraylike("nanpercentile", a, q)
    (qf,) = promote_dtypes_inexact(jnp.asarray(q))
    return nanquantile(a, qf / 100, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, keepdims=keepdims, weights=weights)


@jit_like_jax("nanmedian", static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Compute the median along the given axes, ignoring NaNs.

    The counterpart of :func:`numpy.nanmedian`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        out, overwrite_input: unsupported; must be None and False.
        keepdims: whether to keep the reduced axes with size 1.

    Returns:
        The median of the non-NaN values (the mean of the two middle ones for an even
        count); NaN where all are NaN.

    Example:
        >>> x = jnp.array([[3.0, jnp.nan, 1.0], [4.0, 2.0, jnp.nan]])
        >>> jnp.nanmedian(x)
        Array(2.5, dtype=float32)
        >>> jnp.nanmedian(x, axis=1)
        Array([2., 3.], dtype=float32)
    """
    check_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")
