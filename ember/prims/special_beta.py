"""The regularized incomplete beta function I_x(a, b) (`regularized_incomplete_beta`, JAX's
primitive behind lax.betainc).

Input: three float operands of one dtype (a, b, x), elementwise broadcasting. Output:
their broadcast shape and dtype.
How (a recipe in elementwise primitives, see _special_recipe.py): the continued fraction
(DLMF 8.17.22), which converges fast for x < (a+1)/(a+b+2) (elsewhere the symmetry
I_x(a, b) = 1 - I_(1-x)(b, a) swaps the roles),

    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / (1 + d_1 / (1 + d_2 / (1 + ...))),
    d_(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),   d_(2m) = m (b-m) x / ((a+2m-1)(a+2m)),

evaluated by the modified Lentz method in a loop that runs while some lane has not
converged (|C D - 1| > eps/2; at most 200 rounds in float32, 600 in float64, as XLA's
expansion); for a below 2 tiny the prefactor uses a Gamma(a) = Gamma(a+1) -> 1.
Edges (SciPy's and JAX's): nan for a nan operand, a < 0, b < 0, x outside [0, 1], or
a = b = 0; with a = 0 (or b = inf) the result is 1 for x > 0 and 0 at x = 0, with b = 0
(or a = inf) 0 for x < 1 and 1 at x = 1.
Derivative (JAX's): dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b); in a and b it raises JAX's
error. Batching: elementwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad
from ember.prims import _ad
from ember.prims._special_recipe import Ops, broadcast_operands, define, while_lanes, widened
from ember.prims.special_gamma import lgamma_p


def _betainc_recipe(a: Any, b: Any, x: Any) -> Any:
    o = Ops(a)
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    one, zero = o.c(1.0), o.c(0.0)
    a_zero = o.any_of(o.eq(a, 0.0), o.eq(b, np.inf))
    b_zero = o.any_of(o.eq(b, 0.0), o.eq(a, np.inf))
    x_zero, x_one = o.eq(x, 0.0), o.eq(x, 1.0)
    nan = o.any_of(o.isnan(a), o.isnan(b), o.isnan(x), o.lt(a, zero), o.lt(b, zero),
                   o.lt(x, zero), _ad.compare("gt", x, one), o.all_of(a_zero, b_zero))
    direct = o.lt(x, div(add(a, one), add(add(a, b), o.c(2.0))))
    p = _ad.select(direct, a, b)
    q = _ad.select(direct, b, a)
    y = _ad.select(direct, x, sub(one, x))
    run = o.not_(o.any_of(nan, a_zero, b_zero, x_zero, x_one))

    tiny = o.c(float(np.finfo(o.dtype).tiny) * 1e3)
    half_eps = o.c(o.eps() / 2)

    def guard(v: Any) -> Any:
        return _ad.select(o.lt(o.u("abs", v), tiny), o.full(float(tiny)), v)

    def body(p: Any, q: Any, y: Any, n: Any, c: Any, d: Any, f: Any) -> tuple[Any, list[Any]]:
        n = add(n, one)  # the n-th partial numerator d_n, n = 2m or 2m + 1
        m = o.u("floor", mul(n, o.c(0.5)))
        even = _ad.compare("eq", mul(m, o.c(2.0)), n)
        two_m = mul(o.c(2.0), m)
        d_even = div(mul(mul(m, sub(q, m)), y), mul(add(p, sub(two_m, one)), add(p, two_m)))
        d_odd = div(mul(_ad.neg(mul(add(p, m), add(add(p, q), m))), y),
                    mul(add(p, two_m), add(add(p, two_m), one)))
        dn = _ad.select(even, d_even, d_odd)
        d = div(one, guard(add(one, mul(dn, d))))
        c = guard(add(one, div(dn, c)))
        delta = mul(c, d)
        f = mul(f, delta)
        return _ad.compare("gt", o.u("abs", sub(delta, one)), half_eps), [n, c, d, f]

    rounds = 200 if o.dtype.itemsize == 4 else 600
    state = [o.full(0.0), o.full(1.0), o.full(0.0), o.full(1.0)]
    (_, _, _, f), _ = while_lanes(body, run, state, [p, q, y], rounds)
    # prefactor y^p (1-y)^q / (p B(p, q)); p B(p, q) = Gamma(p+1) Gamma(q) / Gamma(p+q)
    log_prefactor = sub(add(mul(p, o.log(y)), mul(q, o.u("log1p", _ad.neg(y)))),
                        sub(add(lgamma_p.bind(add(p, one)), lgamma_p.bind(q)),
                            lgamma_p.bind(add(p, q))))
    value = div(o.u("exp", log_prefactor), f)
    out = _ad.select(direct, value, sub(one, value))
    out = _ad.select(o.any_of(o.all_of(b_zero, o.not_(x_one)), o.all_of(a_zero, x_zero)),
                     o.full(0.0), out)
    out = _ad.select(o.any_of(o.all_of(a_zero, o.not_(x_zero)), o.all_of(b_zero, x_one)),
                     o.full(1.0), out)
    return _ad.select(nan, o.full(np.nan), out)


regularized_incomplete_beta_p = define("regularized_incomplete_beta", _betainc_recipe, 3)


def _dx(t: Any, ans: Any, a: Any, b: Any, x: Any) -> Any:

    def slope(a: Any, b: Any, x: Any) -> Any:
        o = Ops(a)
        one = o.c(1.0)
        log_beta = _ad.sub(_ad.add(lgamma_p.bind(a), lgamma_p.bind(b)),
                           lgamma_p.bind(_ad.add(a, b)))
        return o.u("exp", _ad.sub(_ad.add(_ad.mul(_ad.sub(a, one), o.log(x)),
                                          _ad.mul(_ad.sub(b, one), o.u("log1p", _ad.neg(x)))),
                                  log_beta))

    t, a, b, x = broadcast_operands([t, a, b, x])
    return _ad.mul(t, widened(slope, a, b, x))


def _no_ab_gradient(t: Any, ans: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


ad.defjvp(regularized_incomplete_beta_p, _no_ab_gradient, _no_ab_gradient, _dx,
          broadcast=_ad.broadcast_to)
