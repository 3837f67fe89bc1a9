"""Ember's math library for generated code: which function computes each transcendental.

Input: an IRBuilder, an HLO opcode, a float element type and operand values. Output: the
result value, plus (for sin/cos/tan in fast mode) an i1 "argument too large for the fast
reduction" flag the kernel emitter accumulates to decide on a precise rerun.
Every opcode in `VECTORIZED` is our own straight-line (vectorizable) code, defined once per
LLVM module as an alwaysinline function named `ember.<name>.f32|f64`:
  one body for both widths (the type picks constants and polynomial lengths): exp, expm1,
    log (exp_log), sin, cos (trig), logistic, f64 tanh (hyperbolic), exp2, log2, log10,
    log1p (lean_log), sinh, cosh, asinh, acosh, atanh (lean_hyper), the last two groups
    on parts' log and exp in pieces;
  native f32 bodies (`_F32`): tan, atan, atan2, asin, acos (f32/trig.py), cbrt (f32/powers.py),
    tanh (lean_hyper), erf, erfc, erf-inv (f32/special.py); f32 pow (f32/powers.py)
    computes in f64 lanes and rounds once; their f64 bodies: tan, atrig, powers, special.
    pow and (on AVX-512 hosts) f32 erf, log, log2, log10 and log1p look 16-entry tables up
    in registers through a vector variant (vec.py; tables/pow_tables.py,
    tables/erf_tables.py; the division-free f32 log family is f32/log.py, which exp_log
    and lean_log hand f32 to); f32 exp there is a vector variant too (vscalefps on k).
f16 computes in f32 and rounds once.
Shared pieces: core (exp and log with double-double tails, for pow and erf), parts (log
and exp in pieces, lighter), coeffs and coeffs32 (fitted polynomials; fit.py derives them).
The C library is left only on the huge-argument slow path of sin/cos/tan (libm).
The tables name each body as "module:function"; a module is imported by the first kernel
that uses one of its functions (`_resolve`), so `import` of this package stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.libm import LIBM_BINARY, LIBM_UNARY

# opcode -> (helper name, "module:function" of the body). Importing every module up front
# cost ~4 ms of a process's first compile (several derive constants with `fractions`, which
# imports `decimal`), which the fusion example, sin only, need not pay.
_FNS: dict[str, tuple[str, str]] = {
    "exponential": ("exp", "exp_log:exp_fn"),
    "exponential-minus-one": ("expm1", "exp_log:expm1_fn"),
    "log": ("log", "exp_log:log_fn"),
    "log-plus-one": ("log1p", "lean_log:log1p_fn"),
    "tanh": ("tanh", "hyperbolic:tanh_fn"),
    "logistic": ("logistic", "hyperbolic:logistic_fn"),
    "exp2": ("exp2", "lean_log:exp2_fn"),
    "log2": ("log2", "lean_log:log2_fn"),
    "log10": ("log10", "lean_log:log10_fn"),
    "atan": ("atan", "atrig:atan_fn"),
    "atan2": ("atan2", "atrig:atan2_fn"),
    "asin": ("asin", "atrig:asin_fn"),
    "acos": ("acos", "atrig:acos_fn"),
    "sinh": ("sinh", "lean_hyper:sinh_fn"),
    "cosh": ("cosh", "lean_hyper:cosh_fn"),
    "asinh": ("asinh", "lean_hyper:asinh_fn"),
    "acosh": ("acosh", "lean_hyper:acosh_fn"),
    "atanh": ("atanh", "lean_hyper:atanh_fn"),
    "erf": ("erf", "special:erf_fn"),
    "erfc": ("erfc", "special:erfc_fn"),
    "erf-inv": ("erfinv", "special:erfinv_fn"),
    "cbrt": ("cbrt", "powers:cbrt_fn"),
    "power": ("pow", "powers:pow_fn"),
}
# range-reduced functions: (name, "module:function(module, ty, precise)", "module:huge flag")
_REDUCED: dict[str, tuple[str, str, str]] = {
    "sine": ("sin", "trig:sin_fn", "trig:huge"),
    "cosine": ("cos", "trig:cos_fn", "trig:huge"),
    "tan": ("tan", "tan:tan_fn", "tan:huge_flag"),
}
# native f32 bodies (named `ember.<name>.f32`), each "module:function(module)"; for these
# `_FNS` serves f64 only
_F32: dict[str, str] = {
    "atan": "f32.trig:atan_fn", "atan2": "f32.trig:atan2_fn", "asin": "f32.trig:asin_fn",
    "acos": "f32.trig:acos_fn", "cbrt": "f32.powers:cbrt_fn", "power": "f32.powers:pow_fn",
    "tanh": "lean_hyper:tanh32_fn",  # (module, ty) like the two-width bodies
    "erf": "f32.special:erf_fn", "erf-inv": "f32.special:erfinv_fn",
    "erfc": "f32.special:erfc_fn",
}

VECTORIZED: dict[str, str] = {**{k: v[0] for k, v in _FNS.items()},
                              **{k: v[0] for k, v in _REDUCED.items()}}
SCALAR_LIBM: list[str] = sorted(list(LIBM_UNARY) + list(LIBM_BINARY))
MATH_OPCODES: frozenset[str] = frozenset(VECTORIZED) | frozenset(SCALAR_LIBM)



class _CpuMath:
    """The CPU's float math as codegen's `MathEmitter`: what element generators and the
    scalar op table call for a transcendental opcode (ember/codegen/scalar_ops.py)."""

    opcodes = MATH_OPCODES

    def emit(self, b: Any, opcode: str, args: list[Any], precise: bool) -> Any:
        return emit_math(b, opcode, args, precise)


CPU_MATH = _CpuMath()

__all__ = ["CPU_MATH", "MATH_OPCODES", "SCALAR_LIBM", "VECTORIZED", "emit_math"]


def _resolve(spec: str) -> Callable[..., Any]:
    """"module:function" of this package, importing the module on first use."""
    mod, fn = spec.split(":")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), fn)


def emit_math(b: ir.IRBuilder, opcode: str, args: list[ir.Value], precise: bool
              ) -> tuple[ir.Value, ir.Value | None]:
    """`opcode` applied to float `args`; returns (value, huge-argument flag or None)."""
    ty = args[0].type
    if str(ty) == "half":  # compute in f32, round once
        f32 = ir.FloatType()
        v, flag = emit_math(b, opcode, [b.fpext(a, f32) for a in args], precise)
        return b.fptrunc(v, ty), flag
    mod = b.module
    if opcode in _REDUCED:
        _, make, huge = _REDUCED[opcode]
        fn = _resolve(make)(mod, ty, precise)
        flag = None if precise else _resolve(huge)(Fp(b, ty), args[0])
        return b.call(fn, args), flag
    if opcode in _F32 and str(ty) == "float":
        make32 = _resolve(_F32[opcode])
        return b.call(make32(mod, ty) if opcode == "tanh" else make32(mod), args), None
    if opcode in _FNS:
        return b.call(_resolve(_FNS[opcode][1])(mod, ty), args), None
    raise KeyError(opcode)
