"""The SPMD partitioner's rules for gather and scatter: split along the dims they take
whole, and a gather along its indices' batch dims too, rather than computed whole on every
device (spmd_partitioner.py drives them; spmd_rules.py has the others).

Input: the partitioner's state (`get`, `emit`, `refuse`, the mesh, the values made so far).
Output: the `Local` of a gather or scatter. The rules:
  gather   an operand dim no index reaches (not in start_index_map, not collapsed) and
           sliced whole keeps its split: it becomes an offset dim of the result, each
           device gathering from its block; an indices dim other than index_vector_dim
           keeps its split: it becomes a batch dim of the result, each device gathering
           for its indices (the operand whole). Indexed operand dims sliced one row at a
           time (an embedding lookup in a table split by rows, or by rows and columns)
           keep their splits too: each device gathers what its block holds (every
           component of a lookup in its block), the rest masked, and the results are
           partial sums over those dims' axes (an all-reduce where read: the output's size
           moves, not the table's; chosen where twice the result is no larger than the
           operand). Other operand dims an index reaches are gathered first (a refusal),
           as is the index vector dim.
  scatter  an operand dim no index reaches (not inserted, not in
           scatter_dims_to_operand_dims) whose update window covers it whole keeps its
           split, the updates cut the same way along their window dim: each device
           scatters into its block. Indexed dims of single rows (inserted) keep their
           splits too (the gradient of an embedding lookup): each device's indices are
           moved to its block's origin, and scatter skips the updates another device's
           rows take (out of its bounds), as the whole one skips those out of the
           operand's. Updates split along their scatter dims (indices along their batch
           dims; the other side sliced to match), with add, max or min combining: each
           device scatters its share of the updates; for max and min into its whole block,
           then an all-reduce with the combiner; for add into the block on the first
           device of the group and into -0.0 (the identity) on the others, the results
           left as partial sums. Any other split (of other indexed dims, or split updates
           with another combiner: a set's last update wins) is gathered first (a refusal).
  gather marked PERMUTE_KEY (ppermute's one-program form, prims/collectives_permute.py)
           whose permuted dim is split one position per device: a collective-permute of
           each device's block (pairs of members made pairs of partitions per group);
           the select after it, marked too, is then that collective-permute.
A mesh axis wanted by two dims of a result keeps the first (offset dims, then batch dims).
Invariants: a device only ever reads and writes its own blocks; the local gather or
scatter is the whole one's with slice sizes or window sizes of the block.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.sharding import PERMUTE_KEY, HloSharding, replica_groups
from ember.passes.spmd_reshard import Local
from ember.passes.spmd_rules import fit, reader


class IndexingRules:
    """Mixed into the partitioner (see the module docstring)."""

    def _gather(self: Any, inst: Instruction) -> Local:
        moved = self._permute(inst)
        if moved is not None:
            return moved
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
        # indexed dims of single rows split (an embedding lookup in a table split by rows,
        # or by rows and columns): each device gathers from its block, what other devices
        # hold masked, then the devices' results added (`_masked`)
        rows = [d for d in sorted(indexed) if so.dims[d]]
        masked: list[int] = []
        # (where adding up the results, twice their size moved, costs less than gathering
        # the operand's rows)
        if rows and all(sizes[d] == 1 and so.blocks(d) > 1 and
                        operand.shape.dimensions[d] % so.blocks(d) == 0 and
                        np.iinfo(indices.shape.dtype).max >= operand.shape.dimensions[d]
                        for d in rows) and \
                2 * math.prod(inst.shape.dimensions) <= math.prod(operand.shape.dimensions):
            masked = rows
            for d in masked:
                to[d] = so.dims[d]
                used.update(so.dims[d])
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
        masked = [d for d in masked if want_o.dims[d]]
        for d in masked:
            sizes_local[d] = 1
        local = {**at, "slice_sizes": tuple(sizes_local)}
        ops = [self.get(operand, want_o, reader(inst)), self.get(indices, want_i, reader(inst))]
        if masked:
            return self._masked(inst, ops, masked, want_o, s, local)
        return Local(self.emit(inst, ops, s, local), s)

    def _masked(self: Any, inst: Instruction, ops: list[Instruction], dims: list[int],
                have: HloSharding, s: HloSharding, attrs: dict) -> Local:
        """A gather whose operand is split along indexed dims `dims` (rows of one): each
        device's index components for them clamped as the whole gather clamps them, moved
        to its block's origin, the rows it does not hold (any component outside its block)
        masked to the identity of addition (-0.0 for floats: x + -0.0 is x, signed zeros
        too), left as partial sums over those dims' axes (added where read, as a
        contraction's; booleans or'ed at once). Exactly one device holds each row, so the
        sum adds one value to identities: bit for bit the whole gather's."""
        b = self.b
        operand, indices = inst.operands
        x, idx = ops
        ivd = inst.attrs["index_vector_dim"]
        smap = list(inst.attrs["start_index_map"])
        it = idx.shape.element_type
        dims_i = list(idx.shape.dimensions)

        def full(value: Any, shape: list[int], et: str) -> Instruction:
            return b.broadcast(b.scalar(value, et), shape, ())

        def component(p: int) -> Instruction:
            if ivd == len(dims_i):
                return idx
            return b.slice(idx, [p if k == ivd else 0 for k in range(len(dims_i))],
                           [p + 1 if k == ivd else m for k, m in enumerate(dims_i)])

        pieces = [component(p) for p in range(len(smap))]
        valid = None
        for d in dims:
            p = smap.index(d)
            comp = pieces[p]
            shape = list(comp.shape.dimensions)
            n = operand.shape.dimensions[d]
            block = n // have.blocks(d)
            clamped = b.clamp(full(0, shape, it), comp, full(n - 1, shape, it))
            offset = self.rs.offset(have.dims[d], block)
            if it != "s32":
                offset = b.convert(offset, it)
            moved = b.binary("subtract", clamped, b.broadcast(offset, shape, ()))
            ok = b.binary("and", b.compare(moved, full(0, shape, it), "GE"),
                          b.compare(moved, full(block, shape, it), "LT"))
            valid = ok if valid is None else b.binary("and", valid, ok)
            pieces[p] = moved
        new_idx = pieces[0] if len(pieces) == 1 else b.concatenate(pieces, ivd)
        got = self.emit(inst, [x, new_idx], s, attrs)
        batch = [k for k in range(len(dims_i)) if k != ivd]
        if ivd != len(dims_i):
            valid = b.reshape(valid, [dims_i[k] for k in batch])
        out_dims = list(got.shape.dimensions)
        batch_out = [k for k in range(len(out_dims)) if k not in set(inst.attrs["offset_dims"])]
        mask = b.broadcast(valid, out_dims, batch_out)
        et = got.shape.element_type
        zero = False if et == "pred" else (
            complex(-0.0, -0.0) if et.startswith("c") else
            -0.0 if et in ("f16", "bf16", "f32", "f64") else 0)
        out = b.select(mask, got, full(zero, out_dims, et))
        axes = {a for d in dims for a in have.dims[d]}
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
        want_i, want_u, shared, reducer = self._scatter_shares(inst, target, want_u, si, su)
        if target != so or si != want_i and not si.is_replicated or \
                (not su.is_replicated and su != want_u):
            self.refuse(inst, "scatter: the operand's dims an index reaches (or a window "
                        "not covering them), or split indices or update scatter dims "
                        "(with a combiner other than add, max or min): gathered")
        why = reader(inst)
        ops = [self.get(operand, target, why), self.get(indices, want_i, why),
               self.get(updates, want_u, why)]
        for d in moved:
            p = list(at["scatter_dims_to_operand_dims"]).index(d)
            block = operand.shape.dimensions[d] // target.blocks(d)
            ops[1] = self._moved_indices(ops[1], at["index_vector_dim"], p,
                                         target.dims[d], block)
        if not shared:
            return Local(self.emit(inst, ops, target), target)
        order = tuple(a for a, _ in self.mesh if a in shared)
        if reducer != "add":  # (max, min: each device's share into the whole block, then
            # combined; the operand counted on every device changes nothing)
            out = self.emit(inst, ops, target)
            return Local(self.rs.all_reduce(out, order, reducer, f"scatter {inst.name}: "
                                            "each device's share of the updates"), target)
        # add: the operand kept by the first device of the group, the others scatter into
        # the identity (-0.0: -0.0 + u is u, signed zeros too); the results left as partial
        # sums over those axes, added where read
        b = self.b
        et = operand.shape.element_type
        zero = -0.0 if et in ("f16", "bf16", "f32", "f64") else (
            complex(-0.0, -0.0) if et.startswith("c") else 0)
        x = ops[0]
        first = b.compare(self.rs.offset(order, 1), b.scalar(0, "s32"), "EQ")
        shape = list(x.shape.dimensions)
        ops[0] = b.select(b.broadcast(first, shape, ()), x,
                          b.broadcast(b.scalar(zero, et), shape, ()))
        return Local(self.emit(inst, ops, target), target, order)

    def _scatter_shares(self: Any, inst: Instruction, target: HloSharding,
                        want_u: HloSharding, si: HloSharding, su: HloSharding
                        ) -> tuple[HloSharding, HloSharding, tuple[str, ...], str | None]:
        """Where the updates' scatter dims (the indices' batch dims) are split and the
        combiner is add, max or min: each device scatters its share of the updates. The
        indices' and updates' shardings for that, the mesh axes the shares are spread
        over (empty: none) and the combiner; else the indices whole."""
        _, indices, updates = inst.operands
        at = inst.attrs
        whole = self.replicated(indices.shape.rank)
        reducer = plain_binary_opcode(inst.to_apply)
        if reducer not in ("add", "maximum", "minimum") or \
                (reducer == "add" and updates.shape.element_type == "pred") or \
                (si.is_replicated and su.is_replicated):
            return whole, want_u, (), None
        ivd = at["index_vector_dim"]
        u_scatter = [d for d in range(updates.shape.rank) if d not in set(at["update_window_dims"])]
        i_batch = [d for d in range(indices.shape.rank) if d != ivd]
        used = {a for axes in target.dims for a in axes} | \
            {a for axes in want_u.dims for a in axes}
        ti: list[tuple[str, ...]] = [()] * indices.shape.rank
        tu = list(want_u.dims)
        shared: list[str] = []
        for du, di in zip(u_scatter, i_batch):
            axes = su.dims[du] or si.dims[di]
            if axes and not used & set(axes):
                ti[di] = tu[du] = axes
                used.update(axes)
                shared.extend(axes)
        want_i = fit(HloSharding(self.mesh, tuple(ti)), indices.shape.dimensions)
        new_u = fit(HloSharding(self.mesh, tuple(tu)), updates.shape.dimensions)
        for du, di in zip(u_scatter, i_batch):  # (cut unevenly on one side: not shared)
            if want_i.dims[di] != new_u.dims[du]:
                want_i, new_u = want_i.with_dim(di, ()), new_u.with_dim(du, ())
        shared = [a for a in shared if any(a in axes for axes in want_i.dims)]
        if not shared:
            return whole, want_u, (), None
        return want_i, new_u, tuple(shared), reducer

    def _scatter_plan(self: Any, inst: Instruction, so: HloSharding
                      ) -> tuple[HloSharding, HloSharding, list[int]]:
        """For an operand laid out as `so`: the sharding the scatter keeps, the updates'
        sharding to match, and the indexed dims whose indices move."""
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
        # indexed dims of single rows split (the gradient of an embedding lookup, in a
        # table split by rows, or rows and columns): each device scatters into its block,
        # its indices moved to its origin; scatter skips the updates whose rows another
        # device holds (out of its bounds), as the whole scatter skips those out of the
        # operand's
        moved = [d for d in sorted(indexed) if so.dims[d] and d in inserted and
                 operand.shape.dimensions[d] % so.blocks(d) == 0]
        for d in moved:
            to[d] = so.dims[d]
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

    def permuted_select(self: Any, inst: Instruction) -> Local | None:
        """The select of ppermute's one-program form (zeros where no pair targets), marked
        PERMUTE_KEY, after its gather became a collective-permute: that value as it is (a
        collective-permute leaves zeros on the partitions no pair targets)."""
        if inst.opcode != "select" or PERMUTE_KEY not in inst.metadata:
            return None
        v = self.env[inst.operands[1]]
        return v if v.inst.opcode == "collective-permute" else None

    def _permute(self: Any, inst: Instruction) -> Local | None:
        """ppermute's one-program form (a gather marked PERMUTE_KEY: position t of a dim,
        one per member of a mesh axis, read from position s for each pair (s, t)) whose
        dim is split one position per device: a collective-permute of each device's
        block, the pairs of members made pairs of partitions within each group of the
        axes splitting the dim. None where the dim is split otherwise."""
        mark = inst.metadata.get(PERMUTE_KEY)
        if mark is None:
            return None
        d, perm = mark
        operand = inst.operands[0]
        s = self.env[operand].sharding
        if s is None or not s.dims[d] or s.blocks(d) != operand.shape.dimensions[d]:
            return None
        x = self.get(operand, s, reader(inst))  # (pending partial sums added first)
        groups = replica_groups(self.mesh, s.dims[d])
        pairs = tuple((g[a], g[b]) for g in groups for a, b in perm)
        out = self.rs.collective_permute(x, pairs, len(groups[0]),
                                         f"ppermute over {s.dims[d]} (%{inst.name})")
        return Local(out, s)
