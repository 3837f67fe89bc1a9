"""Inlining one computation into another: `call(args), to_apply=%f => f's body on args`.

Input: the computation to add to, the callee, and one operand per callee parameter (in the
caller). Output: the instruction in the caller that computes the callee's root (an operand
itself when the callee returns a parameter). The callee is not modified (it may be called
elsewhere); nested computations the callee calls are shared, not copied.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember.hlo.ir import Computation, Instruction


def inline_computation(comp: Computation, callee: Computation,
                       args: Sequence[Instruction], *, keep_names: bool = False) -> Instruction:
    """Copy `callee`'s instructions into `comp` on `args`; returns the copy of its root.
    `keep_names`: the copies take the callee's instruction names (kernel names then follow
    the user's function in the entry), else fresh ones."""
    mapping: dict[Instruction, Instruction] = {}
    for inst in callee.post_order():
        if inst.opcode == "parameter":
            mapping[inst] = args[inst.parameter_number]
            continue
        copy = Instruction(inst.opcode, inst.shape, [mapping[o] for o in inst.operands],
                           dict(inst.attrs), list(inst.called_computations),
                           dict(inst.metadata), inst.name if keep_names else None)
        mapping[inst] = comp.add_instruction(copy)
    assert callee.root is not None
    return mapping[callee.root]
