"""tan, atan, atan2, asin, acos in native f32 arithmetic (straight-line IR).

tan(x), |x| < 2^16 (`HUGE`; beyond, the kernel's precise rerun calls the C library):
  k = rint(x 2/pi), pi/2 = P1 + P2 + P3 (float32 pieces, trig.pio2_pieces). r1 = x - k P1
  is exact (one fma: k P1 and x are multiples of 2^-23 or x's ulp, and |r1| < 1 needs no
  more than 24 bits), then r = r1 - k P2 - k P3 as rh + rl: k P2 split exactly by fma, the
  subtraction by a two-sum, k P3 and the errors into rl (pi/2 - P1 - P2 - P3 ~ 2^-72, so
  k times it is below 2^-56). tan(rh + rl) = t + rl (1 + t^2) with t = tan(rh) =
  rh + rh z P(z), z = rh^2, P the float32 fit of (tan(sqrt z)/sqrt z - 1)/z on
  [0, (0.7854 * 1.001)^2] (coeffs32.TAN_P, weighted error 2^-28), the tail at most 22% of
  the result and joined by a fast two-sum (th, tl). Even k: th + tl. Odd k: -1/(th + tl)
  = -(q + q e) with q = fl(1/th) and e = fma(-q, th, 1) - q tl (one Newton correction of
  the reciprocal: one division in all), so the result rounds once from ~2^-26 accuracy.
  tan(+-0) = +-0, inf and NaN give NaN.
atan(x), a = |x|: u = min(a, 1)/max(a, 1) (one division; u = 1/a when a > 1),
  atan u = u + u z P(z), z = u^2, P the float32 fit of (atan(sqrt z)/sqrt z - 1)/z on
  [0, 1] (coeffs32.ATAN_P, weighted error 2^-28). a > 1: pi/2 - atan(u), with
  pi/2 = PIO2h + PIO2l (floats) and PIO2h - u as a fast two-sum (u <= 1 < pi/2), so the
  result rounds once. u's own rounding (half an ulp of u) moves pi/2 - atan(u) >= pi/4 by
  at most a quarter of its ulp. copysign restores the sign (atan(-0) = -0); a = inf gives
  u = 0 and pi/2.
atan2(y, x): the same on u = min(|y|, |x|) / max(|y|, |x|): the angle is B + sigma atan(u)
  with (B, sigma) = (0, 1), (pi/2, -1) when |y| > |x|, (pi, -1) for x < 0 (sign bit, so -0
  counts) and (pi/2, 1) for both. Both arguments are scaled by 2^-64 when the larger
  exceeds 2^64 and by 2^64 when it is below 2^-64 (the quotient stays normal where the
  result is); both infinite -> (1, 1), y = 0 -> 0 or pi by x's sign, copysign with y,
  NaN in either gives NaN.
asin(x), a = |x|: a <= 1/2: a + a z P(z), z = a^2 (coeffs32.ASIN_P on [0, 1/4]).
  a > 1/2: asin a = pi/2 - 2 asin(s), s = sqrt(w), w = (1 - a)/2 exact (Sterbenz), and
  asin(s) = s + s w P(w) with the same P: one polynomial serves both (v, zz) = (a, a^2) or
  (s, w) by lane. sqrt's rounding (half an ulp of s, doubled) is at most half an ulp of the
  result, which is >= pi/6. |x| > 1 gives NaN through sqrt of w < 0.
acos(x): |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s); x < -1/2: pi - 2 asin(s); each as
  B + m (v + t) with the constant B's two-float split and a fast two-sum.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.atrig import PI_F
from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.parts import split32
from ember.backends.cpu.mathlib.tables import coeffs32
from ember.backends.cpu.mathlib.trig import pio2_pieces

F32 = ir.FloatType()
HUGE = 65536.0  # 2^16: the reduction above is exact below
PI32 = split32(PI_F)
PIO2_32 = split32(PI_F / 2)


def _tan_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    b = fp.b
    p1, p2, p3 = pio2_pieces(32)
    small = fp.lt(fp.fabs(x), fp.c(HUGE))
    xs = fp.sel(small, x, fp.c(0.0))  # huge, inf and NaN lanes: replaced at the end
    k = fp.rint(fp.mul(xs, fp.c(2.0 / math.pi)))
    nk = fp.neg(k)
    r1 = fp.fma(nk, fp.c(p1), xs)
    w, wl = fp.two_prod(nk, fp.c(p2))
    rh, e1 = fp.two_sum(r1, w)
    rl = fp.fma(nk, fp.c(p3), fp.add(e1, wl))
    rh, rl = fp.fast_two_sum(rh, rl)
    z = fp.mul(rh, rh)
    th, tl = fp.fast_two_sum(rh, fp.mul(fp.mul(rh, z), fp.poly(z, coeffs32.TAN_P)))
    tl = fp.fma(rl, fp.fma(th, th, fp.c(1.0)), tl)  # tan' = 1 + tan^2
    even = fp.add(th, tl)
    q = fp.div(fp.c(1.0), th)
    e = fp.sub(fp.fma(fp.neg(q), th, fp.c(1.0)), fp.mul(q, tl))
    odd = fp.neg(fp.fma(q, e, q))
    res = fp.sel(b.trunc(fp.to_int(k), ir.IntType(1)), odd, even)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)
    return fp.sel(small, res, fp.sub(x, x))  # inf/NaN -> NaN; huge: precise variant


def huge_flag(fp: Fp, x: ir.Value) -> ir.Value:
    ax = fp.fabs(x)
    return fp.b.and_(fp.ge(ax, fp.c(HUGE)), fp.lt(ax, fp.c(math.inf)))


def _atan_poly(fp: Fp, u: ir.Value) -> ir.Value:
    """atan(u) - u for |u| <= 1."""
    z = fp.mul(u, u)
    return fp.mul(fp.mul(u, z), fp.poly(z, coeffs32.ATAN_P))


def _sum(fp: Fp, bh: ir.Value, bl: ir.Value, v: ir.Value, t: ir.Value) -> ir.Value:
    """bh + v + (bl + t), rounded about once; |bh| >= |v| or bh == 0."""
    s, e = fp.fast_two_sum(bh, v)
    return fp.add(s, fp.add(fp.add(e, bl), t))


def _atan_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    inv = fp.gt(a, one)
    u = fp.div(fp.sel(inv, one, a), fp.sel(inv, a, one))
    t = _atan_poly(fp, u)
    zero = fp.c(0.0)
    res = _sum(fp, fp.sel(inv, fp.c(PIO2_32[0]), zero), fp.sel(inv, fp.neg(u), u),
               fp.sel(inv, fp.c(PIO2_32[1]), zero), fp.sel(inv, fp.neg(t), t))
    return fp.copysign(res, x)


def _atan2_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    y, x = args
    b = fp.b
    ay, ax = fp.fabs(y), fp.fabs(x)
    both_inf = b.and_(fp.isinf(ax), fp.isinf(ay))
    ay = fp.sel(both_inf, fp.c(1.0), ay)
    ax = fp.sel(both_inf, fp.c(1.0), ax)
    swap = fp.gt(ay, ax)
    n = fp.sel(swap, ax, ay)
    d = fp.sel(swap, ay, ax)
    scale = fp.sel(fp.gt(d, fp.c(2.0 ** 64)), fp.c(2.0 ** -64),
                   fp.sel(fp.lt(d, fp.c(2.0 ** -64)), fp.c(2.0 ** 64), fp.c(1.0)))
    u = fp.div(fp.mul(n, scale), fp.mul(d, scale))
    t = _atan_poly(fp, u)
    xneg = fp.signbit(x)
    neg = b.xor(swap, xneg)
    zero = fp.c(0.0)
    bh = fp.sel(swap, fp.c(PIO2_32[0]), fp.sel(xneg, fp.c(PI32[0]), zero))
    bl = fp.sel(swap, fp.c(PIO2_32[1]), fp.sel(xneg, fp.c(PI32[1]), zero))
    res = _sum(fp, bh, fp.sel(neg, fp.neg(u), u), bl, fp.sel(neg, fp.neg(t), t))
    res = fp.sel(fp.eq(ay, zero), fp.sel(xneg, fp.c(PI32[0]), zero), res)
    res = fp.copysign(res, y)
    return fp.sel(b.or_(fp.isnan(x), fp.isnan(y)), fp.add(x, y), res)


def _asin_parts(fp: Fp, a: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(big, v, t): asin(a) = v + t for a <= 1/2, asin(sqrt((1 - a)/2)) = v + t beyond."""
    big = fp.gt(a, fp.c(0.5))
    w = fp.mul(fp.sub(fp.c(1.0), a), fp.c(0.5))
    v = fp.sel(big, fp.sqrt(w), a)
    zz = fp.sel(big, w, fp.mul(a, a))
    t = fp.mul(fp.mul(v, zz), fp.poly(zz, coeffs32.ASIN_P))
    return big, v, t


