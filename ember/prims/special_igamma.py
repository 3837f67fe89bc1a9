"""The regularized incomplete gamma family: `igamma` P(a, x), `igammac` Q(a, x) = 1 - P,
`igamma_grad_a` dP/da and `random_gamma_grad` (the derivative of a Gamma(a, 1) sample x
with respect to a at fixed quantile: dx/da = -(dP/da) / (dP/dx)), as JAX's primitives.

Input: two float operands of one dtype (a, x), elementwise broadcasting. Output: their
broadcast shape and dtype.
How (each a recipe in elementwise primitives, see _special_recipe.py): with
ax = x^a e^-x / Gamma(a) (computed in logs),

    P(a, x) = ax / a * S,   S = sum_n x^n / ((a+1)...(a+n))           (x < 1 or x <= a)
    Q(a, x) = ax * F,       F = 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...)))  (else)

S is summed term by term (c_n = c_(n-1) x / (a+n)) and F by Wallis' three-term recurrence
(A_n = b_n A_(n-1) + a_n A_(n-2), likewise B_n, rescaled when large), each in a loop that
runs while some lane has not converged (terms below eps of the sum), as XLA's expansion
does; a lane still unconverged at the loop's cap (10^5 series terms: a up to about 1e8)
gives nan. dS/da and dF/da are carried alongside (the recurrences
differentiated in a), so

    dP/da = ax / a * (S (log x - psi(a+1)) + dS/da)  or  -ax (F (log x - psi(a)) + dF/da),
    random_gamma_grad = -x / a * (S (log x - psi(a+1)) + dS/da)  or  x (F (...) + dF/da),

the sample derivative never forming ax (it cancels), so it holds where ax underflows.
log ax is formed around x = a for a >= 10 (a log1pmx series and Stirling's series), so its
error is eps |log ax|, not eps |a log x|. Q for x < 1 (where P may be all but 1) is
-expm1(L) - e^L a U, L = a log x - lgamma(1 + a), U = sum_(n>=1) (-x)^n / (n! (a+n)),
not 1 - P.
Edges: nan for a nan operand, x < 0, a < 0, or a = x = 0 (igamma_grad_a and
random_gamma_grad: a <= 0); P(a, 0) = 0, P(a, inf) = 1, P(0, x > 0) = 1 (SciPy's limit;
JAX's own recipe gives nan below x = 1 there), P(inf, finite x) = 0; Q = 1 - P on them.
Derivatives (JAX's): dP/dx = x^(a-1) e^-x / Gamma(a), dP/da = igamma_grad_a; igammac the
negatives; igamma_grad_a and random_gamma_grad differentiate in x in closed form
(d/dx dP/da = dP/dx (log x - psi(a))) and in a through d2P/da2, the series and the
fraction differentiated twice (JAX's igamma_grad_a has no rule; its random_gamma_grad
differentiates through its loops), so random.gamma has second derivatives in a.
Batching: elementwise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.core import ad
from ember.prims import _ad
from ember.prims._special_recipe import (
    Ops,
    broadcast_operands,
    define,
    while_lanes,
    widened,
)
from ember.prims.special_gamma import digamma_p, lgamma_p, trigamma
from ember.prims.special_zeta import _bernoulli_even

# Loop caps. The series needs about 6 sqrt(a) terms near x = a in float32, 9 sqrt(a) in
# float64 (a up to 1e8 within the cap); the continued fraction far fewer. A lane that has
# not converged within its cap gives nan, never a truncated sum.
_MAX_SERIES_TERMS = 100_000
_MAX_FRACTION_TERMS = 20_000


def _series(o: Ops, a: Any, x: Any, enabled: Any, derivative: bool
            ) -> tuple[Any, Any, Any]:
    """(S - 1, dS/da, unconverged) on the enabled lanes (0 elsewhere): the sum without its
    first term, so that log S = log1p(S - 1) keeps the digits of a tiny tail."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    eps = o.c(o.eps())

    def body(x: Any, r: Any, c: Any, s: Any, dc: Any, ds: Any) -> tuple[Any, list[Any]]:
        r = add(r, o.c(1.0))
        q = div(x, r)
        dc = sub(mul(dc, q), div(mul(c, q), r))  # d/da c_(n-1) x/(a+n)
        c = mul(c, q)
        s = add(s, c)
        ds = add(ds, dc)
        going = _ad.compare("gt", c, mul(eps, s))
        if derivative:
            going = o.any_of(going, _ad.compare("gt", o.u("abs", dc),
                                                mul(eps, o.u("abs", ds))))
        return going, [r, c, s, dc, ds]

    one, zero = o.full(1.0), o.full(0.0)
    (_, _, tail, _, ds), unconverged = while_lanes(
        body, enabled, [a, one, zero, zero, zero], [x], _MAX_SERIES_TERMS)
    return tail, ds, unconverged


