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


def call(fp: Fp, fn: ir.Function, *args: ir.Value) -> ir.Value:
    return fp.b.call(fn, list(args))
