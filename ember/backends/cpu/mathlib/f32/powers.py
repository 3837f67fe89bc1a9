"""cbrt in native f32 arithmetic (straight-line IR) and pow for f32 in f64 lanes (table
driven; vec.py gives it a vector variant on AVX-512).

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
  exactly; one rounding to f32 at the end), with 16-entry tables (pow_tables, derived in
  fit_pow.py). A finite nonzero f32 result has |t| <= 151 for t = y log2|x|.
  log2: xd = |x| widened (an f32 subnormal is a normal double). With OFF = 0.671875,
    ix = bits(xd) - bits(OFF): e = ix >> 52 (arithmetic), m = xd 2^-e in [OFF, 2 OFF)
    (bits - e << 52), i = (ix >> 48) mod 16 its subinterval. r = fma(m, INVC[i], -1)
    (|r| <= 2^-5, one rounding: 2^-53 |r|) and log2|x| = (e + LOG2C[i]) + r P(r),
    P = POW32_LOG2_P (log2(1 + r)/r, relative error 2^-37.6), the last step one fma.
  error budget: on the subinterval holding 1 (c = 1, LOG2C = 0) with e = 0, log2|x| =
    r P(r) with r = x - 1 exact: relative error 2^-37.6 plus a few 2^-53, however close x
    is to 1 (where y can be ~1e9). Elsewhere |log2 x| >= -log2(1 - 2^-6) = 0.0227 and the
    errors are absolute: 2^-53 |e + LOG2C| and 2^-37.6 |r P| <= 2^-42.2, so the relative
    error stays below 2^-36.5. So t is within |t| 2^-36.5 <= 2^-29.2 of y log2|x| (y L
    rounds once more, 2^-53), which moves the result by 2^-29.7 relative.
  exp2: t clamped to [-151, 129] (beyond, the f32 result is 0 or inf); kd = t + 1.5 2^48
    rounds t to a multiple of 1/16, so kd's low bits hold N = 16 t rounded, j = N mod 16,
    k = N >> 4; r = t - (kd - 1.5 2^48) is exact, |r| <= 1/32. 2^t = 2^k EXP2_T[j] 2^r
    with EXP2_T[j] = 2^(j/16) (2^-53) and 2^r - 1 = r Q(r) (Q = POW32_EXP2_Q, 2^-37.5
    relative); scale = EXP2_T[j] 2^k by adding k << 52 to the entry's bits (a normal
    double: |k| <= 151), and the double result fma(scale, r Q, scale). Rounding it to
    f32 is the one rounding that shows: within 0.5 ulp + 2^-29.5 relative, i.e. 1 ulp of
    the correctly rounded result (subnormal results included: the double is exact to
    2^-29.5, the f32 rounding of it the only coarse one).
  AVX-512 (vec.py): the vector variant `ember.pow.v16f32` looks the tables up with
    vpermi2var; a vector whose lanes all have x positive and normal and y finite and
    != 2 runs a short path (`_exp2_fast`: no special-value selects, the clamp in one
    vrangepd, 2^k by vscalefpd, with the same values), any other vector runs the general
    code (`_pow_full`, which is all a host without AVX-512 runs).
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

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp, intrinsic
from ember.backends.cpu.mathlib.tables import coeffs32
from ember.backends.cpu.mathlib.tables import pow_tables as T
from ember.backends.cpu.mathlib.vec import (
    Lookup,
    clamp_abs,
    define_with_variant,
    like,
    permute_lookup,
    scalef,
)

F32 = ir.FloatType()
F64 = ir.DoubleType()
OFF64_BITS = 0x3FE5800000000000  # T.OFF32_BITS's value, 0.671875, as a double
SHIFT16 = 1.5 * 2.0 ** 48  # t + SHIFT16 rounds t to a multiple of 1/16 (16 t in the low bits)


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


def _log2(fs: Fp, d: Fp, lookup: Lookup, ax: ir.Value) -> ir.Value:
    """log2(ax) in f64 for a positive finite f32 ax (subnormals are normal doubles)."""
    b = fs.b
    bits = d.to_bits(b.fpext(ax, d.ty))
    ix = b.sub(bits, d.ci(OFF64_BITS))
    e = b.ashr(ix, d.ci(52))
    m = d.from_bits(b.sub(bits, b.shl(e, d.ci(52))))  # [OFF, 2 OFF)
    idx = b.lshr(ix, d.ci(48))  # the lookups read its low 4 bits
    r = d.fma(m, lookup(d, "pow32_invc", T.POW32_INVC, idx), d.c(-1.0))
    hi = d.add(b.sitofp(e, d.ty), lookup(d, "pow32_log2c", T.POW32_LOG2C, idx))
    return d.fma(r, d.poly(r, T.POW32_LOG2_P, horner=True), hi)


def _exp2(fs: Fp, d: Fp, lookup: Lookup, t: ir.Value) -> ir.Value:
    """2^t rounded to f32, for t in f64 (NaN lanes: garbage)."""
    b = fs.b
    t = d.sel(d.gt(t, d.c(129.0)), d.c(129.0), t)
    t = d.sel(d.lt(t, d.c(-151.0)), d.c(-151.0), t)
    kd = d.add(t, d.c(SHIFT16))
    ki = d.to_bits(kd)
    tj = lookup(d, "pow32_exp2", T.POW32_EXP2_T, ki)
    scale = d.from_bits(b.add(d.to_bits(tj), b.shl(b.lshr(ki, d.ci(4)), d.ci(52))))
    r = d.sub(t, d.sub(kd, d.c(SHIFT16)))  # exact, |r| <= 1/32
    p = d.mul(r, d.poly(r, T.POW32_EXP2_Q, horner=True))  # 2^r - 1
    return b.fptrunc(d.fma(scale, p, scale), fs.ty)


def _exp2_fast(fs: Fp, d: Fp, t: ir.Value) -> ir.Value:
    """_exp2 for finite t on AVX-512 vectors, in fewer instructions and with the same
    results: one vrangepd clamps t to [-151, 151] (beyond 129 and below -151 the f32
    result is inf or 0 either way), the table index is read from kd's low bits by the
    permute itself (it ignores the others), and vscalefpd applies 2^k, k = floor(kd - SHIFT16),
    which is exact where _exp2's integer add of k << 52 is."""
    t = clamp_abs(d, t, 151.0)
    kd = d.add(t, d.c(SHIFT16))
    tj = permute_lookup(d, "pow32_exp2", T.POW32_EXP2_T, d.to_bits(kd))
    tr = d.sub(kd, d.c(SHIFT16))
    r = d.sub(t, tr)
    p = d.mul(r, d.poly(r, T.POW32_EXP2_Q, horner=True))
    return fs.b.fptrunc(scalef(d, d.fma(tj, p, tj), tr), fs.ty)


