"""Transcendentals that still call the C library's scalar double functions (correct, slow:
the loop around them does not vectorize), and erf-inv, which libm lacks.

f32 (and f16) arguments are widened to double and the result rounded once, so results are
within an ulp of the true value. `LIBM_UNARY`/`LIBM_BINARY` are the lists the benchmark
prints as "not vectorized yet".

erf-inv(x) in double: start from Winitzki's closed form (relative error ~2e-3)
  y0 = sign(x) sqrt(sqrt(t^2 + w/a) - t),  w = -ln(1 - x^2),  t = 2/(pi a) - w/2,  a = 0.147
then three Halley steps on f(y) = erf(y) - x, with f' = 2/sqrt(pi) e^(-y^2), f''/f' = -2y:
  d = f / f',  y <- y - d / (1 + y d)   (cubic convergence: 2e-3 -> 1e-8 -> 1e-24).
erf-inv(+-1) = +-inf, |x| > 1 or NaN gives NaN, erf-inv(+-0) = +-0.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.fp import Fp, intrinsic

LIBM_UNARY: dict[str, str] = {
    "tan": "tan", "cbrt": "cbrt", "erf": "erf", "erfc": "erfc", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "exp2": "exp2", "log2": "log2", "log10": "log10",
}
LIBM_BINARY: dict[str, str] = {"power": "pow", "atan2": "atan2"}

_DBL = ir.DoubleType()


def libm_call(b: ir.IRBuilder, cname: str, args: list[ir.Value]) -> ir.Value:
    fn = intrinsic(b.module, cname, _DBL, [_DBL] * len(args))
    if "nounwind" not in fn.attributes:
        fn.attributes.add("nounwind")
    return b.call(fn, args)


def _erfinv_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    b = fp.b
    a = 0.147
    one = fp.c(1.0)
    w = fp.neg(libm_call(b, "log", [fp.mul(fp.sub(one, x), fp.add(one, x))]))
    t = fp.sub(fp.c(2.0 / (math.pi * a)), fp.mul(fp.c(0.5), w))
    inner = fp.sqrt(fp.add(fp.mul(t, t), fp.div(w, fp.c(a))))
    y = fp.copysign(fp.sqrt(fp.sub(inner, t)), x)
    for _ in range(3):
        f = fp.sub(libm_call(b, "erf", [y]), x)
        fprime = fp.mul(fp.c(2.0 / math.sqrt(math.pi)),
                        libm_call(b, "exp", [fp.neg(fp.mul(y, y))]))
        d = fp.div(f, fprime)
        y = fp.sub(y, fp.div(d, fp.fma(y, d, one)))
    ax = fp.fabs(x)
    y = fp.sel(fp.eq(ax, one), fp.copysign(fp.c(math.inf), x), y)
    y = fp.sel(fp.eq(x, fp.c(0.0)), x, y)
    bad = b.or_(fp.gt(ax, one), fp.isnan(x))
    return fp.sel(bad, fp.c(math.nan), y)


def erfinv_fn(module: ir.Module) -> ir.Function:
    return define(module, "ember.erfinv.f64", _DBL, 1, _erfinv_body, inline=False)