def _fraction(o: Ops, a: Any, x: Any, enabled: Any, derivative: bool
              ) -> tuple[Any, Any, Any]:
    """(F, dF/da, unconverged) on the enabled lanes, Legendre's continued fraction for
    Q(a, x) / ax."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    eps = o.c(o.eps())
    big = o.c(1.0 / o.eps())

    def body(a: Any, x: Any, k: Any, a1: Any, a2: Any, b1: Any, b2: Any, da1: Any, da2: Any,
             db1: Any, db2: Any, f: Any, df: Any) -> tuple[Any, list[Any]]:
        # step n = k + 1: a_n = k (a - k), b_n = x + 2k + 1 - a; (a1, b1) the convergent n-1
        # numerator/denominator, (a2, b2) n-2, d* their derivatives in a
        k = add(k, o.c(1.0))
        an = mul(k, sub(a, k))
        bn = sub(add(x, add(mul(o.c(2.0), k), o.c(1.0))), a)
        na = add(mul(bn, a1), mul(an, a2))
        nb = add(mul(bn, b1), mul(an, b2))
        # d a_n/da = k, d b_n/da = -1
        nda = add(sub(mul(bn, da1), a1), add(mul(an, da2), mul(k, a2)))
        ndb = add(sub(mul(bn, db1), b1), add(mul(an, db2), mul(k, b2)))
        nonzero = _ad.compare("ne", nb, o.c(0.0))
        safe_b = _ad.select(nonzero, nb, o.full(1.0))
        f_new = _ad.select(nonzero, div(na, safe_b), f)
        df_new = _ad.select(nonzero, div(sub(nda, mul(f_new, ndb)), safe_b), df)
        going = _ad.compare("gt", o.u("abs", sub(f_new, f)), mul(eps, o.u("abs", f_new)))
        if derivative:  # (dF/da may pass through 0: relative to |F| + |dF/da|)
            size = add(o.u("abs", df_new), o.u("abs", f_new))
            going = o.any_of(going, _ad.compare("gt", o.u("abs", sub(df_new, df)),
                                                mul(eps, size)))
        # the convergents grow without bound: scale all of them down together
        rescale = o.any_of(_ad.compare("gt", o.u("abs", na), big),
                           _ad.compare("gt", o.u("abs", nb), big))
        scaled = [_ad.select(rescale, mul(v, eps), v)
                  for v in (na, a1, nb, b1, nda, da1, ndb, db1)]
        return going, [k, *scaled, f_new, df_new]

    zero, one = o.full(0.0), o.full(1.0)
    b_first = sub(add(x, o.c(1.0)), a)  # convergent 1: 1 / (x + 1 - a)
    safe = _ad.select(_ad.compare("eq", b_first, o.c(0.0)), one, b_first)
    f0 = div(one, safe)
    df0 = div(f0, safe)  # d/da 1/(x+1-a) = 1/(x+1-a)^2
    state = [zero, one, zero, b_first, one, zero, zero, o.full(-1.0), zero, f0, df0]
    out, unconverged = while_lanes(body, enabled, state, [a, x], _MAX_FRACTION_TERMS)
    return out[-2], out[-1], unconverged


def _series2(o: Ops, a: Any, x: Any, enabled: Any) -> tuple[Any, Any, Any, Any]:
    """(S - 1, dS/da, d2S/da2, unconverged): the series with its second a-derivative,
    d2c_n = d2c_(n-1) q - 2 dc_(n-1) q / r + 2 c_(n-1) q / r^2 (q = x / r, r = a + n)."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    eps = o.c(o.eps())

    def body(x: Any, r: Any, c: Any, s: Any, dc: Any, ds: Any, d2c: Any, d2s: Any
             ) -> tuple[Any, list[Any]]:
        r = add(r, o.c(1.0))
        q = div(x, r)
        qr = div(q, r)
        d2c = add(sub(mul(d2c, q), mul(o.c(2.0), mul(dc, qr))),
                  mul(o.c(2.0), div(mul(c, qr), r)))
        dc = sub(mul(dc, q), mul(c, qr))
        c = mul(c, q)
        s, ds, d2s = add(s, c), add(ds, dc), add(d2s, d2c)
        going = o.any_of(_ad.compare("gt", c, mul(eps, s)),
                         _ad.compare("gt", o.u("abs", dc), mul(eps, o.u("abs", ds))),
                         _ad.compare("gt", o.u("abs", d2c), mul(eps, o.u("abs", d2s))))
        return going, [r, c, s, dc, ds, d2c, d2s]

    one, zero = o.full(1.0), o.full(0.0)
    (_, _, tail, _, ds, _, d2s), unconverged = while_lanes(
        body, enabled, [a, one, zero, zero, zero, zero, zero], [x], _MAX_SERIES_TERMS)
    return tail, ds, d2s, unconverged


