"""atan, atan2, asin, acos in f64 (straight-line IR; f32 has native bodies in f32/trig.py).

atan: for a = |x| pick (num, den, base) so that u = num / den lies in [-tan(pi/8), tan(pi/8)]:
  a <= tan(pi/8):   (a, 1, 0)
  a <= tan(3pi/8):  (a - 1, a + 1, pi/4)   atan a = pi/4 + atan((a - 1)/(a + 1))
  otherwise:        (-1, a, pi/2)          atan a = pi/2 - atan(1/a)
  num and den are two-sums (exact), u = fl(num/den) with the tail
  ul = (fma(-u, dh, nh) + nl - u dl) / dh, so u + ul is the ratio to ~2^-104.
  atan(u + ul) = u + u z P(z) + ul / (1 + z), z = u^2, with P the fitted
  (atan(sqrt z)/sqrt z - 1)/z on [0, tan(pi/8)^2] (coeffs.ATAN_P_*; the tail is <= 5.4% of
  the result, so its rounding is a small fraction of an ulp). The result base + u + tail is
  summed as two_sum(base_hi, u) + (its error + base_lo + tail): one final rounding.
  sign(x) is restored with copysign (atan(-0) = -0); atan(+-inf) = +-pi/2.
atan2(y, x): the same with the ratio |y|/|x| never formed: (|y|, |x|, 0),
  (|y| - |x|, |y| + |x|, pi/4), (-|x|, |y|, pi/2); for x < 0 (sign bit, so -0 counts) the
  angle is pi - that = (pi - base) + atan(-u). Both arguments are first scaled by 2^-600 when
  the larger exceeds 2^1000 (no overflow in |y| + |x|) and by 2^600 when it is below 2^-900
  (the fma remainder stays exact); both infinite -> (1, 1). y == 0 gives 0 or pi by the sign
  of x; the result takes y's sign; NaN in either gives NaN.
asin: a = |x| <= 1/2: a + a z P(z), z = a^2 (coeffs.ASIN_P_*: (asin(sqrt z)/sqrt z - 1)/z on
  [0, 1/4]). a > 1/2: asin a = pi/2 - 2 asin(s), s = sqrt(w), w = (1 - a)/2 (exact,
  Sterbenz) so s^2 = w and asin(s) = s + s w P(w) + sl with sl = (w - s^2)/(2s) by fma;
  pi/2 - 2s is a two-sum. |x| > 1 gives NaN through sqrt of a negative w.
acos: |x| <= 1/2: pi/2 - asin(x) (two-sum with pi/2); x > 1/2: 2 asin(s);
  x < -1/2: pi - 2 asin(s).
"""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import split
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs

PI_F = Fraction("3.14159265358979323846264338327950288419716939937510582097494459230781")
PI = split(PI_F)
PIO2 = split(PI_F / 2)
PIO4 = split(PI_F / 4)
PI3O4 = split(PI_F * 3 / 4)
TAN_PI8 = math.tan(math.pi / 8)
TAN_3PI8 = math.tan(3 * math.pi / 8)


def _coef(name: str, prec: str) -> list[float]:
    return getattr(coeffs, f"{name}_{prec.upper()}")[:-1]  # drop the c0 tail entry


def _atan_parts(fp: Fp, nh: ir.Value, nl: ir.Value, dh: ir.Value, dl: ir.Value, prec: str
                ) -> tuple[ir.Value, ir.Value]:
    """(u, rest) with atan(num / den) ~ u + rest, |num / den| <= tan(pi/8) (+ rounding)."""
    u = fp.div(nh, dh)
    ul = fp.div(fp.sub(fp.add(fp.fma(fp.neg(u), dh, nh), nl), fp.mul(u, dl)), dh)
    ul = fp.sel(fp.lt(fp.fabs(dh), fp.c(math.inf)), ul, fp.c(0.0))
    z = fp.mul(u, u)
    tail = fp.mul(fp.mul(u, z), fp.poly(z, _coef("ATAN_P", prec)))
    return u, fp.fma(ul, fp.sub(fp.c(1.0), z), tail)


def _combine(fp: Fp, base_hi: ir.Value, base_lo: ir.Value, u: ir.Value, rest: ir.Value
             ) -> ir.Value:
    s, e = fp.two_sum(base_hi, u)
    return fp.add(s, fp.add(fp.add(e, base_lo), rest))


def _pick(fp: Fp, cb: ir.Value, cc: ir.Value, va: float, vb: float, vc: float) -> ir.Value:
    return fp.sel(cc, fp.c(vc), fp.sel(cb, fp.c(vb), fp.c(va)))


def _select_ratio(fp: Fp, ay: ir.Value, ax: ir.Value, cb: ir.Value, cc: ir.Value
                  ) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """(nh, nl, dh, dl): (ay, ax), (ay - ax, ay + ax) or (-ax, ay) by case."""
    bn, bnl = fp.two_sum(ay, fp.neg(ax))
    bd, bdl = fp.two_sum(ay, ax)
    zero = fp.c(0.0)
    nh = fp.sel(cc, fp.neg(ax), fp.sel(cb, bn, ay))
    nl = fp.sel(cc, zero, fp.sel(cb, bnl, zero))
    dh = fp.sel(cc, ay, fp.sel(cb, bd, ax))
    dl = fp.sel(cc, zero, fp.sel(cb, bdl, zero))
    return nh, nl, dh, dl


