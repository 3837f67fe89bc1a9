"""Rewrites of select and compare (see the package docstring)."""

from __future__ import annotations

from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import constant_like, is_int_inst, scalar_constant_value


@rewrite("select")
def select_constant_pred(inst: Instruction) -> Instruction | None:
    """select(true, A, B) => A; select(false, A, B) => B"""
    p, a, b = inst.operands
    v = scalar_constant_value(p)
    if v is None:
        return None
    return a if bool(v) else b


@rewrite("select")
def select_same(inst: Instruction) -> Instruction | None:
    """select(P, A, A) => A"""
    _, a, b = inst.operands
    return a if a is b else None


@rewrite("compare")
def int_compare_self(inst: Instruction) -> Instruction | None:
    """compare(A, A) => true for EQ/LE/GE, false for NE/LT/GT (integers and pred)"""
    a, b = inst.operands
    if a is not b or not (is_int_inst(a) or a.shape.element_type == "pred"):
        return None
    return constant_like(inst, inst.attrs["direction"] in ("EQ", "LE", "GE"))
