"""The Hurwitz zeta function `zeta(x, q)` = sum_k (q + k)^-x and `polygamma(m, x)`, the
m-th derivative of digamma, as JAX's primitives.

Input: two float operands of one dtype, elementwise broadcasting. Output: their broadcast
shape and dtype.
How (recipes in elementwise primitives, see _special_recipe.py): zeta by Euler-Maclaurin
summation after N = 10 direct terms (w = q + N),

    zeta(s, q) = sum_(k<N) (q+k)^-s + w^(1-s) / (s-1) + w^-s / 2
                 + sum_(j=1..12) B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1),

the Bernoulli numbers B_2j computed here exactly (their recurrence in fractions); a
negative non-integer q (allowed for integer s) first sums (q+k)^-s up to q+k >= 0 in a
loop over the lanes that need it (at most 10^5 steps; q below -10^5 gives nan).
polygamma(m, x) = digamma(x) for m = 0 and (-1)^(m+1) m! zeta(m+1, x) for a positive
integer m. Edges (JAX's and SciPy's): zeta is nan for s < 1 or a nan operand, +inf at
s = 1 and at the poles q = 0, -1, -2, ..., nan for q < 0 with non-integer s; 0 at q = inf;
at s = inf 1 for q = 1, 0 above, inf below. polygamma is nan for a negative or
non-integer m. Derivatives (JAX's): d zeta / dq = -s zeta(s+1, q), d polygamma / dx =
polygamma(m+1, x); in s (resp. m) they raise as JAX's do. Batching: elementwise.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ember.core import ad
from ember.prims import _ad
from ember.prims._special_recipe import Ops, broadcast_operands, define, while_lanes
from ember.prims.elementwise import pow_p
from ember.prims.special_gamma import digamma_p, lgamma_p

_DIRECT_TERMS = 10
_EULER_MACLAURIN_TERMS = 12
_MAX_SHIFT = 100_000


def _bernoulli_even(n: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2n (sum_(k<=m) C(m+1, k) B_k = 0 for m >= 1, B_0 = 1)."""
    b = [Fraction(1)]
    for m in range(1, 2 * n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return [b[2 * j] for j in range(1, n + 1)]


# B_2j / (2j)!
_EM = [float(bj / math.factorial(2 * j))
       for j, bj in enumerate(_bernoulli_even(_EULER_MACLAURIN_TERMS), start=1)]


def _is_integer(o: Ops, v: Any) -> Any:
    return _ad.compare("eq", v, o.u("floor", v))


def _zeta_recipe(s: Any, q: Any) -> Any:
    o = Ops(s)
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    neg_s = _ad.neg(s)
    s_integer = _is_integer(o, s)
    pole = o.all_of(_ad.compare("le", q, o.c(0.0)), _is_integer(o, q))
    nan = o.any_of(o.isnan(s), o.isnan(q), o.lt(s, o.c(1.0)),
                   o.all_of(o.lt(q, o.c(0.0)), o.not_(s_integer)),
                   o.lt(q, o.c(-float(_MAX_SHIFT))))
    shifting = o.all_of(o.lt(q, o.c(0.0)), o.not_(o.any_of(nan, pole)))

    def shift(s: Any, acc: Any, v: Any) -> tuple[Any, list[Any]]:
        acc = add(acc, pow_p.bind(v, _ad.neg(s)))
        v = add(v, o.c(1.0))
        return o.lt(v, o.c(0.0)), [acc, v]

    (head, q0), _ = while_lanes(shift, shifting, [o.full(0.0), q], [s], _MAX_SHIFT)
    # the direct terms and the tail see q0 > 0 on every lane (poles and nans are set below)
    q0 = _ad.select(_ad.compare("gt", q0, o.c(0.0)), q0, o.full(1.0))
    total = head
    for k in range(_DIRECT_TERMS):
        total = add(total, pow_p.bind(add(q0, o.c(float(k))), neg_s))
    w = add(q0, o.c(float(_DIRECT_TERMS)))
    w_s = pow_p.bind(w, neg_s)
    tail = add(div(mul(w_s, w), sub(s, o.c(1.0))), mul(w_s, o.c(0.5)))
    rising = div(s, w)  # s (s+1) ... (s+2j-2) / w^(2j-1)
    inv_w2 = div(o.c(1.0), mul(w, w))
    for j, coefficient in enumerate(_EM, start=1):
        tail = add(tail, mul(mul(w_s, rising), o.c(coefficient)))
        rising = mul(rising, mul(mul(add(s, o.c(2.0 * j - 1)), add(s, o.c(2.0 * j))), inv_w2))
    s_inf = o.eq(s, np.inf)
    out = add(total, _ad.select(s_inf, o.full(0.0), tail))
    out = _ad.select(o.eq(q, np.inf), o.full(0.0), out)  # (w^(1-s) = 0 inf there)
    out = _ad.select(o.any_of(o.eq(s, 1.0), pole), o.full(np.inf), out)
    return _ad.select(nan, o.full(np.nan), out)


zeta_p = define("zeta", _zeta_recipe, 2)


def _polygamma_recipe(m: Any, x: Any) -> Any:
    o = Ops(m)
    valid = o.all_of(_ad.compare("ge", m, o.c(0.0)), _is_integer(o, m))
    m1 = add1 = _ad.add(m, o.c(1.0))
    odd = _ad.compare("eq", _ad.sub(m, _ad.mul(o.c(2.0), o.u("floor", _ad.mul(m, o.c(0.5))))),
                      o.c(1.0))
    sign = _ad.select(odd, o.full(1.0), o.full(-1.0))  # (-1)^(m+1)
    # m! zeta(m+1, x), with m! as exp(lgamma(m+1)); a zero m sees s = 2 (unused there)
    s = _ad.select(o.eq(m, 0.0), o.full(2.0), m1)
    scaled = _ad.mul(_ad.mul(sign, o.u("exp", lgamma_p.bind(add1))), zeta_p.bind(s, x))
    out = _ad.select(o.eq(m, 0.0), digamma_p.bind(x), scaled)
    return _ad.select(valid, out, o.full(np.nan))


polygamma_p = define("polygamma", _polygamma_recipe, 2)


def _zeta_dq(t: Any, ans: Any, s: Any, q: Any) -> Any:
    t, s, q = broadcast_operands([t, s, q])
    return _ad.mul(t, _ad.neg(_ad.mul(s, zeta_p.bind(_ad.add(s, _ad.const(1.0, s)), q))))


def _polygamma_dx(t: Any, ans: Any, m: Any, x: Any) -> Any:
    t, m, x = broadcast_operands([t, m, x])
    return _ad.mul(t, polygamma_p.bind(_ad.add(m, _ad.const(1.0, m)), x))


def _raises(message: str) -> Any:
    def term(t: Any, ans: Any, a: Any, b: Any) -> Any:
        raise ValueError(message)
    return term


ad.defjvp(zeta_p, _raises("zeta gradient with respect to x is not supported"), _zeta_dq,
          broadcast=_ad.broadcast_to)
ad.defjvp(polygamma_p, _raises("polygamma gradient with respect to m is not supported"),
          _polygamma_dx, broadcast=_ad.broadcast_to)
