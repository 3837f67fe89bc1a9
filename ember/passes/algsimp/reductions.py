"""Rewrites of reduce (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
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


@rewrite("reduce")
def reduce_of_transpose(inst: Instruction) -> Instruction | None:
    """reduce(transpose(A, p), init, dims) => reduce(A, init, p[dims]), transposed back when
    the kept dimensions come out in another order"""
    # A reduction promises no order among the reduced elements, so reading them in A's own
    # order is exact; the layout pass would otherwise turn the transpose into a layout and
    # leave the reduction reading the minor dimension as its kept one (sum(x.T, axis=1)
    # becomes sum(x, axis=0), which reduction splitting and the column scheme handle).
    if len(inst.operands) != 2 or inst.operands[0].opcode != "transpose":
        return None
    t, init = inst.operands
    perm = t.attrs["dimensions"]  # result dim i is operand dim perm[i]
    dims = set(inst.attrs["dimensions"])
    kept_in_a = [perm[d] for d in range(len(perm)) if d not in dims]
    shape = Shape(inst.shape.element_type,
                  tuple(t.operand.shape.dimensions[a] for a in sorted(kept_in_a)))
    red = inst.parent.add_instruction(Instruction(
        "reduce", shape, [t.operand, init], {"dimensions": tuple(sorted(perm[d] for d in dims))},
        [inst.to_apply], metadata=dict(inst.metadata)))
    if kept_in_a == sorted(kept_in_a):
        return red
    order = sorted(kept_in_a)
    return add(inst, "transpose", [red], {"dimensions": tuple(order.index(a) for a in kept_in_a)})