def _fraction2(o: Ops, a: Any, x: Any, enabled: Any) -> tuple[Any, Any, Any, Any]:
    """(F, dF/da, d2F/da2, unconverged): the continued fraction with its second
    a-derivative, the recurrences differentiated twice (d2 b_n = d2 a_n = 0):
    A''_n = b_n A''_(n-1) - 2 A'_(n-1) + a_n A''_(n-2) + 2k A'_(n-2), likewise B''."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    eps = o.c(o.eps())
    big = o.c(1.0 / o.eps())
    two = o.c(2.0)

    def body(a: Any, x: Any, k: Any, a1: Any, a2: Any, b1: Any, b2: Any, da1: Any, da2: Any,
             db1: Any, db2: Any, ea1: Any, ea2: Any, eb1: Any, eb2: Any, f: Any, df: Any,
             d2f: Any) -> tuple[Any, list[Any]]:
        k = add(k, o.c(1.0))
        an = mul(k, sub(a, k))
        bn = sub(add(x, add(mul(two, k), o.c(1.0))), a)
        na = add(mul(bn, a1), mul(an, a2))
        nb = add(mul(bn, b1), mul(an, b2))
        nda = add(sub(mul(bn, da1), a1), add(mul(an, da2), mul(k, a2)))
        ndb = add(sub(mul(bn, db1), b1), add(mul(an, db2), mul(k, b2)))
        nea = add(sub(mul(bn, ea1), mul(two, da1)), add(mul(an, ea2), mul(two, mul(k, da2))))
        neb = add(sub(mul(bn, eb1), mul(two, db1)), add(mul(an, eb2), mul(two, mul(k, db2))))
        nonzero = _ad.compare("ne", nb, o.c(0.0))
        safe_b = _ad.select(nonzero, nb, o.full(1.0))
        f_new = _ad.select(nonzero, div(na, safe_b), f)
        df_new = _ad.select(nonzero, div(sub(nda, mul(f_new, ndb)), safe_b), df)
        d2f_new = _ad.select(nonzero, div(sub(sub(nea, mul(two, mul(df_new, ndb))),
                                              mul(f_new, neb)), safe_b), d2f)
        size = add(add(o.u("abs", f_new), o.u("abs", df_new)), o.u("abs", d2f_new))
        going = o.any_of(
            _ad.compare("gt", o.u("abs", sub(f_new, f)), mul(eps, o.u("abs", f_new))),
            _ad.compare("gt", o.u("abs", sub(df_new, df)), mul(eps, size)),
            _ad.compare("gt", o.u("abs", sub(d2f_new, d2f)), mul(eps, size)))
        rescale = o.any_of(_ad.compare("gt", o.u("abs", na), big),
                           _ad.compare("gt", o.u("abs", nb), big))
        scaled = [_ad.select(rescale, mul(v, eps), v)
                  for v in (na, a1, nb, b1, nda, da1, ndb, db1, nea, ea1, neb, eb1)]
        return going, [k, *scaled, f_new, df_new, d2f_new]

    zero, one = o.full(0.0), o.full(1.0)
    b_first = sub(add(x, o.c(1.0)), a)
    safe = _ad.select(_ad.compare("eq", b_first, o.c(0.0)), one, b_first)
    f0 = div(one, safe)
    df0 = div(f0, safe)
    d2f0 = div(mul(two, df0), safe)  # d2/da2 1/(x+1-a) = 2/(x+1-a)^3
    state = [zero, one, zero, b_first, one, zero, zero, o.full(-1.0), zero,
             zero, zero, zero, zero, f0, df0, d2f0]
    out, unconverged = while_lanes(body, enabled, state, [a, x], _MAX_FRACTION_TERMS)
    return out[-3], out[-2], out[-1], unconverged


# Stirling's series of lgamma(a) - ((a - 1/2) log a - a + log(2 pi)/2) = sum_k
# B_2k / (2k (2k-1) a^(2k-1)), k = 1..8: below 1e-17 for a >= 10.
_STIRLING = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_bernoulli_even(8), start=1)]
_STIRLING_FROM = 10.0
_LOG1PMX_TERMS = 18  # sum_k t^2k / (2k + 3), |t| <= 1/3: below 1e-17


def _log1pmx(o: Ops, d: Any) -> Any:
    """log(1 + d) - d without cancellation for |d| < 1/2: with t = d / (2 + d),
    log(1 + d) - d = -2 t^2 / (1 - t) + 2 t^3 sum_k t^2k / (2k + 3) (the atanh series of
    log((1 + t) / (1 - t)), whose terms all have the sign of the first for t < 0 and stay
    below a sixth of it for t > 0)."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    small = o.lt(o.u("abs", d), o.c(0.5))
    ds = _ad.select(small, d, o.full(0.0))
    t = div(ds, add(o.c(2.0), ds))
    t2 = mul(t, t)
    acc = o.full(1.0 / (2 * _LOG1PMX_TERMS + 1))
    for k in reversed(range(_LOG1PMX_TERMS - 1)):
        acc = add(o.c(1.0 / (2 * k + 3)), mul(t2, acc))
    series = add(_ad.neg(div(mul(o.c(2.0), t2), sub(o.c(1.0), t))),
                 mul(mul(o.c(2.0), mul(t, t2)), acc))
    direct = sub(o.u("log1p", d), d)
    return _ad.select(small, series, direct)


