"""log and log1p in pieces and exp with a tail, in the working precision (f32 or f64).

Input: an `Fp` (float or double) and values of its type. Output: pieces whose sum carries
a few bits more than the type, so the functions built on them (log2, log10, log1p, asinh,
acosh, atanh, sinh, cosh, exp2) round about once at the end. Straight-line IR (selects
only); no double-double through the polynomials, unlike `core` (which pow and erf need):
f32 code runs 16 lanes per AVX-512 register, f64 code a lighter body on 8.

log_parts(x) -> (e, hi, lo), log(x) = e ln2 + hi + lo, for finite x > 0:
  x = 2^e m, m in [sqrt(2)/2, sqrt(2)) (subnormals scaled by 2^mbits+1 first), f = m - 1
  exact. With s = f / (2 + f) (so 1 - s = 2 / (2 + f)), z = s^2:
    log(1 + f) = 2 atanh(s) = 2s + s R(z),  R(z) = 2z/3 + 2z^2/5 + 2z^3/7 + ...
    2s = f - (f^2/2)(1 - s)      (since (f^2/2)(1 - s) = f^2 / (2 + f) = f - 2s)
  so log(1 + f) = f - hf + s (hf + R) with hf = f^2/2 (the fdlibm arrangement: the big
  term f is exact). hf = hh + hl exactly (hh = fl(f/2 * f), hl by fma); hi = fl(f - hh),
  and its rounding error d = (f - hi) - hh is exact (f - hi by Sterbenz: hh <= 0.21 |f|;
  d is the error of a sum, representable), so lo = (d - hl) + s (hh + R) (s hl dropped:
  below 2^-p hh s). |s| <= 0.1716, z <= 0.02944: R's first dropped term relative to the
  result is z^(n+1) / (2n+3): n = 4 gives 2^-36 (f32), n = 10 gives 2^-60 (f64). s rounds
  twice (2 + f and the division), an error of 2^-p+1 on a term that is at most z/2 ~ 1.5%
  of the result: 2^-p-5.
log1p_parts(u, c) -> (e, hi, lo), log(u + c) for normal u > 0 and |c| a few ulp of u at most
  (u = fl(1 + t), c the exact error of that sum, plus any tail of t): the same with
  u = 2^e (1 + f) and c' = c 2^-e entering as log(1 + f + c') ~ log(1 + f) + c' / (1 + f),
  where 1 / (1 + f) = (1 - s) / (1 + s) ~ (1 - s)^2 (1 + z) (relative error <= s^4 < 2^-10,
  on a term of a few ulp of the result).
combine(e, hi, lo, E, C) = e E + (hi + lo) C rounded about once, with E = (EH, EL), EH with
  trailing zero bits so e EH is exact, C = (CH, CL): ph = fl(hi CH) and its exact error
  by fma; e EH + ph is a fast two-sum (|e EH| >= |ph| whenever e != 0), the small terms
  are added to its error and the sum rounds once.

exp_parts(x) -> (k, q), e^x = 2^k (1 + q), for |x| <= 104 (f32) or 745 (f64): k = rint(x/ln2),
  r = x - k LN2_HI exact (Sterbenz), then r - k LN2_LO as rh + rl (the product's error by
  fma, the difference's by a fast two-sum). e^rh - 1 = rh + rh^2 Q(rh): f32, Q is
  coeffs32.EXPM1_Q (a float32 near-minimax fit on |r| <= 0.35, see fit.py); f64, Q is the
  Taylor series through r^11/13! (first dropped term r^14/14! = 2^-57.7 at ln2/2). With
  e^(rh + rl) = e^rh (1 + rl), q = q0 + rl (1 + q0).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import LN2_F, LN2_HI, LN2_LO, split
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs32


def _f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def split32(value: Fraction, bits: int = 24) -> tuple[float, float]:
    """(hi, lo) floats: hi = value rounded to `bits` significant bits (float32 when <= 24),
    lo = the rest rounded to float32."""
    m, e = math.frexp(float(value))
    hi = math.ldexp(round(m * 2.0 ** bits) / 2.0 ** bits, e)
    return _f32(hi), _f32(float(value - Fraction(hi)))


def split_for(bits: int, value: Fraction, exact_mul: bool = False) -> tuple[float, float]:
    """`value` as two floats of the type (`bits` 32 or 64); with `exact_mul`, hi has few
    enough significant bits that an exponent (|e| < 2^8 f32, 2^21 f64) times it is exact."""
    if bits == 32:
        return split32(value, 16 if exact_mul else 24)
    return split(value, 21 if exact_mul else 0)


LN2_32 = split32(LN2_F, 16)  # e * LN2_HI exact for |e| < 2^8 (f32 exponents incl. scaling)
LN2_PAIR = {32: LN2_32, 64: (LN2_HI, LN2_LO)}
LOG_R = {32: [2.0 / (2 * j + 1) for j in range(1, 5)],  # R(z) = z (2/3 + 2z/5 + ...)
         64: [2.0 / (2 * j + 1) for j in range(1, 11)]}
EXPM1_Q = {32: coeffs32.EXPM1_Q, 64: [1.0 / math.factorial(j) for j in range(2, 14)]}
LOG2E = float(1 / LN2_F)
_SQRT_HALF_BITS = {32: 0x3F3504F3, 64: 0x3FE6A09E667F3BCD}  # sqrt(2)/2, rounded down


def _unpack(fp: Fp, x: ir.Value, subnormals: bool) -> tuple[ir.Value, ir.Value]:
    """(e as a float, f = m - 1) with x = 2^e m, m in [sqrt(2)/2, sqrt(2))."""
    b = fp.b
    if subnormals:
        sub = fp.lt(x, fp.c(2.0 ** (1 - fp.bias)))
        x = fp.sel(sub, fp.mul(x, fp.c(2.0 ** (fp.mbits + 1))), x)
    # subtracting the bits of sqrt(2)/2 makes the exponent field step up exactly at
    # m = sqrt(2) (the musl trick); m is then rebuilt from the remaining bits
    base = fp.ci(_SQRT_HALF_BITS[fp.bits])
    ix = fp.b.sub(fp.to_bits(x), base)
    e = b.ashr(ix, fp.ci(fp.mbits))
    m = fp.from_bits(b.add(b.and_(ix, fp.ci((1 << fp.mbits) - 1)), base))
    ef = b.sitofp(e, fp.ty)
    if subnormals:
        ef = fp.add(ef, fp.sel(sub, fp.c(-(fp.mbits + 1.0)), fp.c(0.0)))
    return ef, fp.sub(m, fp.c(1.0))


def _log1p_f(fp: Fp, f: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """(hi, lo, s, z) with log(1 + f) = hi + lo for f = m - 1, m in [sqrt(2)/2, sqrt(2))."""
    s = fp.div(f, fp.add(fp.c(2.0), f))
    z = fp.mul(s, s)
    r = fp.mul(z, fp.poly(z, LOG_R[fp.bits]))
    half_f = fp.mul(fp.c(0.5), f)
    hh = fp.mul(half_f, f)
    hl = fp.fma(half_f, f, fp.neg(hh))
    hi = fp.sub(f, hh)
    d = fp.sub(fp.sub(f, hi), hh)
    lo = fp.fma(s, fp.add(hh, r), fp.sub(d, hl))
    return hi, lo, s, z


def log_parts(fp: Fp, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(e, hi, lo): log(x) = e ln2 + hi + lo for finite x > 0 (other lanes: garbage)."""
    ef, f = _unpack(fp, x, True)
    hi, lo, _, _ = _log1p_f(fp, f)
    return ef, hi, lo


