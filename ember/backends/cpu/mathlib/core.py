"""Double-precision building blocks shared by the accurate functions: exp with a tail
(double-double) so compositions (expm1, erf, erfc, ...) round once at the end.

Input: an `Fp` on double and double values. Output: pieces of the result whose sum
carries ~60-64 bits. Every function here is straight-line IR (selects, no branches), so a
loop calling it vectorizes. f32 functions call these on widened arguments.

exp_core(xh, xl) -> (k, q) with e^(xh + xl) = 2^k (1 + q):
  k = rint(xh / ln2), r = xh - k ln2_hi (exact: k has at most 11 bits and ln2_hi has 21
  trailing zero bits; the difference is below 0.35 and on the grid of xh), then the tail
  t = xl - k ln2_lo is folded in with a two-sum: (rh, rl), |rh| <= ln2/2 + tiny.
  e^rh - 1 = rh + rh^2 (1/2! + rh/3! + ... + rh^11/13!) (Taylor; the first dropped term
  rh^14/14! <= 4.2e-18 < 2^-57 at rh = 0.3466; f32 needs rh^9/9! <= 2e-10 < 2^-32, so
  terms through rh^8), and e^(rh + rl) = e^rh (1 + rl) to 2^-100, so
  q = q0 + rl (1 + q0). The caller clamps xh so |k| <= 1100 (see `Fp.ldexp`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.fp import Fp

LN2_DIGITS = "0.693147180559945309417232121458176568075500134360255254120680009493393"
LN2_F = Fraction(LN2_DIGITS)


def split(value: Fraction, zero_bits: int = 0) -> tuple[float, float]:
    """(hi, lo): hi = value rounded to a double with `zero_bits` trailing zero bits of its
    53-bit significand, lo = the rest rounded to a double."""
    hi = float(value)
    if zero_bits:
        m, e = math.frexp(hi)
        scale = 2.0 ** (53 - zero_bits)
        hi = math.ldexp(round(m * scale) / scale, e)
    return hi, float(value - Fraction(hi))


LN2_HI, LN2_LO = split(LN2_F, 21)  # e * LN2_HI is exact for |e| < 2^21
LOG2E = float(1 / LN2_F)
EXP_TERMS = {"f32": 9, "f64": 14}  # e^r - 1 through r^(n-1) / (n-1)!


def exp_core(fp: Fp, xh: ir.Value, xl: ir.Value | None, prec: str = "f64"
             ) -> tuple[ir.Value, ir.Value]:
    """(k as ity, q) with e^(xh + xl) = 2^k (1 + q); xh finite and clamped by the caller."""
    k = fp.rint(fp.mul(xh, fp.c(LOG2E)))
    nk = fp.neg(k)
    r = fp.fma(nk, fp.c(LN2_HI), xh)  # exact
    t = fp.mul(nk, fp.c(LN2_LO))
    if xl is not None:
        t = fp.add(t, xl)
    rh, rl = fp.two_sum(r, t)
    n = EXP_TERMS[prec]
    p = fp.poly(rh, [1.0 / math.factorial(j) for j in range(2, n)])
    q0 = fp.fma(fp.mul(rh, rh), p, rh)  # e^rh - 1
    q = fp.add(q0, fp.fma(rl, q0, rl))
    return fp.to_int(k), q


def clamp(fp: Fp, x: ir.Value, lo: float, hi: float) -> ir.Value:
    """Clamp into [lo, hi]; NaN becomes 0 (the caller restores it)."""
    x = fp.sel(fp.gt(x, fp.c(hi)), fp.c(hi), x)
    x = fp.sel(fp.lt(x, fp.c(lo)), fp.c(lo), x)
    return fp.sel(fp.isnan(x), fp.c(0.0), x)
