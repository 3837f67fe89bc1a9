"""The HLO verifier: structural and type checks over a whole module.

Input: a Module. Output: None, or `VerificationError` listing every problem found.
Checks: known opcodes and operand counts; each instruction's shape equals shape inference
(layouts ignored); operand/user lists mirror each other and stay inside the computation;
post order valid (every operand defined before use, no cycles) with the root present;
parameters numbered 0..n-1 without gaps or duplicates; names unique in the module;
called computations belong to the module and are themselves well-typed.
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape_inference import ShapeError, infer_shape

# Opcodes whose result shape is (partly) chosen by the producer, not the operands.
_HINTED = {"parameter", "custom-call", "broadcast", "reshape", "convert", "bitcast-convert",
           "iota", "dot", "convolution"}


class VerificationError(ValueError):
    pass


def _check_instruction(inst: Instruction, comp: Computation, module_comps: set[Computation],
                       errors: list[str]) -> None:
    where = f"%{comp.name}/%{inst.name}"
    row = OPCODES.get(inst.opcode)
    if row is None:
        errors.append(f"{where}: unknown opcode {inst.opcode}")
        return
    if row.arity is not None and len(inst.operands) != row.arity:
        errors.append(f"{where}: {inst.opcode} takes {row.arity} operands, "
                      f"has {len(inst.operands)}")
        return
    for op in inst.operands:
        if op.parent is not comp:
            errors.append(f"{where}: operand %{op.name} is not in this computation")
        if inst not in op.users:
            errors.append(f"{where}: missing from the users of operand %{op.name}")
    for user in inst.users:
        if inst not in user.operands:
            errors.append(f"{where}: lists %{user.name} as a user, but it is not one")
        if user.parent is not comp:
            errors.append(f"{where}: user %{user.name} is outside the computation")
    if len(set(map(id, inst.users))) != len(inst.users):
        errors.append(f"{where}: duplicate entries in the user list")
    for c in inst.called_computations:
        if c not in module_comps:
            errors.append(f"{where}: calls %{c.name}, which is not in the module")
    try:
        hint = inst.shape if inst.opcode in _HINTED else None
        want = infer_shape(inst.opcode, [o.shape for o in inst.operands], inst.attrs,
                           inst.called_computations, hint)
    except (ShapeError, KeyError, IndexError, TypeError) as e:
        errors.append(f"{where}: {e}")
        return
    if not want.compatible(inst.shape):
        errors.append(f"{where}: shape {inst.shape} but inference gives {want}")


def verify_computation(comp: Computation, module_comps: set[Computation],
                       errors: list[str]) -> None:
    if comp.root is None:
        errors.append(f"%{comp.name}: no root")
        return
    if comp.root not in comp:
        errors.append(f"%{comp.name}: root %{comp.root.name} is not in the computation")
    numbers = sorted(p.parameter_number for p in comp.parameters)
    if numbers != list(range(len(numbers))):
        errors.append(f"%{comp.name}: parameters numbered {numbers}, want 0..{len(numbers) - 1}")
    order = comp.post_order()
    if len(order) != len(comp):
        errors.append(f"%{comp.name}: post order reaches instructions outside the computation")
    pos = {inst: k for k, inst in enumerate(order)}
    for inst in order:
        for op in inst.operands:
            if op in pos and pos[op] >= pos[inst]:
                errors.append(f"%{comp.name}: cycle through %{inst.name}")
        if inst in comp:
            _check_instruction(inst, comp, module_comps, errors)


def verify(module: Module) -> None:
    """Raise VerificationError if `module` is malformed."""
    errors: list[str] = []
    comps = module.computations
    comp_set = set(comps)
    names: set[str] = set()
    for comp in comps:
        verify_computation(comp, comp_set, errors)
        for inst in comp.instructions:
            if inst.name in names:
                errors.append(f"%{comp.name}: duplicate instruction name %{inst.name}")
            names.add(inst.name)
    if errors:
        raise VerificationError(f"module {module.name} failed verification:\n  "
                                + "\n  ".join(errors))
