"""Rewrites of tuples, get-tuple-element, conditional and while (see the package docstring).

The loop-state and inlining helpers load when a rewrite of a while or conditional fires:
a program without either (most first compiles) never imports them.
"""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import branch_index
from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite


@rewrite("get-tuple-element")
def gte_of_tuple(inst: Instruction) -> Instruction | None:
    """get-tuple-element(tuple(A0, ..., An), i) => Ai"""
    t = inst.operand
    return t.operands[inst.attrs["index"]] if t.opcode == "tuple" else None


@rewrite("get-tuple-element")
def gte_of_while_passthrough(inst: Instruction) -> Instruction | None:
    """get-tuple-element(while(init), k) => element k of init, when the body returns
    element k unchanged"""
    w = inst.operand
    if w.opcode != "while":
        return None
    body, k = w.while_body, inst.attrs["index"]
    root = body.root
    if root is None or root.opcode != "tuple" or len(body.parameters) != 1:
        return None
    v = root.operands[k]
    if not (v.opcode == "get-tuple-element" and v.operand is body.parameters[0]
            and v.attrs["index"] == k):
        return None
    assert inst.parent is not None
    from ember.passes.loop_state import element

    return element(inst.parent, w.operand, k)


@rewrite("tuple")
def tuple_of_gtes(inst: Instruction) -> Instruction | None:
    """tuple(get-tuple-element(T, 0), ..., get-tuple-element(T, n-1)) => T, for T a while
    or conditional (other tuple producers keep the tuple the backends expect)"""
    ops = inst.operands
    if not ops or ops[0].opcode != "get-tuple-element":
        return None
    t = ops[0].operand
    if t.opcode not in ("while", "conditional") or len(t.shape.tuple_shapes) != len(ops):
        return None
    for i, o in enumerate(ops):
        if o.opcode != "get-tuple-element" or o.operand is not t or o.attrs["index"] != i:
            return None
    return t


@rewrite("conditional")
def conditional_constant_selector(inst: Instruction) -> Instruction | None:
    """conditional(constant k, A0, ..., An) => branch k inlined on Ak"""
    sel = inst.operands[0]
    if sel.opcode != "constant":
        return None
    k = branch_index(sel.value, len(inst.branch_computations))
    assert inst.parent is not None
    from ember.passes.inlining import inline_computation

    return inline_computation(inst.parent, inst.branch_computations[k], [inst.operands[1 + k]])


@rewrite("while")
def while_false_condition(inst: Instruction) -> Instruction | None:
    """while(init) with a condition that is constant false => init"""
    root = inst.while_condition.root
    if root is None or root.opcode != "constant" or bool(np.asarray(root.value)):
        return None
    return inst.operand
