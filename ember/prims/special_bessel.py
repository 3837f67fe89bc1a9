"""The exponentially scaled modified Bessel functions of order 0 and 1: `bessel_i0e`
(e^-|x| I0(x)) and `bessel_i1e` (e^-|x| I1(x)), as JAX's primitives.

Input: one float array. Output: an array of its shape and dtype.
How (a recipe in elementwise primitives, see _special_recipe.py), on |x| (i0e is even, i1e
odd): below a cut (10 for float32, 20 for float64) the power series, all of whose terms are
positive (so no order of summation loses anything to cancellation), times e^-|x|,

    I0(x) = sum_k y^k / (k!)^2,        I1(x) = x/2 sum_k y^k / (k! (k+1)!),

and above it Hankel's asymptotic series in 1/|x|, whose smallest term there is about
e^(-2|x|) (below eps),

    e^-x I_nu(x) ~ 1/sqrt(2 pi x) sum_k (-1)^k prod_(j<=k) (4 nu^2 - (2j-1)^2) / (k! (8x)^k),

with the coefficients computed here from those products (no tables). Both series are
summed as two Horner chains (even and odd terms) in y / 2^m and 1/|x| (see `_two_chains`
and `_SERIES_SCALE`: no subnormal coefficients or partial sums). Edges: i0e(0) = 1,
i1e(0) = 0, both 0 at +-inf (i1e keeps the sign), nan in gives nan.
Derivatives (JAX's): i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x) (1/2 at
|x| <= eps). Batching: elementwise.
"""

from __future__ import annotations

import math
from typing import Any

from ember.core import ad
from ember.prims import _ad
from ember.prims._special_recipe import Ops, define, widened

# (cut, power-series terms, asymptotic terms) per float width
# (the series' terms: its tail beyond them is below 2^-27 (float32) or 2^-56 (float64) of
# its sum at the cut, checked with mpmath)
_PLAN = {4: (10.0, 18, 10), 8: (20.0, 36, 24)}
# the power series runs in y = x^2 / scale (exact: a power of 2) <= cut^2 / scale < 1 with
# coefficients c_k (scale/4)^k, so no coefficient and no partial sum is subnormal: in
# x^2/4 the float32 coefficients reach 1/(21! 22!) ~ 1e-41, and every product with them
# was a subnormal (microcode assists: 6x the time of the whole kernel)
_SERIES_SCALE = {4: 128.0, 8: 512.0}


def _power_coefficients(order: int, n: int) -> list[float]:
    """1 / (k! (k + order)!), k < n: I_order(x) = (x/2)^order sum_k c_k (x^2/4)^k."""
    return [1.0 / (math.factorial(k) * math.factorial(k + order)) for k in range(n)]


def _asymptotic_coefficients(order: int, n: int) -> list[float]:
    """(-1)^k prod_(j<=k) (4 order^2 - (2j-1)^2) / (k! 8^k), k < n."""
    out, value = [], 1.0
    for k in range(n):
        if k:
            value *= -(4 * order * order - (2 * k - 1) ** 2) / (k * 8.0)
        out.append(value)
    return out


def _horner(o: Ops, coefficients: list[float], y: Any) -> Any:
    acc = o.full(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = _ad.add(o.c(c), _ad.mul(y, acc))
    return acc


def _two_chains(o: Ops, coefficients: list[float], y: Any) -> Any:
    """sum_k c_k y^k as E(y^2) + y O(y^2), E and O (even and odd coefficients) by Horner.

    Two independent chains of half the length: the vectorized loop is bound by the latency
    of the one long chain of dependent multiply-adds otherwise. For the power series (all
    terms positive) every partial sum rounds relatively, in any order. No higher powers
    than y^2 (Estrin's y^8, y^16 underflow into subnormals for small y, and subnormal
    operands cost microcode assists: they made the kernel slower than Horner)."""
    y2 = _ad.mul(y, y)
    even = _horner(o, coefficients[0::2], y2)
    odd = _horner(o, coefficients[1::2], y2)
    return _ad.add(even, _ad.mul(y, odd))


def _scaled_bessel(x: Any, order: int) -> Any:
    o = Ops(x)
    cut, n_power, n_asym = _PLAN[o.dtype.itemsize]
    ax = o.u("abs", x)
    # power series side: the unused lanes see a harmless argument (no overflow of x^2)
    small = _ad.compare("le", ax, o.c(cut))
    xs = _ad.select(small, ax, o.full(1.0))
    scale = _SERIES_SCALE[o.dtype.itemsize]
    y = _ad.mul(_ad.mul(xs, xs), o.c(1.0 / scale))
    coefficients = [c * (scale / 4) ** k
                    for k, c in enumerate(_power_coefficients(order, n_power))]
    series = _ad.mul(_two_chains(o, coefficients, y), o.u("exp", _ad.neg(xs)))
    if order == 1:
        series = _ad.mul(series, _ad.mul(xs, o.c(0.5)))
    xl = _ad.select(small, o.full(cut + 1.0), ax)
    inv = _ad.div(o.c(1.0), xl)
    asym = _ad.mul(_two_chains(o, _asymptotic_coefficients(order, n_asym), inv),
                   o.u("rsqrt", _ad.mul(o.c(2.0 * math.pi), xl)))
    out = _ad.select(small, series, asym)
    if order == 1:  # odd: the sign of x (0 and -0 keep theirs through the series' x/2)
        negative = _ad.compare("lt", x, o.c(0.0))
        out = _ad.select(negative, _ad.neg(out), out)
        out = _ad.select(o.eq(x, 0.0), x, out)
    return out


def _i0e_recipe(x: Any) -> Any:
    return _scaled_bessel(x, 0)


def _i1e_recipe(x: Any) -> Any:
    return _scaled_bessel(x, 1)


bessel_i0e_p = define("bessel_i0e", _i0e_recipe, 1)
bessel_i1e_p = define("bessel_i1e", _i1e_recipe, 1)


def _i0e_derivative(x: Any, y: Any) -> Any:
    return _ad.sub(bessel_i1e_p.bind(x), _ad.mul(_ad.unary("sign", x), y))


def _i1e_derivative(x: Any, y: Any) -> Any:
    o = Ops(x)
    tiny = _ad.compare("le", o.u("abs", x), o.c(o.eps()))
    safe = _ad.select(tiny, o.full(1.0), x)
    slope = _ad.sub(bessel_i0e_p.bind(safe),
                    _ad.mul(y, _ad.add(o.u("sign", safe), _ad.div(o.c(1.0), safe))))
    return _ad.select(tiny, o.full(0.5), slope)


ad.defjvp(bessel_i0e_p,
          lambda t, ans, x: _ad.mul(t, widened(_i0e_derivative, x, ans)))
ad.defjvp(bessel_i1e_p,
          lambda t, ans, x: _ad.mul(t, widened(_i1e_derivative, x, ans)))
