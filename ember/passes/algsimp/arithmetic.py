"""Rewrites of add, subtract, multiply, divide, negate, power (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import (
    add,
    constant_like,
    is_float_inst,
    is_int_inst,
    is_value,
    scalar_constant_value,
)


def _other_if_identity(inst: Instruction, value: int, **match: bool) -> Instruction | None:
    """For a commutative op with identity `value`: the operand beside that identity."""
    a, b = inst.operands
    if is_value(b, value, **match):
        return a
    if is_value(a, value, **match):
        return b
    return None


@rewrite("multiply")
def mul_one(inst: Instruction) -> Instruction | None:
    """A * 1 => A"""
    if inst.shape.element_type == "pred":
        return None
    return _other_if_identity(inst, 1)


@rewrite("multiply")
def int_mul_zero(inst: Instruction) -> Instruction | None:
    """A * 0 => 0 (integers)"""
    a, b = inst.operands
    if is_int_inst(inst) and (is_value(a, 0) or is_value(b, 0)):
        return constant_like(inst, 0)
    return None


@rewrite("multiply", unsafe=True)
def float_mul_zero(inst: Instruction) -> Instruction | None:
    """A * 0 => 0 (floats; unsafe: wrong for NaN, inf and negative A)"""
    a, b = inst.operands
    if is_float_inst(inst) and (is_value(a, 0) or is_value(b, 0)):
        return constant_like(inst, 0)
    return None


@rewrite("divide")
def div_one(inst: Instruction) -> Instruction | None:
    """A / 1 => A"""
    a, b = inst.operands
    return a if is_value(b, 1) else None


@rewrite("add")
def add_neg_zero(inst: Instruction) -> Instruction | None:
    """A + (-0.0) => A"""
    return _other_if_identity(inst, 0, signed_zero=True) if is_float_inst(inst) else None


@rewrite("add")
def int_add_zero(inst: Instruction) -> Instruction | None:
    """A + 0 => A (integers)"""
    return _other_if_identity(inst, 0) if is_int_inst(inst) else None


@rewrite("add", unsafe=True)
def float_add_zero(inst: Instruction) -> Instruction | None:
    """A + 0.0 => A (floats; unsafe: -0.0 + 0.0 is +0.0)"""
    return _other_if_identity(inst, 0) if is_float_inst(inst) else None


@rewrite("subtract")
def sub_zero(inst: Instruction) -> Instruction | None:
    """A - 0 => A"""
    a, b = inst.operands
    if is_float_inst(inst):
        return a if is_value(b, 0, signed_zero=False) else None
    return a if is_int_inst(inst) and is_value(b, 0) else None


@rewrite("subtract", unsafe=True)
def add_sub_cancel(inst: Instruction) -> Instruction | None:
    """(A + B) - A => B, (A + B) - B => A (unsafe for floats: rounding and overflow)"""
    s, x = inst.operands
    if s.opcode != "add":
        return None
    a, b = s.operands
    if x is a:
        return b
    if x is b:
        return a
    return None


@rewrite("negate")
def neg_neg(inst: Instruction) -> Instruction | None:
    """-(-A) => A"""
    (a,) = inst.operands
    return a.operand if a.opcode == "negate" else None


@rewrite("power")
def pow_two(inst: Instruction) -> Instruction | None:
    """power(A, 2) => A * A"""
    a, b = inst.operands
    if is_float_inst(inst) and is_value(b, 2):
        return add(inst, "multiply", [a, a])
    return None


@rewrite("power")
def pow_one(inst: Instruction) -> Instruction | None:
    """power(A, 1) => A"""
    a, b = inst.operands
    return a if is_float_inst(inst) and is_value(b, 1) else None


@rewrite("power", unsafe=True)
def pow_half(inst: Instruction) -> Instruction | None:
    """power(A, 0.5) => sqrt(A) (unsafe: power(-0.0, 0.5) is +0, power(-inf, 0.5) is inf)"""
    a, b = inst.operands
    if is_float_inst(inst) and is_value(b, 0.5):
        return add(inst, "sqrt", [a])
    return None


@rewrite("add", "multiply", unsafe=True)
def reassociate_constants(inst: Instruction) -> Instruction | None:
    """(A op C1) op C2 => A op (C1 op C2) (unsafe for floats: reassociation)"""
    a, c2 = inst.operands
    if scalar_constant_value(a) is not None and scalar_constant_value(c2) is None:
        a, c2 = c2, a
    if a.opcode != inst.opcode or scalar_constant_value(c2) is None or len(a.users) != 1:
        return None
    x, c1 = a.operands
    if scalar_constant_value(x) is not None and scalar_constant_value(c1) is None:
        x, c1 = c1, x
    if scalar_constant_value(c1) is None or scalar_constant_value(x) is not None:
        return None
    folded = add(inst, inst.opcode, [c1, c2])
    return add(inst, inst.opcode, [x, folded])


def _never_negative_zero(inst: Instruction) -> bool:
    """Can `inst` never hold -0.0? A float sum whose init is +0.0 (round to nearest: x + y
    is -0.0 only when both are -0.0, and the +0.0 init takes part in every sum), or a
    reshape/broadcast/transpose/slice of one."""
    while inst.opcode in ("reshape", "broadcast", "transpose", "slice", "copy"):
        inst = inst.operands[0]
    if inst.opcode != "reduce" or len(inst.operands) != 2:
        return False
    return (plain_binary_opcode(inst.to_apply) == "add"
            and is_value(inst.operands[1], 0, signed_zero=False))


@rewrite("add")
def add_zero_to_sum(inst: Instruction) -> Instruction | None:
    """A + 0.0 => A when A is never -0.0 (a sum whose init is +0.0)"""
    if not is_float_inst(inst):
        return None
    a = _other_if_identity(inst, 0, signed_zero=False)
    return a if a is not None and _never_negative_zero(a) else None


@rewrite("maximum", "minimum")
def extremum_identity(inst: Instruction) -> Instruction | None:
    """maximum(A, -inf) => A;  minimum(A, +inf) => A (floats: NaN propagates either way)"""
    if not is_float_inst(inst):
        return None
    return _other_if_identity(inst, -np.inf if inst.opcode == "maximum" else np.inf)
