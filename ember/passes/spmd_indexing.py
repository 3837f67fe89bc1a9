"""The SPMD partitioner's rules for gather and scatter: split along the dims they take
whole, and a gather along its indices' batch dims too, rather than computed whole on every
device (spmd_partitioner.py drives them; spmd_rules.py has the others).

Input: the partitioner's state (`get`, `emit`, `refuse`, the mesh, the values made so far).
Output: the `Local` of a gather or scatter. The rules:
  gather   an operand dim no index reaches (not in start_index_map, not collapsed) and
           sliced whole keeps its split: it becomes an offset dim of the result, each
           device gathering from its block; an indices dim other than index_vector_dim
           keeps its split: it becomes a batch dim of the result, each device gathering
           for its indices (the operand whole). Operand dims an index reaches are
           gathered first (a refusal), as is the index vector dim.
  scatter  an operand dim no index reaches (not inserted, not in
           scatter_dims_to_operand_dims) whose update window covers it whole keeps its
           split, the updates cut the same way along their window dim: each device
           scatters into its block. Any other split (of an indexed dim, of the indices or
           of the updates' scatter dims) is gathered first (a refusal: combining
           scatters of parts of the updates would need the combiner to be a sum).
A mesh axis wanted by two dims of a result keeps the first (offset dims, then batch dims).
Invariants: a device only ever reads and writes its own blocks; the local gather or
scatter is the whole one's with slice sizes or window sizes of the block.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.ir import Instruction
from ember.hlo.sharding import HloSharding
from ember.passes.spmd_reshard import Local
from ember.passes.spmd_rules import fit, reader


class IndexingRules:
    """Mixed into the partitioner (see the module docstring)."""

    def _gather(self: Any, inst: Instruction) -> Local:
        operand, indices = inst.operands
        at = inst.attrs
        so, si = self.env[operand].sharding, self.env[indices].sharding
        collapsed = set(at["collapsed_slice_dims"])
        indexed = set(at["start_index_map"])
        sizes = list(at["slice_sizes"])
        ivd = at["index_vector_dim"]
        kept = [d for d in range(operand.shape.rank) if d not in collapsed]
        offset = dict(zip(kept, at["offset_dims"]))  # operand dim -> result dim
        batch_out = [d for d in range(inst.shape.rank) if d not in set(at["offset_dims"])]
        batch_in = [d for d in range(indices.shape.rank) if d != ivd]
        used: set[str] = set()
        dims: list[tuple[str, ...]] = [()] * inst.shape.rank
        to = [()] * operand.shape.rank
        for d in kept:
            axes = so.dims[d]
            if axes and d not in indexed and sizes[d] == operand.shape.dimensions[d] \
                    and not used & set(axes):
                to[d] = dims[offset[d]] = axes
                used.update(axes)
        ti = [()] * indices.shape.rank
        for d_in, d_out in zip(batch_in, batch_out):
            axes = si.dims[d_in]
            if axes and not used & set(axes):
                ti[d_in] = dims[d_out] = axes
                used.update(axes)
        want_o = fit(HloSharding(self.mesh, tuple(to)), operand.shape.dimensions)
        want_i = fit(HloSharding(self.mesh, tuple(ti)), indices.shape.dimensions)
        if want_o != so or want_i != si:
            self.refuse(inst, "gather: the operand's dims an index reaches (or sliced in "
                        "part), the index vector dim, or a mesh axis wanted twice: gathered")
        s = HloSharding(self.mesh, tuple(dims))
        local = {**at, "slice_sizes": tuple(want_o.local_shape(sizes))}
        ops = [self.get(operand, want_o, reader(inst)), self.get(indices, want_i, reader(inst))]
        return Local(self.emit(inst, ops, s, local), s)

    def _scatter(self: Any, inst: Instruction) -> Local:
        if len(inst.operands) != 3:  # (a variadic scatter: whole)
            return self.whole(inst)
        operand, indices, updates = inst.operands
        at = inst.attrs
        so = self.env[operand].sharding
        inserted = set(at["inserted_window_dims"])
        indexed = set(at["scatter_dims_to_operand_dims"])
        window = [d for d in range(operand.shape.rank) if d not in inserted]
        to_update = dict(zip(window, at["update_window_dims"]))  # operand dim -> update dim
        to = [()] * operand.shape.rank
        tu = [()] * updates.shape.rank
        for d in window:
            axes = so.dims[d]
            u = to_update[d]
            if axes and d not in indexed and \
                    updates.shape.dimensions[u] == operand.shape.dimensions[d]:
                to[d] = tu[u] = axes
        target = fit(HloSharding(self.mesh, tuple(to)), operand.shape.dimensions)
        want_u = fit(HloSharding(self.mesh, tuple(tu)), updates.shape.dimensions)
        si, su = self.env[indices].sharding, self.env[updates].sharding
        if target != so or not si.is_replicated or (not su.is_replicated and su != want_u):
            self.refuse(inst, "scatter: the operand's dims an index reaches (or a window "
                        "not covering them), or split indices or update scatter dims: "
                        "gathered")
        ops = [self.get(operand, target, reader(inst)),
               self.get(indices, self.replicated(indices.shape.rank), reader(inst)),
               self.get(updates, want_u, reader(inst))]
        return Local(self.emit(inst, ops, target), target)
