"""Float normalization: float16 and bfloat16 sums and products accumulate in float32.

Input: a Module (every computation). Output: the module where, for T = f16 or bf16,
  reduce(x: T, init: T, add or multiply over T)
    => convert_T(reduce(convert_f32(x), convert_f32(init), the same op over f32))
  dot(x: T, y: T) -> T
    => convert_T(dot(convert_f32(x), convert_f32(y)) -> f32)
  dot(x: T, y: T) -> f32
    => dot(convert_f32(x), convert_f32(y)) -> f32
The accumulation type is hlo/accumulation.py's, the definition the evaluator's reduce and
dot (and so eager mode and the interpreter) follow: this pass writes it out for a code
generator that accumulates in the element type, as XLA's CPU backend widens these ops.
Max/min/and/or reductions, variadic reductions and reductions with any other combiner are
left alone (exact in any type, or not a plain sum). Run before fusion, so the converts fuse
into the loops that read and write the widened op.
Invariant: the result's shape and type are unchanged; under the evaluator its values are
the same bits (the evaluator accumulates in float32 already).
"""

from __future__ import annotations

import numpy as np

from ember.hlo.accumulation import WIDENED_OPS, accumulation_type
from ember.hlo.builder import Builder
from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape, numpy_dtype
from ember.passes.base import HloPass

_REDUCE_OR_DOT = frozenset({"reduce", "dot"})


def convert_to(comp: Computation, x: Instruction, element_type: str,
             metadata: dict) -> Instruction:
    """x in `element_type`: a constant converted here, else a (shared) convert of x (also
    bf16_expansion's)."""
    shape = Shape(element_type, x.shape.dimensions, x.shape.layout)
    if x.opcode == "constant":
        value = np.asarray(x.value).astype(numpy_dtype(element_type))
        value.setflags(write=False)
        return comp.add_instruction(Instruction("constant", shape, attrs={"value": value}))
    for user in x.users:  # (one convert per value and type, for every reader)
        if user.opcode == "convert" and user.shape == shape and user.parent is comp:
            return user
    return comp.add_instruction(Instruction("convert", shape, [x], metadata=dict(metadata)))


def _widened_combiner(module: Module, op: str, element_type: str) -> Computation:
    """(p0: f32[], p1: f32[]) -> op(p0, p1): a new combiner in the accumulation type."""
    b = Builder(f"{op}.{element_type}")
    scalar = Shape(element_type, ())
    p0, p1 = b.parameter(scalar), b.parameter(scalar)
    return module.add_computation(b.build_computation(b.op(op, (p0, p1))))


def _widen_reduce(module: Module, comp: Computation, red: Instruction) -> bool:
    if len(red.operands) != 2 or red.shape.is_tuple:
        return False
    et = red.shape.element_type
    acc = accumulation_type(et)
    op = plain_binary_opcode(red.to_apply)
    if acc == et or op not in WIDENED_OPS:
        return False
    x, init = red.operands
    md = red.metadata
    wide = comp.add_instruction(Instruction(
        "reduce", Shape(acc, red.shape.dimensions, red.shape.layout),
        [convert_to(comp, x, acc, md), convert_to(comp, init, acc, md)], dict(red.attrs),
        [_widened_combiner(module, op, acc)], metadata=dict(md)))
    comp.replace_instruction(red, Instruction(
        "convert", red.shape, [wide], metadata=dict(md)))
    return True


def _widen_dot(comp: Computation, dot: Instruction) -> bool:
    x, y = dot.operands
    et = x.shape.element_type
    acc = accumulation_type(et)
    if acc == et or y.shape.element_type != et:
        return False
    out = dot.shape.element_type
    md = dot.metadata
    xs, ys = convert_to(comp, x, acc, md), convert_to(comp, y, acc, md)
    if out == acc:  # (the product already asks for the wide type: widen its operands)
        dot.replace_operand(0, xs)
        dot.replace_operand(1, ys)
        return True
    if accumulation_type(out) != acc:
        return False
    wide = comp.add_instruction(Instruction(
        "dot", Shape(acc, dot.shape.dimensions, dot.shape.layout), [xs, ys], dict(dot.attrs),
        metadata=dict(md)))
    comp.replace_instruction(dot, Instruction("convert", dot.shape, [wide],
                                              metadata=dict(md)))
    return True


class FloatNormalization(HloPass):
    """Widens float16/bfloat16 add/multiply reductions and dots to float32 accumulation
    (module docstring)."""

    name = "float-normalization"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            if not comp.holds(_REDUCE_OR_DOT):  # (the only opcodes it rewrites)
                continue
            here = False
            for inst in comp.post_order():
                if inst.opcode == "reduce":
                    here |= _widen_reduce(module, comp, inst)
                elif inst.opcode == "dot":
                    here |= _widen_dot(comp, inst)
            if here:  # (narrow constants nothing reads any more)
                comp.remove_dead()
                changed = True
        if changed:  # (the narrow combiners nothing calls any more)
            module.remove_dead_computations()
        return changed


__all__ = ["FloatNormalization"]
