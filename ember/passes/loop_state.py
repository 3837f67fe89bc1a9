"""Rewriting a while loop's state tuple: the shared machinery of LICM and dead-state DCE.

Input: a `while` instruction whose body root is a `tuple` and whose condition and body
read their parameter only through get-tuple-element (what the lowering emits). Output:
`rebuild_while(w, keep, extra)` replaces `w` by a new while whose state holds the kept
elements of the old state followed by `extra` values (computed before the loop); the new
elements pass through the body unchanged.

    while(tuple(a, b, c)) with keep=(T, F, T), extra=[h]
      => while'(tuple(a, c, h)); body' reads old element 2 as element 1 and h as element 2

Invariants:
- The loop's condition and body become computations of their own (cloned first if other
  instructions call them too), so no other caller sees the change.
- Users of the old while that are get-tuple-elements of kept elements read the new while;
  any other user (a tuple, the root) gets a tuple of the old elements back, which needs
  every element kept.
- Dropped elements must be dead: nothing but the body root's own slot may read them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember.hlo.ir import (
    Computation,
    Instruction,
    Module,
    clone_computation,
    note_callees_changed,
)
from ember.hlo.shape import Shape


def callers(module: Module) -> dict[Computation, list[Instruction]]:
    """For each computation, the instructions that call it."""
    out: dict[Computation, list[Instruction]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            for c in inst.called_computations:
                out.setdefault(c, []).append(inst)
    return out


def reads_only_elements(comp: Computation) -> bool:
    """The computation's single parameter is read only by get-tuple-elements."""
    if len(comp.parameters) != 1:
        return False
    param = comp.parameters[0]
    return param is not comp.root and all(u.opcode == "get-tuple-element" for u in param.users)


def rewritable(w: Instruction) -> bool:
    """Whether rebuild_while can change this loop's state."""
    body, cond = w.while_body, w.while_condition
    return (body.root is not None and body.root.opcode == "tuple"
            and reads_only_elements(body) and reads_only_elements(cond)
            and w.operand.shape.is_tuple)


def element(comp: Computation, value: Instruction, k: int) -> Instruction:
    """Element k of a tuple value: the operand of a tuple instruction, else a new gte."""
    if value.opcode == "tuple":
        return value.operands[k]
    shape = value.shape.tuple_shapes[k]
    return comp.add_instruction(Instruction("get-tuple-element", shape.without_layout(),
                                            [value], {"index": k}, metadata=dict(
                                                value.metadata)))


def own_computation(module: Module, w: Instruction, slot: int,
                    who_calls: dict[Computation, list[Instruction]]) -> Computation:
    """w's called computation `slot`, cloned first if anything else calls it too."""
    comp = w.called_computations[slot]
    if len(who_calls.get(comp, [])) <= 1 and w.called_computations.count(comp) == 1:
        return comp
    copy = clone_computation(comp, {c: c for c in comp.called_computations()})
    module.add_computation(copy)
    who_calls.setdefault(copy, []).append(w)
    who_calls[comp].remove(w)
    w.called_computations[slot] = copy
    note_callees_changed()  # (a callee replaced in place: Module.computations' cache)
    return copy


def _retype_parameter(comp: Computation, shape: Shape, index: dict[int, int]
                      ) -> Instruction:
    """Give comp a parameter of `shape`; gte(old, k) becomes gte(new, index[k]) and gtes of
    elements not in `index` are removed (they must be unused). Names are kept."""
    old = comp.parameters[0]
    new = Instruction("parameter", shape, (), {"parameter_number": 0},
                      metadata=dict(old.metadata))
    renames: list[tuple[Instruction, str | None]] = [(new, old.name)]
    for gte in list(old.users):
        k = gte.attrs["index"]
        if k in index:
            fresh = Instruction("get-tuple-element", gte.shape, [new], {"index": index[k]},
                                metadata=dict(gte.metadata))
            comp.add_instruction(fresh)
            gte.replace_all_uses_with(fresh)
            renames.append((fresh, gte.name))
        if gte.users:
            raise ValueError(f"loop state element {k} is dropped but still read by "
                             f"{gte.users}")
        comp.remove_instruction(gte)
    comp.add_instruction(new)
    comp.remove_instruction(old)
    for inst, name in renames:
        inst.name = name   # the old holders of these names are gone
    return new


def rebuild_while(module: Module, w: Instruction, keep: Sequence[bool],
                  extra: Sequence[Instruction],
                  who_calls: dict[Computation, list[Instruction]] | None = None
                  ) -> tuple[Instruction, list[Instruction]]:
    """Replace `w` (see the module docstring); returns the new while and, for each extra
    element, its get-tuple-element in the new body."""
    assert rewritable(w)
    who_calls = callers(module) if who_calls is None else who_calls
    parent = w.parent
    assert parent is not None
    init = w.operand
    old_n = len(init.shape.tuple_shapes)
    kept = [k for k in range(old_n) if keep[k]]
    index = {k: i for i, k in enumerate(kept)}
    inits = [element(parent, init, k) for k in kept] + list(extra)
    new_init = parent.add_instruction(Instruction(
        "tuple", Shape.tuple_of([v.shape.without_layout() for v in inits]), inits,
        metadata=dict(init.metadata)))
    state = new_init.shape
    cond = own_computation(module, w, 0, who_calls)
    body = own_computation(module, w, 1, who_calls)
    old_root = body.root
    assert old_root is not None
    # First the body stops computing dropped elements, then its parameter changes type.
    kept_outs = [old_root.operands[k] for k in kept]
    body.root = body.add_instruction(Instruction(
        "tuple", Shape.tuple_of([v.shape.without_layout() for v in kept_outs]), kept_outs))
    body.remove_dead()
    cond.remove_dead()
    _retype_parameter(cond, state, index)
    param = _retype_parameter(body, state, index)
    extra_reads = []
    for j in range(len(extra)):
        gte = Instruction("get-tuple-element", state.tuple_shapes[len(kept) + j], [param],
                          {"index": len(kept) + j})
        extra_reads.append(body.add_instruction(gte))
    outs = list(body.root.operands) + extra_reads
    body.root = body.add_instruction(Instruction("tuple", state, outs,
                                                 metadata=dict(old_root.metadata)))
    body.remove_dead()
    new_w = parent.add_instruction(Instruction("while", state, [new_init], {},
                                               [cond, body], dict(w.metadata)))
    who_calls[cond] = [new_w]
    who_calls[body] = [new_w]
    for user in list(w.users):
        if user.opcode == "get-tuple-element" and user.attrs["index"] in index:
            fresh = parent.add_instruction(Instruction(
                "get-tuple-element", user.shape, [new_w], {"index": index[user.attrs["index"]]},
                metadata=dict(user.metadata)))
            user.replace_all_uses_with(fresh)
            parent.remove_instruction(user)
    if w.users or w is parent.root:
        assert len(kept) == old_n, "a dropped loop element is still read"
        whole = parent.add_instruction(Instruction(
            "tuple", w.shape.without_layout(), [element(parent, new_w, k) for k in range(old_n)],
            metadata=dict(w.metadata)))
        w.replace_all_uses_with(whole)
    if not w.users and w is not parent.root:
        parent.remove_instruction(w)  # explicitly: a loop that prints is a root of its own
    parent.remove_dead()
    return new_w, extra_reads
