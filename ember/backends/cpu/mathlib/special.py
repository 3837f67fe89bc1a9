"""erf, erfc, erf-inv in f64 (straight-line IR on doubles). The dispatcher sends f32 (and
f16) to the native bodies in f32/special.py; these bodies still take a `prec` ("f32":
polynomials sized for a widened float, coeffs.*_F32) as `define_math` asks.

erf(x), a = |x| < 1: x + x P(x^2), P the fitted erf(sqrt z)/sqrt z - 1 on [0, 1]
  (coeffs.ERF_P_*; the -1 keeps the large constant 2/sqrt(pi) - 1 = 0.128 small, so its
  rounding costs 2^-56). a >= 1: sign(x) (1 - erfc(a)), erfc(a) <= 0.157.
erfc(x): x <= -1/2: 2 - erfc(-x); |x| < 1/2: (1 - x) - x P(x^2) with 1 - x a two-sum;
  x >= 1/2: erfc_pos.
erfc_pos(a), a >= 1/2 (clamped to 28: erfc(27.3) underflows to 0):
  erfc(a) = e^(-a^2) F(a), F = e^(a^2) erfc(a).
  e^(-a^2): a^2 = p + pe exactly (two_prod), exp_core(-p, -pe) = 2^k (1 + q).
  a <= 6.4: F = t Q(t - 1/4), t = 2/(2 + a) as a double-double (th, tl), Q the fitted
    erfc(x) e^(x^2) / t on t in [0.238, 0.8] (coeffs.ERFC_Q_*); its last Horner step is a
    two_prod + two-sum with c0 = c0_hi + c0_lo, so Q carries a tail too.
  a > 6.4: F = G(u) / (a sqrt(pi)), u = 1/a^2, G the fitted 1 - u/2 + 3u^2/4 - ... on
    [0, 1/6.4^2] (coeffs.ERFC_G_*); 1/a and 1/sqrt(pi) as double-doubles.
  Result: 2^k (Fh + fma(Fh, q, Fl)): one rounding, then exact scaling (or one rounding
  into the subnormal range). erf and erf-inv skip the a > 6.4 branch (erf rounds to 1
  there; erf-inv's y stays below 5.9).
erf-inv(x), a = |x| < 1: w = -log((1 - a)(1 + a)) (1 - a is exact for a >= 1/2; the log is
  parts' lighter one: y0 needs w to ~2^-30 only), y0 = a A(w) for w <= 6.25 and a B(sqrt w)
  beyond (coeffs.ERFINV_A/B: erfinv(x)/x fitted to 2^-27 relative, w up to 37 = x as close
  to 1 as a double gets). (prec "f32" would round y0; float has its own body.)
  f64 takes one Halley step on f(y) = erf(y) - a, f' = 2/sqrt(pi) e^(-y^2), f''/f' = -2y:
  d = f / f', y1 = y0 - d / (1 + y0 d); error 2^-27 -> ~2^-80 (cubic). The residual is
  formed without cancellation: for y < 1, erf(y) = y + y P as a two-sum minus a (exact
  when close); for y >= 1, f = (1 - a) - erfc(y) (1 - a exact). e^(-y^2) = 2^k (1 + q) is
  computed once (core.exp_core of -y^2 as a two_prod pair): erfc(y) uses it, and
  e^(y^2) = 2^-k / (1 + q) (one division; d needs only ~2^-30).
  erfinv(+-1) = +-inf, |x| > 1 or NaN -> NaN, erfinv(+-0) = +-0.
"""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.core import exp_core, split
from ember.backends.cpu.mathlib.define import define_math
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.parts import LN2_PAIR, combine, log_parts
from ember.backends.cpu.mathlib.tables import coeffs

INV_SQRTPI = split(Fraction("0.56418958354775628694807945156077258584405062932899885684408572"))
ERFC_SPLIT = 6.4


def _c(name: str, prec: str | None = None) -> list[float]:
    return getattr(coeffs, name if prec is None else f"{name}_{prec.upper()}")


def erf_small(fp: Fp, x: ir.Value, prec: str) -> tuple[ir.Value, ir.Value]:
    """(h, l): erf(x) = h + l for |x| <= 1, h = x."""
    z = fp.mul(x, x)
    return x, fp.mul(x, fp.poly(z, _c("ERF_P", prec)[:-1]))


