"""cbrt in native f32 arithmetic and pow for f32 in f64 lanes (straight-line IR).

cbrt(x), a = |x| = 2^e m, m in [1, 2) (subnormals scaled by 2^24 first, e -= 24):
  e = 3j + i with j = floor((e + 1/2) / 3) (in f32: e + 1/2 is exact and (e + 1/2)/3 is at
  least 1/6 away from an integer, so the rounded quotient floors correctly), i in {0, 1, 2};
  c = m 2^i in [1, 8) and cbrt(a) = 2^j cbrt(c). No division anywhere:
  z0 = P(m) 2^(-i/3) ~ c^(-1/3), P the float32 fit of m^(-1/3) on [1, 2] (coeffs32.ICBRT_P,
    2^-14.6);
  z1 = z0 + z0 (1 - c z0^3) / 3, Newton's step for the inverse cube root (error
    eps -> ~2 eps^2 = 2^-28, plus f32 rounding: ~2^-23);
  y = (c z1) z1 ~ c^(1/3), within ~2^-22;
  y' = y - (y^3 - c) z1^2 / 3, one Newton step for y^3 = c with the residual formed exactly
    (y^2 = p + pe by two_prod, y^3 - c = fma(y, p, -c) + y pe) and 1/(3 y^2) taken as
    z1^2/3 (relative error 2^-22 on a correction of 2^-22 y): y' is c^(1/3) within
    ~2^-40 before its single rounding.
  cbrt(+-0), +-inf and NaN return x; the sign is restored with copysign.
pow(x, y) (f32): |x|^y = 2^(y log2|x|) computed in f64 lanes (two f32 values widen
  exactly; one rounding to f32 at the end), which needs no pairs and no f32 division. A
  finite nonzero f32 result has |t| <= 151 for t = y log2|x|.
  log2: |x| (an f32 value, subnormals included, as a normal double) = 2^e (1 + f) with
    1 + f in [sqrt(2)/2, sqrt(2)) (parts._unpack's musl trick on the double's bits; f
    exact), s = f / (2 + f) (|s| <= 0.1716), log2(1 + f) = s Q(z), z = s^2, Q the fit of
    2 atanh(s) / (s ln2) (coeffs.POW32_LOG2_Q, relative error 2^-37.8). L = e + s Q is
    exact for a power of two (f = 0), so integer powers of 2^e are exact.
  error budget: with |log2(1 + f)| <= 1/2, an error of eps relative in it moves
    t = y L by |y| eps / 2 <= 151 eps whether e is 0 (|t| = |y| |log2(1 + f)|) or not
    (|L| >= 1/2, so |y| <= 302): 2^-30.5 absolute, 2^-31 relative in the result; the
    double roundings of s, Q, L and y L add 151 * 2^-51 at most.
  exp2: t clamped to [-151, 129] (beyond, the f32 result is 0 or inf; a select on `>` /
    `<` keeps NaN, x86's vmin/vmax), k = rint(t) by the 1.5 * 2^52 shift (kd = t + C: k
    in kd's low bits, k = kd - C, r = t - k exact, |r| <= 1/2), 2^r = 1 + r P(r), P the
    fit of (2^r - 1)/r (coeffs.POW32_EXP2_Q, 2^-27.6 relative), and 2^k joins as k << 52
    added to the double's bits (the exponent stays in range: |k| <= 151). Rounding that
    double to f32 is the one rounding that shows: within 0.5 ulp + 2^-27 relative (about
    0.1 ulp), i.e. 1 ulp of the correctly rounded result.
  special values, in f32 lanes: L is -inf for x = +-0, +inf for x = +-inf and NaN for NaN
    ((|x| - 1) * inf, selected where |x|'s bits minus 1 are >= 0x7F7FFFFF), so y L is
    +-inf (0 or inf after the clamp) or NaN. Every lane whose t is NaN (NaN x or y,
    0 * inf, inf * 0) is replaced by a select, so what the shift trick makes of a NaN
    does not matter: NaN x or y give NaN, then 1 where y = 0 or |x| = 1 (pow(x, 0),
    pow(1, y), pow(-1, +-inf); pow(-1, finite y) is 1 in magnitude anyway), the sign
    where x's sign bit is set and y is an odd integer, NaN where x < 0 is finite and y
    is not an integer, and x * x where y = 2 (Ember's power(x, 2), see powers).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import coeffs, coeffs32
from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp, intrinsic
from ember.backends.cpu.mathlib.parts import _SQRT_HALF_BITS

F32 = ir.FloatType()
F64 = ir.DoubleType()
SQRT_HALF_BITS64 = _SQRT_HALF_BITS[64]
SHIFT = 1.5 * 2.0 ** 52  # t + SHIFT rounds t to an integer k held in the low bits


def _cbrt_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    b = fp.b
    a = fp.fabs(x)
    sub = fp.lt(a, fp.c(2.0 ** -126))
    xs = fp.sel(sub, fp.mul(a, fp.c(2.0 ** 24)), a)
    bits = fp.to_bits(xs)
    expf = b.and_(b.lshr(bits, fp.ci(23)), fp.ci(0xFF))
    e = fp.add(b.sitofp(b.sub(expf, fp.ci(127)), fp.ty), fp.sel(sub, fp.c(-24.0), fp.c(0.0)))
    m = fp.from_bits(b.or_(b.and_(bits, fp.ci((1 << 23) - 1)), fp.ci(127 << 23)))
    floor = intrinsic(fp.module, "llvm.floor.f32", fp.ty, [fp.ty])
    j = b.call(floor, [fp.mul(fp.add(e, fp.c(0.5)), fp.c(1.0 / 3.0))])
    i = fp.sub(e, fp.mul(fp.c(3.0), j))  # 0, 1 or 2, exactly
    i1 = fp.eq(i, fp.c(1.0))
    i2 = fp.eq(i, fp.c(2.0))
    c = fp.mul(m, fp.sel(i2, fp.c(4.0), fp.sel(i1, fp.c(2.0), fp.c(1.0))))
    k = fp.sel(i2, fp.c(2.0 ** (-2 / 3)), fp.sel(i1, fp.c(2.0 ** (-1 / 3)), fp.c(1.0)))
    z = fp.mul(fp.poly(m, coeffs32.ICBRT_P), k)
    resid = fp.fma(fp.neg(fp.mul(c, z)), fp.mul(z, z), fp.c(1.0))  # 1 - c z^3
    z = fp.fma(fp.mul(z, fp.c(1.0 / 3.0)), resid, z)
    y = fp.mul(fp.mul(c, z), z)
    p, pe = fp.two_prod(y, y)
    r = fp.fma(y, p, fp.neg(c))
    r = fp.fma(y, pe, r)
    y = fp.fma(fp.neg(r), fp.mul(fp.mul(z, z), fp.c(1.0 / 3.0)), y)
    res = fp.copysign(fp.mul(y, fp.pow2i(fp.to_int(j))), x)
    keep = b.or_(b.or_(fp.eq(x, fp.c(0.0)), fp.isinf(x)), fp.isnan(x))
    return fp.sel(keep, x, res)


def _pow_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    x, y = args
    b = fp.b
    d = Fp(b, F64)
    one = fp.c(1.0)
    ax = fp.fabs(x)
    # x = +-0, +-inf, NaN: log2|x| = (|x| - 1) inf; bits - 1 wraps 0 to the top, so one
    # unsigned compare finds all three
    spec = b.icmp_unsigned(">=", b.sub(fp.to_bits(ax), fp.ci(1)), fp.ci(0x7F7FFFFF))
    lspec = fp.mul(fp.sub(ax, one), fp.c(math.inf))
    xd = b.fpext(ax, F64)
    ix = b.sub(d.to_bits(xd), d.ci(SQRT_HALF_BITS64))
    ef = b.sitofp(b.ashr(ix, d.ci(52)), F64)
    f = d.sub(d.from_bits(b.add(b.and_(ix, d.ci((1 << 52) - 1)), d.ci(SQRT_HALF_BITS64))),
              d.c(1.0))
    s = d.div(f, d.add(d.c(2.0), f))
    lg = d.fma(s, d.poly(d.mul(s, s), coeffs.POW32_LOG2_Q), ef)  # log2|x|
    lg = d.sel(spec, b.fpext(lspec, F64), lg)
    t = d.mul(b.fpext(y, F64), lg)
    t = d.sel(d.gt(t, d.c(129.0)), d.c(129.0), t)
    t = d.sel(d.lt(t, d.c(-151.0)), d.c(-151.0), t)
    kd = d.add(t, d.c(SHIFT))
    r = d.sub(t, d.sub(kd, d.c(SHIFT)))
    p = d.fma(r, d.poly(r, coeffs.POW32_EXP2_Q, horner=True), d.c(1.0))
    mag = b.fptrunc(d.from_bits(b.add(d.to_bits(p), b.shl(d.to_bits(kd), d.ci(52)))), F32)
    res = fp.sel(b.fcmp_unordered("uno", x, y), fp.add(x, y), mag)
    res = fp.sel(b.or_(fp.eq(y, fp.c(0.0)), fp.eq(ax, one)), one, res)
    is_int = fp.eq(fp.rint(y), y)
    half = fp.mul(y, fp.c(0.5))
    odd = b.and_(is_int, b.fcmp_unordered("!=", fp.rint(half), half))
    res = fp.sel(b.and_(fp.signbit(x), odd), fp.neg(res), res)
    bad = b.and_(b.and_(fp.lt(x, fp.c(0.0)), fp.gt(x, fp.c(-math.inf))), b.not_(is_int))
    res = fp.sel(bad, fp.c(math.nan), res)
    return fp.sel(fp.eq(y, fp.c(2.0)), fp.mul(x, x), res)


def cbrt_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.cbrt.f32", F32, 1, _cbrt_body)


def pow_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.pow.f32", F32, 2, _pow_body)
