"""Rewrites of reduce (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ember.backends.interpreter.evaluator import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import add, is_float_inst

_IDEMPOTENT = {"maximum", "minimum", "and", "or"}


def _broadcast_scalar(inst: Instruction) -> tuple[Instruction, Instruction, str, int] | None:
    """(scalar, init, opcode, reduced element count) for reduce(broadcast(scalar), init)."""
    if len(inst.operands) != 2:
        return None
    x, init = inst.operands
    if x.opcode != "broadcast" or x.operand.shape.rank != 0:
        return None
    op = plain_binary_opcode(inst.to_apply)
    if op is None or op == "overwrite":
        return None
    n = int(np.prod([x.shape.dimensions[d] for d in inst.attrs["dimensions"]], dtype=np.int64))
    return x.operand, init, op, n


def _spread(inst: Instruction, scalar: Instruction) -> Instruction:
    if inst.shape.rank == 0:
        return scalar
    return add(inst, "broadcast", [scalar], {"dimensions": ()}, inst.shape)


@rewrite("reduce")
def reduce_idempotent_broadcast(inst: Instruction) -> Instruction | None:
    """reduce(broadcast(s), init, max|min|and|or) => broadcast(op(init, s))"""
    m = _broadcast_scalar(inst)
    if m is None or m[2] not in _IDEMPOTENT or m[3] == 0:
        return None
    s, init, op, _ = m
    return _spread(inst, add(inst, op, [init, s]))


@rewrite("reduce", unsafe=True)
def reduce_sum_broadcast(inst: Instruction) -> Instruction | None:
    """reduce(broadcast(s), init, add) => broadcast(init + s * n) (unsafe: rounding)"""
    m = _broadcast_scalar(inst)
    if m is None or m[2] != "add" or not is_float_inst(inst):
        return None
    s, init, _, n = m
    count = add(inst, "constant", [], {"value": np.array(n, dtype=s.shape.dtype)})
    return _spread(inst, add(inst, "add", [init, add(inst, "multiply", [s, count])]))
