"""sin and cos in f32 and f64 as straight-line (vectorizable) IR, plus precise variants.

Reduction: k = rint(x * 2/pi), r = x - k pi/2 with |r| <= pi/4 (a hair more when the
product rounds), computed Cody-Waite style with pi/2 = P1 + P2 + P3 (each the rounding of
what is left) and one fma per piece: k*P1 is exact inside the fma and x - k*P1 is exact
(Sterbenz), the later steps round once each. This is accurate while k has few bits:
|x| < 2^16 (f32) and |x| < 2^28 (f64), the `HUGE` bounds. Beyond them the fast variant's
result is wrong; the kernel emitter ORs `huge(x)` into a flag and reruns the kernel with the
precise variant, which branches to the C library for those lanes (slow, correct).

Polynomials (Taylor series; the first dropped term bounds the error at |r| = pi/4):
  sin r = r + r^3 S(r^2), S = sum_{n>=1} (-1)^n r^(2n-2) / (2n+1)!, through r^9 (f32:
          r^11/11! <= 1.9e-9) or r^19 (f64: r^21/21! <= 1.2e-22).
  cos r = 1 + r^2 C(r^2), C = sum_{n>=1} (-1)^n r^(2n-2) / (2n)!, through r^10 (f32:
          r^12/12! <= 1.2e-10) or r^20 (f64: r^22/22! <= 5e-24).
Quadrant q = k mod 4: sin x = (s, c, -s, -c)[q], cos x = sin(x + pi/2) uses q + 1.
sin(+-0) returns x itself (keeps the sign); inf and NaN give NaN through r.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp, intrinsic

HUGE = {32: 65536.0, 64: 268435456.0}
_SIN_TERMS = {32: 4, 64: 9}  # number of coefficients of S
_COS_TERMS = {32: 5, 64: 10}


# pi/2 = P1 + P2 + P3 + O(ulp(P3)) in float32 and float64 pieces, each the rounding of the
# remainder (derive_pio2_pieces; a test checks the table against it). As literals: deriving
# them at compile time imports `fractions` and `decimal`, a few ms of a first compile.
PIO2_PIECES: dict[int, tuple[float, float, float]] = {
    32: (1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15),
    64: (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33),
}


def derive_pio2_pieces(bits: int) -> tuple[float, float, float]:
    """pi/2 = P1 + P2 + P3 + O(ulp(P3)), each piece the rounding of the remainder."""
    from fractions import Fraction

    # pi/2 to 60 digits, as an exact rational
    pio2 = Fraction("1.57079632679489661923132169163975144209858469968755291048747")
    dt = np.float32 if bits == 32 else np.float64
    pieces = []
    rest = pio2
    for _ in range(3):
        p = float(dt(float(rest)))
        pieces.append(p)
        rest -= Fraction(p)
    return pieces[0], pieces[1], pieces[2]


def pio2_pieces(bits: int) -> tuple[float, float, float]:
    return PIO2_PIECES[bits]


def _sincos_core(fp: Fp, x: ir.Value, shift: int) -> ir.Value:
    b = fp.b
    p1, p2, p3 = pio2_pieces(fp.bits)
    k = fp.rint(fp.mul(x, fp.c(2.0 / math.pi)))
    # x - k P is fma(k, -P, x): the same exact product and one rounding as fma(-k, P, x),
    # without an fneg, which would flip the sign of a NaN k. A NaN x then comes out as
    # itself (quieted) whether or not LLVM optimized the code (the precise copy of a
    # kernel is not optimized: kernels.py), instead of as whichever of NaN x and NaN -k
    # the chosen fma form propagates
    r = fp.fma(k, fp.c(-p1), x)
    r = fp.fma(k, fp.c(-p2), r)
    r = fp.fma(k, fp.c(-p3), r)
    z = fp.mul(r, r)
    s_coef = [(-1) ** n / math.factorial(2 * n + 1) for n in range(1, _SIN_TERMS[fp.bits] + 1)]
    c_coef = [(-1) ** n / math.factorial(2 * n) for n in range(1, _COS_TERMS[fp.bits] + 1)]
    s = fp.fma(fp.mul(r, z), fp.poly(z, s_coef), r)
    c = fp.fma(z, fp.poly(z, c_coef), fp.c(1.0))
    # quadrant from k made finite (inf/NaN/huge lanes give garbage that is replaced)
    small = fp.lt(fp.fabs(x), fp.c(HUGE[fp.bits]))
    q = fp.to_int(fp.sel(small, k, fp.c(0.0)))
    odd = b.trunc(q, ir.IntType(1))
    if shift:
        # quadrant q + 1 without adding 1 (LLVM turns "+ 1" into "- (-1)" with an all-ones
        # vector rematerialized in the loop by vpternlogd, which chains iterations on AMD):
        # bit 0 of q + 1 is not(bit 0 of q), bit 1 is bit 1 xor bit 0 of q
        odd = b.not_(odd)
        neg = b.trunc(b.xor(b.lshr(q, fp.ci(1)), q), ir.IntType(1))
    else:
        neg = b.icmp_unsigned("!=", b.and_(q, fp.ci(2)), fp.ci(0))
    v = fp.sel(odd, c, s)
    return fp.sel(neg, fp.neg(v), v)


def _sin_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    v = _sincos_core(fp, x, 0)
    return fp.sel(fp.eq(x, fp.c(0.0)), x, v)


def _cos_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    return _sincos_core(fp, x, 1)


def huge(fp: Fp, x: ir.Value) -> ir.Value:
    """i1: |x| is finite and beyond the fast reduction's range."""
    ax = fp.fabs(x)
    return fp.b.and_(fp.ge(ax, fp.c(HUGE[fp.bits])), fp.lt(ax, fp.c(math.inf)))