def log1p_parts(fp: Fp, u: ir.Value, c: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(e, hi, lo): log(u + c) = e ln2 + hi + lo for normal u > 0, |c| a few ulp of u."""
    b = fp.b
    ef, f = _unpack(fp, u, False)
    hi, lo, s, z = _log1p_f(fp, f)
    # c' = c 2^-e (exact); e capped at 100 so 2^-e stays normal (beyond, c' is negligible)
    e = fp.to_int(ef)
    e = b.select(b.icmp_signed(">", e, fp.ci(100)), fp.ci(100), e)
    cs = fp.mul(c, fp.pow2i(b.neg(e)))
    w = fp.sub(fp.c(1.0), s)
    inv = fp.mul(fp.mul(w, w), fp.add(fp.c(1.0), z))  # ~ 1 / (1 + f)
    return ef, hi, fp.fma(cs, inv, lo)


def combine(fp: Fp, ef: ir.Value, hi: ir.Value, lo: ir.Value,
            e_mul: tuple[float, float], c_mul: tuple[float, float] | None) -> ir.Value:
    """ef E + (hi + lo) C, rounded about once (E = e_mul, C = c_mul or 1)."""
    if c_mul is None:
        ph, pl = hi, lo
    else:
        ch, cl = fp.c(c_mul[0]), fp.c(c_mul[1])
        ph = fp.mul(hi, ch)
        pl = fp.add(fp.fma(hi, ch, fp.neg(ph)), fp.fma(hi, cl, fp.mul(lo, ch)))
    eh = fp.mul(ef, fp.c(e_mul[0]))  # exact
    s, err = fp.fast_two_sum(eh, ph)
    rest = fp.add(err, pl)
    if e_mul[1]:
        rest = fp.fma(ef, fp.c(e_mul[1]), rest)
    return fp.add(s, rest)


def log_of(fp: Fp, u: ir.Value, c: ir.Value) -> ir.Value:
    """log(u + c) rounded about once, for normal u > 0 and |c| a few ulp of u."""
    ef, hi, lo = log1p_parts(fp, u, c)
    return combine(fp, ef, hi, lo, LN2_PAIR[fp.bits], None)


def exp_parts(fp: Fp, x: ir.Value, tail: bool = True) -> tuple[ir.Value, ir.Value]:
    """(k as ity, q): e^x = 2^k (1 + q) for finite |x| <= 104 (f32) or 745 (f64).
    `tail=False` drops rl (r rounds once: e^x then has ~2^-p-1 relative error, enough where
    the caller's result damps it, as tanh's 2 / (e^2a + 1) does)."""
    hi, lo = LN2_PAIR[fp.bits]
    k = fp.rint(fp.mul(x, fp.c(LOG2E)))
    nk = fp.neg(k)
    r1 = fp.fma(nk, fp.c(hi), x)  # exact
    if not tail:
        r = fp.fma(nk, fp.c(lo), r1)
        return fp.to_int(k), fp.fma(fp.mul(r, r), fp.poly(r, EXPM1_Q[fp.bits]), r)
    t = fp.mul(k, fp.c(lo))
    tl = fp.fma(k, fp.c(lo), fp.neg(t))
    rh = fp.sub(r1, t)
    rl = fp.sub(fp.sub(fp.sub(r1, rh), t), tl)
    q0 = fp.fma(fp.mul(rh, rh), fp.poly(rh, EXPM1_Q[fp.bits]), rh)
    q = fp.add(q0, fp.fma(rl, q0, rl))
    return fp.to_int(k), q