def _pow_full(fs: Fp, d: Fp, lookup: Lookup, x: ir.Value, y: ir.Value) -> ir.Value:
    """pow on every lane, special values included (the vector variant's slow path; the
    scalar helper without AVX-512)."""
    b = fs.b
    one = fs.c(1.0)
    ax = fs.fabs(x)
    # x = +-0, +-inf, NaN: log2|x| = (|x| - 1) inf; bits - 1 wraps 0 to the top, so one
    # unsigned compare finds all three
    spec = b.icmp_unsigned(">=", b.sub(fs.to_bits(ax), fs.ci(1)), fs.ci(0x7F7FFFFF))
    lspec = b.fpext(fs.mul(fs.sub(ax, one), fs.c(math.inf)), d.ty)
    lg = d.sel(spec, lspec, _log2(fs, d, lookup, ax))
    mag = _exp2(fs, d, lookup, d.mul(b.fpext(y, d.ty), lg))
    res = fs.sel(b.fcmp_unordered("uno", x, y), fs.add(x, y), mag)
    res = fs.sel(b.or_(fs.eq(y, fs.c(0.0)), fs.eq(ax, one)), one, res)
    is_int = fs.eq(fs.rint(y), y)
    half = fs.mul(y, fs.c(0.5))
    odd = b.and_(is_int, b.fcmp_unordered("!=", fs.rint(half), half))
    res = fs.sel(b.and_(fs.signbit(x), odd), fs.neg(res), res)
    bad = b.and_(b.and_(fs.lt(x, fs.c(0.0)), fs.gt(x, fs.c(-math.inf))), b.not_(is_int))
    res = fs.sel(bad, fs.c(math.nan), res)
    return fs.sel(fs.eq(y, fs.c(2.0)), fs.mul(x, x), res)


def _pow_body(fs: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
    x, y = args
    b = fs.b
    d = like(fs, F64)
    if not branchy:
        return _pow_full(fs, d, lookup, x, y)
    # common lanes: x positive, normal and finite, y finite and != 2; there _pow_full's
    # selects all keep `mag` (y = 0 or x = 1 give t = +-0 and mag = 1 exactly)
    xb, yb = fs.to_bits(x), fs.to_bits(y)
    ok = b.icmp_unsigned("<", b.sub(xb, fs.ci(0x00800000)), fs.ci(0x7F000000))
    ok = b.and_(ok, b.icmp_unsigned("<", b.and_(yb, fs.ci(0x7FFFFFFF)), fs.ci(0x7F800000)))
    ok = b.and_(ok, fs.b.fcmp_ordered("!=", y, fs.c(2.0)))
    mask_ty = ir.IntType(fs.lanes)
    every = b.icmp_unsigned("==", b.bitcast(ok, mask_ty), ir.Constant(mask_ty, -1))
    with b.if_else(every, likely=True) as (fast, slow):
        with fast:
            lg = _log2(fs, d, lookup, x)
            quick = _exp2_fast(fs, d, d.mul(b.fpext(y, d.ty), lg))
            quick_bb = b.block
        with slow:
            full = _pow_full(fs, d, lookup, x, y)
            full_bb = b.block
    res = b.phi(fs.ty)
    res.add_incoming(quick, quick_bb)
    res.add_incoming(full, full_bb)
    return res


def cbrt_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.cbrt.f32", F32, 1, _cbrt_body)


def pow_fn(module: ir.Module, permute: bool | None = None) -> ir.Function:
    return define_with_variant(module, "pow", F32, 2, _pow_body, permute)
