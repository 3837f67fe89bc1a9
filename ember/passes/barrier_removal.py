"""Removal of optimization barriers inside called computations, once the passes they
fence have run (the CPU's).

Rewrite, in every computation but the entry: `get-tuple-element(opt-barrier(tuple(a, b)),
i) => (a, b)[i]` (through a barrier on any other tuple value: `=> get-tuple-element(t,
i)`). Input: a Module. Output: the module with `opt-barrier` only in its entry. Run after
the hardware-independent simplification, whose common-subexpression elimination the
barriers exist to stop (prims/barrier.py); no later pass merges equal computations. The
entry keeps its barriers: the schedule reads them as views of their operands (no kernel)
and so runs what reads a barrier after everything the barrier reads, which keeps a
checkpoint's recomputation in the backward pass instead of hoisted into the forward one.
Loop and branch bodies are scheduled by their own plans, which do not know barriers.
"""

from __future__ import annotations

from ember.hlo.ir import Instruction, Module
from ember.passes.base import HloPass


def _element(fenced: Instruction, index: int) -> Instruction | None:
    tup = fenced.operands[0]
    return tup.operands[index] if tup.opcode == "tuple" else None


class OptimizationBarrierRemoval(HloPass):
    name = "barrier-removal"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            if comp is module.entry:
                continue
            for inst in comp.post_order():
                if inst.opcode != "opt-barrier":
                    continue
                for user in list(inst.users):
                    if user.opcode == "get-tuple-element":
                        element = _element(inst, user.attrs["index"])
                        if element is not None:
                            user.replace_all_uses_with(element)
                            changed = True
                if inst.users or inst is comp.root:  # a whole-tuple use: pass it through
                    inst.replace_all_uses_with(inst.operands[0])
                    changed = True
            comp.remove_dead()
        return changed