def _atan_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    cc = fp.b.not_(fp.le(a, fp.c(TAN_3PI8)))  # NaN lands here; fixed below
    cb = fp.b.and_(fp.gt(a, fp.c(TAN_PI8)), fp.b.not_(cc))
    nh, nl, dh, dl = _select_ratio(fp, a, one, cb, cc)
    u, rest = _atan_parts(fp, nh, nl, dh, dl, prec)
    bh = _pick(fp, cb, cc, 0.0, PIO4[0], PIO2[0])
    bl = _pick(fp, cb, cc, 0.0, PIO4[1], PIO2[1])
    res = _combine(fp, bh, bl, u, rest)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _atan2_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    y, x = args
    ay, ax = fp.fabs(y), fp.fabs(x)
    m = fp.sel(fp.gt(ay, ax), ay, ax)
    scale = fp.sel(fp.gt(m, fp.c(2.0 ** 1000)), fp.c(2.0 ** -600),
                   fp.sel(fp.lt(m, fp.c(2.0 ** -900)), fp.c(2.0 ** 600), fp.c(1.0)))
    both_inf = fp.b.and_(fp.isinf(ax), fp.isinf(ay))
    ay = fp.sel(both_inf, fp.c(1.0), fp.mul(ay, scale))
    ax = fp.sel(both_inf, fp.c(1.0), fp.mul(ax, scale))
    cc = fp.gt(ay, fp.mul(ax, fp.c(TAN_3PI8)))
    cb = fp.b.and_(fp.gt(ay, fp.mul(ax, fp.c(TAN_PI8))), fp.b.not_(cc))
    nh, nl, dh, dl = _select_ratio(fp, ay, ax, cb, cc)
    u, rest = _atan_parts(fp, nh, nl, dh, dl, prec)
    neg = fp.signbit(x)
    bh = fp.sel(neg, _pick(fp, cb, cc, PI[0], PI3O4[0], PIO2[0]),
                _pick(fp, cb, cc, 0.0, PIO4[0], PIO2[0]))
    bl = fp.sel(neg, _pick(fp, cb, cc, PI[1], PI3O4[1], PIO2[1]),
                _pick(fp, cb, cc, 0.0, PIO4[1], PIO2[1]))
    u = fp.sel(neg, fp.neg(u), u)
    rest = fp.sel(neg, fp.neg(rest), rest)
    res = _combine(fp, bh, bl, u, rest)
    res = fp.sel(fp.eq(ay, fp.c(0.0)), fp.sel(neg, fp.c(PI[0]), fp.c(0.0)), res)
    res = fp.copysign(res, y)
    return fp.sel(fp.b.or_(fp.isnan(x), fp.isnan(y)), fp.add(x, y), res)


def _asin_pieces(fp: Fp, a: ir.Value, prec: str) -> tuple[ir.Value, ir.Value]:
    """(s, rest) with asin(sqrt((1 - a)/2)) ~ s + rest, for 1/2 < a <= 1."""
    w = fp.mul(fp.sub(fp.c(1.0), a), fp.c(0.5))
    s = fp.sqrt(w)
    sl = fp.div(fp.fma(fp.neg(s), s, w), fp.mul(fp.c(2.0), s))
    sl = fp.sel(fp.eq(s, fp.c(0.0)), fp.c(0.0), sl)
    tail = fp.mul(fp.mul(s, w), fp.poly(w, _coef("ASIN_P", prec)))
    return s, fp.add(sl, tail)


def _asin_small(fp: Fp, x: ir.Value, prec: str) -> ir.Value:
    """x z P(z): asin x - x for |x| <= 1/2."""
    z = fp.mul(x, x)
    return fp.mul(fp.mul(x, z), fp.poly(z, _coef("ASIN_P", prec)))


def _asin_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    small = fp.add(a, _asin_small(fp, a, prec))
    s, rest = _asin_pieces(fp, a, prec)
    two = fp.c(2.0)
    large = _combine(fp, fp.c(PIO2[0]), fp.c(PIO2[1]), fp.mul(fp.neg(two), s),
                     fp.mul(fp.neg(two), rest))
    res = fp.sel(fp.le(a, fp.c(0.5)), small, large)
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _acos_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    two = fp.c(2.0)
    mid = _combine(fp, fp.c(PIO2[0]), fp.c(PIO2[1]), fp.neg(x),
                   fp.neg(_asin_small(fp, x, prec)))
    s, rest = _asin_pieces(fp, a, prec)
    pos = fp.fma(two, s, fp.mul(two, rest))
    neg = _combine(fp, fp.c(PI[0]), fp.c(PI[1]), fp.mul(fp.neg(two), s),
                   fp.mul(fp.neg(two), rest))
    res = fp.sel(fp.le(a, fp.c(0.5)), mid, fp.sel(fp.gt(x, fp.c(0.0)), pos, neg))
    return fp.sel(fp.isnan(x), x, res)


def atan_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "atan", ty, 1, _atan_body)


def atan2_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "atan2", ty, 2, _atan2_body)


def asin_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "asin", ty, 1, _asin_body)


def acos_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "acos", ty, 1, _acos_body)
