"""Which operands a kernel may overwrite with its result (the in-place rule of buffer assignment).

Input: a scheduled entry instruction (a fusion or a lone op). Output: the operand positions
whose buffers the kernel's single array result may be written over, when those operands die
in this kernel (buffer_assignment.py decides that part).
A kernel may write out[i] over operand a only if it reads a at index i alone, and reads it
before writing out[i]: every path from a to the result goes through elementwise operations
of the result's shape (no broadcast, slice, transpose, reduce or gather, which read other
indices), and a's elements are as wide as the result's (a wider result element would
overwrite operand elements not read yet). Kernels that may run their loop nest twice are
excluded: sin, cos and tan raise a "huge argument" flag in the fast pass and then rerun the
whole nest in precise mode, re-reading every input (kernels.py `with_precise_rerun`).
Reductions and products never write in place, and a multi-output fusion's result never
takes an operand's memory in the entry's buffer assignment. Inside a loop body (loops_native
.py) one may write some of its outputs into the arrays they update (`in_place_outputs`):
output j a dynamic-update-slice of parameter p, p read by nothing but output j's own
instructions (the update, in its window: hlo/window_reads.py) and by no other output. Its
kernel then runs output by output (emit/update_slice.py), so the outputs written earlier
never change a value a later output reads.
A lone scatter or dynamic-update-slice may write over its operand 0 (the array it
updates): its result is that array with some elements replaced, so in place it only writes
those elements (scatter.py, update_slice.py skip the copy when the two buffers are one). So
may a kLoop fusion rooted at a dynamic-update-slice (its update computed by the fused
producers) over the parameter it updates, when nothing else in the fusion reads it.
Its updates and indices are other instructions, hence other buffers (a buffer the kernel
reads does not die before it), so no write can change a value the kernel reads later.
"""

from __future__ import annotations

from ember.hlo.ir import Instruction
from ember.hlo.shape import memory_order
from ember.hlo.window_reads import RERUN_OPCODES, reads_only_its_window

# Lone ops whose result is operand 0 with some elements replaced.
UPDATES_OPERAND_0: frozenset[str] = frozenset({"scatter", "dynamic-update-slice"})


def _same_elements(a: Instruction, out: Instruction) -> bool:
    return (not a.shape.is_tuple and a.shape.dimensions == out.shape.dimensions
            and a.shape.dtype.itemsize == out.shape.dtype.itemsize
            # element i at the same offset in both: layout assignment may lay them out apart
            and memory_order(a.shape) == memory_order(out.shape))


def _pointwise_users(comp) -> dict[Instruction, bool]:
    """For each instruction of the fused computation `comp`: is every use chain from it to
    the root elementwise over the root's dimensions? One walk, users first (a walk from
    each parameter made a kernel of n parameters chained to its root cost n^2)."""
    root = comp.root
    through: dict[Instruction, bool] = {}  # the instruction passes, and so do its users
    out: dict[Instruction, bool] = {}
    for inst in reversed(comp.post_order()):
        users_ok = all(through.get(u, False) for u in inst.users)
        out[inst] = users_ok
        through[inst] = (inst.is_elementwise() and inst.opcode not in RERUN_OPCODES
                         and not inst.shape.is_tuple
                         and inst.shape.dimensions == root.shape.dimensions
                         and (inst is root or users_ok))
    return out


def _updated_parameter(comp) -> Instruction | None:
    """The parameter a fused computation rooted at a dynamic-update-slice updates, when the
    update reads nothing else of it: its only user is the root, or its other readers read
    each window element alone, before it is written (hlo/window_reads.py); any other read
    could see an element the window's writes already changed."""
    root = comp.root
    if root.opcode != "dynamic-update-slice":
        return None
    target = root.operands[0]
    if target.opcode != "parameter" or any(o is target for o in root.operands[1:]):
        return None
    if list(target.users) != [root] and not reads_only_its_window(root):
        return None
    return target


def _cone(root: Instruction) -> set[Instruction]:
    """`root` and every instruction it reads, inside its fused computation."""
    cone, stack = set(), [root]
    while stack:
        inst = stack.pop()
        if inst not in cone:
            cone.add(inst)
            stack.extend(inst.operands)
    return cone


def in_place_outputs(inst: Instruction) -> dict[int, int]:
    """For a kLoop multi-output fusion: output index j -> operand position p such that
    output j may be written into operand p's buffer (the module docstring's rule)."""
    if not (inst.opcode == "fusion" and inst.attrs.get("kind") == "kLoop"
            and inst.shape.is_tuple):
        return {}
    root = inst.fused_computation.root
    if root.opcode != "tuple":
        return {}
    cones = [_cone(o) for o in root.operands]
    out: dict[int, int] = {}
    for j, dus in enumerate(root.operands):
        if dus.opcode != "dynamic-update-slice" or root.operands.count(dus) != 1:
            continue
        target = dus.operands[0]
        if (target.opcode != "parameter" or any(o is target for o in dus.operands[1:])
                or not _same_elements(target, dus) or target.shape != dus.shape
                or any(target in c for k, c in enumerate(cones) if k != j)
                or not all(u in cones[j] for u in target.users)):
            continue
        if list(target.users) == [dus] or reads_only_its_window(dus, cones[j]):
            out[j] = target.parameter_number
    return out


def in_place_operands(inst: Instruction) -> list[int]:
    """Operand positions of `inst` whose buffers its result may overwrite."""
    if inst.shape.is_tuple:
        return []
    if inst.opcode == "fusion":
        if inst.attrs.get("kind") != "kLoop":
            return []
        comp = inst.fused_computation
        target = _updated_parameter(comp)
        if target is not None:  # a fused update: written into the array it updates
            return [target.parameter_number] if _same_elements(target, inst) \
                and target.shape == inst.shape else []
        if any(i.opcode in RERUN_OPCODES for i in comp.instructions):
            return []
        pointwise = _pointwise_users(comp)
        return [p.parameter_number for p in comp.parameters
                if _same_elements(p, inst) and p.users and pointwise[p]]
    if inst.opcode in UPDATES_OPERAND_0:
        target = inst.operands[0]
        # one array updated (a variadic scatter has several), laid out as the result
        ok = (len(inst.operands) == 3 or inst.opcode == "dynamic-update-slice")
        return [0] if ok and _same_elements(target, inst) and target.shape == inst.shape \
            and all(o is not target for o in inst.operands[1:]) else []
    if not inst.is_elementwise() or inst.opcode in RERUN_OPCODES:
        return []
    return [k for k, o in enumerate(inst.operands) if _same_elements(o, inst)]


__all__ = ["RERUN_OPCODES", "UPDATES_OPERAND_0", "in_place_operands", "in_place_outputs"]
