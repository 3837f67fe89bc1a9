"""Dead code elimination.

Input: a Module. Output: the module without instructions that do not reach their
computation's root (parameters stay) and without computations nothing calls.
Rewrite: `unused(x) => (removed)`. All opcodes are treated as side-effect free.
"""

from __future__ import annotations

from ember.hlo.ir import Module
from ember.passes.base import HloPass


class DeadCodeElimination(HloPass):
    name = "dce"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            changed |= comp.remove_dead()
        changed |= module.remove_dead_computations()
        return changed