def _log_prefactor(o: Ops, a: Any, x: Any) -> Any:
    """log ax = a log x - x - lgamma(a). For a >= 10 written around x = a (d = x/a - 1),

        log ax = a (log(1 + d) - d) + log(a)/2 - log(2 pi)/2 - stirling(a),

    whose error is eps times log ax itself, not eps times the size of a log x and lgamma(a),
    which the plain difference loses to cancellation."""
    add, sub, mul, div = _ad.add, _ad.sub, _ad.mul, _ad.div
    plain = sub(sub(mul(a, o.log(x)), x), lgamma_p.bind(a))
    large = _ad.compare("ge", a, o.c(_STIRLING_FROM))
    al = _ad.select(large, a, o.full(_STIRLING_FROM))
    d = div(sub(x, al), al)
    inv = div(o.c(1.0), al)
    inv2 = mul(inv, inv)
    stirling = o.full(_STIRLING[-1])
    for coefficient in reversed(_STIRLING[:-1]):
        stirling = add(o.c(coefficient), mul(inv2, stirling))
    stirling = mul(stirling, inv)
    around = sub(add(mul(al, _log1pmx(o, d)), mul(o.c(0.5), o.log(al))),
                 add(o.c(0.5 * math.log(2 * math.pi)), stirling))
    return _ad.select(large, around, plain)


