"""Helpers shared by the algebraic rewrites: recognizing constants, making new instructions.

Input: instructions of a computation being simplified. Output: facts about them, or new
instructions added to the same computation (shape from inference, metadata copied).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape, is_float, is_integral
from ember.hlo.shape_inference import infer_shape


def scalar_constant_value(inst: Instruction) -> np.ndarray | None:
    """The 0-d value if `inst` is a constant whose elements are all one value (bitwise) or a
    broadcast of a scalar constant; else None."""
    if inst.opcode == "broadcast" and inst.operand.opcode == "constant" \
            and inst.operand.value.ndim == 0:
        return inst.operand.value
    if inst.opcode == "constant":
        v = inst.value
        if v.size == 0:
            return None
        flat = v.reshape(-1)
        rows = flat.view(np.uint8).reshape(flat.size, -1)
        if (rows == rows[0]).all():  # bitwise: +0.0 and -0.0 differ, NaNs by payload
            return np.asarray(flat[0])
    return None


def is_value(inst: Instruction, value: float, *, signed_zero: bool | None = None) -> bool:
    """All elements equal `value`; for zero, `signed_zero` picks -0.0 (True) or +0.0 (False),
    None accepts either."""
    v = scalar_constant_value(inst)
    if v is None or v.dtype == np.bool_:
        return False
    if v != value:
        return False
    if value == 0 and signed_zero is not None and v.dtype.kind == "f":
        return bool(np.signbit(v)) == signed_zero
    return True


def is_float_inst(inst: Instruction) -> bool:
    return not inst.shape.is_tuple and is_float(inst.shape.element_type)


def is_int_inst(inst: Instruction) -> bool:
    return not inst.shape.is_tuple and is_integral(inst.shape.element_type)


def add(like: Instruction, opcode: str, operands: list[Instruction],
        attrs: dict[str, Any] | None = None, shape: Shape | None = None) -> Instruction:
    """A new instruction next to `like` (same computation, same metadata)."""
    comp = like.parent
    assert comp is not None
    attrs = dict(attrs or {})
    s = infer_shape(opcode, [o.shape for o in operands], attrs, [], shape)
    inst = Instruction(opcode, s, operands, attrs, (), dict(like.metadata))
    return comp.add_instruction(inst)


def constant_like(like: Instruction, value: Any, shape: Shape | None = None) -> Instruction:
    """A scalar constant broadcast to `shape` (default: like's shape)."""
    shape = shape or like.shape
    arr = np.array(value, dtype=shape.dtype)
    arr.setflags(write=False)
    c = add(like, "constant", [], {"value": arr})
    if shape.rank == 0:
        return c
    return add(like, "broadcast", [c], {"dimensions": ()}, shape.without_layout())
