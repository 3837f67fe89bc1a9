"""sinh, cosh, asinh, acosh, atanh in f32 and f64 (straight-line IR on doubles; f32 widens).

sinh, cosh, a = |x|:
  a < 1: Taylor series, sinh a = a + a z S(z), cosh a = 1 + z C(z), z = a^2,
    S = sum z^(n-1) / (2n+1)!, C = sum z^(n-1) / (2n)!. At z = 1 the first dropped term is
    1/21! = 2e-20 (sinh, f64; f32 stops after 1/11!, dropping 1/13! = 1.6e-10) and
    1/22! = 8.9e-22 (cosh, f64; f32 drops 1/14! = 1.1e-11).
  a >= 1: e^a = 2^k (1 + q) (exp_core), h = 2^(k-1), B = e^-a / 2 = 0.25 / (h (1 + q)):
    sinh = h + (h q - B), cosh = h + (h q + B): the only large rounding is the last add
    (h is exact and h q +- B is at most ~0.4 h). B's rounding is at most 0.18/1.54 of an
    ulp (at a = 1). For k > 1000, B is 0 and h is taken 64 binades lower and the sum scaled
    back by 2^64 (exact, or overflow to inf beyond 710.47). a is clamped at 720.
  sinh keeps the sign (copysign; sinh(-0) = -0), NaN passes through.

asinh(x) = sign(x) log(a + sqrt(a^2 + 1)), a = |x|: a^2 = p + pe (two_prod),
  a^2 + 1 = s + se (two-sum), sqrt(s + se) = r + (fma(-r, r, s) + se) / (2r),
  a + r = A + Ae (two-sum) and log_dd(A, Ae): the whole argument is carried to ~2^-100, so
  the log (relative error ~2^-64) rounds once, with relative precision even near 0
  (log_dd computes log(1 + f) from f exactly). a > 2^28: log(2a) = log_dd(a) + ln2 (the
  dropped 1/(4a^2) is < 2^-58). a < 2^-28: x (the next term a^3/6 is < 2^-57 a).
acosh(x) = log(x + sqrt(x^2 - 1)), x >= 1: x^2 = p + pe and p - 1 is exact (p >= 1 and
  1 is on p's grid), sqrt as above, log_dd(x + r); x > 2^28: log(2x); x < 1 or NaN: NaN.
atanh(x) = sign(x) log((1 + a) / (1 - a)) / 2: 1 + a and 1 - a as two-sums, their ratio
  qh = fl(n / d) with the tail (fma(-qh, dh, nh) + nl - qh dl) / dh, log_dd(qh, ql) / 2;
  a == 1 -> inf, a > 1 -> NaN, a < 2^-28 -> x.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import exp_core, log_dd
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.exp_family import log_special
from ember.backends.cpu.mathlib.fp import Fp

SINH_TERMS = {"f32": 5, "f64": 9}  # S through z^(n-1) / (2n+1)!
COSH_TERMS = {"f32": 6, "f64": 10}  # C through z^(n-1) / (2n)!


def _big_exp_parts(fp: Fp, a: ir.Value, prec: str) -> tuple[ir.Value, ir.Value, ir.Value,
                                                               ir.Value]:
    """(h, hq, B, big) for a >= 1: e^a / 2 = h (1 + q) (times 2^64 where big), B = e^-a / 2."""
    b = fp.b
    ac = fp.sel(fp.gt(a, fp.c(720.0)), fp.c(720.0), a)
    ac = fp.sel(fp.lt(ac, fp.c(1.0)), fp.c(1.0), ac)  # small and NaN lanes: any value
    k, q = exp_core(fp, ac, None, prec)
    big = b.icmp_signed(">", k, fp.ci(1000))
    ks = b.sub(b.sub(k, fp.ci(1)), b.select(big, fp.ci(64), fp.ci(0)))
    h = fp.pow2i(ks)
    bb = fp.div(fp.c(0.25), fp.mul(h, fp.add(fp.c(1.0), q)))
    bb = fp.sel(big, fp.c(0.0), bb)
    return h, fp.mul(h, q), bb, big


def _unscale(fp: Fp, v: ir.Value, big: ir.Value) -> ir.Value:
    return fp.sel(big, fp.mul(v, fp.c(2.0 ** 64)), v)


def _sinh_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    z = fp.mul(a, a)
    s_coef = [1.0 / math.factorial(2 * n + 1) for n in range(1, SINH_TERMS[prec] + 1)]
    small = fp.fma(fp.mul(a, z), fp.poly(z, s_coef), a)
    h, hq, bb, big = _big_exp_parts(fp, a, prec)
    large = _unscale(fp, fp.add(h, fp.sub(hq, bb)), big)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, large)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _cosh_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    z = fp.mul(a, a)
    c_coef = [1.0 / math.factorial(2 * n) for n in range(1, COSH_TERMS[prec] + 1)]
    small = fp.fma(z, fp.poly(z, c_coef), fp.c(1.0))
    h, hq, bb, big = _big_exp_parts(fp, a, prec)
    large = _unscale(fp, fp.add(h, fp.add(hq, bb)), big)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, large)
    return fp.sel(fp.isnan(x), x, res)


def _sqrt_dd(fp: Fp, hi: ir.Value, lo: ir.Value) -> tuple[ir.Value, ir.Value]:
    """sqrt(hi + lo) as r + rl (rl = 0 where r == 0)."""
    r = fp.sqrt(fp.add(hi, lo))
    rl = fp.div(fp.add(fp.fma(fp.neg(r), r, hi), lo), fp.mul(fp.c(2.0), r))
    return r, fp.sel(fp.eq(r, fp.c(0.0)), fp.c(0.0), rl)


def _asinh_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    huge = fp.gt(a, fp.c(2.0 ** 28))
    am = fp.sel(huge, fp.c(1.0), a)
    p, pe = fp.two_prod(am, am)
    s, se = fp.two_sum(p, fp.c(1.0))
    r, rl = _sqrt_dd(fp, s, fp.add(se, pe))
    big_a, big_e = fp.two_sum(am, r)
    arg = fp.sel(huge, a, big_a)
    tail = fp.sel(huge, fp.c(0.0), fp.add(big_e, rl))
    h, lo = log_dd(fp, arg, tail, fp.sel(huge, fp.c(1.0), fp.c(0.0)), prec)
    res = fp.add(h, lo)
    res = fp.sel(fp.eq(a, fp.c(math.inf)), a, res)
    res = fp.sel(fp.lt(a, fp.c(2.0 ** -28)), a, res)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _acosh_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    huge = fp.gt(x, fp.c(2.0 ** 28))
    xm = fp.sel(huge, fp.c(1.0), x)
    xm = fp.sel(fp.lt(xm, fp.c(1.0)), fp.c(1.0), xm)
    p, pe = fp.two_prod(xm, xm)
    d = fp.sub(p, fp.c(1.0))
    r, rl = _sqrt_dd(fp, d, pe)
    big_a, big_e = fp.two_sum(xm, r)
    arg = fp.sel(huge, x, big_a)
    tail = fp.sel(huge, fp.c(0.0), fp.add(big_e, rl))
    h, lo = log_dd(fp, arg, tail, fp.sel(huge, fp.c(1.0), fp.c(0.0)), prec)
    res = fp.add(h, lo)
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    bad = fp.b.or_(fp.lt(x, fp.c(1.0)), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _atanh_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    nh, nl = fp.two_sum(fp.c(1.0), a)
    dh, dl = fp.two_sum(fp.c(1.0), fp.neg(a))
    qh = fp.div(nh, dh)
    ql = fp.div(fp.sub(fp.add(fp.fma(fp.neg(qh), dh, nh), nl), fp.mul(qh, dl)), dh)
    ok = fp.lt(a, fp.c(1.0))
    qh = fp.sel(ok, qh, fp.c(2.0))
    ql = fp.sel(ok, ql, fp.c(0.0))
    h, lo = log_dd(fp, qh, ql, prec=prec)
    res = fp.mul(fp.c(0.5), fp.add(h, lo))
    res = fp.sel(fp.eq(a, fp.c(1.0)), fp.c(math.inf), res)
    res = fp.sel(fp.gt(a, fp.c(1.0)), fp.c(math.nan), res)
    res = fp.sel(fp.lt(a, fp.c(2.0 ** -28)), a, res)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def sinh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "sinh", ty, 1, _sinh_body)


def cosh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "cosh", ty, 1, _cosh_body)


def asinh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "asinh", ty, 1, _asinh_body)


def acosh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "acosh", ty, 1, _acosh_body)


def atanh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "atanh", ty, 1, _atanh_body)


__all__ = ["acosh_fn", "asinh_fn", "atanh_fn", "cosh_fn", "log_special", "sinh_fn"]
