"""exp2, log2, log10 and log1p in the working precision (f32 or f64), straight-line IR.

exp2(x): k = rint(x), r = x - k exact, |r| <= 1/2.
  f32: 2^r = 1 + r Q(r) with Q the float32 near-minimax fit of (2^r - 1)/r
    (coeffs32.EXP2_Q, weighted error 2^-27.3, see fit.py), one fma onto 1 (error: Q's
    last Horner rounding, at most 2^-25 r Q <= 2^-26 relative, plus the final rounding).
  f64: 2^r = e^(r ln2) with r ln2 = rh + rl (two_prod with ln2's leading double, plus r
    times its tail), |rh| <= 0.347, and e^(rh + rl) - 1 = q by parts.exp_parts' series
    (Taylor through rh^13/13!, first dropped term 2^-57.7) with the tail folded in to first
    order; 1 + q rounds once.
  2^k is applied as two exact power-of-two factors (Fp.ldexp), so a subnormal result
  rounds once and overflow gives inf. x is clamped to [-151, 129] (f32) or [-1100, 1100]
  (f64) first (beyond, the result is 0 or inf anyway); NaN passes through.
On AVX-512 hosts f32 log2, log10 and log1p are f32/log.py's (the same combine and two-sum
on a division-free, table-driven log_parts); f64 and other hosts' f32 are below.
log2(x), log10(x): parts.log_parts(x) = (e, hi, lo) and parts.combine with
  (E, C) = (1, 1/ln2) and (log10(2), 1/ln10): e E + (hi + lo) C rounded about once, so
  log2 of a power of two is exact. x = 0 -> -inf, x < 0 or NaN -> NaN, +inf -> +inf.
log1p(x): u + c = 1 + x exactly (two-sum), parts.log_of(u, c): the tail c carries what
  rounding 1 + x lost, so tiny x gives x (c = x, f = 0) and -0.0 is kept by a select.
  x = -1 -> -inf, x < -1 -> NaN, +inf -> +inf.
"""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import LN2_F, clamp, split
from ember.backends.cpu.mathlib.define import define, suffix
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.parts import (
    EXPM1_Q,
    combine,
    log_of,
    log_parts,
    split_for,
)
from ember.backends.cpu.mathlib.tables import coeffs32
from ember.backends.cpu.mathlib.vec import permute_tables

LN10_DIGITS = "2.302585092994045684017960468497044400310425839400793081620375887014"
LN10_F = Fraction(LN10_DIGITS)
LN2_DD = split(LN2_F)
EXP2_RANGE = {32: (-151.0, 129.0), 64: (-1100.0, 1100.0)}


def log_special(fp: Fp, x: ir.Value, res: ir.Value) -> ir.Value:
    """log-family result for x = 0 (-inf), +inf (inf), x < 0 or NaN (NaN)."""
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), fp.c(-math.inf), res)
    bad = fp.b.or_(fp.lt(x, fp.c(0.0)), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _exp2_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    xc = clamp(fp, x, *EXP2_RANGE[fp.bits])
    k = fp.rint(xc)
    r = fp.sub(xc, k)
    if fp.bits == 32:
        p = fp.fma(r, fp.poly(r, coeffs32.EXP2_Q), fp.c(1.0))
    else:
        rh, rl = fp.two_prod(r, fp.c(LN2_DD[0]))
        rl = fp.fma(r, fp.c(LN2_DD[1]), rl)
        q0 = fp.fma(fp.mul(rh, rh), fp.poly(rh, EXPM1_Q[64]), rh)
        p = fp.add(fp.c(1.0), fp.add(q0, fp.fma(rl, q0, rl)))
    res = fp.ldexp(p, fp.to_int(k))
    return fp.sel(fp.isnan(x), x, res)


def _log_scaled(e_mul: Fraction | None, c_mul: Fraction):
    """log(x) * c_mul, written e * (ln2 * c_mul) + log(m) * c_mul (e_mul = ln2 * c_mul;
    None when it is 1)."""

    def body(fp: Fp, args: list[ir.Value]) -> ir.Value:
        (x,) = args
        ef, hi, lo = log_parts(fp, x)
        em = (1.0, 0.0) if e_mul is None else split_for(fp.bits, e_mul, exact_mul=True)
        res = combine(fp, ef, hi, lo, em, split_for(fp.bits, c_mul))
        return log_special(fp, x, res)

    return body


def _log1p_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    u, c = fp.two_sum(fp.c(1.0), x)
    # u <= 0, inf or NaN gives garbage (integer ops on its bits, no traps), replaced below;
    # a select of a safe u here costs more than it looks: LLVM turns the range test into
    # integer ops that need an all-ones vector, which it rematerializes in the loop with
    # vpternlogd $255 (not a dependency-breaking idiom on AMD), chaining every iteration
    # to the previous one
    res = log_of(fp, u, c)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)  # keeps -0.0
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    return log_special(fp, u, res)


def exp2_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define(module, f"ember.exp2.{suffix(ty)}", ty, 1, _exp2_body)


def _table32(ty: ir.Type, permute: bool | None) -> bool:
    """f32 on an AVX-512 host (`permute` default): f32/log.py's division-free table
    bodies serve."""
    return str(ty) == "float" and (permute_tables() if permute is None else permute)


def log2_fn(module: ir.Module, ty: ir.Type, permute: bool | None = None) -> ir.Function:
    if _table32(ty, permute):
        from ember.backends.cpu.mathlib.f32.log import scaled_log32_fn

        return scaled_log32_fn(module, "log2", (1.0, 0.0), split_for(32, 1 / LN2_F))
    return define(module, f"ember.log2.{suffix(ty)}", ty, 1, _log_scaled(None, 1 / LN2_F))


def log10_fn(module: ir.Module, ty: ir.Type, permute: bool | None = None) -> ir.Function:
    if _table32(ty, permute):
        from ember.backends.cpu.mathlib.f32.log import scaled_log32_fn

        return scaled_log32_fn(module, "log10", split_for(32, LN2_F / LN10_F, exact_mul=True),
                               split_for(32, 1 / LN10_F))
    return define(module, f"ember.log10.{suffix(ty)}", ty, 1,
                  _log_scaled(LN2_F / LN10_F, 1 / LN10_F))


def log1p_fn(module: ir.Module, ty: ir.Type, permute: bool | None = None) -> ir.Function:
    if _table32(ty, permute):
        from ember.backends.cpu.mathlib.f32.log import log1p32_fn

        return log1p32_fn(module)
    return define(module, f"ember.log1p.{suffix(ty)}", ty, 1, _log1p_body)
