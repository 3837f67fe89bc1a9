"""cbrt and pow in f64 (f32 has its own bodies in f32/powers.py), with the sign and special
cases of pow applied to its magnitude (`pow_finish`). cbrt is straight-line IR; pow is
table driven (pow_tables, derived in fit_pow.py), with a vector variant on AVX-512 (vec.py).

cbrt(x), a = |x| = 2^e m, m in [1, 2) (subnormals scaled by 2^54 first, e -= 54):
  e = 3 j + i with j = floor((e + 1/2) / 3) (computed in double: exact enough, the + 1/2
  keeps multiples of 3 off the rounding boundary), i in {0, 1, 2}; the target is
  c = m 2^i in [1, 8) and cbrt(a) = 2^j cbrt(c).
  y0 = P(m) 2^(i/3) with P the fitted m^(1/3) on [1, 2] (coeffs.CBRT_P, 2^-18 relative),
  then Newton steps y <- y - (y^3 - c) / (3 y^2) with the residual fma(y, y^2, -c): the
  error squares each step (2^-18 -> 2^-36 -> 2^-72), and the last step
  adds a correction of ~2^-36 y to y, so the final rounding is the only large one.
  cbrt(+-0), +-inf and NaN return x.

pow(x, y) = sign * e^(y log|x|), the log as a double-double s + lo and e^(th + tl) rounded
  once (twice into the subnormal range):
  log: with OFF = 0.671875, ix = bits(x) - bits(OFF), e = ix >> 52, m = x 2^-e in
    [OFF, 2 OFF), i = (ix >> 48) mod 16 (subnormal x scaled by 2^54 first, e -= 54); the
    16 subintervals and INVC[i] ~ 1/c are f32 pow's (POW32_INVC; the one holding 1 has
    c = 1). r = m INVC - 1 exactly as rh + rl: ph = m INVC rounded, rl = its error (fma),
    rh = ph - 1 (Sterbenz), |rh| <= 2^-5, |rl| <= 2^-53.
    log x = e ln2 + log c + log(1 + rh) + rl / (1 + rh), with
      log(1 + rh) = rh - rh^2/2 + rh^3 P(rh) (P = POW64_LOG_P, the term within 2^-65.5 of
        log(1 + rh) relative),
      rl / (1 + rh) = rl (1 - rh + rh^2) to rl rh^3 <= 2^-68,
    the big terms summed exactly: e LN2_HI (exact: 21 trailing zero bits) + LOGC_HI[i] and
    then + rh by fast two-sums (|e ln2| >= 0.69 > 0.38 >= |log c| unless e = 0; every
    subinterval's |r| is at most half its |log c|, unless c = 1 and log c = 0),
    -rh^2/2 = qh + ql exactly (two_prod) added by a fast two-sum;
    the errors of those sums, ql, LOGC_LO, e LN2_LO, the rl term and rh^3 P go to lo,
    whose few roundings are ~2^-53 |lo| each, |lo| <= rh^2/3 |log x| <= 2^-11.6 |log x|;
    (s, lo) is renormalized (fast two-sum), so t's tail below is tiny. Relative error of
    s + lo: ~2^-63.5 where log x ~ rh (c = 1, e = 0: the polynomial's 2^-65.5 and lo's
    roundings), smaller elsewhere.
  t = y (s + lo) = th + tl: th = y s and its error by fma, plus y lo. With |t| <= 745
    where the result is finite and nonzero, the log's 2^-63.5 moves t by 2^-54: 0.5 ulp
    at worst.
  exp: th clamped to [-800, 800] (beyond, the result is 0 or inf; tl dropped there, as
    for th = +-inf); kd = fma(th, 16/ln2, 1.5 2^52) holds N ~ 16 th/ln2 in its low bits,
    j = N mod 16, k = N >> 4; r = th - N LN2_16_HI exactly (N LN2_16_HI is exact: 16
    trailing zero bits, |N| < 2^15; the difference is on th's grid and below 0.022),
    rl = tl - N LN2_16_LO. e^r - 1 = r + r^2 Q(r) (Q = POW64_EXP_Q, 2^-64.4 relative) = q0,
    q = q0 + rl (1 + q0) ~ e^(r + rl) - 1, and with 2^(j/16) = T_HI[j] + T_LO[j],
    v = T_HI + fma(T_HI, q, T_LO) (the fma rounds at 2^-53 |q| <= 2^-58.5 relative, the
    sum once, 0.5 ulp), scaled by 2^k (ldexp: exact, or one rounding into the subnormals;
    vscalefpd on the AVX-512 fast path, the same value). Total: within about 1.1 ulp
    (the test sweeps measure 1).
  AVX-512: a vector whose lanes all have x positive and normal, |y| < 2^60 (so th and tl
    are finite) and y != 2 takes a short path (no subnormal scaling, no special-value
    selects, one vrangepd for the clamp, tl kept: beyond |th| = 800 the result is 0 or
    inf either way); any other vector runs the general code (`_pow_full`, which is all
    a host without AVX-512 runs).
  For x = +-0, +-inf and NaN, s is (|x| - 1) inf (-inf, inf, NaN), so th is +-inf (0 or
  inf after the clamp) where the magnitude is 0 or inf, and NaN only on lanes the special
  cases below replace.
  sign: -1 when x < 0 (sign bit) and y is an odd integer (y == rint(y) and y/2 is not;
  |y| >= 2^53 is even). x < 0 finite with y finite non-integer: NaN.
  Special cases, in order of precedence (C99 Annex F): y == 0 -> 1 and x == 1 -> 1 (even
  with NaN); NaN -> NaN; y = +-inf -> 1 for |x| == 1, else 0 or inf by (|x| < 1) xor
  (y < 0); x = +-0 -> inf (y < 0) or 0 (y > 0) with x's sign when y is an odd integer;
  x = +-inf -> 0 (y < 0) or inf (y > 0), likewise signed. Ember defines power(x, 2) as
  x * x exactly (the algebraic simplifier's rewrite), so y == 2 lanes return x * x.
  (`pow_finish` applies them as selects on the magnitude: NaN, then 1, the sign, NaN for
  a finite negative base with a non-integer exponent, x * x; the f32 body in f32/powers.py
  does the same in f32 lanes.)
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import LN2_F, LN2_HI, LN2_LO, split
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs
from ember.backends.cpu.mathlib.tables import pow_tables as T
from ember.backends.cpu.mathlib.vec import (
    Lookup,
    clamp_abs,
    define_with_variant,
    scalef,
)

OFF64_BITS = 0x3FE5800000000000  # 0.671875 (pow_tables.OFF32_BITS's value) as a double
SHIFT = 1.5 * 2.0 ** 52  # t + SHIFT rounds t to an integer held in the low bits
SHIFT_BITS = 0x4338000000000000
INV_LN2_16 = float(16 / LN2_F)
LN2_16 = split(LN2_F / 16, 16)  # N LN2_16[0] is exact for |N| < 2^16


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


def _log_dd(d: Fp, lookup: Lookup, x: ir.Value, subnormals: bool
            ) -> tuple[ir.Value, ir.Value]:
    """(s, lo), s + lo = log(x) to ~2^-64 relative, for finite x > 0 (normal unless
    `subnormals`; other lanes: garbage). See the docstring."""
    b = d.b
    if subnormals:  # selects that keep normal lanes bit for bit (the fast path's values)
        sub = d.lt(x, d.c(2.0 ** -1022))
        x = d.sel(sub, d.mul(x, d.c(2.0 ** 54)), x)
    bits = d.to_bits(x)
    ix = b.sub(bits, d.ci(OFF64_BITS))
    e = b.ashr(ix, d.ci(52))
    idx = b.lshr(ix, d.ci(48))  # the lookups read its low 4 bits
    m = d.from_bits(b.sub(bits, b.shl(e, d.ci(52))))  # [OFF, 2 OFF)
    ef = b.sitofp(e, d.ty)
    if subnormals:
        ef = d.add(ef, d.sel(sub, d.c(-54.0), d.c(0.0)))
    invc = lookup(d, "pow_invc", T.POW32_INVC, idx)
    ph, rl = d.two_prod(m, invc)
    rh = d.sub(ph, d.c(1.0))  # exact: r = rh + rl
    a, ae = d.fast_two_sum(d.mul(ef, d.c(LN2_HI)), lookup(d, "pow_logc_hi", T.POW64_LOGC_HI, idx))
    s1, e1 = d.fast_two_sum(a, rh)
    hr = d.mul(rh, d.c(-0.5))
    qh, ql = d.two_prod(rh, hr)  # -rh^2/2 exactly
    s2, e2 = d.fast_two_sum(s1, qh)
    r2 = d.mul(rh, rh)
    tail = d.mul(d.mul(r2, rh), d.poly(rh, T.POW64_LOG_P))
    lo = d.fma(ef, d.c(LN2_LO), lookup(d, "pow_logc_lo", T.POW64_LOGC_LO, idx))
    lo = d.add(lo, d.fma(rl, d.sub(r2, rh), rl))  # rl / (1 + rh) ~ rl (1 - rh + rh^2)
    lo = d.add(d.add(lo, d.add(ae, e1)), d.add(d.add(e2, ql), tail))
    # normalized (|lo| <= ulp(s) / 2), so t's tail is tiny and N depends on t's head only
    return d.fast_two_sum(s2, lo)


def _exp_dd(d: Fp, lookup: Lookup, th: ir.Value, tl: ir.Value, fast: bool) -> ir.Value:
    """e^(th + tl) rounded once (twice into the subnormal range), th clamped to
    [-800, 800] (beyond, the result is 0 or inf). `fast` (AVX-512 vectors, finite th
    and tl): vrangepd clamps and vscalefpd scales, the same values as the generic path's
    selects and ldexp."""
    b = d.b
    if fast:
        th = clamp_abs(d, th, 800.0)
    else:  # NaN th stays NaN (lanes pow_finish replaces); tl may be inf or NaN there
        tl = d.sel(d.lt(d.fabs(th), d.c(800.0)), tl, d.c(0.0))
        th = d.sel(d.gt(th, d.c(800.0)), d.c(800.0), th)
        th = d.sel(d.lt(th, d.c(-800.0)), d.c(-800.0), th)
    kd = d.fma(th, d.c(INV_LN2_16), d.c(SHIFT))  # N = round(16 th / ln2) in kd's low bits
    nd = d.sub(kd, d.c(SHIFT))
    r = d.fma(nd, d.c(-LN2_16[0]), th)  # exact
    rl = d.fma(nd, d.c(-LN2_16[1]), tl)
    q0 = d.fma(d.mul(r, r), d.poly(r, T.POW64_EXP_Q), r)  # e^r - 1
    q = d.add(q0, d.fma(rl, q0, rl))  # e^(r + rl) - 1
    ki = d.to_bits(kd)
    thi = lookup(d, "pow_exp2_hi", T.POW64_EXP2_HI, ki)
    v = d.add(thi, d.fma(thi, q, lookup(d, "pow_exp2_lo", T.POW64_EXP2_LO, ki)))
    if fast:  # 2^floor(N / 16)
        return scalef(d, v, d.mul(nd, d.c(1.0 / 16)))
    return d.ldexp(v, b.ashr(b.sub(ki, d.ci(SHIFT_BITS)), d.ci(4)))


def _pow_full(d: Fp, lookup: Lookup, x: ir.Value, y: ir.Value) -> ir.Value:
    """pow on every lane (the vector variant's slow path; the scalar helper without
    AVX-512)."""
    b = d.b
    ax = d.fabs(x)
    # x = +-0, +-inf, NaN: log|x| = (|x| - 1) inf (-inf, inf, NaN) in place of _log_dd's
    # garbage; the unsigned compare wraps 0 to the top
    spec = b.icmp_unsigned(">=", b.sub(d.to_bits(ax), d.ci(1)), d.ci(0x7FEFFFFFFFFFFFFF))
    s, lo = _log_dd(d, lookup, ax, True)
    s = d.sel(spec, d.mul(d.sub(ax, d.c(1.0)), d.c(math.inf)), s)
    th, te = d.two_prod(y, s)
    return pow_finish(d, x, y, _exp_dd(d, lookup, th, d.fma(y, lo, te), False))


def _pow_body(d: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
    x, y = args
    b = d.b
    if not branchy:
        return _pow_full(d, lookup, x, y)
    # common lanes: x positive, normal and finite, |y| < 2^60 (t finite) and y != 2; there
    # _pow_full's selects all keep the magnitude (y = 0 or x = 1 give t = +-0 and 1 exactly)
    xb, yb = d.to_bits(x), d.to_bits(y)
    ok = b.icmp_unsigned("<", b.sub(xb, d.ci(1 << 52)), d.ci(0x7FE0000000000000))
    ok = b.and_(ok, b.icmp_unsigned("<", b.and_(yb, d.ci((1 << 63) - 1)),
                                     d.ci((1023 + 60) << 52)))
    ok = b.and_(ok, b.fcmp_ordered("!=", y, d.c(2.0)))
    mask_ty = ir.IntType(d.lanes)
    every = b.icmp_unsigned("==", b.bitcast(ok, mask_ty), ir.Constant(mask_ty, -1))
    with b.if_else(every, likely=True) as (fast, slow):
        with fast:
            s, lo = _log_dd(d, lookup, x, False)
            th, te = d.two_prod(y, s)
            quick = _exp_dd(d, lookup, th, d.fma(y, lo, te), True)
            quick_bb = b.block
        with slow:
            full = _pow_full(d, lookup, x, y)
            full_bb = b.block
    res = b.phi(d.ty)
    res.add_incoming(quick, quick_bb)
    res.add_incoming(full, full_bb)
    return res


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


def pow_fn(module: ir.Module, ty: ir.Type, permute: bool | None = None) -> ir.Function:
    """f64 pow (f32 has its own body in f32/powers.py)."""
    assert str(ty) == "double", ty
    return define_with_variant(module, "pow", ty, 2, _pow_body, permute)
