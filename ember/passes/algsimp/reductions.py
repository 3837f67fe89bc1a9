"""Rewrites of reduce (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import add, is_float_inst, scalar_constant_value

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


def _plain_reduce(inst: Instruction) -> str | None:
    """The combiner's opcode of a one-operand reduce with a plain commutative combiner."""
    if len(inst.operands) != 2:
        return None
    op = plain_binary_opcode(inst.to_apply)
    return None if op == "overwrite" else op


@rewrite("reduce")
def reduce_unit_dims(inst: Instruction) -> Instruction | None:
    """reduce(A, init, op) over dimensions of extent 1 => op(reshape(A), init)"""
    # Each output element combines exactly one element of A with init: the evaluator's
    # init + x (sum([-0.0]) is +0.0, so the init stays: A + 0.0 is no A when A is -0.0).
    # Autodiff writes these: the transpose of a broadcast that adds a unit dimension (a
    # bias [n] broadcast to [1, n], softmax's keepdims max) sums over that dimension.
    op = _plain_reduce(inst)
    x, init = inst.operands[:2]
    if op is None or any(x.shape.dimensions[d] != 1 for d in inst.attrs["dimensions"]):
        return None
    shape = inst.shape.without_layout()
    r = add(inst, "reshape", [x], shape=shape)
    if shape.rank:
        init = add(inst, "broadcast", [init], {"dimensions": ()}, shape)
    return add(inst, op, [r, init])


def _is_identity(op: str, value: np.ndarray) -> bool:
    """Is `value` an identity of the combiner `op` (either zero for add: the sign of a sum's
    zero comes from its init, which the rewrites that use this keep)?"""
    v = value.item()
    if op in ("add", "xor", "or"):
        return v == 0
    if op in ("multiply", "and"):
        return v == 1 if value.dtype != np.bool_ else bool(v)
    return False


@rewrite("reduce")
def reduce_of_reduce(inst: Instruction) -> Instruction | None:
    """reduce(reduce(A, i, op, d1), i, op, d2) => reduce(A, i, op, d1 + d2), the inner
    reduce's only user, i the same (bitwise) and an identity of op unless op is idempotent"""
    # A reduction promises no order among its elements, so one reduction over both sets of
    # dimensions computes the same combination of A's elements; the init takes part once
    # instead of once per inner output, which changes nothing when it is an identity (or
    # when op(i, op(i, x)) = op(i, x): max, min, and, or).
    op = _plain_reduce(inst)
    y, init = inst.operands[:2]
    if op is None or y.opcode != "reduce" or len(y.users) != 1 or _plain_reduce(y) != op:
        return None
    a, inner_init = y.operands
    iv, ov = scalar_constant_value(init), scalar_constant_value(inner_init)
    if iv is None or ov is None or iv.tobytes() != ov.tobytes():
        return None
    if op not in _IDEMPOTENT and not _is_identity(op, iv):
        return None
    d1 = set(y.attrs["dimensions"])
    kept = [d for d in range(a.shape.rank) if d not in d1]  # y's dim j is A's dim kept[j]
    dims = tuple(sorted(d1 | {kept[j] for j in inst.attrs["dimensions"]}))
    return inst.parent.add_instruction(Instruction(
        "reduce", inst.shape.without_layout(), [a, init], {"dimensions": dims},
        [inst.to_apply], metadata=dict(inst.metadata)))
