"""Fusion groups joined before any fusion is built: sibling reductions into one pass, a
while body's carry into the loop group that reads it, and the dependence walks both use.

Input: a computation and its groups, as the fusion pass grew them (root, members). Output:
groups with several roots (each a multi-output kernel): `merge_siblings` (kInput groups
reducing one input over the same dimensions), `merge_carries` (in a while body, a carry's
loop group joins the loop group reading it at its own index); `reads_updated_array` says
whether a dynamic-update-slice's update reads the array it updates (fusion.py then cuts
the update out, so it is written in place).
Invariants: no merge makes a cycle (neither group's inputs depend on the other's roots);
the computation itself is not changed here (fusion_build.py rewrites it).
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape
from ember.passes.fusion_rules import LOOP_FUSIBLE, FusionDecision


def reads_updated_array(root: Instruction, members: list[Instruction]) -> bool:
    """Whether the members computing the update of a group rooted at a dynamic-update-slice
    read the array it updates, when that array is not a parameter of the computation.
    Fused, those reads could follow the window's writes in place. (A parameter's buffer is
    the caller's, never written: a kernel that reads it writes a whole new array instead,
    region by region, in one pass. The starts are read before any write.)"""
    target = root.operands[0]
    if target.opcode == "parameter":
        return False
    group, seen = set(members), set()
    stack = [root.operands[1]]
    while stack:
        m = stack.pop()
        if m in seen or m not in group:
            continue
        seen.add(m)
        if any(o is target for o in m.operands):
            return True
        stack.extend(m.operands)
    return False


def depends_on(inst: Instruction, targets: set[Instruction]) -> bool:
    """Does `inst` (transitively, through operands) use any of `targets`?"""
    seen: set[Instruction] = set()
    stack = [inst]
    while stack:
        i = stack.pop()
        if i in targets:
            return True
        if i in seen:
            continue
        seen.add(i)
        stack.extend(i.operands)
    return False


def merge_siblings(comp: Computation, groups: list[tuple[Instruction, list[Instruction]]],
                    decisions: list[FusionDecision]
                    ) -> list[tuple[list[Instruction], list[Instruction]]]:
    """Merge kInput groups reducing the same input over the same dimensions (sum(x) and
    sum(x*x), max(x) and min(x)) into multi-output groups: one pass over memory."""
    out: list[tuple[list[Instruction], list[Instruction]]] = [([r], m) for r, m in groups]
    by_key: dict[tuple, int] = {}
    for k, (roots, members) in enumerate(out):
        red = roots[0]
        if red.opcode != "reduce" or red.shape.is_tuple:
            continue
        x = red.operands[0]
        key = (x.shape.dimensions, tuple(sorted(red.attrs["dimensions"])))
        inputs = {o for m in members for o in m.operands if o not in members}
        j = by_key.get(key)
        if j is None:
            by_key[key] = k
            continue
        o_roots, o_members = out[j]
        o_inputs = {o for m in o_members for o in m.operands if o not in o_members}
        if not inputs & o_inputs:
            by_key[key] = k  # no shared input: nothing saved by a joint pass
            continue
        if any(depends_on(i, set(o_roots)) for i in inputs) or any(
                depends_on(i, {red}) for i in o_inputs):
            decisions.append(FusionDecision(o_roots[0].name, red.name,
                                            "sibling reductions depend on each other"))
            continue
        merged = o_members + [m for m in members if m not in o_members]
        out[k] = (o_roots + [red], merged)
        out[j] = ([], [])
        by_key[key] = k
    return [(r, m) for r, m in out if r]


def _loop_group(roots: list[Instruction], members: list[Instruction]) -> bool:
    """One array root, every member a loop-fusible op (no reduce, dot or row)."""
    return (len(roots) == 1 and not roots[0].shape.is_tuple
            and all(m.opcode in LOOP_FUSIBLE for m in members))


def _same_layout(a: Shape, b: Shape) -> bool:
    return a.dimensions == b.dimensions and (a.layout or ()) == (b.layout or ())


def merge_carries(comp: Computation, groups: list[tuple[list[Instruction], list[Instruction]]]
                   ) -> list[tuple[list[Instruction], list[Instruction]]]:
    """In a while body: a loop group P whose root p is a carry (the body's root tuple holds
    it) joins a loop group C that reads p only through elementwise members of p's shape
    and layout (so C reads p at its own index), when none of C's other inputs depends on
    p: the merged group has roots (C's root, p) and writes both in one pass."""
    out = [(list(r), list(m)) for r, m in groups]
    root_tuple = comp.root
    for i, (p_roots, p_members) in enumerate(out):
        if not p_roots or not _loop_group(p_roots, p_members):
            continue
        p = p_roots[0]
        if root_tuple is None or root_tuple.opcode != "tuple" or p not in root_tuple.operands:
            continue
        for j, (c_roots, c_members) in enumerate(out):
            if j == i or not c_roots or not _loop_group(c_roots, c_members):
                continue
            c = c_roots[0]
            readers = [m for m in c_members if p in m.operands]
            if not readers or not _same_layout(c.shape, p.shape) or not all(
                    m.is_elementwise() and _same_layout(m.shape, p.shape) for m in readers):
                continue
            inputs = {o for m in c_members for o in m.operands
                      if o not in c_members and o is not p}
            if any(depends_on(x, {p}) for x in inputs):
                continue
            merged = c_members + [m for m in p_members if m not in c_members]
            out[j] = (c_roots + [p], merged)
            out[i] = ([], [])
            break
    return [(r, m) for r, m in out if r]


__all__ = ["depends_on", "merge_carries", "merge_siblings", "reads_updated_array"]
