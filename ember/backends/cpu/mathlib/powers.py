"""cbrt and pow in f64 (straight-line IR; f32 has its own bodies in f32_powers), with the
sign and special cases of pow applied to its magnitude (`pow_finish`).

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
  of ~2^-54 and the result is within about an ulp. For x = +-0, +-inf and NaN, H is
  (|x| - 1) inf (-inf, inf, NaN), so y H is +-inf (exp_dd's clamp gives 0 or inf) where
  the magnitude is 0 or inf, and NaN only on lanes the special cases below replace.
  sign: -1 when x < 0 (sign bit) and y is an odd integer (y == rint(y) and y/2 is not;
  |y| >= 2^53 is even). x < 0 finite with y finite non-integer: NaN.
  Special cases, in order of precedence (C99 Annex F): y == 0 -> 1 and x == 1 -> 1 (even
  with NaN); NaN -> NaN; y = +-inf -> 1 for |x| == 1, else 0 or inf by (|x| < 1) xor
  (y < 0); x = +-0 -> inf (y < 0) or 0 (y > 0) with x's sign when y is an odd integer;
  x = +-inf -> 0 (y < 0) or inf (y > 0), likewise signed. Ember defines power(x, 2) as
  x * x exactly (the algebraic simplifier's rewrite), so y == 2 lanes return x * x.
  (`pow_finish` applies them as selects on the magnitude: NaN, then 1, the sign, NaN for
  a finite negative base with a non-integer exponent, x * x; the f32 body in f32_powers
  does the same in f32 lanes.)
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
    b = fp.b
    ax = fp.fabs(x)
    # x = +-0, +-inf, NaN: log|x| = (|x| - 1) inf (-inf, inf, NaN) in place of log_dd's
    # garbage (no traps: integer ops on the bits); the unsigned compare wraps 0 to the top
    spec = b.icmp_unsigned(">=", b.sub(fp.to_bits(ax), fp.ci(1)), fp.ci(0x7FEFFFFFFFFFFFFF))
    h, lo = log_dd(fp, ax, prec="f64")
    h = fp.sel(spec, fp.mul(fp.sub(ax, fp.c(1.0)), fp.c(math.inf)), h)
    ph, pl = fp.two_prod(y, h)
    pl = fp.fma(y, lo, pl)
    # beyond |ph| = 800 the result is 0 or inf and pl (maybe huge, inf or NaN) is dropped;
    # a NaN ph (NaN x or y, 0 * inf, inf * 0) only reaches lanes pow_finish replaces
    pl = fp.sel(fp.lt(fp.fabs(ph), fp.c(800.0)), pl, fp.c(0.0))
    return pow_finish(fp, x, y, exp_dd(fp, ph, pl, "f64"))


def pow_finish(fp: Fp, x: ir.Value, y: ir.Value, mag: ir.Value) -> ir.Value:
    """pow(x, y) from mag = |x|^y, where mag is already right in magnitude for x = +-0 and
    +-inf (log|x| = -inf, inf) and for y = +-inf with |x| != 1: the sign and the remaining
    special cases of the docstring, each one select."""
    b = fp.b
    one = fp.c(1.0)
    res = fp.sel(b.fcmp_unordered("uno", x, y), fp.add(x, y), mag)  # NaN in, NaN out
    # pow(x, 0) = pow(1, y) = pow(-1, +-inf) = 1; pow(-1, finite y) is 1 in magnitude
    # anyway (and takes its sign or NaN below)
    res = fp.sel(b.or_(fp.eq(y, fp.c(0.0)), fp.eq(fp.fabs(x), one)), one, res)
    is_int = fp.eq(fp.rint(y), y)  # true for +-inf (even), false for NaN
    half = fp.mul(y, fp.c(0.5))
    odd = b.and_(is_int, b.fcmp_unordered("!=", fp.rint(half), half))
    res = fp.sel(b.and_(fp.signbit(x), odd), fp.neg(res), res)
    finite_neg = b.and_(fp.lt(x, fp.c(0.0)), fp.gt(x, fp.c(-math.inf)))
    res = fp.sel(b.and_(finite_neg, b.not_(is_int)), fp.c(math.nan), res)
    return fp.sel(fp.eq(y, fp.c(2.0)), fp.mul(x, x), res)


def cbrt_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "cbrt", ty, 1, _cbrt_body)


def pow_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "pow", ty, 2, _pow_body)
