"""Defining math helpers once per LLVM module.

Input: a module, a name like `ember.exp.f32`, a type and a body builder. Output: an internal
function marked alwaysinline (so after inlining the loop vectorizer sees straight-line code
it can widen) and free of memory effects.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.fp import Fp


def define(module: ir.Module, name: str, ty: ir.Type, nargs: int,
           body: Callable[[Fp, list[ir.Value]], ir.Value], *, inline: bool = True
           ) -> ir.Function:
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), name=name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline" if inline else "noinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(Fp(b, ty), list(fn.args)))
    return fn


MathBody = Callable[[Fp, list[ir.Value], str], ir.Value]


def suffix(ty: ir.Type) -> str:
    return "f32" if str(ty) == "float" else "f64"


def define_math(module: ir.Module, base: str, ty: ir.Type, nargs: int, body: MathBody,
                *, inline: bool = True, prec32: str = "f32") -> ir.Function:
    """`ember.<base>.f32|f64` from a double-precision body `body(fp64, args, prec)`.

    f64 runs the body with prec "f64". f32 widens its arguments to double (exactly), runs the
    body with prec `prec32` (polynomials sized for ~2^-32 relative error) and rounds the
    result to float once: f32 subnormal inputs are normal doubles, and overflow/underflow of
    the f32 result happen in that single rounding.
    """

    def wrapped(fp: Fp, args: list[ir.Value]) -> ir.Value:
        if fp.bits == 64:
            return body(fp, args, "f64")
        dbl = ir.DoubleType()
        wide = [fp.b.fpext(a, dbl) for a in args]
        return fp.b.fptrunc(body(Fp(fp.b, dbl), wide, prec32), fp.ty)

    return define(module, f"ember.{base}.{suffix(ty)}", ty, nargs, wrapped, inline=inline)


def call(fp: Fp, fn: ir.Function, *args: ir.Value) -> ir.Value:
    return fp.b.call(fn, list(args))
