"""Cumulative (inclusive scan) reductions: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Input: one array; params `axis` (a non-negative int) and `reverse` (scan from the end).
Output: the same aval. out[i] = x[0] op x[1] op ... op x[i] along `axis` (or x[i] op ...
op x[n-1] when reverse). Printed as `cumsum[axis=0 reverse=False]`, as JAX 0.10.2 does.

Semantics: integer sums and products wrap; cummax/cummin propagate NaN (once a NaN is seen,
every later entry is NaN); bool cummax/cummin are running or/and. cumlogsumexp computes
log(exp(a) + exp(b)) stably (max + log1p(exp(-|a - b|))), so inf and -inf inputs behave.
Float scans accumulate left to right in the operand dtype, float16 and bfloat16 sums and
products in float32, rounded once per element (hlo/accumulation.py; the lowering scans in
float32 between two converts); XLA may associate differently, so compiled float results
agree within rounding, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.hlo.accumulation import accumulation_dtype
from ember.hlo.evaluator.reductions import extremum_accumulate
from ember.hlo.shape import element_type_from_numpy
from ember.prims import _rules as R


def _define(name: str, kinds: str, scan: Callable[[np.ndarray, int], np.ndarray],
            combine: Callable[[Any, Any, Any], Any], identity: Callable[[np.dtype], Any],
            widen: bool = False) -> Primitive:
    prim = Primitive(name)
    prim.def_lowering(_scan_lowering(combine, identity, widen))

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        R.check_dtype_kinds(name, x, kinds)
        if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an array of shape "
                             f"{x.shape}")
        return x

    @prim.def_impl
    def _impl(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            out = np.asarray(scan(x, axis)).astype(x.dtype, copy=False)
        return np.asarray(np.flip(out, axis) if reverse else out, order="C")

    return prim


def _cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    acc = accumulation_dtype(x.dtype)
    return np.cumsum(x.astype(acc, copy=False), axis=axis, dtype=acc)


def _cumprod(x: np.ndarray, axis: int) -> np.ndarray:
    acc = accumulation_dtype(x.dtype)
    return np.cumprod(x.astype(acc, copy=False), axis=axis, dtype=acc)


def _cummax(x: np.ndarray, axis: int) -> np.ndarray:
    # NaN propagates and -0.0 < +0.0, as XLA's max; bool max is logical or.
    return extremum_accumulate("maximum", x, axis)


def _cummin(x: np.ndarray, axis: int) -> np.ndarray:
    return extremum_accumulate("minimum", x, axis)


def _cumlogsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    return np.logaddexp.accumulate(x, axis=axis)


def _scan_lowering(combine: Callable[[Any, Any, Any], Any], identity: Callable[[np.dtype], Any],
                   widen: bool = False) -> Callable[..., Any]:
    """An inclusive scan in log2(n) steps (Hillis-Steele): at step s every element combines
    with the element s places before it (identity where there is none), s = 1, 2, 4, ...

    Integer and max/min scans are exact; float sums and products associate differently
    from NumPy's sequential loop (within rounding, as for any float reduction). `widen`:
    float16 and bfloat16 scan in float32 between two converts (sums and products)."""
    def rule(ctx: Any, x: Any, *, axis: int, reverse: bool) -> Any:
        aval = ctx.avals_in[0]
        acc = accumulation_dtype(aval.dtype) if widen else aval.dtype
        if acc != aval.dtype:
            x = ctx.b.convert(x, element_type_from_numpy(acc))
            out = _scan(ctx, x, aval.update(dtype=acc), axis, reverse)
            return ctx.b.convert(out, element_type_from_numpy(aval.dtype))
        return _scan(ctx, x, aval, axis, reverse)

    def _scan(ctx: Any, x: Any, aval: Any, axis: int, reverse: bool) -> Any:
        n = aval.shape[axis]
        if reverse:
            x = ctx.b.reverse(x, (axis,))
        init = ctx.b.constant(np.asarray(identity(aval.dtype), dtype=aval.dtype))
        step = 1
        while step < n:
            limits = list(aval.shape)
            limits[axis] = n - step
            head = ctx.b.slice(x, [0] * aval.ndim, limits)
            config = [(0, 0, 0)] * aval.ndim
            config[axis] = (step, 0, 0)
            x = combine(ctx.b, x, ctx.b.pad(head, init, config))
            step *= 2
        return ctx.b.reverse(x, (axis,)) if reverse else x
    return rule


def _logaddexp(b: Any, x: Any, y: Any) -> Any:
    """log(e^x + e^y) = m + log1p(e^(min - m)) with m = max(x, y); m where m = -inf."""
    hi, lo = b.maximum(x, y), b.minimum(x, y)
    out = b.add(hi, b.log_plus_one(b.exponential(b.subtract(lo, hi))))
    neg_inf = b.broadcast(b.constant(np.array(-np.inf, x.shape.dtype)), x.shape.dimensions, ())
    return b.select(b.compare(hi, neg_inf, "EQ"), hi, out)


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else (False if dtype.kind == "b" else
                                              np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else
                                             np.iinfo(dtype).max)


# -0.0 is the float identity of + (-0.0 + x == x for every x, -0.0 included; +0.0 is not).
cumsum_p = _define("cumsum", R.NUMBER, _cumsum, lambda b, x, y: b.add(x, y),
                   lambda dt: -0.0 if dt.kind == "f" else 0, widen=True)
cumprod_p = _define("cumprod", R.NUMBER, _cumprod, lambda b, x, y: b.multiply(x, y),
                    lambda dt: 1, widen=True)
cummax_p = _define("cummax", R.ANY, _cummax, lambda b, x, y: b.maximum(x, y), _lowest)
cummin_p = _define("cummin", R.ANY, _cummin, lambda b, x, y: b.minimum(x, y), _highest)
cumlogsumexp_p = _define("cumlogsumexp", R.FLOAT, _cumlogsumexp, _logaddexp,
                         lambda dt: -np.inf)