def precise_variant(name: str, fast: ir.Function, flag=None) -> callable:
    """Body of a variant that sends huge lanes (`flag`, default `huge`) to the C library's
    double-precision function (rounded once to f32 for f32)."""

    def body(fp: Fp, args: list[ir.Value]) -> ir.Value:
        (x,) = args
        b = fp.b
        dbl = ir.DoubleType()
        libm = intrinsic(fp.module, name, dbl, [dbl])
        fn = b.function
        slow_bb = fn.append_basic_block("slow")
        fast_bb = fn.append_basic_block("fast")
        done_bb = fn.append_basic_block("done")
        b.cbranch((flag or huge)(fp, x), slow_bb, fast_bb)
        b.position_at_end(slow_bb)
        xd = b.fpext(x, dbl) if fp.bits == 32 else x
        rd = b.call(libm, [xd])
        rs = b.fptrunc(rd, fp.ty) if fp.bits == 32 else rd
        b.branch(done_bb)
        b.position_at_end(fast_bb)
        rf = b.call(fast, [x])
        b.branch(done_bb)
        b.position_at_end(done_bb)
        phi = b.phi(fp.ty)
        phi.add_incoming(rs, slow_bb)
        phi.add_incoming(rf, fast_bb)
        return phi

    return body


def _sfx(ty: ir.Type) -> str:
    return "f32" if str(ty) == "float" else "f64"


def sin_fn(module: ir.Module, ty: ir.Type, precise: bool = False) -> ir.Function:
    fast = define(module, f"ember.sin.{_sfx(ty)}", ty, 1, _sin_body)
    if not precise:
        return fast
    return define(module, f"ember.sin.precise.{_sfx(ty)}", ty, 1, precise_variant("sin", fast))


def cos_fn(module: ir.Module, ty: ir.Type, precise: bool = False) -> ir.Function:
    fast = define(module, f"ember.cos.{_sfx(ty)}", ty, 1, _cos_body)
    if not precise:
        return fast
    return define(module, f"ember.cos.precise.{_sfx(ty)}", ty, 1, precise_variant("cos", fast))
