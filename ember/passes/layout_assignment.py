"""Layout assignment: give every array of the entry computation a memory layout.

Input: a Module before fusion (run in the CPU pipeline after transpose folding). Output: the
same module where every instruction of the entry carries a layout (minor-to-major, printed
as `f32[64,128]{0,1}`), plus `copy` instructions where two constraints disagree.
Other computations (reduce/map appliers, loop bodies) keep no layout: row-major.

Constraints (hard ones must hold; a user that gets another layout reads through a copy):
- parameters, constants and the entry's result are row-major ({rank-1,...,0}): NumPy gives
  and expects C order at the boundary;
- an elementwise op reads its same-shaped operands in its own layout (as XLA requires, so a
  fused kernel walks every buffer in one order);
- a dot reads row-major operands: BLAS sees a transposed operand through a trans flag,
  already chosen by transpose folding from the dimension numbers, so no layout is needed
  for `x.T @ y` (dot(transpose(x), y) => dot(x, y) contracting dim 0 of x);
- ops whose kernels read memory through raw pointers (sort, scatter, custom-call, loops,
  tuples, ...) read row-major operands; ops read through the element generators
  (broadcast, reshape, slice, pad, concatenate, reverse, gather, dynamic-slice, reduce)
  accept any operand layout: the kernels index memory through it.
Soft wishes only steer choices: a transpose wishes its operand laid out as the permuted
result layout, `transpose_operand_layout(perm, L)`, under which it moves no data.
Choices: users are visited before operands (reverse post order). Elementwise ops, copies
and transposes take the layout most hard constraints ask for (then most wishes, then
row-major); every other op produces row-major. An unconstrained transpose takes the layout
that makes it a bitcast of a row-major operand. Afterwards:
  transpose(x) with layout L, x laid out as transpose_operand_layout(perm, L) => a no-op
      (`is_bitcast_transpose`: same bytes, only the logical dimension order changes)
  copy(x) with x's layout            => x                   (redundant copy removed)
  copy(copy(x))                      => copy(x)
Invariant: values are unchanged (copy is the identity on values); only layouts and copies
are added. A module whose entry already has layouts is left alone.
"""

from __future__ import annotations

from collections import Counter

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import (
    Shape,
    row_major,
    transpose_operand_layout,
    transpose_result_layout,
)
from ember.passes.base import HloPass

Layout = tuple[int, ...]
RESULT = None  # the "user" standing for the entry's result

# Users whose kernels read this operand through an element generator, so any layout works.
_ANY_LAYOUT_USERS = frozenset({
    "broadcast", "reshape", "slice", "pad", "concatenate", "reverse", "gather",
    "dynamic-slice", "reduce", "copy", "transpose",
})


def is_flexible(inst: Instruction) -> bool:
    """May this instruction produce any layout? Elementwise ops (their kernels write in
    whatever order), copies and transposes; never parameters or constants."""
    if inst.shape.is_tuple or inst.shape.rank < 2:
        return False
    if inst.opcode in ("copy", "transpose"):
        return True
    return inst.is_elementwise() and inst.opcode not in ("parameter", "constant", "map")


def is_bitcast_transpose(inst: Instruction) -> bool:
    """A transpose whose operand is laid out so that the result shares its bytes."""
    if inst.opcode != "transpose" or inst.shape.layout is None:
        return False
    perm = tuple(inst.attrs["dimensions"])
    return inst.operand.shape.layout == transpose_operand_layout(perm, inst.shape.layout)


class _Constraints:
    """Per instruction: (user, layout, hard) requests collected from its users."""

    def __init__(self) -> None:
        self.requests: dict[Instruction, list[tuple[Instruction | None, Layout, bool]]] = {}

    def add(self, inst: Instruction, user: Instruction | None, layout: Layout,
            hard: bool) -> None:
        if inst.shape.is_tuple or inst.shape.rank == 0:
            return
        reqs = self.requests.setdefault(inst, [])
        if (user, layout, hard) not in reqs:  # multiply(e, e) asks once
            reqs.append((user, layout, hard))

    def of(self, inst: Instruction) -> list[tuple[Instruction | None, Layout, bool]]:
        return self.requests.get(inst, [])


