"""Differences, integrals and interpolation for ember.numpy: trapezoid, gradient, interp,
unwrap, vander, ediff1d.

Input: array-likes (real); axes and `N` are static. Output: inexact ember arrays (vander
and ediff1d keep the input dtype). Invariants (JAX's): gradient uses second-order central
differences inside and first-order one-sided ones at the edges (edge_order is not
supported); interp's slope is 0 where two xp are within eps of each other (no NaN
gradients); left/right='extrapolate' continue the end segments. All are elementwise ops,
slices, gathers and sums, so they differentiate and map under vmap.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["trapezoid", "gradient", "interp", "unwrap", "vander", "ediff1d"]


def _slice(a: Any, start: Any, stop: Any, axis: int) -> Any:
    """a[start:stop] along axis, as one lax.slice with unit strides (JAX's slice_in_dim)."""
    n = a.shape[axis]
    lo = 0 if start is None else (start + n if start < 0 else start)
    hi = n if stop is None else (stop + n if stop < 0 else stop)
    starts, limits = [0] * a.ndim, list(a.shape)
    starts[axis], limits[axis] = lo, hi
    return lax.slice(a, starts, limits, (1,) * a.ndim)


@jit_like_jax("trapezoid", static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integrate sampled values along an axis by the trapezoidal rule.

    Args:
        y: the sample values.
        x: the sample coordinates along ``axis`` (default: evenly spaced by ``dx``).
        dx: the spacing when ``x`` is not given.
        axis: the axis to integrate along.

    Returns:
        ``sum((x[i + 1] - x[i]) * (y[i + 1] + y[i]) / 2)`` along ``axis``.

    Example:
        >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]))
        Array(4., dtype=float32)
        >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]), x=jnp.array([0.0, 1.0, 3.0]))
        Array(6.5, dtype=float32)
    """
    if x is None:
        check_arraylike("trapezoid", y)
        (ya,) = promote_dtypes_inexact(jnp.asarray(y))
        d = jnp.asarray(dx)
        if d.ndim > 0:
            d = jnp.moveaxis(jnp.expand_dims(d, tuple(builtins.range(ya.ndim - d.ndim))),
                             axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        ya, xa = promote_dtypes_inexact(jnp.asarray(y), jnp.asarray(x))
        d = jnp.diff(xa) if xa.ndim == 1 else jnp.moveaxis(jnp.diff(xa, axis=axis), axis, -1)
    ya = jnp.moveaxis(ya, axis, -1)
    if d.ndim == 0 or d.shape[-1] == 1:
        # One spacing: dx (sum y - (y[0] + y[-1]) / 2), which an empty axis makes 0.
        step = d if d.ndim == 0 else d[..., 0]
        if ya.shape[-1] == 0:
            return jnp.zeros(jnp.broadcast_shapes(ya.shape[:-1], np.shape(step)), ya.dtype)
        return step * (ya.sum(-1) - 0.5 * (ya[..., 0] + ya[..., -1]))
    return 0.5 * (d * (ya[..., 1:] + ya[..., :-1])).sum(-1)


def _gradient_1(a: Any, h: Any, axis: int) -> Any:
    """The gradient along one axis (in JAX's operation order, so its text prints alike)."""
    upper_edge = _slice(a, 1, 2, axis) - _slice(a, 0, 1, axis)
    lower_edge = _slice(a, -1, None, axis) - _slice(a, -2, -1, axis)
    if np.ndim(h) == 0:
        inner = (_slice(a, 2, None, axis) - _slice(a, None, -2, axis)) * 0.5 / h
        lower_edge = lower_edge / h
        upper_edge = upper_edge / h
        return jnp.concatenate((upper_edge, inner, lower_edge), axis=axis)
    if np.ndim(h) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if h.shape[0] != a.shape[axis]:
        raise ValueError("Spacing arrays must have the same length as the "
                         "dimension along which the gradient is calculated.")
    shape = [1] * a.ndim
    shape[axis] = h.shape[0]
    h = h.reshape(shape)
    upper_edge = upper_edge / (_slice(h, 1, 2, axis) - _slice(h, 0, 1, axis))
    lower_edge = lower_edge / (_slice(h, -1, None, axis) - _slice(h, -2, -1, axis))
    # Non-uniform second-order central difference with steps d1 (left) and d2 (right):
    # f'(x) ~ -d2/(d1(d1+d2)) f[-1] + (d2-d1)/(d1 d2) f[0] + d1/(d2(d1+d2)) f[+1].
    d1 = _slice(h, 1, -1, axis) - _slice(h, 0, -2, axis)
    d2 = _slice(h, 2, None, axis) - _slice(h, 1, -1, axis)
    wa = -d2 / (d1 * (d1 + d2))
    wb = (d2 - d1) / (d1 * d2)
    wc = d1 / (d2 * (d1 + d2))
    inner = wa * _slice(a, 0, -2, axis) + wb * _slice(a, 1, -1, axis) + \
        wc * _slice(a, 2, None, axis)
    return jnp.concatenate((upper_edge, inner, lower_edge), axis=axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """Return the numerical gradient of sampled values.

    Args:
        f: an array of samples.
        *varargs: the spacing: nothing (1 along every axis), one scalar for all axes, or one
            per axis, each a scalar step or the 1-d sample coordinates along that axis.
        axis: an int or tuple of ints: the axes to differentiate along (default all).
        edge_order: only the default (first-order edges) is supported, as in JAX.

    Returns:
        Central differences in the interior and one-sided first differences at the edges
        (second order inside, as NumPy, also for uneven coordinates); an array for one axis,
        a list of arrays for several.

    Example:
        >>> jnp.gradient(jnp.array([1.0, 4.0, 9.0, 16.0]))
        Array([3., 4., 6., 7.], dtype=float32)
        >>> jnp.gradient(jnp.array([1.0, 4.0, 9.0, 16.0]), 2.0)
        Array([1.5, 2. , 3. , 3.5], dtype=float32)
    """
    if isinstance(axis, list):
        axis = tuple(axis)  # (a static argument of jit[gradient]: hashable)
    return _gradient(f, *varargs, axis=axis, edge_order=edge_order)


@jit_like_jax("gradient", static_argnames=("axis", "edge_order"))
def _gradient(f: Any, *varargs: Any, axis: Any, edge_order: Any) -> Any:
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    check_arraylike("gradient", f, *varargs)
    a, *spacing = promote_dtypes_inexact(*[jnp.asarray(v) for v in (f, *varargs)])
    if axis is None:
        axes = tuple(builtins.range(a.ndim))
    else:
        raw = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = []
        for ax in raw:
            ax = operator.index(ax)
            if not -a.ndim <= ax < a.ndim:
                raise ValueError(f"axis {ax} is out of bounds for array of dimension {a.ndim}")
            axes.append(ax % a.ndim)
        axes = tuple(axes)
    if len(axes) == 0:
        return []
    if builtins.min(s for i, s in enumerate(a.shape) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least 2 elements are required.")
    if len(spacing) == 0:
        steps: Sequence[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        steps = spacing * len(axes)
    elif len(spacing) == len(axes):
        steps = spacing
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    out = [_gradient_1(a, h, ax) for ax, h in builtins.zip(axes, steps)]
    return out[0] if len(axes) == 1 else out


def _extrapolate_flag(v: Any, name: str) -> bool:
    if isinstance(v, str):
        if v != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is "
                             f"'extrapolate', but got: {v!r}")
        return True
    return False


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Interpolate piecewise-linearly between sample points.

    Args:
        x: the points to evaluate at.
        xp: the sample coordinates, increasing (not checked, as in NumPy).
        fp: the sample values, as long as ``xp``.
        left: the value for ``x < xp[0]`` (default ``fp[0]``).
        right: the value for ``x > xp[-1]`` (default ``fp[-1]``).
        period: a period for the coordinates: ``xp`` and ``x`` are taken modulo it
            (``left`` and ``right`` are then ignored, as in NumPy).

    Returns:
        The interpolated values, of ``x``'s shape, in the inexact type of the inputs.

    Example:
        >>> jnp.interp(jnp.array([0.5, 1.5, 5.0]), jnp.array([0.0, 1.0, 2.0]),
        ...            jnp.array([0.0, 10.0, 20.0]), right=-1.0)
        Array([ 5., 15., -1.], dtype=float32)
    """
    check_arraylike("interp", x, xp, fp)
    # JAX's staging: one jit[_interp], its string or None left/right and a None period
    # static
    static = tuple(name for name, v in (("left", left), ("right", right))
                   if isinstance(v, str) or v is None) + (("period",) if period is None
                                                          else ())
    if static not in _INTERP:
        _INTERP[static] = jit_like_jax("_interp", static_argnames=static)(_interp)
    return _INTERP[static](x, xp, fp, left=left, right=right, period=period)


_INTERP: dict[tuple[str, ...], Any] = {}


def _interp(x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any) -> Any:
    x, xp, fp = jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(x, xp)
    (fp,) = promote_dtypes_inexact(fp)
    ext_left = _extrapolate_flag(left, "left")
    ext_right = _extrapolate_flag(right, "right")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = jnp.abs(period)
        x, xp = x % period, xp % period
        xp, fp = lax.sort_key_val(xp, fp)
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    tiny = np.spacing(dtypes.finfo(xp.dtype).eps)
    flat = jnp.abs(dx) <= tiny  # a zero-width segment: take its left value, finite grads
    out = jnp.where(flat, fp[i - 1], fp[i - 1] + (delta / jnp.where(flat, 1, dx)) * df)
    # (the fill value first, then the comparison: JAX's order)
    if not ext_left:
        left_value = fp[0] if left is None else left
        if period is None:
            out = jnp.where(x < xp[0], left_value, out)
    if not ext_right:
        right_value = fp[-1] if right is None else right
        if period is None:
            out = jnp.where(x > xp[-1], right_value, out)
    return out


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """Unwrap a periodic signal: remove jumps larger than half a period.

    Args:
        p: the signal (for example phase angles).
        discont: the largest jump kept as it is (default ``period / 2``; smaller values act
            as ``period / 2``, as in NumPy).
        axis: the axis along which the signal runs.
        period: the period of the values (default ``2 pi``).

    Returns:
        ``p`` with each jump between neighbours larger than ``discont`` replaced by its
        equivalent modulo ``period``, in the inexact type of ``p``.

    Example:
        >>> jnp.unwrap(jnp.array([0.0, 3.0, 4.5, 1.0]), period=4.0)
        Array([ 0. , -1. ,  0.5,  1. ], dtype=float32)
    """
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(jnp.asarray(p), period)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    half = period // 2 if jnp.issubdtype(p.dtype, np.integer) else period / 2
    dd = jnp.diff(p, axis=axis)
    ddmod = jnp.mod(dd + half, period) - half
    ddmod = jnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    correct = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    rest = _slice(p, 1, None, axis) + jnp.cumsum(correct, axis=axis)
    return jnp.concatenate((_slice(p, 0, 1, axis), rest.astype(p.dtype)), axis=axis)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Build a Vandermonde matrix: the powers of a vector in columns.

    Args:
        x: a 1-d array.
        N: the number of columns (default ``len(x)``).
        increasing: order the powers from 0 upward (default: from ``N - 1`` down, as
            NumPy).

    Returns:
        An ``(len(x), N)`` array in ``x``'s dtype: column j holds ``x ** (N - 1 - j)``
        (``x ** j`` when increasing).

    Example:
        >>> jnp.vander(jnp.array([1, 2, 3]))
        Array([[1, 1, 1],
               [4, 2, 1],
               [9, 3, 1]], dtype=int32)
    """
    check_arraylike("vander", x)
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    if N is None:
        N = x.shape[0]
    elif isinstance(N, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            "The error occurred because of the 'N' argument of jnp.vander().")
    else:
        N = operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = jnp.arange(N, dtype=x.dtype)
    if not increasing:
        powers = (N - 1) - powers
    return jnp.power(x[:, None], powers[None, :])


@jit_like_jax("ediff1d")
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Return the differences between consecutive elements of a flattened array.

    Args:
        ary: an array; it is flattened.
        to_end: values appended after the differences (flattened).
        to_begin: values put before the differences (flattened).

    Returns:
        ``concatenate([to_begin, diff(ravel(ary)), to_end])`` in ``ary``'s dtype.

    Example:
        >>> jnp.ediff1d(jnp.array([1, 4, 9]), to_begin=0, to_end=jnp.array([100, 200]))
        Array([  0,   3,   5, 100, 200], dtype=int32)
    """
    check_arraylike("ediff1d", ary)
    a = jnp.ravel(jnp.asarray(ary))
    out = a[1:] - a[:-1]
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        out = jnp.concatenate((jnp.ravel(jnp.asarray(to_begin).astype(a.dtype)), out))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        out = jnp.concatenate((out, jnp.ravel(jnp.asarray(to_end).astype(a.dtype))))
    return out