def _zeta_integer(k: int) -> float:
    """zeta(k) for an integer k >= 2 (Euler-Maclaurin after 20 terms)."""
    n = 20
    head = sum(float(j) ** -k for j in range(1, n))
    tail = n ** (1.0 - k) / (k - 1) + 0.5 * n ** -k
    rising = float(k) / n ** (k + 1)  # k (k+1) ... (k+2j-2) / n^(k+2j-1)
    for j, coefficient in enumerate(_EM_COEFFICIENTS, start=1):
        tail += coefficient * rising
        rising *= (k + 2 * j - 1) * (k + 2 * j) / (n * n)
    return head + tail


_EULER_GAMMA = 0.57721566490153286
_EM_COEFFICIENTS = [float(b / math.factorial(2 * j))
                    for j, b in enumerate(_bernoulli_even(12), start=1)]
# lgamma(1 + a) = -gamma a + sum_(k>=2) (-1)^k zeta(k) a^k / k, for a < 1/5 (26 terms:
# below 1e-17 of the sum)
_LGAMMA1P = [-_EULER_GAMMA] + [(-1) ** k * _zeta_integer(k) / k for k in range(2, 27)]
_LGAMMA1P_BELOW = 0.2


_SMALL_X_TERMS = 20  # x^n / (n! n) below 1e-19 for x < 1


def _upper_small_x(o: Ops, a: Any, x: Any) -> Any:
    """Q(a, x) for x < 1 without 1 - P's cancellation (P is near 1 there for small a): from
    P = x^a / Gamma(1 + a) (1 + a U), U = sum_(n>=1) (-x)^n / (n! (a + n)),

        Q = -expm1(L) - e^L a U,   L = a log x - lgamma(1 + a),

    with lgamma(1 + a) from its Taylor series below a = 1/5 (1 + a would round a away)."""
    add, mul, div = _ad.add, _ad.mul, _ad.div
    small = o.lt(a, o.c(_LGAMMA1P_BELOW))
    s_a = _ad.select(small, a, o.full(0.0))
    acc = o.full(_LGAMMA1P[-1])
    for coefficient in reversed(_LGAMMA1P[:-1]):
        acc = add(o.c(coefficient), mul(s_a, acc))
    lgamma1p = _ad.select(small, mul(s_a, acc), lgamma_p.bind(add(a, o.c(1.0))))
    xs = _ad.select(o.lt(x, o.c(1.0)), x, o.full(0.5))
    big_l = _ad.sub(mul(a, o.log(xs)), lgamma1p)
    u = o.full(0.0)
    power = o.full(1.0)  # (-x)^n / n!
    for n in range(1, _SMALL_X_TERMS + 1):
        power = mul(power, div(_ad.neg(xs), o.c(float(n))))
        u = add(u, div(power, add(a, o.c(float(n)))))
    return _ad.sub(_ad.neg(o.u("expm1", big_l)), mul(o.u("exp", big_l), mul(a, u)))


