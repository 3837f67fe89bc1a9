"""Double-precision building blocks shared by the accurate functions: exp and log with a
tail (double-double) so compositions (pow, sinh, acosh, erfc, ...) round once at the end.

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

log_dd(xh, xl, eoff) -> (H, L) with H + L = log(xh + xl) + eoff ln2 (relative error ~2^-64):
  x = 2^e m, m in [sqrt(2)/2, sqrt(2)) (subnormals scaled by 2^54 first), f = m - 1 exact.
  s = f / (2 + f) as sh + sl: 2 + f = uh + ul (fast two-sum), sh = fl(f / uh), and the
  remainder f - sh uh is exact by fma, so sl = (fma(-sh, uh, f) - sh ul) / (2 + f), the
  division done as a multiplication by (1 - sh)/2 (1/(2 + f) = (1 - s)/2).
  log(1 + f) = 2 atanh(s) = 2s + (2/3) s^3 + s^3 z R(z), z = s^2 <= 0.0295,
  R(z) = 2/5 + 2z/7 + ... + 2z^(n-1)/(2n+3) (Taylor); relative to the result the first
  dropped term is z^(n+1)/(2n+3): n = 10 gives 2^-60 (f64), n = 5 gives 2^-34 (f32).
  2sh is exact; (2/3) s^3 is ~1% of the result and is formed as a double-double
  (two_prod for s^2 and s^3, 2/3 split into two doubles), because pow multiplies log(x) by
  up to ~2000 before exp. The sl terms enter to first order: 2 sl (1 + z).
  Then e ln2 = e ln2_hi (exact) + e ln2_lo is added with a two-sum, and xl / xh (the first
  order term of log(1 + xl/xh)).
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
TWO_THIRDS = split(Fraction(2, 3))
EXP_TERMS = {"f32": 9, "f64": 14}  # e^r - 1 through r^(n-1) / (n-1)!
LOG_R_TERMS = {"f32": 5, "f64": 10}  # R(z) = sum 2 z^(j-1) / (2j + 3)


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


def exp_dd(fp: Fp, xh: ir.Value, xl: ir.Value | None, prec: str = "f64") -> ir.Value:
    """e^(xh + xl) rounded once; xh clamped to [-760, 720] first, NaN kept."""
    xc = clamp(fp, xh, -760.0, 720.0)
    k, q = exp_core(fp, xc, xl, prec)
    res = fp.ldexp(fp.add(fp.c(1.0), q), k)
    return fp.sel(fp.isnan(xh), xh, res)


def clamp(fp: Fp, x: ir.Value, lo: float, hi: float) -> ir.Value:
    """Clamp into [lo, hi]; NaN becomes 0 (the caller restores it)."""
    x = fp.sel(fp.gt(x, fp.c(hi)), fp.c(hi), x)
    x = fp.sel(fp.lt(x, fp.c(lo)), fp.c(lo), x)
    return fp.sel(fp.isnan(x), fp.c(0.0), x)


def log_dd(fp: Fp, xh: ir.Value, xl: ir.Value | None = None,
           eoff: float | ir.Value = 0.0, prec: str = "f64") -> tuple[ir.Value, ir.Value]:
    """(H, L) ~ log(xh + xl) + eoff ln2 for finite xh > 0 (other lanes: garbage, the caller
    selects the special value)."""
    b = fp.b
    sub = fp.lt(xh, fp.c(2.0 ** -1022))
    xs = fp.sel(sub, fp.mul(xh, fp.c(2.0 ** 54)), xh)
    bits = fp.to_bits(xs)
    expf = b.and_(b.lshr(bits, fp.ci(52)), fp.ci(0x7FF))
    e = b.sub(expf, fp.ci(1023))
    m = fp.from_bits(b.or_(b.and_(bits, fp.ci((1 << 52) - 1)), fp.ci(1023 << 52)))
    big = fp.gt(m, fp.c(math.sqrt(2.0)))
    m = fp.sel(big, fp.mul(m, fp.c(0.5)), m)
    ef = fp.add(b.sitofp(e, fp.ty), fp.sel(big, fp.c(1.0), fp.c(0.0)))
    ef = fp.add(ef, fp.sel(sub, fp.c(-54.0), fp.c(0.0)))
    if isinstance(eoff, ir.Value):
        ef = fp.add(ef, eoff)
    elif eoff:
        ef = fp.add(ef, fp.c(eoff))
    f = fp.sub(m, fp.c(1.0))
    uh, ul = fp.fast_two_sum(fp.c(2.0), f)
    sh = fp.div(f, uh)
    # 1 / (2 + f) = (1 - s) / 2 exactly; with sh for s its relative error is ~2^-53 sh,
    # negligible on sl (itself ~2^-53 sh): no second division
    sl = fp.mul(fp.sub(fp.fma(fp.neg(sh), uh, f), fp.mul(sh, ul)),
                fp.mul(fp.c(0.5), fp.sub(fp.c(1.0), sh)))
    zh, zl = fp.two_prod(sh, sh)
    c3h, c3l = fp.two_prod(sh, zh)
    c3l = fp.fma(sh, zl, c3l)  # s^3 = c3h + c3l
    th, tl = fp.two_prod(fp.c(TWO_THIRDS[0]), c3h)
    tl = fp.add(tl, fp.fma(fp.c(TWO_THIRDS[0]), c3l, fp.mul(fp.c(TWO_THIRDS[1]), c3h)))
    n = LOG_R_TERMS[prec]
    rest = fp.mul(fp.mul(c3h, zh), fp.poly(zh, [2.0 / (2 * j + 3) for j in range(1, n + 1)]))
    a, ae = fp.fast_two_sum(fp.mul(fp.c(2.0), sh), th)
    lo = fp.add(fp.fma(fp.mul(fp.c(2.0), sl), fp.add(fp.c(1.0), zh), tl), rest)
    lo = fp.add(ae, lo)
    hi, he = fp.two_sum(fp.mul(ef, fp.c(LN2_HI)), a)
    lo = fp.add(he, fp.fma(ef, fp.c(LN2_LO), lo))
    if xl is not None:
        lo = fp.add(lo, fp.div(xl, xh))
    return fp.fast_two_sum(hi, lo)
