"""jnp.pad: NumPy's padding modes, staged in one `jit[name=_pad]` as JAX 0.10.2 stages them.

Input: an array, static widths (an int, a pair, or one pair per axis), a mode and its
keyword (constant_values, reflect_type). Output: the padded array of the input's dtype.
Under a trace the work is one nested `jit[name=_pad]` whose arguments are the array and
the constant value(s) (JAX passes `constant_values`, 0 by default, as a traced argument in
every mode), so `make_jaxpr` prints JAX's text:
- constant: convert the value to the array's dtype, then one `pad` (or one `pad` per side
  of each axis for per-axis values); the widths keep NumPy's integer type, so they print
  as `np.int64(2)` as in JAX.
- wrap: slices of the far end and near end joined around whole copies (concatenate).
- reflect/symmetric: slice, `_flip` (a nested jit of rev), concatenate, one side at a
  time, repeated while a side is wider than the axis.
- edge and maximum/minimum/mean/median: the end slice (or the statistic, of the axis or of
  stat_length values) repeated by broadcast_in_dim + reshape, then concatenate.
- linear_ramp: a linspace from the end value to the edge per side, then concatenate.
Invariants: eager mode runs the same code primitive by primitive; widths are static and
non-negative; an empty axis may only be padded by zeros widths outside constant/empty.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import ensure_array

Widths = tuple[tuple[Any, Any], ...]

_MODE_KWARGS = {
    "constant": ("constant_values",), "edge": (), "wrap": (), "empty": (),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
    "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "linear_ramp": ("end_values",),
}


def _pairs(value: Any, nd: int, name: str, integral: bool = True) -> Widths:
    """`value` broadcast to one (before, after) per axis, NumPy's rule; entries keep their
    NumPy type (np.int64 for Python ints, which is what JAX's text prints for widths)."""
    from ember.tree_util import tree_leaves
    if any(isinstance(v, Tracer) for v in tree_leaves(value)):
        raise ConcretizationTypeError(f"{name} argument of jnp.pad must be static "
                                      "(concrete values), got a traced value")
    arr = np.asarray(value)
    if integral and (arr.dtype == object or dtypes.kind(arr.dtype) not in "iu"):
        raise TypeError(f"`{name}` must be of integral type, got {value!r}")
    try:
        pairs = np.broadcast_to(arr, (nd, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. "
                         f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().") from None
    return tuple((row[0], row[1]) for row in pairs)


def _widths(pad_width: Any, nd: int) -> Widths:
    widths = _pairs(pad_width, nd, "pad_width")
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError("index can't contain negative values")
    return widths


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array.

    Args:
        array: an array.
        pad_width: how many values to add before and after each axis: an int (the same
            everywhere), a pair ``(before, after)`` (the same for every axis), or one pair
            per axis. Static, non-negative ints.
        mode: ``'constant'`` (the default; ``constant_values=`` gives the value, 0 by
            default, or a pair per axis), ``'edge'`` (repeat the end values), ``'wrap'``
            (the array repeated periodically), ``'reflect'`` (mirrored without repeating the
            end value), ``'symmetric'`` (mirrored with it), ``'maximum'``, ``'minimum'``,
            ``'mean'``, ``'median'`` (the statistic of the whole axis, or of the
            ``stat_length`` values nearest each side), ``'linear_ramp'`` (a ramp from
            ``end_values``, 0 by default, to the edge) or ``'empty'`` (zeros, as XLA has
            no uninitialized memory).
        **kwargs: ``constant_values`` for ``'constant'``; ``reflect_type`` (``'even'``, the
            default, or ``'odd'``: the reflection is ``2 * edge - mirrored``) for
            ``'reflect'`` and ``'symmetric'``; ``stat_length`` for the statistics;
            ``end_values`` for ``'linear_ramp'``. A callable mode is not supported.

    Returns:
        The padded array, of ``array``'s dtype, each axis ``before + n + after`` long.

    Example:
        >>> jnp.pad(jnp.array([1, 2, 3]), 2)
        Array([0, 0, 1, 2, 3, 0, 0], dtype=int32)
        >>> jnp.pad(jnp.array([1, 2, 3]), (2, 1), mode="reflect")
        Array([3, 2, 1, 2, 3, 2], dtype=int32)
        >>> jnp.pad(jnp.array([[1, 2], [3, 4]]), ((1, 0), (0, 1)), constant_values=9)
        Array([[9, 9, 9],
               [1, 2, 9],
               [3, 4, 9]], dtype=int32)
    """
    x = ensure_array(array)
    widths = _widths(pad_width, get_aval(x).ndim)
    if not isinstance(mode, str) or mode not in _MODE_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    extra = set(kwargs) - set(_MODE_KWARGS[mode])
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(extra)}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    nd = get_aval(x).ndim
    # static and hashable, as the nested jit's static arguments must be
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = _pairs(stat_length, nd, "stat_length")
        if any(v <= 0 for pair in stat_length for v in pair):
            raise ValueError("stat_length of 0 yields no value for padding")
    end_values = _pairs(kwargs.get("end_values", 0), nd, "end_values", integral=False)
    return _pad(x, widths, mode, kwargs.get("constant_values", 0), stat_length, end_values,
                reflect_type)


@jit_like_jax("_pad", static_argnames=("pad_width", "mode", "stat_length", "end_values",
                                       "reflect_type"))
def _pad(array: Any, pad_width: Widths, mode: str, constant_values: Any,
         stat_length: Widths | None, end_values: Widths, reflect_type: str) -> Any:
    if get_aval(array).ndim == 0:
        return array
    if mode == "constant":
        return _pad_constant(array, pad_width, constant_values)
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, pad_width, end_values)
    if mode in ("maximum", "minimum", "mean", "median"):
        return _pad_stats(array, pad_width, mode, stat_length)
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("reflect", "symmetric"):
        return _pad_reflect(array, pad_width, mode, reflect_type)
    if mode == "empty":
        return _pad_empty(array, pad_width)
    return _pad_repeated_ends(array, pad_width, mode)


def _slice_axis(x: Any, ax: int, start: int, stop: int | None) -> Any:
    """x[..., start:stop, ...] along ax (negative bounds from the end), strides printed as
    ones: JAX's slice_in_dim passes them explicitly."""
    shape = get_aval(x).shape
    n = shape[ax]
    start = operator.index(start)
    start = start + n if start < 0 else start
    stop = n if stop is None else operator.index(stop)
    stop = stop + n if stop < 0 else stop
    starts = [0] * len(shape)
    limits = list(shape)
    starts[ax], limits[ax] = start, stop
    return lax.slice(x, starts, limits, [1] * len(shape))


def _check_no_padding(widths: tuple[Any, Any], mode: str) -> None:
    if widths[0] > 0 or widths[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(x: Any, pad_width: Widths, constant_values: Any) -> Any:
    from ember.numpy._creation import asarray
    from ember.numpy._manipulation import broadcast_to, squeeze
    aval = get_aval(x)
    value = lax.convert_element_type(asarray(constant_values), aval.dtype, aval.weak_type)
    vnd = get_aval(value).ndim
    if vnd == 0 or (vnd == 1 and get_aval(value).shape[0] == 1):
        value = value if vnd == 0 else squeeze(value)
        return lax.pad(x, value, [(lo, hi, 0) for lo, hi in pad_width])
    if vnd == 1 and get_aval(value).shape[0] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape "
                         f"{get_aval(value).shape}. If the shape is 1D or 2D, the last "
                         "dimension must be of size 1 or 2.")
    value = broadcast_to(value, (aval.ndim, 2))
    # One side of one axis at a time, each with its own value (later axes pad the corners).
    for i, (lo, hi) in enumerate(pad_width):
        config: list[tuple[Any, Any, int]] = [(0, 0, 0)] * aval.ndim
        if lo != 0:
            config[i] = (lo, 0, 0)
            x = lax.pad(x, value[i, 0], config)
        if hi != 0:
            config[i] = (0, hi, 0)
            x = lax.pad(x, value[i, 1], config)
    return x


def _pad_wrap(x: Any, pad_width: Widths) -> Any:
    for i, (lo, hi) in enumerate(pad_width):
        n = get_aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        lo_copies, lo_rest = divmod(lo, n)
        hi_copies, hi_rest = divmod(hi, n)
        parts = []
        if lo_rest > 0:
            parts.append(_slice_axis(x, i, n - lo_rest, n))
        parts += [x] * int(lo_copies + hi_copies + 1)
        if hi_rest > 0:
            parts.append(_slice_axis(x, i, 0, hi_rest))
        x = lax.concatenate(parts, i)
    return x


def _pad_reflect(x: Any, pad_width: Widths, mode: str, reflect_type: str) -> Any:
    for i, (lo, hi) in enumerate(pad_width):
        n = get_aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), mode)
            continue
        if lo == 0 and hi == 0:
            continue
        x = _reflect_side(x, i, n, lo, mode, reflect_type, before=True)
        x = _reflect_side(x, i, n, hi, mode, reflect_type, before=False)
    return x


def _reflect_side(x: Any, i: int, n: int, width: Any, mode: str, reflect_type: str,
                  before: bool) -> Any:
    """Mirror the original axis (n long) onto one side, at most n - offset values per
    round (offset 1 leaves out the end value for reflect); a wider side takes more rounds,
    each mirroring the part just added."""
    from ember.numpy._manipulation import flip
    edge = _slice_axis(x, i, 0, 1) if before else _slice_axis(x, i, -1, None)
    offset = 1 if (mode == "reflect" and n > 1) else 0
    while width > 0:
        step = min(width, n - offset)
        width -= step
        if before:
            part = _slice_axis(x, i, offset, offset + step)
        else:
            stop = None if (mode == "symmetric" or n == 1) else -1
            part = _slice_axis(x, i, -(step + offset), stop)
        part = flip(part, axis=i)
        if reflect_type == "odd":
            part = 2 * edge - part
            if n > 1:
                edge = _slice_axis(part, i, 0, 1) if before else _slice_axis(part, i, -1, None)
        x = lax.concatenate([part, x] if before else [x, part], i)
    return x


def _pad_repeated_ends(x: Any, pad_width: Widths, mode: str) -> Any:
    """edge: each end slice repeated over its side's width."""
    from ember.numpy._manipulation import repeat
    for i, (lo, hi) in enumerate(pad_width):
        n = get_aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), mode)
            continue
        # Each end is sliced just before it is repeated (JAX's order of equations).
        before = repeat(_slice_axis(x, i, 0, 1), lo, axis=i)
        after = repeat(_slice_axis(x, i, n - 1, n), hi, axis=i)
        x = lax.concatenate([before, x, after], i)
    return x


