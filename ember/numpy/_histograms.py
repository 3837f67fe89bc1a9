"""Counting into bins for ember.numpy: bincount, digitize, histogram_bin_edges, histogram,
histogram2d, histogramdd.

Input: array-likes; bin counts (`bins` as an int, `length`, `minlength`) are static Python
ints, bin edges may be traced arrays. Output: ember arrays. Invariants (JAX's): bincount
clips negative values to bin 0 and drops values >= `length`; without `length` the output
size comes from the concrete data (a ConcretizationTypeError under jit). A histogram's
last bin is closed ([e[-2], e[-1]]), the others half open; values outside the edges are
not counted. Everything is one scatter-add, so it differentiates in the weights and maps
under vmap.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import _to_inexact, check_arraylike, promote_dtypes_inexact

__all__ = ["bincount", "digitize", "histogram_bin_edges", "histogram", "histogram2d",
           "histogramdd"]


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {value}\n"
            f"The error occurred because of argument {what}.")
    return operator.index(value)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """Count (or sum weights of) the occurrences of each non-negative integer.

    The counterpart of :func:`numpy.bincount`. The result's length must be static: under
    ``jit`` pass ``length``. Unlike NumPy, negative values are counted in bin 0 instead of
    raising, and values at or past ``length`` are dropped.

    Args:
        x: a 1-D array of integers (or bools).
        weights: an optional array shaped like ``x``; bin ``i`` then sums the weights of the
            entries equal to ``i``.
        minlength: the smallest length of the result.
        length: the exact length of the result (static); needed when ``x`` is traced.

    Returns:
        ``counts`` with ``counts[i]`` the number (or weight) of entries equal to ``i``, of
        length ``length``, or else ``max(minlength, max(x) + 1)``; int32 without weights,
        the weights' dtype with them.

    Example:
        >>> jnp.bincount(jnp.array([0, 1, 1, 3]))
        Array([1, 2, 0, 1], dtype=int32)
        >>> jnp.bincount(jnp.array([0, 1, 1, 3]), weights=jnp.array([0.5, 1.0, 2.0, 4.0]))
        Array([0.5, 3. , 0. , 4. ], dtype=float32)
        >>> jnp.bincount(jnp.array([0, 1, 1, 3]), length=3)
        Array([1, 2, 0], dtype=int32)
    """
    check_arraylike("bincount", x)
    x = jnp.asarray(x)
    if x.dtype == np.bool_:
        x = x.astype(np.int32)
    if not jnp.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = _static_int(minlength, "'minlength' of jnp.bincount")
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected\n"
                "The error occurred because of argument 'x' of jnp.bincount. "
                "To avoid this error, pass a static `length` argument.")
        xa = np.asarray(x)
        length = builtins.max(minlength, xa.size and int(builtins.max(0, xa.max())) + 1)
    else:
        length = _static_int(length, "'length' of jnp.bincount")
    if weights is None:
        w: Any = jnp.array(1, dtype=dtypes.default_int())
        out_dtype = w.dtype
    else:
        w = jnp.asarray(weights)
        if w.shape != x.shape:
            raise ValueError(
                "type of weights must match type of x. Got"
                f" typeof(x)={get_aval(x).str_short()} and"
                f" typeof(weights)={get_aval(w).str_short()}")
        out_dtype = w.dtype
    return jnp.zeros(length, out_dtype).at[jnp.clip(x, 0)].add(w, mode="drop")


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """Find the bin of each value among a sorted array of bin edges.

    The counterpart of :func:`numpy.digitize`, computed with :func:`searchsorted`.

    Args:
        x: the values to place.
        bins: a 1-D array of edges, increasing or decreasing.
        right: for increasing ``bins``, False (default) puts ``x`` in bin ``i`` when
            ``bins[i-1] <= x < bins[i]``, True when ``bins[i-1] < x <= bins[i]``; decreasing
            bins mirror the inequalities.
        method: the search method passed to :func:`searchsorted`.

    Returns:
        An int32 array shaped like ``x``: 0 below the first edge, ``len(bins)`` past the last.

    Example:
        >>> bins = jnp.array([0.0, 1.0, 2.5])
        >>> jnp.digitize(jnp.array([-1.0, 0.0, 1.0, 2.0, 3.0]), bins)
        Array([0, 1, 2, 2, 3], dtype=int32)
        >>> jnp.digitize(jnp.array([-1.0, 0.0, 1.0, 2.0, 3.0]), bins, right=True)
        Array([0, 0, 1, 2, 3], dtype=int32)
    """
    check_arraylike("digitize", x, bins)
    x, b = jnp.asarray(x), jnp.asarray(bins)
    if isinstance(right, Tracer):
        raise ConcretizationTypeError("right argument of jnp.digitize() must be static")
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    return _digitize(x, b, right=right, method=method)


@jit_like_jax("digitize", static_argnames=("right", "method"))
def _digitize(x: Any, b: Any, right: bool, method: str | None) -> Any:
    if b.shape[0] == 0:
        return jnp.zeros_like(x, dtype=np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = b[-1] >= b[0]
    up = jnp.searchsorted(b, x, side=side, **kw)
    down = b.shape[0] - jnp.searchsorted(b[::-1], x, side=side, **kw)
    return jnp.where(increasing, up, down)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> Any:
    """Compute the bin edges a histogram would use.

    The counterpart of :func:`numpy.histogram_bin_edges`; NumPy's string estimators
    (``bins="auto"`` and the like) raise ``NotImplementedError``.

    Args:
        a: the data (flattened).
        bins: an int (static): that many equal bins; or a 1-D array of edges, returned as is.
        range: ``(lo, hi)``, the span of the equal bins; default ``(a.min(), a.max())``. An
            empty span ``lo == hi`` widens to ``(lo - 0.5, hi + 0.5)``.
        weights: accepted for NumPy compatibility; the edges do not depend on it.

    Returns:
        The ``bins + 1`` edges, in ``a``'s inexact dtype.

    Example:
        >>> jnp.histogram_bin_edges(jnp.array([1, 2, 5]), bins=4)
        Array([1., 2., 3., 4., 5.], dtype=float32)
        >>> jnp.histogram_bin_edges(jnp.array([3.0, 3.0]), bins=2)
        Array([2.5, 3. , 3.5], dtype=float32)
    """
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = jnp.asarray(a)
    dtype = _to_inexact(arr.dtype)
    if np.ndim(bins) == 1:
        return jnp.asarray(bins, dtype=dtype)
    n = _static_int(bins, "bins of histogram_bin_edges")
    if range is None:
        rng = jnp.array([arr.min(), arr.max()], dtype=dtype)
    else:
        rng = jnp.asarray(range, dtype=dtype)
    if rng.shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    # An empty span widens by half a unit each way; the peak-to-peak test is staged once
    # per end, as JAX stages it, so the traced program prints alike.
    lo = jnp.where(jnp.ptp(rng) == 0, rng[0] - 0.5, rng[0])
    hi = jnp.where(jnp.ptp(rng) == 0, rng[1] + 0.5, rng[1])
    return jnp.linspace(lo, hi, n + 1, dtype=dtype)


def _bin_index(values: Any, edges: Any, uniform: bool = False) -> Any:
    """1 + the bin of each value (0: below the first edge, len(edges): above the last or
    NaN); a value on the last edge belongs to the last bin. `uniform` edges (from an int
    `bins`) skip the binary search: the bin is floor((v - e0) n / (e_n - e0)), then moved
    by one where rounding put it past an edge (v < e[k] or v >= e[k+1]), as NumPy does, so
    the result equals the search's. (JAX searches equal-width edges too, so its jaxpr
    differs here; the search made a 1e7-value histogram 4x slower: 70 ms against NumPy's
    40, where the arithmetic takes 17.)"""
    if not uniform:
        idx = jnp.searchsorted(edges, values, side="right")
        return jnp.where(values == edges[-1], edges.shape[0] - 1, idx)
    n = edges.shape[0] - 1
    lo, hi = edges[0], edges[-1]
    k = jnp.floor((values - lo) * (n / (hi - lo)))
    k = jnp.clip(jnp.where(jnp.isnan(k), 0, k), 0, n - 1).astype(np.int32)
    k = k - (values < edges[k]).astype(np.int32)
    k = k + ((values >= edges[k + 1]) & (k != n - 1)).astype(np.int32)
    inside = (values >= lo) & (values <= hi)
    return jnp.where(inside, k + 1, jnp.where(values < lo, 0, n + 1))


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,
              density: bool | None = None) -> tuple[Any, Any]:
    """Count how many values fall into each bin.

    The counterpart of :func:`numpy.histogram`. Every bin is half-open ``[e_i, e_i+1)``
    except the last, which also holds its right edge; values outside the edges (and NaNs)
    are not counted.

    Args:
        a: the data (flattened).
        bins: an int (static): that many equal bins over ``range``; or a 1-D array of
            monotonically increasing edges.
        range: ``(lo, hi)`` for the equal bins; default ``(a.min(), a.max())``.
        weights: an optional array shaped like ``a``: each value counts with its weight.
        density: divide the counts by their total and by the bin widths, so the histogram
            integrates to 1.

    Returns:
        ``(counts, edges)``: the ``len(edges) - 1`` counts (floats, in the inexact dtype of
        ``a`` and ``weights``, as in JAX; NumPy gives integers without weights) and the edges.

    Example:
        >>> counts, edges = jnp.histogram(jnp.array([1.0, 2.0, 2.0, 3.0, 4.0]), bins=3)
        >>> counts
        Array([1., 2., 2.], dtype=float32)
        >>> edges
        Array([1., 2., 3., 4.], dtype=float32)
        >>> jnp.histogram(jnp.array([0.5, 1.5, 9.0]), bins=jnp.array([0.0, 1.0, 2.0]))[0]
        Array([1., 1.], dtype=float32)
    """
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(jnp.asarray(a))
        w = jnp.ones_like(a)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, w = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(weights))
    edges = histogram_bin_edges(a, bins, range, w)
    idx = _bin_index(jnp.ravel(a), edges, np.ndim(bins) == 0)
    counts = jnp.zeros(edges.shape[0], w.dtype).at[idx].add(jnp.ravel(w))[1:]
    if density:
        counts = counts / jnp.diff(edges) / counts.sum()
    return counts, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, Any, Any]:
    """Count the points of two coordinate arrays in a 2-D grid of bins.

    The counterpart of :func:`numpy.histogram2d`: :func:`histogramdd` of the points
    ``(x[i], y[i])``.

    Args:
        x: the first coordinates, 1-D.
        y: the second coordinates, shaped like ``x``.
        bins: an int (the same number of equal bins for both), a pair of ints, a 1-D array of
            edges shared by both, or a pair of edge arrays.
        range: ``[(xlo, xhi), (ylo, yhi)]`` for the equal bins (an entry may be None).
        weights: an optional weight per point.
        density: normalize so that the histogram integrates to 1 over the grid.

    Returns:
        ``(counts, x_edges, y_edges)``, ``counts`` of shape ``(len(x_edges) - 1,
        len(y_edges) - 1)`` with the first coordinate along the first axis.

    Example:
        >>> x = jnp.array([0.0, 0.5, 1.0, 1.0])
        >>> y = jnp.array([0.0, 1.0, 1.0, 0.2])
        >>> counts, xe, ye = jnp.histogram2d(x, y, bins=2)
        >>> counts
        Array([[1., 0.],
               [1., 2.]], dtype=float32)
        >>> xe
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    check_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # one array of edges shared by both coordinates
        bins = [jnp.asarray(bins), jnp.asarray(bins)]
    sample = jnp.transpose(jnp.asarray([x, y]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: bool | None = None) -> tuple[Any, list[Any]]:
    """Count points in D dimensions on a grid of bins.

    The counterpart of :func:`numpy.histogramdd`: each point's bin index per dimension is
    found as in :func:`histogram`, and one :func:`bincount` counts the combined indices.

    Args:
        sample: an ``(N, D)`` array of N points in D dimensions.
        bins: an int for all dimensions, or one entry per dimension, each an int or a 1-D
            array of edges.
        range: None, or one ``(lo, hi)`` pair (or None) per dimension.
        weights: an optional array of N weights.
        density: normalize so that the histogram integrates to 1 over the grid.

    Returns:
        ``(counts, edges)``: ``counts`` of shape ``(bins_0, ..., bins_D-1)`` and the list of
        the D arrays of edges.

    Example:
        >>> pts = jnp.array([[0.0, 0.0], [0.2, 1.0], [1.0, 1.0]])
        >>> counts, edges = jnp.histogramdd(pts, bins=(2, 2))
        >>> counts
        Array([[1., 1.],
               [0., 1.]], dtype=float32)
        >>> edges[1]
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(jnp.asarray(sample))
    else:
        check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(jnp.asarray(sample), jnp.asarray(weights))
    N, D = np.shape(sample)
    if range is not None and (len(range) != D or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence "
                         f"of {D} pairs or Nones; got range={range}")
    try:
        per_dim: Sequence[Any] = list(bins)
    except TypeError:
        per_dim = D * [bins]
    else:
        if len(per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    idx, edges = [], []
    for i in builtins.range(D):
        e = histogram_bin_edges(sample[:, i], per_dim[i], None if range is None else range[i],
                                weights)
        idx.append(_bin_index(sample[:, i], e, np.ndim(per_dim[i]) == 0))
        edges.append(e)
    # Bin index 0 and len(e) are the outliers below and above: D-dim table of len(e) + 1
    # per axis, flattened in C order, then the outlier rows cut off.
    nbins = tuple(int(e.shape[0]) + 1 for e in edges)
    flat = jnp.ravel_multi_index(tuple(idx), nbins, mode="clip") if N else \
        jnp.zeros((0,), np.int32)
    size = int(np.prod(nbins))
    w = jnp.ones((N,), sample.dtype) if weights is None else weights
    hist = jnp.zeros(size, w.dtype).at[flat].add(w).reshape(nbins)
    hist = hist[tuple(builtins.slice(1, -1) for _ in builtins.range(D))]
    if density:
        hist = hist / hist.sum()
        for i in builtins.range(D):
            shape = [1] * D
            shape[i] = nbins[i] - 2
            hist = hist / jnp.diff(edges[i]).reshape(shape)
    return hist, edges
