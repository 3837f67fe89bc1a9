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

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.accumulation import accumulation_dtype
from ember.hlo.evaluator.reductions import extremum_accumulate
from ember.hlo.shape import element_type_from_numpy
from ember.prims import _ad, _batching, _eager_native
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
        out = _eager_native.compiled(prim, [x], {"axis": axis, "reverse": reverse})
        if out is not None:  # (float scans: jit's bits, ember/eager_native.py)
            return out
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
    return -np.inf if dtypes.kind(dtype) == "f" else (False if dtypes.kind(dtype) == "b" else
                                              np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtypes.kind(dtype) == "f" else (True if dtypes.kind(dtype) == "b" else
                                             np.iinfo(dtype).max)


# -0.0 is the float identity of + (-0.0 + x == x for every x, -0.0 included; +0.0 is not).
cumsum_p = _define("cumsum", R.NUMBER, _cumsum, lambda b, x, y: b.add(x, y),
                   lambda dt: -0.0 if dtypes.kind(dt) == "f" else 0, widen=True)
cumprod_p = _define("cumprod", R.NUMBER, _cumprod, lambda b, x, y: b.multiply(x, y),
                    lambda dt: 1, widen=True)
cummax_p = _define("cummax", R.ANY, _cummax, lambda b, x, y: b.maximum(x, y), _lowest)
cummin_p = _define("cummin", R.ANY, _cummin, lambda b, x, y: b.minimum(x, y), _highest)
cumlogsumexp_p = _define("cumlogsumexp", R.FLOAT, _cumlogsumexp, _logaddexp,
                         lambda dt: -np.inf)


# -- autodiff rules ------------------------------------------------------------------------------
#
# cumsum is linear: t_out = cumsum(t), and its transpose sums each cotangent over the outputs
# that read its element, ct_x[j] = sum_{i >= j} ct[i]: a cumsum in the other direction.
#
# The other scans are not linear; their tangents come from differentiating the same
# Hillis-Steele scan the lowering uses, written with primitives: at step s every element
# combines with the one s places before it, (a, ta) = the prefix so far ending s places back
# (identity and tangent 0 where there is none), (b, tb) = the element's own running value,
#     cumprod:      v = a * b,          tv = ta * b + a * tb            (no division: exact
#                                                                       with zeros)
#     cummax/min:   v = a if a >=(<=) b else b, tv = the tangent of the value kept (the
#                   tangent follows the selected element; on a tie the earlier one is kept)
#     cumlogsumexp: v = m + log1p(exp(min - m)), m = max(a, b),
#                   tv = ta * exp(a - v) + tb * exp(b - v) (softmax weights: never overflow;
#                   an operand of -inf weighs 0, so a leading -inf gives no NaN)
# The primal output is the primitive's own (so it is bit-identical to the undifferentiated
# value); only the tangent is built from the scan, linear in the input tangent, with the
# partial scans as residuals. Everything it binds has rules of its own, so it nests.

def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> list:
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


def _shift(x: Any, axis: int, step: int, fill: Any) -> Any:
    """x moved `step` places forward along `axis`: out[i] = x[i - step], `fill` below."""
    from ember.prims.slicing import pad_p
    shape = get_aval(x).shape
    config = [(0, 0, 0)] * len(shape)
    config[axis] = (step, -step, 0)
    return pad_p.bind(x, _ad.const(fill, x), padding_config=tuple(config))


def _scan_jvp(prim: Primitive, combine: Callable[[Any, Any, Any, Any], tuple[Any, Any]],
              identity: Callable[[np.dtype], Any]) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: list, tangents: list, *, axis: int, reverse: bool) -> tuple[Any, Any]:
        from ember.prims.shape_ops import rev_p
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        aval = get_aval(x)
        if isinstance(t, ad.Zero) or not ad.is_differentiable(aval):
            return ans, ad.Zero(aval)
        if reverse:
            x, t = rev_p.bind(x, dimensions=(axis,)), rev_p.bind(t, dimensions=(axis,))
        v, tv = x, t
        step, n = 1, aval.shape[axis]
        while step < n:
            a = _shift(v, axis, step, identity(aval.dtype))
            ta = _shift(tv, axis, step, 0)
            v, tv = combine(a, ta, v, tv)
            step *= 2
        return ans, rev_p.bind(tv, dimensions=(axis,)) if reverse else tv
    return rule


def _prod_combine(a: Any, ta: Any, b: Any, tb: Any) -> tuple[Any, Any]:
    return _ad.mul(a, b), _ad.add(_ad.mul(ta, b), _ad.mul(a, tb))


def _extremum_combine(direction: str) -> Callable[[Any, Any, Any, Any], tuple[Any, Any]]:
    def combine(a: Any, ta: Any, b: Any, tb: Any) -> tuple[Any, Any]:
        keep_a = _ad.compare(direction, a, b)
        return _ad.select(keep_a, a, b), _ad.select(keep_a, ta, tb)
    return combine


def _logsumexp_combine(a: Any, ta: Any, b: Any, tb: Any) -> tuple[Any, Any]:
    # A -inf operand (the scan's fill, or an input of -inf) weighs 0, also where both are
    # -inf and v = -inf (exp(-inf - -inf) would be NaN): such a prefix's tangent is 0.
    m = _ad.select(_ad.compare("ge", a, b), a, b)
    lo = _ad.select(_ad.compare("ge", a, b), b, a)
    neg_inf = _ad.full_like(m, -np.inf)
    v = _ad.select(_ad.compare("eq", m, neg_inf), m,
                   _ad.add(m, _ad.unary("log1p", _ad.unary("exp", _ad.sub(lo, m)))))
    zero = _ad.zeros(get_aval(v))

    def weight(x: Any) -> Any:
        return _ad.select(_ad.compare("eq", x, neg_inf), zero, _ad.unary("exp", _ad.sub(x, v)))

    return v, _ad.add(_ad.mul(ta, weight(a)), _ad.mul(tb, weight(b)))


def _scan_batch(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    """vmap: each example scans along its own axis, shifted past the batch axis."""
    def rule(axis_data: AxisData, args: list, dims: list, *, axis: int, reverse: bool
             ) -> tuple[Any, int]:
        (x,), (b,) = args, dims
        return prim.bind(x, axis=_batching.shift_axis(axis, b), reverse=reverse), b
    return rule


def _register_rules() -> None:
    ad.deflinear(cumsum_p)
    cumsum_p.def_transpose(_cumsum_transpose)
    cumprod_p.def_jvp(_scan_jvp(cumprod_p, _prod_combine, lambda dt: 1))
    cummax_p.def_jvp(_scan_jvp(cummax_p, _extremum_combine("ge"), _lowest))
    cummin_p.def_jvp(_scan_jvp(cummin_p, _extremum_combine("le"), _highest))
    cumlogsumexp_p.def_jvp(_scan_jvp(cumlogsumexp_p, _logsumexp_combine,
                                     lambda dt: -np.inf))
    for prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
        prim.def_batch(_scan_batch(prim))


_register_rules()
