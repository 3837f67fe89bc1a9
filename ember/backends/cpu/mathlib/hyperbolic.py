"""tanh and logistic in f32 and f64 from expm1 and exp (vectorizable IR).

tanh(x) = sign(x) * e / (e + 2) with e = expm1(2|x|): no cancellation for small |x|
(expm1 keeps full relative precision) and e / (e + 2) -> 1 for large |x|; 2|x| is capped
at 40 (e^40 is finite in f32 and tanh is 1 to working precision long before), NaN passes
through the cap (a select on `>`), copysign keeps tanh(-0) = -0. Error: e (1-2 ulp), e + 2
and the division (0.5 ulp each): a few ulp.

logistic(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 with e = exp(-|x|), so
neither branch overflows (the interpreter's formula, evaluated the same way).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import call, define
from ember.backends.cpu.mathlib.exp_log import exp_fn, expm1_fn
from ember.backends.cpu.mathlib.fp import Fp


def _tanh_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    y = fp.mul(fp.c(2.0), fp.fabs(x))
    y = fp.sel(fp.gt(y, fp.c(40.0)), fp.c(40.0), y)
    e = call(fp, expm1_fn(fp.module, fp.ty), y)
    t = fp.div(e, fp.add(e, fp.c(2.0)))
    return fp.copysign(t, x)


def _logistic_body(fp: Fp, args: list[ir.Value]) -> ir.Value:
    (x,) = args
    e = call(fp, exp_fn(fp.module, fp.ty), fp.neg(fp.fabs(x)))
    d = fp.add(fp.c(1.0), e)
    pos = fp.div(fp.c(1.0), d)
    neg = fp.div(e, d)
    return fp.sel(fp.ge(x, fp.c(0.0)), pos, neg)


def _sfx(ty: ir.Type) -> str:
    return "f32" if str(ty) == "float" else "f64"


def tanh_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define(module, f"ember.tanh.{_sfx(ty)}", ty, 1, _tanh_body)


def logistic_fn(module: ir.Module, ty: ir.Type) -> ir.Function:
    return define(module, f"ember.logistic.{_sfx(ty)}", ty, 1, _logistic_body)