def erfc_pos(fp: Fp, a: ir.Value, prec: str, far: bool = True,
             kq: tuple[ir.Value, ir.Value] | None = None) -> ir.Value:
    """erfc(a) for a >= 1/2 (NaN lanes: garbage). `far=False` drops the a > 6.4 branch
    (for callers whose lanes beyond it are discarded); `kq` is e^(-a^2) = 2^k (1 + q) when
    the caller has it already."""
    a = fp.sel(fp.lt(a, fp.c(28.0)), a, fp.c(28.0))
    a = fp.sel(fp.gt(a, fp.c(0.5)), a, fp.c(0.5))
    if kq is None:
        p, pe = fp.two_prod(a, a)
        kq = exp_core(fp, fp.neg(p), fp.neg(pe), prec)
    k, q = kq
    # a <= 6.4: t Q(t - 1/4)
    dh, dl = fp.two_sum(fp.c(2.0), a)
    th = fp.div(fp.c(2.0), dh)
    tl = fp.div(fp.sub(fp.fma(fp.neg(th), dh, fp.c(2.0)), fp.mul(th, dl)), dh)
    v = fp.sub(th, fp.c(0.25))
    qc = _c("ERFC_Q", prec)
    r = fp.poly(v, qc[1:-1])
    ph, pl = fp.two_prod(v, r)
    qh, ql = fp.two_sum(fp.c(qc[0]), ph)
    ql = fp.add(ql, fp.add(pl, fp.c(qc[-1])))
    f1h, f1l = fp.two_prod(th, qh)
    f1l = fp.add(f1l, fp.fma(th, ql, fp.mul(tl, qh)))
    if not far:
        return fp.ldexp(fp.add(f1h, fp.fma(f1h, q, f1l)), k)
    # a > 6.4: G(u) / (a sqrt(pi))
    ra = fp.div(fp.c(1.0), a)
    ral = fp.div(fp.fma(fp.neg(ra), a, fp.c(1.0)), a)
    u = fp.mul(ra, ra)
    gc = _c("ERFC_G", prec)
    gh, gl = fp.fast_two_sum(fp.c(gc[0]), fp.mul(u, fp.poly(u, gc[1:-1])))
    sh, sl = fp.two_prod(ra, fp.c(INV_SQRTPI[0]))
    sl = fp.add(sl, fp.fma(ra, fp.c(INV_SQRTPI[1]), fp.mul(ral, fp.c(INV_SQRTPI[0]))))
    f2h, f2l = fp.two_prod(sh, gh)
    f2l = fp.add(f2l, fp.fma(sh, gl, fp.mul(sl, gh)))
    near = fp.le(a, fp.c(ERFC_SPLIT))
    fh = fp.sel(near, f1h, f2h)
    fl = fp.sel(near, f1l, f2l)
    return fp.ldexp(fp.add(fh, fp.fma(fh, q, fl)), k)


def _erf_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    h, lo = erf_small(fp, x, prec)
    small = fp.add(h, lo)
    # beyond 6.4, erfc(a) < 2^-63 and 1 - erfc rounds to 1 in either width: no far branch
    large = fp.copysign(fp.sub(fp.c(1.0), erfc_pos(fp, a, prec, far=False)), x)
    res = fp.sel(fp.lt(a, fp.c(1.0)), small, large)
    return fp.sel(fp.isnan(x), x, res)


def _erfc_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    h, lo = erf_small(fp, x, prec)
    oh, ol = fp.two_sum(fp.c(1.0), fp.neg(h))
    mid = fp.add(oh, fp.sub(ol, lo))
    pos = erfc_pos(fp, a, prec)
    res = fp.sel(fp.lt(x, fp.c(0.0)), fp.sub(fp.c(2.0), pos), pos)
    res = fp.sel(fp.lt(a, fp.c(0.5)), mid, res)
    return fp.sel(fp.isnan(x), x, res)


def _poly_c0(fp: Fp, x: ir.Value, cs: list[float]) -> ir.Value:
    return fp.poly(x, cs[:-1])


def _erfinv_body(fp: Fp, args: list[ir.Value], prec: str) -> ir.Value:
    (x,) = args
    a = fp.fabs(x)
    one = fp.c(1.0)
    om = fp.sub(one, a)
    ok = fp.lt(a, one)
    prod = fp.sel(ok, fp.mul(om, fp.add(one, a)), one)
    ef, hi, lo = log_parts(fp, prod)
    w = fp.neg(combine(fp, ef, hi, lo, LN2_PAIR[64], None))
    ya = fp.mul(a, _poly_c0(fp, w, _c("ERFINV_A")))
    yb = fp.mul(a, _poly_c0(fp, fp.sqrt(w), _c("ERFINV_B")))
    y = fp.sel(fp.le(w, fp.c(6.25)), ya, yb)
    if prec == "f64":
        p, pe = fp.two_prod(y, y)
        k, q = exp_core(fp, fp.neg(p), fp.neg(pe), prec)  # e^(-y^2) = 2^k (1 + q)
        h, lo = erf_small(fp, y, prec)
        f_small = fp.add(fp.sub(h, a), lo)
        f_large = fp.sub(om, erfc_pos(fp, y, prec, far=False, kq=(k, q)))
        f = fp.sel(fp.lt(y, one), f_small, f_large)
        # d = f / f'(y) = f (sqrt(pi)/2) e^(y^2); 2^-k is exact (y^2 <= 35)
        d = fp.div(fp.mul(fp.mul(f, fp.c(math.sqrt(math.pi) / 2)), fp.pow2i(fp.b.neg(k))),
                   fp.add(one, q))
        y = fp.sub(y, fp.div(d, fp.fma(y, d, one)))
    res = fp.copysign(y, x)
    res = fp.sel(fp.eq(a, one), fp.copysign(fp.c(math.inf), x), res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), x, res)
    bad = fp.b.or_(fp.gt(a, one), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), res)


def erf_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "erf", ty, 1, _erf_body)


def erfc_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "erfc", ty, 1, _erfc_body)


def erfinv_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define_math(module, "erfinv", ty, 1, _erfinv_body)
