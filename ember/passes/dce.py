"""Dead code elimination, inside every computation and inside loop states.

Input: a Module. Output: the module without instructions that do not reach their
computation's root (parameters stay), without while-loop state elements that nothing
needs, and without computations nothing calls.
Rewrites:
  unused(x) => (removed)
  while(tuple(a, b)) where element 1 is read neither after the loop, nor by the
  condition, nor by the body for any needed element => while(tuple(a))
A state element is needed when it is read after the loop (a get-tuple-element of the
while, or any other use of the whole tuple, which needs every element), when the
condition reads it, or when the body computes a needed element from it; everything else
only feeds itself (a scan's unused stacked output, a dead counter) and is dropped, which
changes neither the trip count nor any result.
Side effects (`custom_call_has_side_effect=true`, and loops or branches holding one) are
roots like the root itself (ember/hlo/ir.py), so they and what they read are never removed;
a body's side effects make the state elements they read needed.
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.passes.base import HloPass


def _element_deps(body: Computation) -> dict[Instruction, frozenset[int]]:
    """For each body instruction, the state elements (of the body's parameter) it reads."""
    param = body.parameters[0]
    deps: dict[Instruction, frozenset[int]] = {}
    for inst in body.post_order():
        if inst.opcode == "get-tuple-element" and inst.operand is param:
            deps[inst] = frozenset({inst.attrs["index"]})
        else:
            deps[inst] = frozenset().union(*(deps[o] for o in inst.operands))
    return deps


def needed_elements(w: Instruction) -> set[int]:
    """The state elements of a (rewritable) while that something needs."""
    n = len(w.shape.tuple_shapes)
    parent = w.parent
    if w is (parent.root if parent is not None else None):
        return set(range(n))
    needed: set[int] = set()
    for user in w.users:
        if user.opcode != "get-tuple-element":
            return set(range(n))
        needed.add(user.attrs["index"])
    cond = w.while_condition
    needed.update(g.attrs["index"] for g in cond.parameters[0].users
                  if g.users or g is cond.root)
    body = w.while_body
    deps = _element_deps(body)
    slots = body.root.operands
    for inst in body.side_effect_roots():  # what a print in the body reads is needed
        needed.update(deps[inst])
    work = list(needed)
    while work:
        for k in deps[slots[work.pop()]]:
            if k not in needed:
                needed.add(k)
                work.append(k)
    return needed


def remove_dead_loop_state(module: Module) -> bool:
    if not _has_while(module):
        return False  # (and loop_state.py stays unimported: a first compile's import time)
    from ember.passes.loop_state import callers, rebuild_while, rewritable

    changed = False
    who = callers(module)
    for comp in module.computations:
        for w in [i for i in comp.post_order() if i.opcode == "while"]:
            if w.parent is not comp or not rewritable(w):
                continue
            needed = needed_elements(w)
            n = len(w.shape.tuple_shapes)
            if not needed or len(needed) == n:
                continue
            rebuild_while(module, w, [k in needed for k in range(n)], [], who)
            changed = True
    return changed


class DeadCodeElimination(HloPass):
    name = "dce"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            changed |= comp.remove_dead()
        if remove_dead_loop_state(module):
            changed = True
            for comp in module.computations:
                comp.remove_dead()
        changed |= module.remove_dead_computations()
        return changed


_WHILE = frozenset({"while"})


def _has_while(module: Module) -> bool:
    return any(c.holds(_WHILE) for c in module.computations)