def _setup(a: Any, x: Any) -> tuple[Ops, Any, Any]:
    """(ops, log ax, uses the continued fraction)."""
    o = Ops(a)
    log_ax = _log_prefactor(o, a, x)
    use_fraction = o.all_of(_ad.compare("ge", x, o.c(1.0)), _ad.compare("gt", x, a))
    return o, log_ax, use_fraction


def _p_or_q(a: Any, x: Any, upper: bool) -> Any:
    o, log_ax, use_fraction = _setup(a, x)
    nan = o.any_of(o.isnan(a), o.isnan(x), o.lt(x, o.c(0.0)), o.lt(a, o.c(0.0)),
                   o.all_of(o.eq(a, 0.0), o.eq(x, 0.0)))
    x_inf, a_inf = o.eq(x, np.inf), o.eq(a, np.inf)
    # where ax underflows (or a lane is an edge) the sums are not needed
    underflow = o.lt(log_ax, o.c(float(np.log(np.finfo(o.dtype).tiny))))
    skip = o.any_of(nan, underflow, x_inf, a_inf, o.eq(x, 0.0), o.eq(a, 0.0))
    run = o.not_(skip)
    ax = o.u("exp", log_ax)
    tail, _, slow_s = _series(o, a, x, o.all_of(run, o.not_(use_fraction)), False)
    f, _, slow_f = _fraction(o, a, x, o.all_of(run, use_fraction), False)
    nan = o.any_of(nan, slow_s, slow_f)
    one = o.c(1.0)
    lower_series = _ad.div(_ad.mul(ax, _ad.add(one, tail)), a)
    upper_fraction = _ad.mul(ax, f)
    if upper:
        complement = _ad.select(o.lt(x, one), _upper_small_x(o, a, x),
                                _ad.sub(one, lower_series))
        out = _ad.select(use_fraction, upper_fraction, complement)
        limit_zero, limit_one = o.any_of(x_inf, o.eq(a, 0.0)), o.any_of(o.eq(x, 0.0), a_inf)
    else:
        out = _ad.select(use_fraction, _ad.sub(one, upper_fraction), lower_series)
        limit_zero, limit_one = o.any_of(o.eq(x, 0.0), a_inf), o.any_of(x_inf, o.eq(a, 0.0))
    out = _ad.select(limit_zero, o.full(0.0), out)
    out = _ad.select(limit_one, o.full(1.0), out)
    out = _ad.select(o.all_of(x_inf, a_inf), o.full(np.nan), out)
    return _ad.select(nan, o.full(np.nan), out)


def _igamma_recipe(a: Any, x: Any) -> Any:
    return _p_or_q(a, x, upper=False)


def _igammac_recipe(a: Any, x: Any) -> Any:
    return _p_or_q(a, x, upper=True)


def _a_derivative(a: Any, x: Any, sample: bool) -> Any:
    """dP/da (sample=False) or the sample derivative -(dP/da)/(dP/dx) (sample=True)."""
    o, log_ax, use_fraction = _setup(a, x)
    add, mul, div = _ad.add, _ad.mul, _ad.div
    nan = o.any_of(o.isnan(a), o.isnan(x), o.lt(x, o.c(0.0)), _ad.compare("le", a, o.c(0.0)))
    x_zero, x_inf = o.eq(x, 0.0), o.eq(x, np.inf)
    skip = o.any_of(nan, x_zero, x_inf)
    if not sample:  # dP/da carries ax: where it underflows so does the derivative
        skip = o.any_of(skip, o.lt(log_ax, o.c(float(np.log(np.finfo(o.dtype).tiny)))))
    run = o.not_(skip)
    tail, ds, slow_s = _series(o, a, x, o.all_of(run, o.not_(use_fraction)), True)
    s = add(o.c(1.0), tail)
    f, df, slow_f = _fraction(o, a, x, o.all_of(run, use_fraction), True)
    nan = o.any_of(nan, slow_s, slow_f)
    log_x = o.log(x)
    lower = add(mul(s, _ad.sub(log_x, digamma_p.bind(add(a, o.c(1.0))))), ds)
    upper = add(mul(f, _ad.sub(log_x, digamma_p.bind(a))), df)
    if sample:
        out = _ad.select(use_fraction, mul(x, upper), _ad.neg(div(mul(x, lower), a)))
        edge = o.full(np.nan)  # the sample derivative grows without bound as x -> inf
    else:
        ax = o.u("exp", log_ax)
        out = _ad.select(use_fraction, _ad.neg(mul(ax, upper)), div(mul(ax, lower), a))
        edge = o.full(0.0)  # P(a, inf) = 1 for every a
    out = _ad.select(x_zero, o.full(0.0), out)
    out = _ad.select(x_inf, edge, out)
    return _ad.select(nan, o.full(np.nan), out)


