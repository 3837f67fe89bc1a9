"""Loop-invariant code motion: compute once, before a while loop, what every iteration
of its body would compute the same way; and sink constant loop inputs into the loop.

Input: a Module. Output: the module with, for each while loop (whose body root is a tuple
and whose computations read the state only through get-tuple-element):
  body: h = f(inv...)  where every inv is a constant or a state element the body passes
                       through unchanged
    => before the loop: h' = f(init elements...); h' joins the state as a new element that
       the body passes through, and the body reads it instead of computing h.
  while(tuple(..., c, ...)) where c is a constant (or a broadcast of a scalar constant) and
    the body passes that element through
    => the condition and body read a copy of c instead of the element (DCE then drops it).
Only instructions worth hoisting move: a group is hoisted when it holds an instruction
that is not just data movement or a constant (constant, iota, broadcast, reshape,
transpose, slice, reverse, copy, convert, get-tuple-element); so a broadcast of a constant
stays in the loop, where fusion rematerializes it for free. Instructions with tuple
results, parameters and custom-calls never move. The condition is left alone. Hoisting is
exact: the same operations on the same values, only earlier (and once even when the loop
runs zero times, which is harmless since HLO ops have no side effects).
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.passes.base import HloPass

# Cheap to recompute or pure data movement: never hoisted on their own.
NOT_WORTH_ALONE = frozenset({"constant", "iota", "broadcast", "reshape", "transpose", "slice",
                             "reverse", "copy", "convert", "get-tuple-element"})
NEVER_MOVE = frozenset({"parameter", "custom-call", "tuple"})


def _passthrough(body: Computation) -> set[int]:
    """State elements the body returns unchanged."""
    param = body.parameters[0]
    return {k for k, v in enumerate(body.root.operands)
            if v.opcode == "get-tuple-element" and v.operand is param
            and v.attrs["index"] == k}


def _invariants(body: Computation, fixed: set[int]) -> set[Instruction]:
    param = body.parameters[0]
    inv: set[Instruction] = set()
    for inst in body.post_order():
        if inst.opcode == "get-tuple-element" and inst.operand is param:
            if inst.attrs["index"] in fixed:
                inv.add(inst)
        elif (inst.opcode not in NEVER_MOVE and not inst.shape.is_tuple
              and all(o in inv for o in inst.operands)):
            inv.add(inst)
    return inv


def _worth(inst: Instruction, inv: set[Instruction], memo: dict[Instruction, bool]) -> bool:
    """Does the invariant group under `inst` hold real work?"""
    if inst not in memo:
        memo[inst] = inst.opcode not in NOT_WORTH_ALONE or any(
            _worth(o, inv, memo) for o in inst.operands if o in inv)
    return memo[inst]


def _frontier(body: Computation, inv: set[Instruction]) -> list[Instruction]:
    """Invariant instructions worth hoisting whose value leaves the invariant region."""
    memo: dict[Instruction, bool] = {}
    out = []
    for inst in body.post_order():
        if inst not in inv or inst.opcode in ("constant", "get-tuple-element"):
            continue
        leaves = inst is body.root or any(u not in inv for u in inst.users)
        if leaves and _worth(inst, inv, memo):
            out.append(inst)
    return out


def _copy_before(w: Instruction, insts: list[Instruction]) -> list[Instruction]:
    """Copies of invariant body instructions computed in w's computation from w's init."""
    from ember.passes.loop_state import element

    parent = w.parent
    assert parent is not None
    param = w.while_body.parameters[0]
    done: dict[Instruction, Instruction] = {}

    def copy(inst: Instruction) -> Instruction:
        if inst in done:
            return done[inst]
        if inst.opcode == "get-tuple-element" and inst.operand is param:
            new = element(parent, w.operand, inst.attrs["index"])
        else:
            attrs = dict(inst.attrs)
            new = parent.add_instruction(Instruction(
                inst.opcode, inst.shape, [copy(o) for o in inst.operands], attrs,
                list(inst.called_computations), dict(inst.metadata)))
        done[inst] = new
        return new

    return [copy(i) for i in insts]


def hoist_invariants(module: Module, w: Instruction,
                     who: dict[Computation, list[Instruction]]) -> bool:
    from ember.passes.loop_state import own_computation, rebuild_while

    if not _frontier(w.while_body, _invariants(w.while_body, _passthrough(w.while_body))):
        return False
    body = own_computation(module, w, 1, who)
    frontier = _frontier(body, _invariants(body, _passthrough(body)))
    hoisted = _copy_before(w, frontier)
    n = len(w.shape.tuple_shapes)
    new_w, reads = rebuild_while(module, w, [True] * n, hoisted, who)
    assert new_w.while_body is body
    for inst, read in zip(frontier, reads):
        inst.replace_all_uses_with(read)
    body.remove_dead()
    return True


def _sinkable(v: Instruction) -> bool:
    if v.opcode == "constant":
        return True
    return (v.opcode == "broadcast" and v.operand.opcode == "constant"
            and v.operand.shape.rank == 0)


def sink_constants(module: Module, w: Instruction,
                   who: dict[Computation, list[Instruction]]) -> bool:
    """Inside cond and body, read passed-through constant elements as constants."""
    from ember.passes.loop_state import own_computation

    init = w.operand
    if init.opcode != "tuple":
        return False
    sinks = {k: init.operands[k] for k in _passthrough(w.while_body)
             if _sinkable(init.operands[k])}
    if not sinks:
        return False
    changed = False
    for slot in (0, 1):
        if not _reads_of(w.called_computations[slot], slot, sinks):
            continue
        comp = own_computation(module, w, slot, who)
        for g, users in _reads_of(comp, slot, sinks):
            c = _clone_constant(comp, sinks[g.attrs["index"]])
            for u in users:
                u.replace_operand_with(g, c)
        comp.remove_dead()
        changed = True
    return changed


def _reads_of(comp: Computation, slot: int, sinks: dict[int, Instruction]
              ) -> list[tuple[Instruction, list[Instruction]]]:
    """(element read, its users) for reads of sinkable elements; the body root, which
    passes the element through, is not a reader."""
    skip = comp.root if slot == 1 else None
    out = []
    for g in comp.parameters[0].users:
        if g.attrs["index"] in sinks:
            users = [u for u in g.users if u is not skip]
            if users:
                out.append((g, users))
    return out


def _clone_constant(comp: Computation, v: Instruction) -> Instruction:
    if v.opcode == "broadcast":
        scalar = _clone_constant(comp, v.operand)
        return comp.add_instruction(Instruction("broadcast", v.shape.without_layout(),
                                                [scalar], dict(v.attrs),
                                                metadata=dict(v.metadata)))
    return comp.add_instruction(Instruction("constant", v.shape.without_layout(), (),
                                            {"value": v.value}, metadata=dict(v.metadata)))


class LoopInvariantCodeMotion(HloPass):
    name = "licm"

    def run(self, module: Module) -> bool:
        if not any(i.opcode == "while" for c in module.computations for i in c.instructions):
            return False  # nothing loops (and loop_state.py stays unimported)
        from ember.passes.loop_state import callers, rewritable

        changed = False
        who = callers(module)
        for comp in module.computations:
            for w in [i for i in comp.post_order() if i.opcode == "while"]:
                if w.parent is not comp or not rewritable(w):
                    continue
                changed |= sink_constants(module, w, who)
                if rewritable(w):
                    changed |= hoist_invariants(module, w, who)
        return changed
