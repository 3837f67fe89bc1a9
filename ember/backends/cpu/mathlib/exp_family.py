"""exp2, log2, log10 (f32 and f64) and the f64 expm1 and log1p, from `core`'s exp and log
with tails. Straight-line IR; f32 runs the same code on widened values (`define_math`).

exp2(x): k = rint(x), r = x - k (exact, |r| <= 1/2), 2^r = e^(r ln2) with r ln2 formed as
a double-double (two_prod with ln2's leading double plus r times its tail), so
2^x = 2^(k + k') (1 + q) from `exp_core` rounds once. x is clamped to [-1100, 1100]
(2^1100 overflows, 2^-1100 underflows to 0 in the final scaling).

log2(x), log10(x): (H, L) = log_dd(x), then (H + L) C with C = 1/ln2 or 1/ln10 split as
C_hi + C_lo: fl(H C_hi) + (its exact error + H C_lo + L C_hi), one final rounding. Exact
powers of 2 give exact integers (the error is far below half an ulp of the integer).
x = 0 -> -inf, x < 0 or NaN -> NaN, +inf -> +inf.

expm1(x) (f64): e^x - 1 = 2^k (1 + q) - 1 = (2^k - 1) + 2^k q. For -54 <= k <= 60, 2^k - 1
is exact or its rounding is far below the result's ulp and 2^k q is exact, so one rounding;
k = 0 returns q itself (full relative precision near 0). For k > 60 the result is
2^k (1 + q) (scaled in two steps: overflow at x > 709.78 gives inf). x < -40 gives -1.

log1p(x) (f64): 1 + x = uh + ul exactly (two-sum), log1p(x) = log_dd(uh, ul): the tail
ul / uh carries what rounding 1 + x lost, so the result has relative precision near 0.
"""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import LN2_F, clamp, exp_core, log_dd, split
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.fp import Fp

LN10_DIGITS = "2.302585092994045684017960468497044400310425839400793081620375887014"
LN2_DD = split(LN2_F)
INV_LN2 = split(1 / LN2_F)
INV_LN10 = split(1 / Fraction(LN10_DIGITS))


def log_special(fp: Fp, x: ir.Value, res: ir.Value) -> ir.Value:
    """log-family result for x = 0 (-inf), +inf (inf), x < 0 or NaN (NaN)."""
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), fp.c(-math.inf), res)
    bad = fp.b.or_(fp.lt(x, fp.c(0.0)), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _exp2_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    xc = clamp(fp, x, -1100.0, 1100.0)
    k = fp.rint(xc)
    r = fp.sub(xc, k)
    rh, rl = fp.two_prod(r, fp.c(LN2_DD[0]))
    rl = fp.fma(r, fp.c(LN2_DD[1]), rl)
    k2, q = exp_core(fp, rh, rl, prec)
    res = fp.ldexp(fp.add(fp.c(1.0), q), fp.b.add(fp.to_int(k), k2))
    return fp.sel(fp.isnan(x), x, res)


def _log_scaled(c: tuple[float, float]):
    def body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
        (x,) = args
        h, lo = log_dd(fp, x, prec=prec)
        ph, pl = fp.two_prod(h, fp.c(c[0]))
        pl = fp.add(pl, fp.fma(h, fp.c(c[1]), fp.mul(lo, fp.c(c[0]))))
        return log_special(fp, x, fp.add(ph, pl))

    return body


def _expm1_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    b = fp.b
    xc = clamp(fp, x, -40.0, 720.0)
    k, q = exp_core(fp, xc, None, prec)
    big = b.icmp_signed(">", k, fp.ci(60))
    ks = b.select(big, fp.ci(0), k)
    p = fp.pow2i(ks)
    small = fp.fma(p, q, fp.sub(p, fp.c(1.0)))
    large = fp.ldexp(fp.add(fp.c(1.0), q), k)
    res = fp.sel(big, large, small)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)  # keeps -0.0
    return fp.sel(fp.isnan(x), x, res)


def _log1p_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    uh, ul = fp.two_sum(fp.c(1.0), x)
    h, lo = log_dd(fp, uh, ul, prec=prec)
    res = fp.add(h, lo)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)  # keeps -0.0
    return log_special(fp, uh, fp.sel(fp.eq(x, fp.c(math.inf)), x, res))


def exp2_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "exp2", ty, 1, _exp2_body)


def log2_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "log2", ty, 1, _log_scaled(INV_LN2))


def log10_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "log10", ty, 1, _log_scaled(INV_LN10))


def expm1_f64_fn(module: ir.Module) -> ir.Function:
    return define_math(module, "expm1", ir.DoubleType(), 1, _expm1_body)


def log1p_f64_fn(module: ir.Module) -> ir.Function:
    return define_math(module, "log1p", ir.DoubleType(), 1, _log1p_body)