def _igamma_grad_a_recipe(a: Any, x: Any) -> Any:
    return _a_derivative(a, x, sample=False)


def _random_gamma_grad_recipe(a: Any, x: Any) -> Any:
    return _a_derivative(a, x, sample=True)


def _second_a_derivative(a: Any, x: Any, sample: bool) -> Any:
    """d2P/da2 (sample=False) or d2P/da2 / (dP/dx) (sample=True, without ax): with
    P = e^l S (l = a log x - x - lgamma(a+1)) or 1 - e^m F (m = l + log a),

        d2P/da2 = e^l ((l'' + l'^2) S + 2 l' S' + S'')  or  -e^m ((m'' + m'^2) F + 2 m' F' + F''),

    l' = log x - psi(a+1), l'' = -psi1(a+1), m' = log x - psi(a), m'' = -psi1(a); dP/dx =
    e^m / x."""
    o, log_ax, use_fraction = _setup(a, x)
    add, mul, div = _ad.add, _ad.mul, _ad.div
    nan = o.any_of(o.isnan(a), o.isnan(x), o.lt(x, o.c(0.0)), _ad.compare("le", a, o.c(0.0)))
    x_zero, x_inf = o.eq(x, 0.0), o.eq(x, np.inf)
    skip = o.any_of(nan, x_zero, x_inf)
    if not sample:
        skip = o.any_of(skip, o.lt(log_ax, o.c(float(np.log(np.finfo(o.dtype).tiny)))))
    run = o.not_(skip)
    tail, ds, d2s, slow_s = _series2(o, a, x, o.all_of(run, o.not_(use_fraction)))
    f, df, d2f, slow_f = _fraction2(o, a, x, o.all_of(run, use_fraction))
    nan = o.any_of(nan, slow_s, slow_f)
    s = add(o.c(1.0), tail)
    log_x = o.log(x)
    a1 = add(a, o.c(1.0))
    lp = _ad.sub(log_x, digamma_p.bind(a1))
    lpp = _ad.neg(trigamma(a1))
    mp = _ad.sub(log_x, digamma_p.bind(a))
    mpp = _ad.neg(trigamma(a))
    lower = add(add(mul(add(lpp, mul(lp, lp)), s), mul(o.c(2.0), mul(lp, ds))), d2s)
    upper = add(add(mul(add(mpp, mul(mp, mp)), f), mul(o.c(2.0), mul(mp, df))), d2f)
    if sample:  # e^l / (dP/dx) = x / a, e^m / (dP/dx) = x
        out = _ad.select(use_fraction, _ad.neg(mul(x, upper)), div(mul(x, lower), a))
        edge = o.full(np.nan)
    else:
        ax = o.u("exp", log_ax)
        out = _ad.select(use_fraction, _ad.neg(mul(ax, upper)), div(mul(ax, lower), a))
        edge = o.full(0.0)
    out = _ad.select(x_zero, o.full(0.0), out)
    out = _ad.select(x_inf, edge, out)
    return _ad.select(nan, o.full(np.nan), out)


