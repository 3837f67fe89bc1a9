"""erf, erfc and erf-inv in native f32 arithmetic (straight-line IR: every range computed,
selects pick; 16 lanes per AVX-512 register where the widened double bodies had 8).

Input: a float x. Output: erf(x), erfc(x), erfinv(x) within 3 ulp of the correctly rounded
value, 2 measured (f16 rounds these once more; the double bodies in `special.py` serve f64).

erf(x), AVX-512 hosts (`erf_fn`'s default there): table driven, no branch and no range
  select. a = |x| clamped to 3.92 (inf too; a NaN flows through to the result: its
  vcvttps2dq index is 0x80000000, entry 0, and no select is needed to restore it),
  s = 4a (exact), k = floor(s) in 0..15, u = s - OFF[k] (exact: OFF = 0 for k = 0, else
  k + 1/2 with s in [k, k + 1), so u in [-1/2, 1/2] on the float grid of s), and
    erf(a) = H[k] + (u C[k] + (L[k] + u Qk(u))),
  Qk a polynomial of 6 float coefficients per interval, H + L = erf((k + 1/2)/4) a float
  pair and C = 0 for k >= 1; H = L = 0 and C = float(1/(2 sqrt(pi))) for k = 0, where Q0
  carries the rest of erf(a)/u (its constant the rounding of C): near 0 the result is
  u C with the small u Q0 added in one fma, one rounding. Every Qk is within 2^-27 of the
  result (weighted; tools/fit_erf.py, tables/erf_tables.py), u Qk is at most ~0.3 of the
  result for k >= 1, so its float rounding shows scaled down and the last add rounds once:
  measured within 1.0 ulp of erf over every float in [0.25, 4.1] and a sample below (a
  double reference), monotone over all of them, +-1 from 3.92 on. Each table row is one
  in-register permute (vpermps) per 16 lanes (vec.py's vector variant): 10 lookups, 7 fma
  and a few selects per vector, about half the straight-line body's work (per 1e6 f32,
  one thread: 0.35 -> 0.19 ms). Without AVX-512 the lookups would be gathers, so those
  hosts keep the straight-line body below.
erf(x), straight line (hosts without AVX-512):
a = |x| < 1: erf x = x + x P(z), z = x^2, P the float32 fit of erf(sqrt z)/sqrt z - 1 on
  [0, 1] (coeffs32.ERF_P, error weighted by x/erf(x) under 2^-27). |x P| <= 0.16 |x|, so
  the last add rounds once onto a result whose other errors are below 0.1 ulp; erf(+-0) =
  +-0, subnormal x gives x + (a subnormal product): exact up to that product's rounding.
1 <= a: erf a = 1 - erfc(a), erfc(a) = e^(-a^2) R(a), R the float32 fit of
  erfcx(a) = e^(a^2) erfc(a) in v = a - 5/2 on [1, 3.92] (coeffs32.ERFCX_R, absolute error
  of e^(-a^2) R under 2^-27 after dividing by erf(a) >= 0.84). a is clamped to 3.92 first:
  beyond 3.86, erfc(a) < 2^-25 and 1 - erfc(a) rounds to 1 in float (inf and NaN lanes
  too; NaN is restored at the end). v = a - 5/2 is exact (Sterbenz for a >= 5/4; below, a
  and v share the exponent's grid 2^-23).
  e^(-a^2): s = -a^2 rounds (2^-24 |s| <= 2^-20 absolute), which moves erfc by
  erfc(a) a^2 2^-24 <= 2^-28 for a in [1, 3.92] (largest near a = 1.3): a sixteenth of
  an ulp of the result. k = rint(s log2 e) in [-23, -1], r = s - k ln2 in two fma steps
  (ln2 = hi + lo, hi with 9 trailing zero bits so k hi is exact), e^r by its Taylor
  polynomial through r^7/7! (|r| <= 0.347: truncation 2^-29), times 2^k (a normal
  float, exact).
  1 - e^(-a^2) R: erfc <= 0.158, so its few ulp of float rounding are below 2^-26, and
  the subtraction rounds once. The sign comes back with copysign.
erfc(x): |x| < 1: (1 - x) - x P(x^2) with erf's P: 1 - x = s + e exactly (fast
  two-sum), e - x P by one fma (|x P| <= 0.16, so its rounding is 2^-27 at most), and the
  add to s rounds once: monotone in x where 1 - x rounded first would not be.
  a = |x| >= 1, clamped to [1, 10.1] (beyond 10.1 erfc(a) < 2^-150 rounds to 0):
  erfc(a) = e^(-a^2) F(a), F = erfcx(a) = t Q(t - 1/4), t = 2/(2 + a) (the form of the
  double body), Q = Q0 + v Q1(v), v = t - 1/4 exact, Q1 the float32 fit of
  (Q - Q0)/v on t in [2/12.1, 0.8] (coeffs32.ERFC_Q1, 2^-27 relative), Q0 a float pair.
  F's relative error must stay well under 2^-24 and d log F / d log t reaches ~2, so t's
  own rounding is corrected: d = 1 + a/2 = dh + dl (two-sum), t = fl(1/dh), and
  1/(dh + dl) = t (1 + delta), delta = (1 - t dh) - t dl (fma, exact residual); then
  F(t (1 + delta)) = F(t) + F'(t) t delta with F'(t) = erfcx'(a) da/dt =
  (2aF - 2/sqrt(pi)) (-2/t^2), the correction formed with F to 2^-23 and 1/t ~ dh (it is
  itself ~2^-24 F). F rounds once (t Q0_hi + the rest by fma).
  e^(-a^2) = 2^k (1 + q): a^2 = p + pe exactly (two_prod), k = rint(-p log2 e),
  r = -p - k ln2 - pe (|k| <= 148: k ln2_hi exact), q = r S(r) (Taylor through r^7/7!).
  erfc = ldexp(F + F q, k): one rounding, then exact scaling or one rounding into the
  subnormal range, which no float operation may do here: an operation with a subnormal
  result costs x86 a microcode assist for the whole vector, and erfc over [-10, 10] ran
  3.5x its time over [-4, 4]. So beyond a = 9.17 (erfc < 0.79 2^-125: the result is
  subnormal or in the lowest normal binade, exponent field 1) the scaling is by 2^(k +
  149), in units of the smallest subnormal: w = erfc 2^149 < 2^24, normal; rint(w)
  rounds it to nearest even as the subnormal rounding would (and changes nothing in the
  lowest binade, where w is already an integer), and that integer is the result's bit
  pattern (the lowest binade's and 2^23, the smallest normal, included). Below -9.17,
  2 - erfc is 2. x <= -1: 2 - erfc(a) (<= 0.16 subtracted from 2, one rounding).
erf-inv(x), a = |x| < 1: w = -log((1 - a)(1 + a)) with the f32 log body (1 - a exact for
  a >= 1/2; the product's rounding moves w by 2^-24 absolute, which moves A below by
  A'(w)/A 2^-24 <= 2^-26 relative). w <= 6.25: y = a (A0 + w A1(w)); beyond: y = a (B0 +
  v B1(v)), v = sqrt(w) - 13/4 (exact: sqrt(w) in [2.5, 4] for float a < 1, Sterbenz);
  A1, B1 the float32 fits of (A - A0)/w and (B - B0)/v (coeffs32.ERFINV_A1/B1, 2^-27
  relative to y), A0 = sqrt(pi)/2 and B0 as float pairs hi + lo: a (hi + (lo + v C)) is
  one fma on a small product, so the large constant is not rounded to float on its own
  (that alone would cost 2^-25). The log's and sqrt's half-ulp errors reach y scaled by
  d log y / d log w <= 1/2. erfinv(+-1) = +-inf, |x| > 1 or NaN -> NaN, erfinv(+-0) = +-0.
Method: ordinary range splitting with a polynomial for the small range and the scaled
complementary function for the large one (as in any libm's erf); the coefficients are our
own near-minimax fits from tools/fit.py (`fit32`).
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.exp_log import LN2, LOG2E, log_fn
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.tables import coeffs32
from ember.backends.cpu.mathlib.tables import erf_tables as T
from ember.backends.cpu.mathlib.vec import (
    Lookup,
    define_with_variant,
    permute_tables,
    trunc_to_int,
)

F32 = ir.FloatType()
ERF_ONE = 3.92  # erf(a) rounds to 1 in float beyond ~3.86; the ERFCX_R fit ends here
ERFCX_SHIFT = 2.5  # ERFCX_R is a polynomial in a - 2.5
EXP_TERMS = 8  # e^r through r^7/7!
ERFC_MID = 1.0  # |x| below: erfc x = (1 - x) - x P(x^2)
ERFC_ZERO = 10.1  # erfc(a) < 2^-150 beyond: rounds to 0; the ERFC_Q1 fit ends here
ERFC_TINY = 9.17  # erfc(a) < 0.79 2^-125 beyond (and 2^-126 at 9.1945): see erfc
ERFINV_SPLIT = 6.25  # w beyond: the polynomial in sqrt(w)
ERFINV_SHIFT = 3.25  # ERFINV_B1 is a polynomial in sqrt(w) - 3.25


def exp_neg(fp: Fp, s: ir.Value) -> ir.Value:
    """e^s for s in [-16, 0] (float), the result normal: 2^k e^r, k = rint(s / ln2)."""
    hi, lo = LN2[32]
    k = fp.rint(fp.mul(s, fp.c(LOG2E)))
    r = fp.fma(fp.neg(k), fp.c(hi), s)
    r = fp.fma(fp.neg(k), fp.c(lo), r)
    p = fp.poly(r, [1.0 / math.factorial(n) for n in range(EXP_TERMS)])
    return fp.mul(p, fp.pow2i(fp.to_int(k)))


def _erf_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    small = fp.fma(x, fp.poly(fp.mul(x, x), coeffs32.ERF_P), x)
    ac = fp.sel(fp.lt(a, fp.c(ERF_ONE)), a, fp.c(ERF_ONE))  # inf, NaN -> 3.92
    ac = fp.sel(fp.gt(ac, fp.c(1.0)), ac, fp.c(1.0))
    erfc = fp.mul(exp_neg(fp, fp.neg(fp.mul(ac, ac))),
                  fp.poly(fp.sub(ac, fp.c(ERFCX_SHIFT)), coeffs32.ERFCX_R))
    large = fp.copysign(fp.sub(fp.c(1.0), erfc), x)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, large)
    return fp.sel(fp.isnan(x), x, res)


def _erfc_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    # |x| < 1: 1 - x = s + e exactly (fast two-sum: |x| < 1), then s + (e - x P)
    s, e = fp.fast_two_sum(one, fp.neg(x))
    mid = fp.add(s, fp.fma(fp.neg(x), fp.poly(fp.mul(x, x), coeffs32.ERF_P), e))
    ac = fp.sel(fp.lt(a, fp.c(ERFC_ZERO)), a, fp.c(ERFC_ZERO))  # inf, NaN -> 10.1
    ac = fp.sel(fp.gt(ac, fp.c(ERFC_MID)), ac, fp.c(ERFC_MID))
    # e^(-a^2) = 2^k e^r: a^2 = p + pe exactly, r = -p - k ln2 - pe
    p, pe = fp.two_prod(ac, ac)
    hi, lo = LN2[32]
    k = fp.rint(fp.mul(fp.neg(p), fp.c(LOG2E)))
    r = fp.fma(fp.neg(k), fp.c(hi), fp.neg(p))
    r = fp.sub(fp.fma(fp.neg(k), fp.c(lo), r), pe)
    q = fp.mul(r, fp.poly(r, [1.0 / math.factorial(n) for n in range(1, EXP_TERMS)]))
    # t = 1/d, d = 1 + a/2 = dh + dl; t (1 + delta) = 1/(dh + dl) to 2^-46
    dh, dl = fp.two_sum(one, fp.mul(ac, fp.c(0.5)))
    t = fp.div(one, dh)
    delta = fp.fma(fp.neg(t), dl, fp.fma(fp.neg(t), dh, one))
    # F = t (Q0 + v Q1(v)), v = t - 1/4 (exact), Q0 = hi + lo
    inner = fp.fma(fp.sub(t, fp.c(0.25)), fp.poly(fp.sub(t, fp.c(0.25)), coeffs32.ERFC_Q1),
                   fp.c(coeffs32.ERFC_Q0[1]))
    f1 = fp.mul(t, fp.add(fp.c(coeffs32.ERFC_Q0[0]), inner))  # F to ~2^-23
    # F(t (1 + delta)) = F(t) + F'(t) t delta, F' = erfcx'(a) da/dt
    # = (2aF - 2/sqrt(pi)) (-2/t^2), and 1/t = dh to 2^-24 (the term is ~2^-24 F)
    g = fp.fma(fp.mul(ac, fp.c(2.0)), f1, fp.c(-2.0 / math.sqrt(math.pi)))
    low = fp.fma(fp.mul(fp.mul(delta, dh), fp.c(-2.0)), g, fp.mul(t, inner))
    f = fp.fma(t, fp.c(coeffs32.ERFC_Q0[0]), low)  # the one rounding of F
    # F e^r 2^k, e^r = 1 + q; beyond ERFC_TINY in units of the smallest subnormal
    tiny = fp.gt(ac, fp.c(ERFC_TINY))
    ki = fp.b.add(fp.to_int(k), fp.b.select(tiny, fp.ci(149), fp.ci(0)))
    w = fp.ldexp(fp.fma(f, q, f), ki)
    pos = fp.sel(tiny, fp.from_bits(fp.to_int(fp.rint(w))), w)
    neg = fp.sub(fp.c(2.0), fp.sel(tiny, fp.c(0.0), w))  # x <= -ERFC_TINY: 2 exactly
    res = fp.sel(fp.lt(x, fp.c(0.0)), neg, pos)
    res = fp.sel(fp.lt(a, fp.c(ERFC_MID)), mid, res)
    return fp.sel(fp.isnan(x), x, res)


def _scaled(fp: Fp, a: ir.Value, v: ir.Value, c0: tuple[float, float],
            coeffs: list[float]) -> ir.Value:
    """a (c0 + v C(v)) with c0 = hi + lo: a hi + a (lo + v C), rounded by the last fma."""
    inner = fp.fma(v, fp.poly(v, coeffs), fp.c(c0[1]))
    return fp.fma(a, fp.c(c0[0]), fp.mul(a, inner))


def _erfinv_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    ok = fp.lt(a, one)
    prod = fp.sel(ok, fp.mul(fp.sub(one, a), fp.add(one, a)), one)
    w = fp.neg(fp.b.call(log_fn(fp.b.module, F32), [prod]))
    ya = _scaled(fp, a, w, coeffs32.ERFINV_A0, coeffs32.ERFINV_A1)
    v = fp.sub(fp.sqrt(w), fp.c(ERFINV_SHIFT))
    yb = _scaled(fp, a, v, coeffs32.ERFINV_B0, coeffs32.ERFINV_B1)
    y = fp.sel(fp.le(w, fp.c(ERFINV_SPLIT)), ya, yb)
    res = fp.copysign(y, x)
    res = fp.sel(fp.eq(a, one), fp.copysign(fp.c(math.inf), x), res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)
    bad = fp.b.or_(fp.gt(a, one), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def _erf_table_body(fp: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
    """erf by 16 polynomials in u = 4a - OFF[k], k = floor(4a) (see the module docstring)."""
    (x,) = args
    a = fp.fabs(x)
    # inf -> 3.92; NaN passes (the ordered compare is false) and flows through to the
    # result: vcvttps2dq gives NaN the index 0x80000000 (entry 0; LLVM's fptosi would be
    # poison, hence no fptosi), and every later operation keeps it NaN
    s = fp.mul(fp.sel(fp.gt(a, fp.c(ERF_ONE)), fp.c(ERF_ONE), a), fp.c(4.0))
    k = trunc_to_int(fp, s)  # floor: s >= 0; 15 at most (4 * 3.92 < 16)

    def tab(name: str, values: list[float]) -> ir.Value:
        return lookup(fp, name, values, k)

    u = fp.sub(s, tab("erf_off", T.ERF_OFF))  # exact (module docstring)
    q = tab(f"erf_q{len(T.ERF_Q) - 1}", T.ERF_Q[-1])
    for j in range(len(T.ERF_Q) - 2, -1, -1):
        q = fp.fma(q, u, tab(f"erf_q{j}", T.ERF_Q[j]))
    low = fp.fma(u, tab("erf_c", T.ERF_C), fp.fma(u, q, tab("erf_l", T.ERF_L)))
    return fp.copysign(fp.add(tab("erf_h", T.ERF_H), low), x)


def erf_fn(module: ir.Module, permute: bool | None = None) -> ir.Function:
    """`ember.erf.f32`: the table-driven body where the host has AVX-512 (`permute`
    default), the straight-line one elsewhere (its lookups would be gathers there)."""
    if permute is None:
        permute = permute_tables()
    if permute:
        return define_with_variant(module, "erf", F32, 1, _erf_table_body, True)
    return define(module, "ember.erf.f32", F32, 1, _erf_body)



def erfinv_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erfinv.f32", F32, 1, _erfinv_body)


def erfc_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erfc.f32", F32, 1, _erfc_body)