def _pad_stats(x: Any, pad_width: Widths, mode: str, stat_length: Widths | None) -> Any:
    """maximum/minimum/mean/median of the whole axis, or of the stat_length values nearest
    each side, repeated over that side."""
    from ember.numpy._manipulation import repeat
    from ember.numpy._quantile import median
    from ember.numpy._reductions import max as amax
    from ember.numpy._reductions import mean
    from ember.numpy._reductions import min as amin
    from ember.numpy._ufuncs import round as jround
    stat = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}[mode]
    for i, (lo, hi) in enumerate(pad_width):
        aval = get_aval(x)
        if stat_length is None:
            before = after = stat(x, axis=i, keepdims=True)
        else:
            n = aval.shape[i]
            len_lo, len_hi = min(stat_length[i][0], n), min(stat_length[i][1], n)
            near_lo, near_hi = _slice_axis(x, i, 0, len_lo), _slice_axis(x, i, -len_hi, None)
            before = stat(near_lo, axis=i, keepdims=True)
            after = stat(near_hi, axis=i, keepdims=True)
        # Each side rounded and converted on its own, JAX's order of equations.
        if dtypes.kind(aval.dtype) in "iu":
            # NumPy rounds an integer array's statistic to the nearest value, half to even.
            before, after = jround(before), jround(after)
        before = lax.convert_element_type(before, aval.dtype, aval.weak_type)
        after = lax.convert_element_type(after, aval.dtype, aval.weak_type)
        before, after = repeat(before, lo, axis=i), repeat(after, hi, axis=i)
        x = lax.concatenate([before, x, after], i)
    return x


