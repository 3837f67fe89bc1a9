"""Inlining of the entry computation's `call`s, for backends without call kernels (the CPU).

Rewrite: `call(a, b), to_apply=%f => f's body on a, b` (nested calls too, innermost last:
an inlined body's own calls are inlined on the next round). Input: a Module. Output: the
module with no `call` in its entry; callee computations left uncalled are dropped. The
copies keep the callee's instruction names, so kernels are named after the user's code.
"""

from __future__ import annotations

from ember.hlo.ir import Module
from ember.passes.base import HloPass


class CallInlining(HloPass):
    name = "call-inlining"

    def run(self, module: Module) -> bool:
        entry = module.entry
        changed = False
        while calls := [i for i in entry.post_order() if i.opcode == "call"]:
            # (imported only for a module with calls: a first compile loads no more code)
            from ember.passes.inlining import inline_computation

            for call in calls:
                root = inline_computation(entry, call.to_apply, call.operands, keep_names=True)
                call.replace_all_uses_with(root)
            entry.remove_dead()
            changed = True
        if changed:
            module.remove_dead_computations()
        return changed
