"""The SPMD partitioner's rules for gather and scatter: split along the dims they take
whole, and a gather along its indices' batch dims too, rather than computed whole on every
device (spmd_partitioner.py drives them; spmd_rules.py has the others).

Input: the partitioner's state (`get`, `emit`, `refuse`, the mesh, the values made so far).
Output: the `Local` of a gather or scatter. The rules:
  gather   an operand dim no index reaches (not in start_index_map, not collapsed) and
           sliced whole keeps its split: it becomes an offset dim of the result, each
           device gathering from its block; an indices dim other than index_vector_dim
           keeps its split: it becomes a batch dim of the result, each device gathering
           for its indices (the operand whole). One indexed operand dim sliced one row at
           a time (an embedding lookup in a table split by rows) keeps its split too: each
           device gathers the rows it holds, the others masked, and the results are
           partial sums over that dim's axes (an all-reduce where read: the output's size
           moves, not the table's; chosen where twice the result is no larger than the
           operand). Other operand dims an index reaches are gathered first
           (a refusal), as is the index vector dim.
  scatter  an operand dim no index reaches (not inserted, not in
           scatter_dims_to_operand_dims) whose update window covers it whole keeps its
           split, the updates cut the same way along their window dim: each device
           scatters into its block. One indexed dim of single rows (inserted) keeps its
           split too (the gradient of an embedding lookup): each device's indices are
           moved to its rows' origin, and scatter skips the updates another device's rows
           take (out of its bounds), as the whole one skips those out of the operand's.
           Any other split (of other indexed dims, of the indices or of the updates'
           scatter dims) is gathered first (a refusal: combining scatters of parts of the
           updates would need the combiner to be a sum).
A mesh axis wanted by two dims of a result keeps the first (offset dims, then batch dims).
Invariants: a device only ever reads and writes its own blocks; the local gather or
scatter is the whole one's with slice sizes or window sizes of the block.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
        # one indexed dim of single rows split: each device gathers from its rows, the
        # rows other devices hold masked, then the devices' results added (`_masked`)
        rows = [d for d in indexed if so.dims[d]]
        masked = None
        # (where adding up the results, twice their size moved, costs less than gathering
        # the operand's rows)
        if len(rows) == 1 and sizes[rows[0]] == 1 and so.blocks(rows[0]) > 1 and \
                operand.shape.dimensions[rows[0]] % so.blocks(rows[0]) == 0 and \
                2 * math.prod(inst.shape.dimensions) <= math.prod(operand.shape.dimensions) \
                and np.iinfo(indices.shape.dtype).max >= operand.shape.dimensions[rows[0]]:
            masked = rows[0]
            to[masked] = so.dims[masked]
            used.update(so.dims[masked])
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
        sizes_local = list(want_o.local_shape(sizes))
        if masked is not None:
            sizes_local[masked] = 1
        local = {**at, "slice_sizes": tuple(sizes_local)}
        ops = [self.get(operand, want_o, reader(inst)), self.get(indices, want_i, reader(inst))]
        if masked is not None:
            return self._masked(inst, ops, masked, want_o, s, local)
        return Local(self.emit(inst, ops, s, local), s)

    def _masked(self: Any, inst: Instruction, ops: list[Instruction], d: int,
                have: HloSharding, s: HloSharding, attrs: dict) -> Local:
        """A gather whose operand is split along indexed dim `d` (rows of one): each
        device's indices clamped as the whole gather clamps them, moved to its rows'
        origin, the rows it does not hold masked to the identity of addition (-0.0 for
        floats: x + -0.0 is x, signed zeros too), left as partial sums over `d`'s axes
        (added where read, as a contraction's; booleans or'ed at once)."""
        b = self.b
        operand, indices = inst.operands
        x, idx = ops
        ivd = inst.attrs["index_vector_dim"]
        p = list(inst.attrs["start_index_map"]).index(d)
        it = idx.shape.element_type
        n = operand.shape.dimensions[d]
        axes = have.dims[d]
        block = n // have.blocks(d)
        dims = list(idx.shape.dimensions)

        def full(value: Any, shape: list[int], et: str) -> Instruction:
            return b.broadcast(b.scalar(value, et), shape, ())

        if ivd == len(dims):
            comp, before, after = idx, None, None
        else:
            def part(lo: int, hi: int) -> Instruction | None:
                if lo == hi:
                    return None
                return b.slice(idx, [lo if k == ivd else 0 for k in range(len(dims))],
                               [hi if k == ivd else m for k, m in enumerate(dims)])
            comp = part(p, p + 1)
            before, after = part(0, p), part(p + 1, dims[ivd])
        shape = list(comp.shape.dimensions)
        clamped = b.clamp(full(0, shape, it), comp, full(n - 1, shape, it))
        offset = self.rs.offset(axes, block)
        if it != "s32":
            offset = b.convert(offset, it)
        moved = b.binary("subtract", clamped, b.broadcast(offset, shape, ()))
        valid = b.binary("and", b.compare(moved, full(0, shape, it), "GE"),
                         b.compare(moved, full(block, shape, it), "LT"))
        pieces = [q for q in (before, moved, after) if q is not None]
        new_idx = pieces[0] if len(pieces) == 1 else b.concatenate(pieces, ivd)
        got = self.emit(inst, [x, new_idx], s, attrs)
        batch = [k for k in range(len(dims)) if k != ivd]
        if ivd != len(dims):
            valid = b.reshape(valid, [dims[k] for k in batch])
        out_dims = list(got.shape.dimensions)
        batch_out = [k for k in range(len(out_dims)) if k not in set(inst.attrs["offset_dims"])]
        mask = b.broadcast(valid, out_dims, batch_out)
        et = got.shape.element_type
        zero = False if et == "pred" else (
            complex(-0.0, -0.0) if et.startswith("c") else
            -0.0 if et in ("f16", "bf16", "f32", "f64") else 0)
        out = b.select(mask, got, full(zero, out_dims, et))
        order = tuple(a for a, _ in self.mesh if a in axes)
        if et == "pred":
            return Local(self.rs.all_reduce(out, order, "or", f"gather {inst.name} from rows "
                                            "split over the mesh"), s)
        return Local(out, s, order)

    def _scatter(self: Any, inst: Instruction) -> Local:
        if len(inst.operands) != 3:  # (a variadic scatter: whole)
            return self.whole(inst)
        operand, indices, updates = inst.operands
        at = inst.attrs
        so = self.env[operand].sharding
        # (a whole operand the scatter's readers want split, as an embedding gradient's
        # zeros are: sliced for free, each device then scatters into its block)
        wanted = self.wants.values.get(inst)
        if wanted is not None and so.is_replicated and not self.env[operand].partial \
                and self._scatter_plan(inst, wanted)[0] == wanted:
            so = wanted
        target, want_u, moved = self._scatter_plan(inst, so)
        si, su = self.env[indices].sharding, self.env[updates].sharding
        if target != so or not si.is_replicated or (not su.is_replicated and su != want_u):
            self.refuse(inst, "scatter: the operand's dims an index reaches (or a window "
                        "not covering them), or split indices or update scatter dims: "
                        "gathered")
        ops = [self.get(operand, target, reader(inst)),
               self.get(indices, self.replicated(indices.shape.rank), reader(inst)),
               self.get(updates, want_u, reader(inst))]
        if moved is not None:
            p = list(at["scatter_dims_to_operand_dims"]).index(moved)
            block = operand.shape.dimensions[moved] // target.blocks(moved)
            ops[1] = self._moved_indices(ops[1], at["index_vector_dim"], p,
                                         target.dims[moved], block)
        return Local(self.emit(inst, ops, target), target)

    def _scatter_plan(self: Any, inst: Instruction, so: HloSharding
                      ) -> tuple[HloSharding, HloSharding, int | None]:
        """For an operand laid out as `so`: the sharding the scatter keeps, the updates'
        sharding to match, and the indexed dim whose indices move (or None)."""
        operand, _, updates = inst.operands
        at = inst.attrs
        inserted = set(at["inserted_window_dims"])
        indexed = set(at["scatter_dims_to_operand_dims"])
        window = [d for d in range(operand.shape.rank) if d not in inserted]
        to_update = dict(zip(window, at["update_window_dims"]))  # operand dim -> update dim
        to: list[tuple[str, ...]] = [()] * operand.shape.rank
        tu: list[tuple[str, ...]] = [()] * updates.shape.rank
        for d in window:
            axes = so.dims[d]
            u = to_update[d]
            if axes and d not in indexed and \
                    updates.shape.dimensions[u] == operand.shape.dimensions[d]:
                to[d] = tu[u] = axes
        # one indexed dim of single rows split (the gradient of an embedding lookup): each
        # device scatters into its rows, its indices moved to their origin; scatter skips
        # the updates whose rows another device holds (out of its bounds), as the whole
        # scatter skips those out of the operand's
        rows = [d for d in indexed if so.dims[d]]
        moved = None
        if len(rows) == 1 and rows[0] in inserted and \
                operand.shape.dimensions[rows[0]] % so.blocks(rows[0]) == 0:
            moved = rows[0]
            to[moved] = so.dims[moved]
        return (fit(HloSharding(self.mesh, tuple(to)), operand.shape.dimensions),
                fit(HloSharding(self.mesh, tuple(tu)), updates.shape.dimensions), moved)

    def _moved_indices(self: Any, idx: Instruction, ivd: int, p: int,
                       axes: tuple[str, ...], block: int) -> Instruction:
        """`idx` with component `p` of its index vectors less this device's first row
        along `axes` (blocks of `block` rows)."""
        b = self.b
        dims = list(idx.shape.dimensions)
        it = idx.shape.element_type
        offset = self.rs.offset(axes, block)
        if it != "s32":
            offset = b.convert(offset, it)
        if ivd == len(dims):  # (one component: the index itself)
            return b.binary("subtract", idx, b.broadcast(offset, dims, ()))
        vec = [0] * dims[ivd]
        vec[p] = 1
        unit = b.constant(np.array(vec, dtype=idx.shape.dtype))
        shift = b.binary("multiply", b.broadcast(unit, dims, (ivd,)),
                         b.broadcast(offset, dims, ()))
        return b.binary("subtract", idx, shift)