def _asin_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    big, v, t = _asin_parts(fp, a)
    zero = fp.c(0.0)
    m = fp.sel(big, fp.c(-2.0), fp.c(1.0))
    res = _sum(fp, fp.sel(big, fp.c(PIO2_32[0]), zero), fp.mul(m, v),
               fp.sel(big, fp.c(PIO2_32[1]), zero), fp.mul(m, t))
    res = fp.sel(fp.isnan(x), x, res)
    return fp.copysign(res, x)


def _acos_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    big, v, t = _asin_parts(fp, a)
    neg = fp.lt(x, fp.c(0.0))
    zero = fp.c(0.0)
    bh = fp.sel(big, fp.sel(neg, fp.c(PI32[0]), zero), fp.c(PIO2_32[0]))
    bl = fp.sel(big, fp.sel(neg, fp.c(PI32[1]), zero), fp.c(PIO2_32[1]))
    m = fp.sel(big, fp.sel(neg, fp.c(-2.0), fp.c(2.0)), fp.sel(neg, fp.c(1.0), fp.c(-1.0)))
    res = _sum(fp, bh, fp.mul(m, v), bl, fp.mul(m, t))
    return fp.sel(fp.isnan(x), x, res)


def tan_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.tan.f32", F32, 1, _tan_body)


def atan_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.atan.f32", F32, 1, _atan_body)


def atan2_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.atan2.f32", F32, 2, _atan2_body)


def asin_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.asin.f32", F32, 1, _asin_body)


def acos_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.acos.f32", F32, 1, _acos_body)
