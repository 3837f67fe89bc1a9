"""sinh, cosh, asinh, acosh, atanh in the working precision (f32 or f64), straight-line IR.

sinh, cosh, a = |x|:
  a < 1: sinh a = a + a z S(z), cosh a = 1 + z C(z), z = a^2. f32: S and C are the float32
    fits of (sinh(sqrt z)/sqrt z - 1)/z and (cosh(sqrt z) - 1)/z on [0, 1]
    (coeffs32.SINH_P, COSH_P; weighted errors 2^-30). f64: Taylor, S = sum z^(n-1)/(2n+1)!
    through 1/19! and C = sum z^(n-1)/(2n)! through 1/20! (first dropped terms at z = 1:
    1/21! = 2^-65 and 1/22! = 2^-70). The tail is at most 15% (sinh) or 35% (cosh) of the
    result, so its rounding costs a small part of an ulp.
  a >= 1: parts.exp_parts(a) = (k, q), e^a = 2^k (1 + q); h = 2^(k-1) (exact),
    B = e^-a / 2 = 0.25 / (h (1 + q)): sinh = h + fma(h, q, -B), cosh = h + fma(h, q, B):
    h q -+ B is at most 0.42 h and rounds once (a quarter of an ulp of the result at most),
    the last add once more. B is at most 16% of sinh (a = 1), its relative error a few
    2^-p. For large k (f32 > 64, f64 > 1000), B is 0 and h is taken 2^16 (f32) or 2^64
    (f64) lower, the sum scaled back at the end (exact, or overflow to inf). a is clamped
    to [1, 90] (f32) or [1, 720] (f64) first; NaN lanes keep NaN by a final select.
  sinh is odd (copysign; sinh(-0) = -0), cosh even.
tanh (f32 only; f64 is hyperbolic's), a = |x|: a < 0.625: a + a z P(z), z = a^2, P the
  float32 fit of (tanh(sqrt z)/sqrt z - 1)/z (coeffs32.TANH_P, weighted error 2^-29.7; the
  tail is at most 13% of the result). a >= 0.625: 1 - 2/(E + 1), E = e^(2a) = 2^k (1 + q)
  (exp_parts without the reduction's tail: E within 2^-25 relative; a clamped to 10,
  where 2/(E + 1) < 2^-27), E + 1 = fma(2^k, q, 2^k + 1) rounded once; 2/(E + 1) <= 0.45
  and the result >= 0.55, so E's error, the division's and the sum's roundings cost a
  quarter of an ulp or less each: about an ulp in all.
asinh(x) = sign(x) log(a + sqrt(a^2 + 1)), a = |x|, with the argument as a pair: a^2 = p + pe
  (two_prod), 1 + p = s + se (two-sum), r = sqrt(s) with its tail
  (fma(-r, r, s) + se + pe) / (2r), a + r = A + Ae (fast two-sum, r >= a), and
  parts.log1p_parts(A, Ae + tail): A + Ae carries ~2p bits, so the log rounds about once,
  also near 0 (log1p_parts takes f = A - 1 exactly; tiny a gives A = 1, Ae = a).
  a > 2^12 (f32) or 2^28 (f64): log(2a) = log(a) + ln2 (the dropped 1/(4a^2) is below
  2^-26 or 2^-58 relative): the same log with u = a, c = 0 and one more in the exponent
  (so it still rounds once).
acosh(x) = log1p(t), d = x - 1 (exact for x >= 1: Sterbenz up to 2, 1 on x's grid beyond),
  t = d + sqrt(d (d + 2)) as a pair: the radicand q + qe = 2d + d^2 exactly (two_prod, then
  a two-sum), r = sqrt(q) and its tail (fma(-r, r, q) + qe) / (2r), r + d by a fast two-sum
  (r >= d); the tails join log1p's. x beyond 2^12 (f32) or 2^28 (f64): log(2x) as above.
  x < 1 or NaN -> NaN, +inf -> +inf.
atanh(x) = sign(x) log1p(t) / 2, a = |x|, t = 2a / (1 - a) as a pair: 1 - a = dh + dl
  exactly (two-sum), th = fl(2a / dh), tl = (fma(-th, dh, 2a) - th dl) / dh (the exact
  remainder divided once more), then 1 + th = u + c (two-sum) with tl added to c. a = 1 ->
  inf, a > 1 or NaN -> NaN; tiny a gives a (t = 2a, halved exactly).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import clamp
from ember.backends.cpu.mathlib.define import define, suffix
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.parts import LN2_PAIR, combine, exp_parts, log1p_parts
from ember.backends.cpu.mathlib.tables import coeffs32

TANH_SMALL = 0.625
BIG_LOG = {32: 4096.0, 64: 2.0 ** 28}  # beyond, asinh/acosh use log(2a)
# (clamp for a, k beyond which h is scaled, the scale's exponent)
LARGE = {32: (90.0, 64, 16), 64: (720.0, 1000, 64)}
SINH_P = {32: coeffs32.SINH_P, 64: [1.0 / math.factorial(2 * n + 1) for n in range(1, 10)]}
COSH_P = {32: coeffs32.COSH_P, 64: [1.0 / math.factorial(2 * n) for n in range(1, 11)]}


def _large(fp: Fp, a: ir.Value, sign: float) -> ir.Value:
    """e^a / 2 + sign e^-a / 2 for a >= 1."""
    b = fp.b
    hi, big_k, shift = LARGE[fp.bits]
    k, q = exp_parts(fp, clamp(fp, a, 1.0, hi))
    big = b.icmp_signed(">", k, fp.ci(big_k))
    # 2^(k-1) as 2^k / 2: a "k - 1" here becomes an all-ones vector (see lean_log)
    h = fp.mul(fp.pow2i(b.sub(k, b.select(big, fp.ci(shift), fp.ci(0)))), fp.c(0.5))
    bb = fp.div(fp.c(0.25 * sign), fp.mul(h, fp.add(fp.c(1.0), q)))
    bb = fp.sel(big, fp.c(0.0), bb)
    v = fp.add(h, fp.fma(h, q, bb))
    return fp.sel(big, fp.mul(v, fp.c(2.0 ** shift)), v)


def _sinh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    z = fp.mul(a, a)
    small = fp.fma(fp.mul(a, z), fp.poly(z, SINH_P[fp.bits]), a)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, _large(fp, a, -1.0))
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _cosh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    z = fp.mul(a, a)
    small = fp.fma(z, fp.poly(z, COSH_P[fp.bits]), fp.c(1.0))
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, _large(fp, a, 1.0))
    return fp.sel(fp.isnan(x), x, res)


def _tanh32_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    z = fp.mul(a, a)
    small = fp.fma(fp.mul(a, z), fp.poly(z, coeffs32.TANH_P), a)
    k, q = exp_parts(fp, fp.mul(fp.c(2.0), clamp(fp, a, 0.0, 10.0)), tail=False)
    p = fp.pow2i(k)
    d = fp.div(fp.c(2.0), fp.fma(p, q, fp.add(p, fp.c(1.0))))  # 2 / (e^2a + 1)
    res = fp.sel(fp.lt(a, fp.c(TANH_SMALL)), small, fp.sub(fp.c(1.0), d))
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _log_huge(fp: Fp, u: ir.Value, c: ir.Value, a: ir.Value, huge: ir.Value | None
              ) -> ir.Value:
    """log(u + c), or log(2a) on `huge` lanes (u >= 1 where meaningful; other lanes:
    garbage the caller replaces)."""
    if huge is not None:
        u = fp.sel(huge, a, u)
        c = fp.sel(huge, fp.c(0.0), c)
    ef, hi, lo = log1p_parts(fp, u, c)  # NaN/inf lanes: garbage, no traps (lean_log)
    if huge is not None:  # log(2a): one more in the exponent, still one rounding
        ef = fp.add(ef, fp.sel(huge, fp.c(1.0), fp.c(0.0)))
    return combine(fp, ef, hi, lo, LN2_PAIR[fp.bits], None)


def _log1p_pair(fp: Fp, t: ir.Value, tl: ir.Value | None, a: ir.Value | None = None,
                huge: ir.Value | None = None) -> ir.Value:
    """log1p(t + tl) for t >= 0, or log(2a) on `huge` lanes."""
    u, c = fp.two_sum(fp.c(1.0), t)
    if tl is not None:
        c = fp.add(c, tl)
    return _log_huge(fp, u, c, a, huge)


def _asinh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    huge = fp.gt(a, fp.c(BIG_LOG[fp.bits]))
    am = fp.sel(huge, one, a)  # keeps a^2 finite on lanes that use log(2a)
    p, pe = fp.two_prod(am, am)
    s, se = fp.two_sum(one, p)
    r = fp.sqrt(s)
    rl = fp.div(fp.add(fp.fma(fp.neg(r), r, s), fp.add(se, pe)), fp.add(r, r))
    big_a, big_e = fp.fast_two_sum(r, am)
    res = _log_huge(fp, big_a, fp.add(big_e, rl), a, huge)
    res = fp.sel(fp.isinf(a), a, res)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _acosh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    huge = fp.gt(x, fp.c(BIG_LOG[fp.bits]))
    d = fp.sub(fp.sel(huge, fp.c(1.0), x), fp.c(1.0))
    p, pe = fp.two_prod(d, d)
    q, qe = fp.two_sum(fp.add(d, d), p)
    r = fp.sqrt(q)
    rl = fp.div(fp.add(fp.fma(fp.neg(r), r, q), fp.add(qe, pe)), fp.add(r, r))
    rl = fp.sel(fp.gt(r, fp.c(0.0)), rl, fp.c(0.0))  # x = 1: 0 / 0
    t, tl = fp.fast_two_sum(r, d)
    res = _log1p_pair(fp, t, fp.add(tl, rl), x, huge)
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    bad = fp.b.or_(fp.lt(x, fp.c(1.0)), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _atanh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    a2 = fp.add(a, a)
    dh, dl = fp.two_sum(fp.c(1.0), fp.neg(a))
    th = fp.div(a2, dh)
    tl = fp.div(fp.sub(fp.fma(fp.neg(th), dh, a2), fp.mul(th, dl)), dh)
    ok = fp.lt(a, fp.c(1.0))
    th = fp.sel(ok, th, fp.c(1.0))
    tl = fp.sel(ok, tl, fp.c(0.0))
    res = fp.mul(fp.c(0.5), _log1p_pair(fp, th, tl))
    res = fp.sel(fp.eq(a, fp.c(1.0)), fp.c(math.inf), res)
    res = fp.sel(fp.gt(a, fp.c(1.0)), fp.c(math.nan), res)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _fn(name: str, body):
    def make(module: ir.Module, ty: ir.Type) -> ir.Function:
        return define(module, f"ember.{name}.{suffix(ty)}", ty, 1, body)

    return make


sinh_fn = _fn("sinh", _sinh_body)
cosh_fn = _fn("cosh", _cosh_body)
asinh_fn = _fn("asinh", _asinh_body)
acosh_fn = _fn("acosh", _acosh_body)
atanh_fn = _fn("atanh", _atanh_body)
tanh32_fn = _fn("tanh", _tanh32_body)
