"""cbrt and pow in f64 (straight-line IR; f32 has its own bodies in f32_powers), and the
sign and special cases of pow shared by both (`pow_finish`).

cbrt(x), a = |x| = 2^e m, m in [1, 2) (subnormals scaled by 2^54 first, e -= 54):
  e = 3 j + i with j = floor((e + 1/2) / 3) (computed in double: exact enough, the + 1/2
  keeps multiples of 3 off the rounding boundary), i in {0, 1, 2}; the target is
  c = m 2^i in [1, 8) and cbrt(a) = 2^j cbrt(c).
  y0 = P(m) 2^(i/3) with P the fitted m^(1/3) on [1, 2] (coeffs.CBRT_P, 2^-18 relative),
  then Newton steps y <- y - (y^3 - c) / (3 y^2) with the residual fma(y, y^2, -c): the
  error squares each step (2^-18 -> 2^-36 -> 2^-72), and the last step
  adds a correction of ~2^-36 y to y, so the final rounding is the only large one.
  cbrt(+-0), +-inf and NaN return x.

pow(x, y) = sign * exp(y log|x|): (H, L) = log_dd(|x|), y (H + L) = ph + pl by two_prod plus
  y L, and exp_dd(ph, pl) rounds once. With log_dd's ~2^-64 relative error and |y log x|
  <= 745 where the result is finite and nonzero, the exponent carries an absolute error
  of ~2^-54 and the result is within about an ulp.
  sign: -1 when x < 0 (sign bit) and y is an odd integer (y == rint(y) and y/2 is not;
  |y| >= 2^53 is even). x < 0 finite with y finite non-integer: NaN.
  Special cases, in order of precedence (C99 Annex F): y == 0 -> 1 and x == 1 -> 1 (even
  with NaN); NaN -> NaN; y = +-inf -> 1 for |x| == 1, else 0 or inf by (|x| < 1) xor
  (y < 0); x = +-0 -> inf (y < 0) or 0 (y > 0) with x's sign when y is an odd integer;
  x = +-inf -> 0 (y < 0) or inf (y > 0), likewise signed. Ember defines power(x, 2) as
  x * x exactly (the algebraic simplifier's rewrite), so y == 2 lanes return x * x.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import coeffs
from ember.backends.cpu.mathlib.core import exp_dd, log_dd
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.fp import Fp


def _cbrt_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    b = fp.b
    a = fp.fabs(x)
    sub = fp.lt(a, fp.c(2.0 ** -1022))
    xs = fp.sel(sub, fp.mul(a, fp.c(2.0 ** 54)), a)
    bits = fp.to_bits(xs)
    expf = b.and_(b.lshr(bits, fp.ci(52)), fp.ci(0x7FF))
    e = fp.add(b.sitofp(b.sub(expf, fp.ci(1023)), fp.ty), fp.sel(sub, fp.c(-54.0), fp.c(0.0)))
    m = fp.from_bits(b.or_(b.and_(bits, fp.ci((1 << 52) - 1)), fp.ci(1023 << 52)))
    j = b.call(_floor(fp), [fp.mul(fp.add(e, fp.c(0.5)), fp.c(1.0 / 3.0))])
    i = fp.sub(e, fp.mul(fp.c(3.0), j))  # 0, 1 or 2, exactly
    i1 = fp.eq(i, fp.c(1.0))
    i2 = fp.eq(i, fp.c(2.0))
    c = fp.mul(m, fp.sel(i2, fp.c(4.0), fp.sel(i1, fp.c(2.0), fp.c(1.0))))
    f = fp.sel(i2, fp.c(2.0 ** (2 / 3)), fp.sel(i1, fp.c(2.0 ** (1 / 3)), fp.c(1.0)))
    y = fp.mul(fp.poly(m, coeffs.CBRT_P[:-1]), f)
    for _ in range(2):
        y2 = fp.mul(y, y)
        r = fp.fma(y, y2, fp.neg(c))
        y = fp.sub(y, fp.div(r, fp.mul(fp.c(3.0), y2)))
    res = fp.ldexp(y, fp.to_int(j))
    res = fp.copysign(res, x)
    keep = b.or_(b.or_(fp.eq(x, fp.c(0.0)), fp.isinf(x)), fp.isnan(x))
    return fp.sel(keep, x, res)


def _floor(fp: Fp) -> ir.Function:
    from ember.backends.cpu.mathlib.fp import intrinsic

    return intrinsic(fp.module, "llvm.floor.f64", fp.ty, [fp.ty])


def _pow_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    x, y = args
    zero = fp.c(0.0)
    # x = 0, inf or NaN: garbage (no traps: integer ops on the bits, exp_dd clamps), which
    # pow_finish replaces; no select of a safe value here (see lean_log on all-ones vectors)
    h, lo = log_dd(fp, fp.fabs(x), prec="f64")
    ph, pl = fp.two_prod(y, h)
    pl = fp.fma(y, lo, pl)
    inrange = fp.lt(fp.fabs(ph), fp.c(800.0))
    pl = fp.sel(inrange, pl, zero)
    ph = fp.sel(fp.isnan(ph), zero, ph)
    return pow_finish(fp, x, y, exp_dd(fp, ph, pl, "f64"))


def pow_finish(fp: Fp, x: ir.Value, y: ir.Value, mag: ir.Value) -> ir.Value:
    """pow(x, y) from mag = |x|^y (meaningful for finite x != 0 and finite y): the sign and
    every special case of the docstring."""
    b = fp.b
    one, zero, inf = fp.c(1.0), fp.c(0.0), fp.c(math.inf)
    ax = fp.fabs(x)
    ay = fp.fabs(y)
    is_int = fp.eq(fp.rint(y), y)
    half = fp.mul(y, fp.c(0.5))
    odd = b.and_(is_int, b.not_(fp.eq(fp.rint(half), half)))
    xneg = fp.signbit(x)
    negate = b.and_(xneg, odd)
    res = fp.sel(negate, fp.neg(mag), mag)
    res = fp.sel(b.and_(xneg, b.not_(is_int)), fp.c(math.nan), res)  # y inf: fixed below
    # x = +-0 and x = +-inf
    signed = fp.sel(negate, fp.c(-1.0), one)
    ylt0 = fp.lt(y, zero)
    res = fp.sel(fp.eq(ax, zero), fp.mul(signed, fp.sel(ylt0, inf, zero)), res)
    res = fp.sel(fp.eq(ax, inf), fp.mul(signed, fp.sel(ylt0, zero, inf)), res)
    # y = +-inf
    yinf = fp.sel(b.xor(fp.lt(ax, one), ylt0), zero, inf)
    yinf = fp.sel(fp.eq(ax, one), one, yinf)
    res = fp.sel(fp.eq(ay, inf), yinf, res)
    res = fp.sel(b.or_(fp.isnan(x), fp.isnan(y)), fp.add(x, y), res)
    res = fp.sel(b.or_(fp.eq(y, zero), fp.eq(x, one)), one, res)
    return fp.sel(fp.eq(y, fp.c(2.0)), fp.mul(x, x), res)


def cbrt_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "cbrt", ty, 1, _cbrt_body)


def pow_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "pow", ty, 2, _pow_body)
