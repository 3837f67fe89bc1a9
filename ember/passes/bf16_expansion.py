"""bfloat16 expansion: every bf16 computation runs in float32, rounded back after each op.

Input: a Module (every computation: entry, fusions not yet made, combiners, comparators).
Output: the module where no instruction computes on bfloat16 values any more, only moves
them. For an elementwise opcode `op` that computes (everything but convert,
bitcast-convert, select and copy) with a bf16 operand or result:
  op(x: bf16, y: bf16) -> bf16   =>   convert_bf16(op(convert_f32(x), convert_f32(y)) -> f32)
  compare(x: bf16, y: bf16) -> pred   =>   compare(convert_f32(x), convert_f32(y)) -> pred
and iota -> bf16 => convert_bf16(iota -> f32). bf16 constants read by such an op are
converted here (no runtime convert).
This is XLA's CPU treatment of bf16 (JAX 0.10.2's `jit(lambda x: x * 3 + 1)` on bf16 keeps
the `convert(convert(mul))` pair between the ops): each op's result is rounded to bf16 once,
so compiled values equal eager ones bit for bit for correctly rounded ops (f32 has more than
2 * 8 + 2 significand bits, so an f32 add, multiply, divide or sqrt of bf16 values rounded to
bf16 is the correctly rounded bf16 result). The CPU code generator keeps bf16 values as
their 16 bits in registers and memory and only converts them (codegen/convert.py); after
this pass it never sees bf16 arithmetic.
Invariants: shapes and element types of every value visible outside an instruction are
unchanged; run after float normalization (its f32 reduces and dots stay as they are) and
before fusion (the converts fuse into the loops around the op, so a bf16 chain is as many
kernels as the same chain in f32).
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape
from ember.passes.base import HloPass
from ember.passes.float_normalization import convert_to

BF16, F32 = "bf16", "f32"
# elementwise opcodes that only move bf16 bits (the code generator handles them on bits)
_MOVES = frozenset({"convert", "bitcast-convert", "select", "copy"})


def _uses_bf16(inst: Instruction) -> bool:
    return (not inst.shape.is_tuple and inst.shape.element_type == BF16) or any(
        not o.shape.is_tuple and o.shape.element_type == BF16 for o in inst.operands)


def _to_f32(comp: Computation, x: Instruction, md: dict,
            made: dict[Instruction, Instruction]) -> Instruction:
    """x in f32 for one reader: a constant converted here, else a convert of its own (not
    shared among readers: a convert read by one op fuses into that op's loop, where a
    shared one would be a kernel and an f32 buffer of its own)."""
    if x.opcode == "constant":
        return convert_to(comp, x, F32, md)
    if x not in made:
        made[x] = comp.add_instruction(Instruction(
            "convert", Shape(F32, x.shape.dimensions, x.shape.layout), [x],
            metadata=dict(md)))
    return made[x]


def _widen(comp: Computation, inst: Instruction) -> None:
    """Replace `inst` by its f32 twin between converts (module docstring)."""
    md = inst.metadata
    made: dict[Instruction, Instruction] = {}
    operands = [_to_f32(comp, o, md, made) if o.shape.element_type == BF16 else o
                for o in inst.operands]
    out = inst.shape
    wide_shape = Shape(F32, out.dimensions, out.layout) if out.element_type == BF16 else out
    wide = comp.add_instruction(Instruction(
        inst.opcode, wide_shape, operands, dict(inst.attrs), list(inst.called_computations),
        metadata=dict(md)))
    if wide_shape is out:
        comp.replace_instruction(inst, wide)
        return
    comp.replace_instruction(inst, Instruction("convert", out, [wide], metadata=dict(md)))


def _needs_widening(inst: Instruction) -> bool:
    if inst.opcode == "iota":
        return inst.shape.element_type == BF16
    return (inst.is_elementwise() and inst.opcode not in _MOVES and inst.opcode != "map"
            and _uses_bf16(inst))


def _has_bf16(comp: Computation) -> bool:
    """Whether some value of `comp` is a bf16 array (every operand `_needs_widening` looks
    at is an instruction of the same computation): else there is nothing to widen."""
    for inst in comp.instructions:
        if inst.shape.element_type == BF16:
            return True
    return False


def has_bf16_arithmetic(module: Module) -> bool:
    """Whether some instruction of `module` still computes on bf16 (the pass did not run)."""
    return any(_has_bf16(c) and any(_needs_widening(i) for i in c.instructions)
               for c in module.computations)


class Bf16Expansion(HloPass):
    """Rewrites bf16 arithmetic to f32 between converts (module docstring)."""

    name = "bf16-expansion"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            if not _has_bf16(comp):
                continue
            here = False
            for inst in comp.post_order():
                if _needs_widening(inst):
                    _widen(comp, inst)
                    here = True
            if here:  # (bf16 constants only the widened ops read)
                comp.remove_dead()
                changed = True
        return changed


__all__ = ["Bf16Expansion", "has_bf16_arithmetic"]
