"""The rewrite of the fusion pass: a group of instructions becomes one fusion instruction.

Input: a module, the computation holding the group, its roots and members, and the
computation's post order from before any group was replaced. Output: `build_fusion`
adds `%fusion = T fusion(%in...), kind=kLoop|kInput|kOutput, calls=%fused_computation`
(several roots: a tuple-shaped multi-output fusion whose users read get-tuple-element)
and routes the roots' users to it; `control_flow_computations` lists the computations
whose code is fused (the entry and what its loops, branches and calls run).
Invariants: the fused computation's parameters are the group's inputs in first-use
order of the members in post order; the members left behind die unless something
outside the group still reads them (the caller removes the dead).
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape


def control_flow_computations(module: Module) -> list[Computation]:
    """The entry, then (depth first) every computation a while, conditional or call in
    them runs."""
    out: list[Computation] = []
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        if comp in out:
            continue
        out.append(comp)
        for inst in comp.instructions:
            if inst.opcode in ("while", "conditional", "call"):
                stack.extend(reversed(inst.called_computations))
    return out


def build_fusion(module: Module, comp: Computation, roots: list[Instruction],
                  members: list[Instruction], pos: dict[Instruction, int]) -> Instruction:
    """Replace the group by a fusion instruction (several roots: a tuple-shaped multi-output
    fusion whose users read get-tuple-element); returns it. `pos`: the post order of `comp`
    before any group was replaced (still an order of the members: replacing a group only
    cuts edges into its root; one walk for all groups, not one per group)."""
    member_set = set(members)
    fused = Computation("fused_computation", module.uniquer)
    fused.name = module.uniquer.fresh("fused_computation")
    fused.is_fusion_computation = True
    inputs: list[Instruction] = []
    mapping: dict[Instruction, Instruction] = {}
    # Members in post order restricted to the group: operands before users.
    order = sorted(member_set, key=pos.__getitem__)
    for inst in order:
        new_ops = []
        for o in inst.operands:
            if o in member_set:
                new_ops.append(mapping[o])
                continue
            if o not in mapping:
                k = len(inputs)
                inputs.append(o)
                param = Instruction("parameter", o.shape, (), {"parameter_number": k},
                                    name=f"param_{k}")
                mapping[o] = fused.add_instruction(param)
            new_ops.append(mapping[o])
        attrs = dict(inst.attrs)
        clone = Instruction(inst.opcode, inst.shape, new_ops, attrs,
                            list(inst.called_computations), dict(inst.metadata), inst.name)
        mapping[inst] = fused.add_instruction(clone)
    root = roots[0]
    if len(roots) == 1:
        fused.root = mapping[root]
        shape = root.shape
    else:
        shape = Shape.tuple_of([r.shape for r in roots])
        fused.root = fused.add_instruction(Instruction(
            "tuple", shape, [mapping[r] for r in roots], {}, name="tuple"))
    module.add_computation(fused, fresh_name=True)
    kind = ("kOutput" if any(m.opcode == "dot" for m in members) else
            "kInput" if any(m.opcode == "reduce" for m in members) else "kLoop")
    fusion = Instruction("fusion", shape, inputs, {"kind": kind}, [fused],
                         dict(root.metadata), "fusion")
    comp.add_instruction(fusion)
    if len(roots) == 1:
        root.replace_all_uses_with(fusion)
    else:
        for k, r in enumerate(roots):
            gte = comp.add_instruction(Instruction("get-tuple-element", r.shape, [fusion],
                                                   {"index": k}, name="get-tuple-element"))
            r.replace_all_uses_with(gte)
    return fusion


__all__ = ["build_fusion", "control_flow_computations"]
