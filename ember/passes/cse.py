"""Common subexpression elimination.

Input: a Module. Output: the module where, within each computation, instructions with the
same opcode, shape, operands, attributes and called computations are merged into the
first one. Constants merge when their dtype, shape and bytes agree (so 0.0 and -0.0 stay
apart, and NaNs merge only with the same payload). Operands of commutative opcodes are
compared as a set-ordered pair: `add(a, b)` and `add(b, a)` merge (exact under IEEE).
Rewrite: `f(a, b); f(a, b) => f(a, b)`. Parameters never merge, and neither do side effects
(`custom_call_has_side_effect=true` custom-calls, loops and branches holding one: two
identical prints must both print).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.hlo.ir import Computation, Instruction, Module, has_side_effect
from ember.hlo.opcodes import COMMUTATIVE
from ember.passes.base import HloPass


def _freeze(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return (str(v.dtype), v.shape, v.tobytes())
    if isinstance(v, list | tuple):
        return tuple([_freeze(x) for x in v])
    return v


def instruction_key(inst: Instruction) -> tuple:
    ops = [id(o) for o in inst.operands]
    if len(ops) == 2 and inst.opcode in COMMUTATIVE:
        ops.sort()
    # (lists, not generators, and nothing built for empty attributes or callees: a key is
    # made for every instruction of every computation, twice per compile)
    a = inst.attrs
    attrs = tuple(sorted([(k, _freeze(v)) for k, v in a.items()])) if a else ()
    called = inst.called_computations
    return (inst.opcode, inst.shape, tuple(ops), attrs,
            tuple([id(c) for c in called]) if called else ())


def cse_computation(comp: Computation) -> bool:
    seen: dict[tuple, Instruction] = {}
    changed = False
    for inst in comp.post_order():
        if inst.opcode == "parameter" or inst.parent is not comp or has_side_effect(inst):
            continue
        key = instruction_key(inst)
        first = seen.get(key)
        if first is None:
            seen[key] = inst
            continue
        inst.replace_all_uses_with(first)
        if inst is not comp.root:
            comp.remove_instruction(inst)
        changed = True
    return changed


class CommonSubexpressionElimination(HloPass):
    name = "cse"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            changed |= cse_computation(comp)
        return changed