def _pad_linear_ramp(x: Any, pad_width: Widths, end_values: Widths) -> Any:
    """Each side a ramp from its end value to the array's edge (the edge itself left out),
    made by linspace along the axis; the after side's ramp is reversed."""
    from ember.numpy._creation import linspace
    from ember.numpy._manipulation import flip, squeeze
    for i, (lo, hi) in enumerate(pad_width):
        aval = get_aval(x)
        first = _slice_axis(x, i, 0, 1)
        last = _slice_axis(x, i, -1, None)
        before = linspace(end_values[i][0], squeeze(first, i), num=lo, endpoint=False,
                          dtype=aval.dtype, axis=i)
        before = lax.convert_element_type(before, aval.dtype, aval.weak_type)
        after = linspace(end_values[i][1], squeeze(last, i), num=hi, endpoint=False,
                         dtype=aval.dtype, axis=i)
        after = lax.convert_element_type(after, aval.dtype, aval.weak_type)
        x = lax.concatenate([before, x, flip(after, i)], i)
    return x


def _pad_empty(x: Any, pad_width: Widths) -> Any:
    """NumPy leaves these values undefined; they are zeros here, as XLA has no
    uninitialized memory."""
    from ember.numpy._creation import zeros
    for i, (lo, hi) in enumerate(pad_width):
        aval = get_aval(x)
        shape = list(aval.shape)
        parts = []
        for width in (lo, None, hi):
            if width is None:
                parts.append(x)
                continue
            shape[i] = int(width)
            parts.append(zeros(tuple(shape), aval.dtype))
        x = lax.concatenate(parts, i)
    return x
