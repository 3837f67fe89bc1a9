"""Whether an update reads the array it overwrites only inside its own window, element by
element: `u = u.at[1:-1].set(u[1:-1] + dt * f(v))`, a PDE step written in place.

Input: a dynamic-update-slice `dus(target, update, starts...)` and (optionally) the set of
instructions that will be computed with it (a fusion group; default: all of them). Output:
`reads_only_its_window(dus, members)`: True when every read of `target` by those members is
a slice with unit strides that starts at the update's constant starts and has the update's
shape, and every use chain from such a slice to `update` is elementwise over the update's
dimensions. Then element i of the window is computed from target[start + i] alone (and
other arrays), so a kernel writing the window into target's own buffer reads each element
before it writes it: in place is exact. Chains through sine, cosine or tan are refused:
their CPU kernels may rerun the whole loop nest in precise mode, re-reading elements
already written (RERUN_OPCODES, which backends/cpu/plan/in_place.py reads too).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from ember.hlo.ir import Instruction

# The opcodes whose fast CPU code may ask for a precise rerun of its whole loop nest
# (mathlib `_REDUCED`; a test keeps the two in step): defined here, in the HLO layer, so
# the fusion pass and the CPU backend's in-place planning read one list.
RERUN_OPCODES: frozenset[str] = frozenset({"sine", "cosine", "tan"})


def _constant_starts(dus: Instruction) -> list[int] | None:
    starts = []
    for s in dus.operands[2:]:
        if s.opcode != "constant" or s.shape.size != 1:
            return None
        starts.append(int(np.asarray(s.value).reshape(-1)[0]))
    return starts


def _aligned_slice(read: Instruction, dus: Instruction, starts: list[int]) -> bool:
    if read.opcode != "slice":
        return False
    spec = read.attrs["slice"]  # ((start, limit, stride), ...) per dimension
    return ([s for s, _, _ in spec] == starts and all(k == 1 for _, _, k in spec)
            and read.shape.dimensions == dus.operands[1].shape.dimensions)


def _pointwise_to_update(read: Instruction, dus: Instruction,
                         members: Collection[Instruction] | None) -> bool:
    update = dus.operands[1]
    stack, seen = [read], set()
    while stack:
        inst = stack.pop()
        if inst is update:
            continue  # (its one reader here is dus, as the update)
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        for u in inst.users:
            if members is not None and u not in members:
                continue
            if u is dus or u.opcode in RERUN_OPCODES or not u.is_elementwise() \
                    or u.shape.is_tuple or u.shape.dimensions != update.shape.dimensions:
                return False
            stack.append(u)
    return True


def reads_only_its_window(dus: Instruction,
                          members: Collection[Instruction] | None = None) -> bool:
    """See the module docstring."""
    if dus.opcode != "dynamic-update-slice":
        return False
    target, update = dus.operands[0], dus.operands[1]
    starts = _constant_starts(dus)
    if starts is None or any(o is target for o in dus.operands[2:]):
        return False
    if update is target:
        return False
    for read in target.users:
        if read is dus or (members is not None and read not in members):
            continue
        if update.opcode in RERUN_OPCODES or not _aligned_slice(read, dus, starts) \
                or not _pointwise_to_update(read, dus, members):
            return False
    return True
