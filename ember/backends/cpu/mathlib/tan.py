"""tan in f64 (straight-line IR), plus a precise variant for both f32 and f64 (the f32
fast body is native f32 code: f32_trig).

Reduction: k = rint(x 2/pi), x = k pi/2 + (rh + rl), with pi/2 = P1 + P2 + P3 (doubles, each
the rounding of what is left; trig.pio2_pieces): r1 = fma(-k, P1, x) is exact (the
result is on x's grid and below 1 in magnitude while |k| < 2^28), k P2 is split exactly by
two_prod and subtracted with a two-sum, and k P3 plus the errors form rl. Valid for
|x| < 2^28 (`HUGE`); larger finite |x| raises the kernel's precise-rerun flag and the
precise variant sends those lanes to the C library's tan (double, rounded once for f32).

tan(r) = r + r z P(z), z = r^2, |r| <= pi/4 (+ rounding): P is the fitted
(tan(sqrt z)/sqrt z - 1)/z on [0, (0.7854 * 1.001)^2] (coeffs.TAN_P_*, 15 terms in f64:
the nearest singularity, z = (pi/2)^2, is only 4x the interval). rl enters to first order
with tan'(r) = 1 + t^2. Odd k: tan(x) = -1/tan(r) = -1/(th + tl), computed as
q = 1/th, e = fma(-q, th, 1) - q tl, -(q + q e) (a Newton correction of the reciprocal).
tan(+-0) = +-0; inf and NaN give NaN.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define, define_math, suffix
from ember.backends.cpu.mathlib.f32 import trig as f32_trig
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs
from ember.backends.cpu.mathlib.trig import pio2_pieces, precise_variant

HUGE = 268435456.0  # 2^28


def _tan_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    b = fp.b
    p1, p2, p3 = pio2_pieces(64)
    ax = fp.fabs(x)
    small = fp.lt(ax, fp.c(HUGE))
    xs = fp.sel(small, x, fp.c(0.0))  # huge, inf and NaN lanes: replaced at the end
    k = fp.rint(fp.mul(xs, fp.c(2.0 / math.pi)))
    nk = fp.neg(k)
    r1 = fp.fma(nk, fp.c(p1), xs)
    w, wl = fp.two_prod(nk, fp.c(p2))
    rh, e1 = fp.two_sum(r1, w)
    rl = fp.fma(nk, fp.c(p3), fp.add(e1, wl))
    rh, rl = fp.fast_two_sum(rh, rl)
    z = fp.mul(rh, rh)
    poly = getattr(coeffs, f"TAN_P_{prec.upper()}")[:-1]
    tail = fp.mul(fp.mul(rh, z), fp.poly(z, poly))
    th, tl = fp.fast_two_sum(rh, tail)
    tl = fp.fma(rl, fp.fma(th, th, fp.c(1.0)), tl)
    even = fp.add(th, tl)
    q = fp.div(fp.c(1.0), th)
    e = fp.sub(fp.fma(fp.neg(q), th, fp.c(1.0)), fp.mul(q, tl))
    odd = fp.neg(fp.fma(q, e, q))
    is_odd = b.trunc(fp.to_int(k), ir.IntType(1))
    res = fp.sel(is_odd, odd, even)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)
    return fp.sel(small, res, fp.sub(x, x))  # inf/NaN -> NaN; huge: precise variant


def huge_flag(fp: Fp, x: ir.Value) -> ir.Value:
    """i1: |x| is finite and beyond the fast reduction's range (f32: f32_trig's)."""
    if fp.bits == 32:
        return f32_trig.huge_flag(fp, x)
    ax = fp.fabs(x)
    return fp.b.and_(fp.ge(ax, fp.c(HUGE)), fp.lt(ax, fp.c(math.inf)))


def tan_fn(module: ir.Module, ty: ir.Type, precise: bool = False) -> ir.Function:
    if str(ty) == "float":
        fast = f32_trig.tan_fn(module)
    else:
        fast = define_math(module, "tan", ty, 1, _tan_body)
    if not precise:
        return fast
    return define(module, f"ember.tan.precise.{suffix(ty)}", ty, 1,
                  precise_variant("tan", fast, huge_flag))