def _choose(inst: Instruction, requests: list[tuple[Instruction | None, Layout, bool]]
            ) -> Layout:
    rank = inst.shape.rank
    if not is_flexible(inst):
        return row_major(rank)
    if not requests:
        if inst.opcode == "transpose":  # a bitcast of a row-major operand
            perm = tuple(inst.attrs["dimensions"])
            return transpose_result_layout(perm, row_major(rank))
        return row_major(rank)
    hard = Counter(lay for _, lay, h in requests if h)
    soft = Counter(lay for _, lay, _h in requests)
    default = row_major(rank)

    def score(lay: Layout) -> tuple[int, int, int]:
        return (hard[lay], soft[lay], lay == default)

    # first-seen order breaks the remaining ties deterministically
    candidates = list(dict.fromkeys(lay for _, lay, _h in requests))
    return max(candidates, key=score)


def _constrain_operands(inst: Instruction, c: _Constraints) -> None:
    """Record what `inst` (already laid out) asks of its operands."""
    lay = inst.shape.layout
    if inst.opcode == "transpose":
        assert lay is not None
        perm = tuple(inst.attrs["dimensions"])
        c.add(inst.operand, inst, transpose_operand_layout(perm, lay), hard=False)
        return
    if inst.opcode in _ANY_LAYOUT_USERS:
        return
    if is_flexible(inst):  # elementwise: same-shaped operands in the same layout
        assert lay is not None
        for o in inst.operands:
            if o.shape.dimensions == inst.shape.dimensions:
                c.add(o, inst, lay, hard=True)
        return
    for o in inst.operands:  # raw-pointer readers (dot, sort, loops, tuple, ...)
        c.add(o, inst, row_major(o.shape.rank), hard=True)


def _reroute(comp: Computation, inst: Instruction,
             requests: list[tuple[Instruction | None, Layout, bool]]) -> None:
    """Give each user whose hard request `inst`'s layout misses a copy in its layout (one
    copy per distinct layout, shared by the users that ask for it)."""
    copies: dict[Layout, Instruction] = {}
    for user, lay, hard in requests:
        if not hard or lay == inst.shape.layout:
            continue
        cp = copies.get(lay)
        if cp is None:
            cp = comp.add_instruction(Instruction("copy", inst.shape.with_layout(lay), [inst]))
            copies[lay] = cp
        if user is RESULT:
            comp.root = cp
        else:
            user.replace_operand_with(inst, cp)


def _leaf_layouts(inst: Instruction) -> Shape:
    """Tuple-shaped values: a tuple shows its operands' layouts, a get-tuple-element its
    element's, everything else (loops, sort, multi-output ops) is row-major."""
    if inst.opcode == "tuple":
        return Shape.tuple_of([o.shape for o in inst.operands])
    if inst.opcode == "opt-barrier":
        return _leaf_layouts(inst.operand)
    if inst.opcode == "get-tuple-element":
        return inst.operand.shape.tuple_shapes[inst.attrs["index"]]
    return inst.shape.with_row_major_layout()


def _remove_redundant_copies(comp: Computation) -> bool:
    changed = False
    for inst in comp.post_order():
        if inst.opcode != "copy" or inst.parent is not comp:
            continue
        while inst.operand.opcode == "copy":  # copy(copy(x)) => copy(x)
            inst.replace_operand(0, inst.operand.operand)
            changed = True
        src = inst.operand
        if src.shape == inst.shape:  # copy(x) in x's layout => x
            inst.replace_all_uses_with(src)
            changed = True
    if changed:
        comp.remove_dead()
    return changed


def assign_layouts(comp: Computation) -> None:
    """Lay out every instruction of `comp` (the entry) in place; see the module docstring."""
    c = _Constraints()
    root = comp.root
    assert root is not None
    if not root.shape.is_tuple:
        c.add(root, RESULT, row_major(root.shape.rank), hard=True)
    order = comp.post_order()
    for inst in reversed(order):  # users before operands
        if inst.shape.is_tuple:
            _constrain_operands(inst, c)
            continue
        requests = c.of(inst)
        inst.shape = inst.shape.with_layout(_choose(inst, requests))
        _reroute(comp, inst, requests)
        _constrain_operands(inst, c)
    for inst in order:  # operands before users: tuples see their operands' layouts
        if inst.shape.is_tuple:
            inst.shape = _leaf_layouts(inst)


def has_layouts(comp: Computation) -> bool:
    return any(i.shape.layout is not None for i in comp.instructions if not i.shape.is_tuple)


class LayoutAssignment(HloPass):
    """Assigns layouts to the entry computation (see the module docstring)."""

    name = "layout-assignment"

    def run(self, module: Module) -> bool:
        comp = module.entry
        if has_layouts(comp):
            return False
        assign_layouts(comp)
        _remove_redundant_copies(comp)
        return True
