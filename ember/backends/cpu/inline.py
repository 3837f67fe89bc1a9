"""Inlining of `call` instructions in the entry computation (the CPU backend has no call
kernels): `call(a, b), to_apply=%f => f's body on a, b`.

Input: a Module. Output: the module with every entry `call` replaced by a copy of its
callee's instructions (nested calls are inlined too, innermost last); returns whether
anything changed. Callee computations left uncalled are dropped.
"""

from __future__ import annotations

from ember.hlo.ir import Instruction, Module


def inline_calls(module: Module) -> bool:
    entry = module.entry
    changed = False
    while True:
        calls = [i for i in entry.post_order() if i.opcode == "call"]
        if not calls:
            break
        for call in calls:
            callee = call.to_apply
            mapping: dict[Instruction, Instruction] = {}
            for inst in callee.post_order():
                if inst.opcode == "parameter":
                    mapping[inst] = call.operands[inst.parameter_number]
                    continue
                clone = Instruction(inst.opcode, inst.shape,
                                    [mapping[o] for o in inst.operands], dict(inst.attrs),
                                    list(inst.called_computations), dict(inst.metadata),
                                    inst.name)
                mapping[inst] = entry.add_instruction(clone)
            call.replace_all_uses_with(mapping[callee.root])
        entry.remove_dead()
        changed = True
    if changed:
        module.remove_dead_computations()
    return changed