igamma_p = define("igamma", _igamma_recipe, 2)
igammac_p = define("igammac", _igammac_recipe, 2)
igamma_grad_a_p = define("igamma_grad_a", _igamma_grad_a_recipe, 2)
random_gamma_grad_p = define("random_gamma_grad", _random_gamma_grad_recipe, 2)


def _log_density(a: Any, x: Any) -> Any:
    """log dP/dx = (a - 1) log x - x - lgamma(a)."""
    o = Ops(a)
    return _ad.sub(_ad.sub(_ad.mul(_ad.sub(a, o.c(1.0)), o.log(x)), x), lgamma_p.bind(a))


def _density(a: Any, x: Any) -> Any:
    return widened(lambda a_, x_: _ad.unary("exp", _log_density(a_, x_)), a, x)


def _stretch(t: Any, a: Any, x: Any) -> tuple[Any, Any, Any]:
    """t, a, x brought to one shape (the operands may broadcast)."""
    return tuple(broadcast_operands([t, a, x]))  # type: ignore[return-value]


def _dx_igamma(t: Any, ans: Any, a: Any, x: Any) -> Any:
    t, a, x = _stretch(t, a, x)
    return _ad.mul(t, _density(a, x))


def _da_igamma(t: Any, ans: Any, a: Any, x: Any) -> Any:
    t, a, x = _stretch(t, a, x)
    return _ad.mul(t, igamma_grad_a_p.bind(a, x))


def _da_igamma_grad_a(t: Any, ans: Any, a: Any, x: Any) -> Any:
    t, a, x = _stretch(t, a, x)
    return _ad.mul(t, widened(lambda a_, x_: _second_a_derivative(a_, x_, False), a, x))


def _da_random_gamma_grad(t: Any, ans: Any, a: Any, x: Any) -> Any:
    # g = -(dP/da) / (dP/dx): dg/da = -(d2P/da2) / (dP/dx) - g (log x - psi(a))
    t, a, x = _stretch(t, a, x)
    ratio = widened(lambda a_, x_: _second_a_derivative(a_, x_, True), a, x)
    return _ad.mul(t, _ad.neg(_ad.add(ratio, _ad.mul(ans, _psi_gap(a, x)))))


def _psi_gap(a: Any, x: Any) -> Any:
    """log x - psi(a), the a-derivative of log dP/dx."""
    return widened(lambda a_, x_: _ad.sub(_ad.unary("log", x_), digamma_p.bind(a_)), a, x)


def _dx_igamma_grad_a(t: Any, ans: Any, a: Any, x: Any) -> Any:
    t, a, x = _stretch(t, a, x)
    return _ad.mul(t, _ad.mul(_density(a, x), _psi_gap(a, x)))


def _dx_random_gamma_grad(t: Any, ans: Any, a: Any, x: Any) -> Any:
    # g = -(dP/da) / (dP/dx): dg/dx = -(log x - psi(a)) - g ((a - 1) / x - 1)
    t, a, x = _stretch(t, a, x)
    o = Ops(a)
    g = ans
    slope = _ad.sub(_ad.div(_ad.sub(a, o.c(1.0)), x), o.c(1.0))
    return _ad.mul(t, _ad.neg(_ad.add(_psi_gap(a, x), _ad.mul(g, slope))))


ad.defjvp(igamma_p, _da_igamma, _dx_igamma, broadcast=_ad.broadcast_to)
ad.defjvp(igammac_p, lambda t, ans, a, x: _ad.neg(_da_igamma(t, ans, a, x)),
          lambda t, ans, a, x: _ad.neg(_dx_igamma(t, ans, a, x)), broadcast=_ad.broadcast_to)
ad.defjvp(igamma_grad_a_p, _da_igamma_grad_a, _dx_igamma_grad_a, broadcast=_ad.broadcast_to)
ad.defjvp(random_gamma_grad_p, _da_random_gamma_grad, _dx_random_gamma_grad,
          broadcast=_ad.broadcast_to)
