"""The log-gamma family: `lgamma` and `digamma` primitives (as JAX's lax.lgamma_p and
lax.digamma_p), for float16/bfloat16/float32/float64 operands.

Input: one float array. Output: an array of its shape and dtype (weak type kept).
How: each primitive is defined by one recipe written in elementwise primitives (the way
XLA expands chlo.lgamma / chlo.digamma): Lanczos' approximation with g = 7 and nine
coefficients for arguments >= 1/2, the reflection formulas below 1/2,

    lgamma(x) = c + (z + 1/2) log t - t + log A(z),   z = x - 1, t = z + g + 1/2,
    A(z) = p0 + sum_i p_i / (z + i),  c = log(2 pi) / 2,
    digamma(x) = log t - g / t + A'(z) / A(z),
    lgamma(x) = log pi - log|sin(pi x)| - lgamma(1 - x),  digamma(x) = digamma(1 - x) -
    pi / tan(pi x)   (x < 1/2; sin and tan of pi times x's distance to an integer),

with log t as log(g + 1/2) + log1p(z / (g + 1/2)). The recipe traced once per operand type
(_special_recipe.py's machinery, shared with the other special functions)
is both the lowering (inlined: fused and compiled natively like any elementwise code, no
callback) and, run by the NumPy evaluator, the eager rule, so eager and compiled results
share every edge case: lgamma is +inf at the poles (non-positive integers) and at +-inf,
digamma nan at the poles and at -inf, +inf at +inf, nan in gives nan.
Derivatives: lgamma' = digamma (the primitive), digamma' = trigamma, written here in
primitives (ten recurrence steps, then the asymptotic series to x^-15; the reflection
pi^2 / sin^2(pi x) - trigamma(1 - x) below 1/2), so it differentiates again. Batching:
elementwise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.core import ad
from ember.prims import _ad
from ember.prims._special_recipe import Ops, define, widened
from ember.prims.elementwise import and_p, min_p

# Lanczos' coefficients for g = 7, n = 9 (Numerical Recipes / Godfrey), as XLA uses them.
_G = 7.0
_P = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
      -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
      1.5056327351493116e-7)


def _lanczos(o: Ops, y: Any, with_derivative: bool) -> tuple[Any, Any, Any, Any]:
    """(z, t, log t, A(z)) and A'(z) for y >= 1/2."""
    add, div = _ad.add, _ad.div
    z = _ad.sub(y, o.c(1.0))
    a = o.full(_P[0])
    da = o.full(0.0)
    for i, p in enumerate(_P[1:], start=1):
        q = add(z, o.c(float(i)))
        term = div(o.c(p), q)
        a = add(a, term)
        if with_derivative:
            da = _ad.sub(da, div(term, q))  # d/dz p / (z + i) = -p / (z + i)^2
    t = add(z, o.c(_G + 0.5))
    log_t = add(o.c(math.log(_G + 0.5)), o.u("log1p", div(z, o.c(_G + 0.5))))
    return z, t, log_t, (a, da)


def _reflected(o: Ops, x: Any) -> tuple[Any, Any]:
    """(x < 1/2, the argument the Lanczos sum sees: x, or 1 - x there)."""
    reflect = o.lt(x, o.c(0.5))
    return reflect, _ad.select(reflect, _ad.sub(o.c(1.0), x), x)


def _lgamma_recipe(x: Any) -> Any:
    o = Ops(x)
    add, sub, mul = _ad.add, _ad.sub, _ad.mul
    reflect, y = _reflected(o, x)
    z, t, log_t, (a, _) = _lanczos(o, y, with_derivative=False)
    lg = add(sub(mul(add(z, o.c(0.5)), log_t), t),
             add(o.c(0.5 * math.log(2 * math.pi)), o.log(a)))
    # |sin(pi x)| = sin(pi d), d = the distance from x to the nearest integer, in [0, 1/2]
    frac = sub(x, o.u("floor", x))
    d = min_p.bind(frac, sub(o.c(1.0), frac))
    log_sin = o.log(o.u("sin", mul(o.c(math.pi), d)))
    refl = sub(sub(o.c(math.log(math.pi)), log_sin), lg)
    out = _ad.select(reflect, refl, lg)
    is_inf = _ad.compare("eq", o.u("abs", x), o.c(np.inf))
    return _ad.select(is_inf, o.full(np.inf), out)


