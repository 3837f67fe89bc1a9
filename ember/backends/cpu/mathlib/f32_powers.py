"""cbrt and pow in native f32 arithmetic (straight-line IR).

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
pow(x, y) (f32): |x|^y = e^(y log|x|) in f32 arithmetic with pairs where the error would
  show; the sign and the special cases are powers.pow_finish's. A finite nonzero f32
  result has |y log|x|| <= 104, so 1 ulp needs the exponent t = y log|x| to ~2^-27
  absolute, i.e. log|x| to ~2^-34 relative: far beyond one f32 rounding, so
  log: |x| = 2^e (1 + f) (parts._unpack: f exact, subnormals scaled), s = f / (2 + f) as
    sh + sl (2 + f = dh + dl exactly; sl = (fma(-sh, dh, f) - sh dl) (1 - sh)/2, since
    1/(2 + f) = (1 - s)/2: one division). log(1 + f) = 2s + (2/3) s^3 + s^3 z Q(z),
    z = s^2, Q = 2/5 + 2z/7 + 2z^2/9 + 2z^3/11 (Taylor; first dropped term z^5/13 =
    2^-34 relative at z = 0.0294): 2 sh is exact, (2/3) s^3 (up to 0.7% of the result)
    is formed as a pair (sh^2 and sh^3 split by fma, the 3 sh^2 sl term, 2/3 as two
    floats), only s^3 z Q (<= 0.02%) in plain f32. e ln2 = e LN2_HI (exact) + e LN2_LO.
    The pair (lh, ll) carries log|x| to ~2^-40; t = y lh + y ll as th + tl (two_prod).
  exp: th clamped to [-110, 100] (beyond, the result is 0 or inf and tl is dropped),
    k = rint(th / ln2), r = th - k LN2_HI (exact) - k LN2_LO (its error by fma) + tl as
    rh + rl, e^r - 1 = q by parts.exp_parts' f32 polynomial with the tail to first order;
    2^k (|k| <= 159) by two exact power-of-two factors, so overflow to inf and subnormal
    results round once, at the end. Measured: within 1 ulp of the double result rounded.
"""

from __future__ import annotations

from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import coeffs32
from ember.backends.cpu.mathlib.core import LOG2E, clamp
from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp, intrinsic
from ember.backends.cpu.mathlib.parts import EXPM1_Q, LN2_32, _unpack, split32
from ember.backends.cpu.mathlib.powers import pow_finish

F32 = ir.FloatType()
F64 = ir.DoubleType()
_LOG_Q32 = [2.0 / (2 * j + 1) for j in range(2, 6)]  # 2/5, 2/7, 2/9, 2/11
TWO_THIRDS_32 = split32(Fraction(2, 3))


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
    one = fp.c(1.0)
    # x = 0, inf or NaN: garbage through the code below (integer ops on its bits, a
    # clamped exponent: no traps), replaced by pow_finish's special cases. (Selecting a
    # safe value here would make LLVM rematerialize an all-ones vector in the loop:
    # see lean_log.)
    ef, f = _unpack(fp, fp.fabs(x), True)  # |x| = 2^e (1 + f), f exact
    # s = f / (2 + f) as sh + sl: 2 + f = dh + dl exactly, the remainder by fma, and
    # 1 / (2 + f) = (1 - s) / 2
    dh = fp.add(fp.c(2.0), f)
    dl = fp.sub(f, fp.sub(dh, fp.c(2.0)))
    sh = fp.div(f, dh)
    sl = fp.mul(fp.sub(fp.fma(fp.neg(sh), dh, f), fp.mul(sh, dl)),
                fp.mul(fp.c(0.5), fp.sub(one, sh)))
    # log(1 + f) = 2s + (2/3) s^3 + s^3 z Q(z): 2 sh exact; (2/3) s^3 (<= 0.7% of the
    # result) as a pair too, s^3 = sh^3 + 3 sh^2 sl with sh^2 and sh^3 split by fma; the
    # rest (<= 0.02%) in plain f32
    zh, zl = fp.two_prod(sh, sh)
    c3h, c3l = fp.two_prod(zh, sh)
    c3l = fp.fma(zl, sh, fp.fma(fp.mul(fp.c(3.0), zh), sl, c3l))
    t3h, t3l = fp.two_prod(c3h, fp.c(TWO_THIRDS_32[0]))
    t3l = fp.fma(c3h, fp.c(TWO_THIRDS_32[1]), fp.fma(c3l, fp.c(TWO_THIRDS_32[0]), t3l))
    rest = fp.mul(fp.mul(c3h, zh), fp.poly(zh, _LOG_Q32))
    lh, ll = fp.fast_two_sum(fp.add(sh, sh), t3h)
    ll = fp.add(ll, fp.add(fp.add(sl, sl), fp.add(t3l, rest)))
    eh, e1 = fp.fast_two_sum(fp.mul(ef, fp.c(LN2_32[0])), lh)  # e LN2_HI exact
    lh, ll = fp.fast_two_sum(eh, fp.add(fp.fma(ef, fp.c(LN2_32[1]), e1), ll))
    th, tl = fp.two_prod(y, lh)  # t = y log|x| = th + tl
    tl = fp.fma(y, ll, tl)
    # e^t = 2^k e^r, r = t - k ln2 as rh + rl (k LN2_HI exact, t - k LN2_HI exact); beyond
    # the clamp the result is 0 or inf, and tl (maybe huge or NaN) is dropped
    tc = clamp(fp, th, -110.0, 100.0)
    tl = fp.sel(fp.lt(fp.fabs(th), fp.c(110.0)), tl, fp.c(0.0))
    k = fp.rint(fp.mul(tc, fp.c(LOG2E)))
    nk = fp.neg(k)
    r1 = fp.fma(nk, fp.c(LN2_32[0]), tc)
    w = fp.mul(nk, fp.c(LN2_32[1]))
    rh, e2 = fp.fast_two_sum(r1, w)
    rl = fp.add(fp.add(e2, fp.fma(nk, fp.c(LN2_32[1]), fp.neg(w))), tl)
    rh, rl = fp.fast_two_sum(rh, rl)
    q0 = fp.fma(fp.mul(rh, rh), fp.poly(rh, EXPM1_Q[32]), rh)
    q = fp.add(q0, fp.fma(rl, q0, rl))
    mag = fp.ldexp(fp.add(one, q), fp.to_int(k))
    return pow_finish(fp, x, y, mag)


def cbrt_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.cbrt.f32", F32, 1, _cbrt_body)


def pow_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.pow.f32", F32, 2, _pow_body)
