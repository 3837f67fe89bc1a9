"""Ember's math library for generated code: which function computes each transcendental.

Input: an IRBuilder, an HLO opcode, a float element type and operand values. Output: the
result value, plus (for sin/cos in fast mode) an i1 "argument too large for the fast
reduction" flag the kernel emitter accumulates to decide on a precise rerun.
Vectorized (our polynomial code, `VECTORIZED`): exp, expm1, log, log1p, sin, cos, tanh,
logistic in f32 and f64 (f16 computes in f32). Everything in `libm.LIBM_UNARY` and
`LIBM_BINARY` calls the C library per element; erf-inv is Newton on libm's erf.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import exp_log, hyperbolic, trig
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.libm import LIBM_BINARY, LIBM_UNARY, erfinv_fn, libm_call

VECTORIZED: dict[str, str] = {
    "exponential": "exp", "exponential-minus-one": "expm1", "log": "log",
    "log-plus-one": "log1p", "sine": "sin", "cosine": "cos", "tanh": "tanh",
    "logistic": "logistic",
}
_FNS = {
    "exponential": exp_log.exp_fn, "exponential-minus-one": exp_log.expm1_fn,
    "log": exp_log.log_fn, "log-plus-one": exp_log.log1p_fn, "tanh": hyperbolic.tanh_fn,
    "logistic": hyperbolic.logistic_fn,
}
SCALAR_LIBM: list[str] = sorted(list(LIBM_UNARY) + list(LIBM_BINARY) + ["erf-inv"])
MATH_OPCODES: frozenset[str] = frozenset(VECTORIZED) | frozenset(SCALAR_LIBM)

__all__ = ["MATH_OPCODES", "SCALAR_LIBM", "VECTORIZED", "emit_math"]


def emit_math(b: ir.IRBuilder, opcode: str, args: list[ir.Value], precise: bool
              ) -> tuple[ir.Value, ir.Value | None]:
    """`opcode` applied to float `args`; returns (value, huge-argument flag or None)."""
    ty = args[0].type
    if str(ty) == "half":  # compute in f32, round once
        f32 = ir.FloatType()
        v, flag = emit_math(b, opcode, [b.fpext(a, f32) for a in args], precise)
        return b.fptrunc(v, ty), flag
    mod = b.module
    if opcode in ("sine", "cosine"):
        make = trig.sin_fn if opcode == "sine" else trig.cos_fn
        fn = make(mod, ty, precise)
        flag = None if precise else trig.huge(Fp(b, ty), args[0])
        return b.call(fn, args), flag
    if opcode in _FNS:
        return b.call(_FNS[opcode](mod, ty), args), None
    dbl = ir.DoubleType()
    wide = [a if str(ty) == "double" else b.fpext(a, dbl) for a in args]
    if opcode == "erf-inv":
        r = b.call(erfinv_fn(mod), wide)
    elif opcode in LIBM_UNARY:
        r = libm_call(b, LIBM_UNARY[opcode], wide)
    elif opcode in LIBM_BINARY:
        r = libm_call(b, LIBM_BINARY[opcode], wide)
    else:
        raise KeyError(opcode)
    return (r if str(ty) == "double" else b.fptrunc(r, ty)), None