def _nearest_integer_offset(o: Ops, x: Any) -> Any:
    """x - round(x), in [-1/2, 1/2]: tan(pi x) and sin^2(pi x) are periodic in it."""
    return _ad.sub(x, o.u("floor", _ad.add(x, o.c(0.5))))


def _is_pole(o: Ops, x: Any) -> Any:
    """x a non-positive integer (or -inf)."""
    non_positive = _ad.compare("le", x, o.c(0.0))
    integral = _ad.compare("eq", x, o.u("floor", x))
    return and_p.bind(non_positive, integral)


def _digamma_recipe(x: Any) -> Any:
    o = Ops(x)
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    reflect, y = _reflected(o, x)
    _, t, log_t, (a, da) = _lanczos(o, y, with_derivative=True)
    psi = add(sub(log_t, div(o.c(_G), t)), div(da, a))
    r = mul(o.c(math.pi), _nearest_integer_offset(o, x))
    refl = sub(psi, div(mul(o.c(math.pi), o.u("cos", r)), o.u("sin", r)))
    out = _ad.select(reflect, refl, psi)
    return _ad.select(_is_pole(o, x), o.full(np.nan), out)


# Bernoulli numbers' terms of trigamma's asymptotic series: psi1(w) ~ 1/w + 1/(2 w^2) +
# sum_k B_2k / w^(2k+1), k = 1..7: 1/6, -1/30, 1/42, -1/30, 5/66, -691/2730, 7/6.
_TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
_TRIGAMMA_SHIFT = 10  # recurrence steps before the series (w >= 10.5: error < 1e-16)


def trigamma(x: Any) -> Any:
    """psi'(x), the derivative of digamma, in bound primitives (differentiable)."""
    o = Ops(x)
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    reflect, y = _reflected(o, x)
    acc = o.full(0.0)
    for k in range(_TRIGAMMA_SHIFT):  # psi1(y) = sum_k 1 / (y + k)^2 + psi1(y + N)
        q = add(y, o.c(float(k)))
        acc = add(acc, div(o.c(1.0), mul(q, q)))
    iw = div(o.c(1.0), add(y, o.c(float(_TRIGAMMA_SHIFT))))
    iw2 = mul(iw, iw)
    poly = o.full(_TRIGAMMA_SERIES[-1])
    for coef in reversed(_TRIGAMMA_SERIES[:-1]):
        poly = add(o.c(coef), mul(iw2, poly))
    series = add(add(iw, mul(o.c(0.5), iw2)), mul(mul(iw, iw2), poly))
    direct = add(acc, series)
    # the reflection side sees x only where it is taken (elsewhere a harmless 1/4): at an
    # integer x >= 1/2 its 1/sin^2 pole would otherwise turn the unused branch's zero
    # cotangent into nan when trigamma is differentiated
    xr = _ad.select(reflect, x, o.full(0.25))
    s = o.u("sin", mul(o.c(math.pi), _nearest_integer_offset(o, xr)))
    refl = sub(div(o.c(math.pi ** 2), mul(s, s)), direct)
    return _ad.select(reflect, refl, direct)


lgamma_p = define("lgamma", _lgamma_recipe, 1)
digamma_p = define("digamma", _digamma_recipe, 1)

ad.defjvp(lgamma_p, lambda t, ans, x: _ad.mul(t, digamma_p.bind(x)),
          broadcast=_ad.broadcast_to)
ad.defjvp(digamma_p, lambda t, ans, x: _ad.mul(t, widened(trigamma, x)),
          broadcast=_ad.broadcast_to)
