"""Cumulative (inclusive scan) reductions: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Input: one array; params `axis` (a non-negative int) and `reverse` (scan from the end).
Output: the same aval. out[i] = x[0] op x[1] op ... op x[i] along `axis` (or x[i] op ...
op x[n-1] when reverse). Printed as `cumsum[axis=0 reverse=False]`, as JAX 0.10.2 does.

Semantics: integer sums and products wrap; cummax/cummin propagate NaN (once a NaN is seen,
every later entry is NaN); bool cummax/cummin are running or/and. cumlogsumexp computes
log(exp(a) + exp(b)) stably (max + log1p(exp(-|a - b|))), so inf and -inf inputs behave.
Float scans accumulate left to right in the operand dtype; XLA may associate differently,
so compiled float results agree within rounding, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.prims import _rules as R


def _define(name: str, kinds: str, scan: Callable[[np.ndarray, int], np.ndarray]
            ) -> Primitive:
    prim = Primitive(name)

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
        return np.ascontiguousarray(np.flip(out, axis) if reverse else out)

    return prim


def _cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod(x: np.ndarray, axis: int) -> np.ndarray:
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _cummax(x: np.ndarray, axis: int) -> np.ndarray:
    # np.maximum propagates NaN, as XLA's max does; bool max is logical or.
    return np.maximum.accumulate(x, axis=axis)


def _cummin(x: np.ndarray, axis: int) -> np.ndarray:
    return np.minimum.accumulate(x, axis=axis)


def _cumlogsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    return np.logaddexp.accumulate(x, axis=axis)


cumsum_p = _define("cumsum", R.NUMBER, _cumsum)
cumprod_p = _define("cumprod", R.NUMBER, _cumprod)
cummax_p = _define("cummax", R.ANY, _cummax)
cummin_p = _define("cummin", R.ANY, _cummin)
cumlogsumexp_p = _define("cumlogsumexp", R.FLOAT, _cumlogsumexp)
