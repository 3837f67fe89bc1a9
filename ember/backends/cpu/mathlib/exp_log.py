"""exp, expm1, log in f32 and f64 as straight-line (vectorizable) IR.

exp(x): write x = k ln2 + r with k = rint(x / ln2), |r| <= ln2/2 ~= 0.3466. Then
e^x = 2^k e^r. r is computed Cody-Waite style: ln2 = LN2_HI + LN2_LO where LN2_HI has
trailing zero bits, so k*LN2_HI is exact and x - k*LN2_HI is exact (Sterbenz); the second
step fma(-k, LN2_LO, .) rounds once. e^r is its Taylor series sum r^n/n!: the first dropped
term bounds the error, r^8/8! <= 5.3e-9 (< 2^-27, f32, degree 7) and r^14/14! <= 4.1e-18
(< 2^-57, f64, degree 13). 2^k is applied as 2^k1 * 2^k2 with k1 = k >> 1, k2 = k - k1, so
each factor is a normal number for every k the clamped x produces: overflow gives inf and
the subnormal range is rounded once (the last multiply).

expm1(x): the same reduction; e^x - 1 = 2^k (e^r - 1) + (2^k - 1). e^r - 1 = r + r^2/2 + ...
is summed without its leading 1 (no cancellation); with h = 2^(k-1) (kept finite for
k = 128) this is 2 * fma(h, q, h - 1/2), exact for k = 0 (returns q).

log(x): x = 2^e m with m in [sqrt(2)/2, sqrt(2)), f = m - 1 (exact). With s = f / (2 + f),
log(1+f) = 2 atanh(s) = 2s + s R(z), z = s^2, R(z) = sum_{k>=1} 2 z^k / (2k+1). Since
2s = f - s f and s f = hfsq - s hfsq (hfsq = f^2 / 2), log(1+f) = f - (hfsq - s (hfsq + R)),
which keeps the large term f exact. |s| <= 0.1716, z <= 0.02944: the first dropped term of
R relative to the result is z^(n+1)/(2n+3): n = 4 gives 2e-9 (f32), n = 10 gives 6e-19
(f64). Subnormal x is scaled by 2^mbits first.

This log body serves f64, and f32 on hosts without AVX-512: `log_fn` hands f32 to
f32/log.py, whose AVX-512 body is division-free (a 16-entry table in registers).

expm1 (f64) keeps a tail instead (the body above reaches 2 ulp in f64, NumPy's tables
allow 1): core.exp_core(x) = (k, q), e^x - 1 = 2^k (1 + q) - 1 = (2^k - 1) + 2^k q. For
-54 <= k <= 60, 2^k - 1 is exact or its rounding is far below the result's ulp and 2^k q
is exact, so one rounding; k = 0 returns q itself (full relative precision near 0). For
k > 60 the result is 2^k (1 + q) (scaled in two steps: overflow at x > 709.78 gives inf).
x < -40 gives -1.
log1p is lean_log's.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import core
from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.vec import (
    Lookup,
    VecFp,
    define_with_variant,
    permute_tables,
    scalef,
)

LOG2E = 1.0 / math.log(2.0)
# (hi, lo) splits of ln 2: hi has 11 (f32: 9) trailing zero bits.
LN2 = {32: (0.693145751953125, 1.428606765330187045e-06),
       64: (6.93147180369123816490e-01, 1.90821492927058770002e-10)}
# x beyond these gives inf / 0 (exp) or inf / -1 (expm1)
EXP_HI = {32: 89.0, 64: 710.0}
EXP_LO = {32: -104.0, 64: -746.0}
EXPM1_HI = {32: 88.72283935546875, 64: 709.782712893384}  # largest x with finite result
EXPM1_LO = {32: -20.0, 64: -45.0}  # e^x below half an ulp of 1: the result rounds to -1
EXP_DEG = {32: 7, 64: 13}
LOG_TERMS = {32: 4, 64: 10}


def _reduce_ln2(fp: Fp, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(k, r) with x = k ln2 + r, k = rint(x / ln2) as a float."""
    hi, lo = LN2[fp.bits]
    k = fp.rint(fp.mul(x, fp.c(LOG2E)))
    r = fp.fma(fp.neg(k), fp.c(hi), x)
    r = fp.fma(fp.neg(k), fp.c(lo), r)
    return k, r


def _clamp(fp: Fp, x: ir.Value, lo: float, hi: float) -> ir.Value:
    """Clamp into [lo, hi] and map NaN to 0, so the exponent arithmetic stays defined."""
    x = fp.sel(fp.gt(x, fp.c(hi)), fp.c(hi), x)
    x = fp.sel(fp.lt(x, fp.c(lo)), fp.c(lo), x)
    return fp.sel(fp.isnan(x), fp.c(0.0), x)


def _exp_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    xc = _clamp(fp, x, EXP_LO[fp.bits], EXP_HI[fp.bits])
    k, r = _reduce_ln2(fp, xc)
    p = fp.poly(r, [1.0 / math.factorial(n) for n in range(EXP_DEG[fp.bits] + 1)])
    res = fp.ldexp(p, fp.to_int(k))
    return fp.sel(fp.isnan(x), x, res)


