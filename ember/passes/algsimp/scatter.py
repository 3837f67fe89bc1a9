"""Rewrites of scatter (see the package docstring).

`x.at[1:-1, 2:].set(v)` (or `x.at[0].set(row)`, `x.at[:-1, :-1].set(v)`) traces to a
scatter of one window at constant starts. As a dynamic-update-slice it is an update that
the CPU backend writes in place (only the window) and that loop fusion reads region by
region (codegen/regions.py), where a scatter is a kernel of its own. Exact: the two agree
whenever the window fits, which a constant start shows at compile time (a scatter skips a
window that does not fit, where a dynamic-update-slice would clamp its start: that case is
left alone).
"""

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import add


def _one_index(inst: Instruction) -> list[int] | None:
    """The single index vector of a scatter whose indices are a constant, else None."""
    indices = inst.operands[1]
    if indices.opcode != "constant":
        return None
    idx = np.asarray(indices.value)
    ivd = inst.attrs["index_vector_dim"]
    if idx.size == 0:  # x.at[:-1, :-1].set(u): one index vector of no components
        one = ivd < idx.ndim and idx.shape[ivd] == 0 and all(
            n == 1 for d, n in enumerate(idx.shape) if d != ivd)
        return [] if one else None
    if ivd == idx.ndim:  # each element is an index vector of one component
        return [int(idx.reshape(-1)[0])] if idx.size == 1 else None
    vecs = np.moveaxis(idx, ivd, -1).reshape(-1, idx.shape[ivd])
    return [int(v) for v in vecs[0]] if vecs.shape[0] == 1 else None


@rewrite("scatter")
def scatter_to_update_slice(inst: Instruction) -> Instruction | None:
    """scatter(A, constant index, U) overwriting one whole window that fits =>
    dynamic-update-slice(A, U, starts); with inserted window dims (x.at[0].set(row)) =>
    dynamic-update-slice(A, reshape(U), starts)"""
    if len(inst.operands) != 3 or inst.shape.is_tuple:
        return None
    operand, _, updates = inst.operands
    a = inst.attrs
    rank = operand.shape.rank
    inserted = set(a["inserted_window_dims"])
    window_rank = rank - len(inserted)
    if (plain_binary_opcode(inst.to_apply) != "overwrite"
            or tuple(a["update_window_dims"]) != tuple(range(window_rank))
            or updates.shape.rank != window_rank):
        return None
    vec = _one_index(inst)
    if vec is None:
        return None
    to_operand = list(a["scatter_dims_to_operand_dims"])
    starts = [vec[to_operand.index(d)] if d in to_operand else 0 for d in range(rank)]
    # the window in the operand: 1 along an inserted dimension (x.at[0].set(row))
    sizes = iter(updates.shape.dimensions)
    window = [1 if d in inserted else next(sizes) for d in range(rank)]
    if any(s < 0 or s + u > n for s, u, n in zip(starts, window, operand.shape.dimensions)):
        return None  # the scatter skips this window; an update would clamp it
    if inserted:
        updates = add(inst, "reshape", [updates],
                      shape=Shape(updates.shape.element_type, tuple(window)))
    consts = []
    for s in starts:  # scalars of the indices' type, as a traced update's starts are
        v = np.array(s, dtype=inst.operands[1].shape.dtype)
        v.setflags(write=False)
        consts.append(add(inst, "constant", [], {"value": v}))
    return add(inst, "dynamic-update-slice", [operand, updates, *consts], shape=inst.shape)
