"""Constant folding: evaluate, at compile time, instructions whose operands are constants.

Input: a Module. Output: the module with such instructions replaced by `constant`s computed
by the NumPy evaluator (so folding is bit-identical to running the module).
Rewrites: `op(constant, ..., constant) => constant`;
`op(constant, broadcast(scalar constant)) => constant` where at least one operand is a
constant that is not a broadcast scalar (a staged fix-up of a constant index array,
`select(lt(c, 0), add(c, n), c)`, folds; the result is no larger than that constant).
Not folded, to keep modules small and fusion-friendly:
- a broadcast of a scalar to more than one element (it stays a broadcast however big;
  one element is folded: a staged static index, `x.at[2]`, must reach the
  scatter-to-dynamic-update-slice rewrite as a constant);
- any result with more than MAX_FOLD_ELEMENTS elements (a big iota stays an iota);
- tuple-shaped results, parameters, constants, custom-calls, and control flow
  (while, conditional, call) whose bodies may be large.
"""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import HANDLERS, EvaluationError
from ember.hlo.ir import Instruction, Module
from ember.passes.base import HloPass

MAX_FOLD_ELEMENTS = 1024  # results larger than this stay as the instruction that makes them

_NEVER = {"parameter", "constant", "custom-call", "while", "conditional", "call", "tuple",
          "opt-barrier"}


def _scalar_broadcast(inst: Instruction) -> bool:
    return (inst.opcode == "broadcast" and inst.operand.opcode == "constant"
            and inst.operand.shape.rank == 0)


def foldable(inst: Instruction) -> bool:
    if inst.opcode in _NEVER or inst.shape.is_tuple:
        return False
    constants = 0
    for o in inst.operands:  # (a loop, not all() of a generator: asked of every op)
        if o.opcode == "constant":
            constants += 1
        elif not _scalar_broadcast(o):
            return False
    if constants == 0 and inst.operands:
        return False  # (only broadcast scalars: folding would grow them into full arrays)
    if inst.shape.size > MAX_FOLD_ELEMENTS:
        return False
    if inst.opcode == "broadcast" and inst.operand.shape.rank == 0 and inst.shape.size > 1:
        return False
    return True


def _value(inst: Instruction) -> np.ndarray:
    """An operand's value: a constant's, or a broadcast scalar's, expanded."""
    if inst.opcode == "constant":
        return inst.value
    return HANDLERS["broadcast"](inst, [inst.operand.value])


class ConstantFolding(HloPass):
    name = "constant-folding"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            for inst in comp.post_order():
                if inst.parent is not comp or not foldable(inst):
                    continue
                try:
                    with np.errstate(all="ignore"):
                        value = HANDLERS[inst.opcode](inst, [_value(o) for o in inst.operands])
                except (EvaluationError, KeyError):
                    continue
                value = np.array(value, dtype=inst.shape.dtype, copy=True)
                value.setflags(write=False)
                const = Instruction("constant", inst.shape.without_layout(), (),
                                    {"value": value}, metadata=dict(inst.metadata))
                comp.add_instruction(const)
                comp.replace_instruction(inst, const)
                changed = True
            changed |= comp.remove_dead()
        return changed
