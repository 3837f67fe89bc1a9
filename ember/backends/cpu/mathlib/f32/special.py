"""erf in native f32 arithmetic (straight-line IR: both ranges computed, a select picks).

Input: a float x. Output: erf(x) within 3 ulp of the correctly rounded value (the widened
body in `special.py` still serves f64 and f16, and erfc and erf-inv).

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
Method: ordinary range splitting with a polynomial for the small range and the scaled
complementary function for the large one (as in any libm's erf); the coefficients are our
own near-minimax fits from tools/fit.py (`fit32`).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.exp_log import LN2, LOG2E
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs32

F32 = ir.FloatType()
ERF_ONE = 3.92  # erf(a) rounds to 1 in float beyond ~3.86; the ERFCX_R fit ends here
ERFCX_SHIFT = 2.5  # ERFCX_R is a polynomial in a - 2.5
EXP_TERMS = 8  # e^r through r^7/7!


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


def erf_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erf.f32", F32, 1, _erf_body)