def _exp32_vec_body(fp: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool
                    ) -> ir.Value:
    """The f32 exp of AVX-512 hosts, on 16 lanes: _exp_body's values with vscalefps taking
    k as the float it already is. A NaN needs no select: the clamp's selects pass it on
    (an ordered compare is false), rint, the fmas and vscalefps carry it through, where
    the straight-line body must keep it from fptosi (poison) and put it back after; and
    no conversion of k to an integer and back. 6 of 21 vector instructions."""
    if not isinstance(fp, VecFp):  # (only the variant is built with `permute`)
        return _exp_body(fp, args)
    (x,) = args
    xc = fp.sel(fp.gt(x, fp.c(EXP_HI[32])), fp.c(EXP_HI[32]), x)
    xc = fp.sel(fp.lt(xc, fp.c(EXP_LO[32])), fp.c(EXP_LO[32]), xc)
    k, r = _reduce_ln2(fp, xc)
    p = fp.poly(r, [1.0 / math.factorial(n) for n in range(EXP_DEG[32] + 1)])
    return scalef(fp, p, k)


def _expm1_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    xc = _clamp(fp, x, EXPM1_LO[fp.bits], EXPM1_HI[fp.bits])
    k, r = _reduce_ln2(fp, xc)
    deg = EXP_DEG[fp.bits] + 1
    # q = r * (1 + r/2! + r^2/3! + ...) = e^r - 1
    q = fp.mul(r, fp.poly(r, [1.0 / math.factorial(n + 1) for n in range(deg)]))
    h = fp.pow2i(fp.b.sub(fp.to_int(k), fp.ci(1)))
    res = fp.mul(fp.c(2.0), fp.fma(h, q, fp.sub(h, fp.c(0.5))))
    res = fp.sel(fp.gt(x, fp.c(EXPM1_HI[fp.bits])), fp.c(math.inf), res)
    # |x| < 2^-(mbits+3): e^x - 1 rounds to x (x^2/2 is below a quarter ulp of x); this also
    # keeps -0.0 and subnormal x, which the scaled sum above would flush
    res = fp.sel(fp.lt(fp.fabs(x), fp.c(2.0 ** -(fp.mbits + 3))), x, res)
    return fp.sel(fp.isnan(x), x, res)


def log_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    b = fp.b
    min_normal = 2.0 ** (1 - fp.bias)
    sub = fp.lt(x, fp.c(min_normal))
    xs = fp.sel(sub, fp.mul(x, fp.c(2.0 ** fp.mbits)), x)
    ebias = b.select(sub, fp.ci(-fp.mbits), fp.ci(0))
    bits = fp.to_bits(xs)
    expf = b.and_(b.lshr(bits, fp.ci(fp.mbits)), fp.ci((1 << (fp.bits - fp.mbits - 1)) - 1))
    e = b.add(b.sub(expf, fp.ci(fp.bias)), ebias)
    mant = b.or_(b.and_(bits, fp.ci((1 << fp.mbits) - 1)), fp.ci(fp.bias << fp.mbits))
    m = fp.from_bits(mant)  # in [1, 2)
    big = fp.gt(m, fp.c(math.sqrt(2.0)))
    m = fp.sel(big, fp.mul(m, fp.c(0.5)), m)
    e = b.add(e, b.zext(big, fp.ity))
    f = fp.sub(m, fp.c(1.0))
    s = fp.div(f, fp.add(fp.c(2.0), f))
    z = fp.mul(s, s)
    n = LOG_TERMS[fp.bits]
    rz = fp.mul(z, fp.poly(z, [2.0 / (2 * k + 1) for k in range(1, n + 1)]))
    hfsq = fp.mul(fp.c(0.5), fp.mul(f, f))
    dk = b.sitofp(e, fp.ty)
    hi, lo = LN2[fp.bits]
    # dk*ln2_hi - ((hfsq - (s*(hfsq+R) + dk*ln2_lo)) - f)
    inner = fp.fma(s, fp.add(hfsq, rz), fp.mul(dk, fp.c(lo)))
    res = fp.sub(fp.mul(dk, fp.c(hi)), fp.sub(fp.sub(hfsq, inner), f))
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), fp.c(-math.inf), res)
    bad = b.or_(fp.lt(x, fp.c(0.0)), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _expm1_f64_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    b = fp.b
    xc = core.clamp(fp, x, -40.0, 720.0)
    k, q = core.exp_core(fp, xc, None, "f64")
    big = b.icmp_signed(">", k, fp.ci(60))
    ks = b.select(big, fp.ci(0), k)
    p = fp.pow2i(ks)
    small = fp.fma(p, q, fp.sub(p, fp.c(1.0)))
    large = fp.ldexp(fp.add(fp.c(1.0), q), k)
    res = fp.sel(big, large, small)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)  # keeps -0.0
    return fp.sel(fp.isnan(x), x, res)


def _name(base: str, ty: ir.Type) -> str:
    return f"ember.{base}.{'f32' if str(ty) == 'float' else 'f64'}"


def exp_fn(module: ir.Module, ty: ir.Type, permute: bool | None = None) -> ir.Function:
    """`ember.exp.f32|f64`; f32 on AVX-512 hosts (`permute` default there) as a vector
    variant (vec.py) whose scaling takes k as a float (`_exp32_vec_body`)."""
    if str(ty) == "float" and (permute_tables() if permute is None else permute):
        return define_with_variant(module, "exp", ty, 1, _exp32_vec_body, True)
    return define(module, _name("exp", ty), ty, 1, _exp_body)


def expm1_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    body = _expm1_f64_body if str(ty) == "double" else _expm1_body
    return define(module, _name("expm1", ty), ty, 1, body)


def log_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    if str(ty) == "float":  # f32/log.py: division-free on AVX-512 hosts
        from ember.backends.cpu.mathlib.f32.log import log32_fn

        return log32_fn(module)
    return define(module, _name("log", ty), ty, 1, log_body)
