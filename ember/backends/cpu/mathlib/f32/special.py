"""erf and erf-inv in native f32 arithmetic (straight-line IR: both ranges computed, a
select picks; 16 lanes per AVX-512 register where the widened double bodies had 8).

Input: a float x. Output: erf(x), erfinv(x) within 3 ulp of the correctly rounded value
(f16 rounds these once more; the double bodies in `special.py` serve f64, and erfc).

a = |x| < 1: erf x = x + x P(z), z = x^2, P the float32 fit of erf(sqrt z)/sqrt z - 1 on
  [0, 1] (coeffs32.ERF_P, error weighted by x/erf(x) under 2^-27). |x P| <= 0.16 |x|, so
  the last add rounds once onto a result whose other errors are below 0.1 ulp; erf(+-0) =
  +-0, subnormal x gives x + (a subnormal product): exact up to that product's rounding.
1 <= a: erf a = 1 - erfc(a), erfc(a) = e^(-a^2) R(a), R the float32 fit of
  erfcx(a) = e^(a^2) erfc(a) in v = a - 5/2 on [1, 3.92] (coeffs32.ERFCX_R, absolute error
  of e^(-a^2) R under 2^-27 after dividing by erf(a) >= 0.84). a is clamped to 3.92 first:
  beyond 3.86, erfc(a) < 2^-25 and 1 - erfc(a) rounds to 1 in float (inf and NaN lanes
  too; NaN is restored at the end). v = a - 5/2 is exact (Sterbenz for a >= 5/4; below, a
  and v share the exponent's grid 2^-23).
  e^(-a^2): s = -a^2 rounds (2^-24 |s| <= 2^-20 absolute), which moves erfc by
  erfc(a) a^2 2^-24 <= 2^-28 for a in [1, 3.92] (largest near a = 1.3): a sixteenth of
  an ulp of the result. k = rint(s log2 e) in [-23, -1], r = s - k ln2 in two fma steps
  (ln2 = hi + lo, hi with 9 trailing zero bits so k hi is exact), e^r by its Taylor
  polynomial through r^7/7! (|r| <= 0.347: truncation 2^-29), times 2^k (a normal
  float, exact).
  1 - e^(-a^2) R: erfc <= 0.158, so its few ulp of float rounding are below 2^-26, and
  the subtraction rounds once. The sign comes back with copysign.
erf-inv(x), a = |x| < 1: w = -log((1 - a)(1 + a)) with the f32 log body (1 - a exact for
  a >= 1/2; the product's rounding moves w by 2^-24 absolute, which moves A below by
  A'(w)/A 2^-24 <= 2^-26 relative). w <= 6.25: y = a (A0 + w A1(w)); beyond: y = a (B0 +
  v B1(v)), v = sqrt(w) - 13/4 (exact: sqrt(w) in [2.5, 4] for float a < 1, Sterbenz);
  A1, B1 the float32 fits of (A - A0)/w and (B - B0)/v (coeffs32.ERFINV_A1/B1, 2^-27
  relative to y), A0 = sqrt(pi)/2 and B0 as float pairs hi + lo: a (hi + (lo + v C)) is
  one fma on a small product, so the large constant is not rounded to float on its own
  (that alone would cost 2^-25). The log's and sqrt's half-ulp errors reach y scaled by
  d log y / d log w <= 1/2. erfinv(+-1) = +-inf, |x| > 1 or NaN -> NaN, erfinv(+-0) = +-0.
Method: ordinary range splitting with a polynomial for the small range and the scaled
complementary function for the large one (as in any libm's erf); the coefficients are our
own near-minimax fits from tools/fit.py (`fit32`).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.exp_log import LN2, LOG2E, log_fn
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs32

F32 = ir.FloatType()
ERF_ONE = 3.92  # erf(a) rounds to 1 in float beyond ~3.86; the ERFCX_R fit ends here
ERFCX_SHIFT = 2.5  # ERFCX_R is a polynomial in a - 2.5
EXP_TERMS = 8  # e^r through r^7/7!
# erfinv_A(0) = sqrt(pi)/2 and erfinv_B(0) (at s = 3.25) as float hi + lo pairs
ERFINV_A0 = (0.8862269520759583, -2.662320023830404e-08)
ERFINV_B0 = (3.083885669708252, -5.921603127681002e-08)
ERFINV_SPLIT = 6.25  # w beyond: the polynomial in sqrt(w)
ERFINV_SHIFT = 3.25  # ERFINV_B1 is a polynomial in sqrt(w) - 3.25


def exp_neg(fp: Fp, s: ir.Value) -> ir.Value:
    """e^s for s in [-16, 0] (float), the result normal: 2^k e^r, k = rint(s / ln2)."""
    hi, lo = LN2[32]
    k = fp.rint(fp.mul(s, fp.c(LOG2E)))
    r = fp.fma(fp.neg(k), fp.c(hi), s)
    r = fp.fma(fp.neg(k), fp.c(lo), r)
    p = fp.poly(r, [1.0 / math.factorial(n) for n in range(EXP_TERMS)])
    return fp.mul(p, fp.pow2i(fp.to_int(k)))


def _erf_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    small = fp.fma(x, fp.poly(fp.mul(x, x), coeffs32.ERF_P), x)
    ac = fp.sel(fp.lt(a, fp.c(ERF_ONE)), a, fp.c(ERF_ONE))  # inf, NaN -> 3.92
    ac = fp.sel(fp.gt(ac, fp.c(1.0)), ac, fp.c(1.0))
    erfc = fp.mul(exp_neg(fp, fp.neg(fp.mul(ac, ac))),
                  fp.poly(fp.sub(ac, fp.c(ERFCX_SHIFT)), coeffs32.ERFCX_R))
    large = fp.copysign(fp.sub(fp.c(1.0), erfc), x)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, large)
    return fp.sel(fp.isnan(x), x, res)


def _scaled(fp: Fp, a: ir.Value, v: ir.Value, c0: tuple[float, float],
            coeffs: list[float]) -> ir.Value:
    """a (c0 + v C(v)) with c0 = hi + lo: a hi + a (lo + v C), rounded by the last fma."""
    inner = fp.fma(v, fp.poly(v, coeffs), fp.c(c0[1]))
    return fp.fma(a, fp.c(c0[0]), fp.mul(a, inner))


def _erfinv_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    ok = fp.lt(a, one)
    prod = fp.sel(ok, fp.mul(fp.sub(one, a), fp.add(one, a)), one)
    w = fp.neg(fp.b.call(log_fn(fp.b.module, F32), [prod]))
    ya = _scaled(fp, a, w, ERFINV_A0, coeffs32.ERFINV_A1)
    v = fp.sub(fp.sqrt(w), fp.c(ERFINV_SHIFT))
    yb = _scaled(fp, a, v, ERFINV_B0, coeffs32.ERFINV_B1)
    y = fp.sel(fp.le(w, fp.c(ERFINV_SPLIT)), ya, yb)
    res = fp.copysign(y, x)
    res = fp.sel(fp.eq(a, one), fp.copysign(fp.c(math.inf), x), res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)
    bad = fp.b.or_(fp.gt(a, one), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def erf_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erf.f32", F32, 1, _erf_body)



def erfinv_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erfinv.f32", F32, 1, _erfinv_body)
