"""SPMD partitioning: one HLO module over a device mesh -> the one module every device runs
on its own blocks, with the collectives between them explicit (GSPMD's approach, small).

Input: a module whose entry parameters have shardings (`HloSharding`, by parameter
number; the hidden constants after them are whole on every device), shardings wanted for
the outputs (None: as propagated), and `with_sharding_constraint`s (instruction metadata
`CONSTRAINT_KEY`, which the lowering sets), and the parameters given no sharding (`free`:
the partitioner picks theirs). Output (`partition`): a new module whose entry
takes each parameter's block, then `s32[] partition-id` (the device's number, row-major
over the mesh), and returns each output's block; the output shardings; a
`PartitionReport` (the collectives inserted, the refusals).
Propagation is forward, in program order, one rule per opcode family, then backward
(spmd_backward.py: what outputs, constraints and readers want of their operands) and,
where those wants can change a choice, forward again following them (`partition`); a
value's sharding is that of its operands where the rule allows, and operands are
resharded to what the rule needs (spmd_reshard.py: local slices cost nothing, all-gathers
and all-to-alls are communication); the rules, per opcode family, are spmd_rules.py's,
those of gather and scatter spmd_indexing.py's, that of convolution spmd_conv.py's, those
of tuples, while loops and conditionals spmd_loops.py's (anything without one is computed
whole on every device, its operands gathered: a refusal when one was split). A broadcast
wanted split further is broadcast again from its operand's block, and a whole iota,
elementwise op or transpose wanted split is computed again for the block from its
operands' blocks (no whole temporary: `get`); dead leftovers are removed. A constraint
reshards the value to its sharding; an output is resharded to its wanted sharding, else
its partial sums are added. A sharding that does not divide a dimension leaves that
dimension whole.
Invariants: every device computes the same program; collectives appear in the same order
on every device; the result equals the unpartitioned module's (sums in another order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ember.hlo.builder import Builder
from ember.hlo.ir import Instruction, Module, note_callees_changed
from ember.hlo.shape import Shape
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding, MeshAxes
from ember.passes.base import HloPass
from ember.passes.spmd_backward import Wants, propagate_back
from ember.passes.spmd_conv import ConvRules
from ember.passes.spmd_indexing import IndexingRules
from ember.passes.spmd_loops import LoopRules
from ember.passes.spmd_reshard import Local, PartitionReport, Refusal, Resharder
from ember.passes.spmd_rules import PartitionRules, blocks_of, fit, reader


@dataclass
class Partitioned:
    module: Module
    out_shardings: list[HloSharding | None]
    report: PartitionReport
    # every entry parameter's sharding (those in `free` as backward propagation chose)
    in_shardings: dict[int, HloSharding | None] = field(default_factory=dict)


class _Partitioner(PartitionRules, IndexingRules, LoopRules, ConvRules):
    def __init__(self, module: Module, mesh: MeshAxes,
                 params: dict[int, HloSharding], outs: Sequence[HloSharding | None] | None,
                 free: frozenset[int] = frozenset(), wants: Wants | None = None,
                 src: Module | None = None) -> None:
        self.src = module.clone() if src is None else src
        self.mesh = mesh
        self.params = params
        self.outs = outs
        self.free = free
        self.wants = wants or Wants()
        # per while loop: the shardings its body gave its results (before the carry's)
        self.loop_hints: dict[Instruction, list[HloSharding | None]] = {}
        self.chosen: dict[int, HloSharding | None] = {}
        self.b = Builder(self.src.entry.name)
        self.report = PartitionReport(num_partitions=int(np.prod([s for _, s in mesh])))
        self.env: dict[Instruction, Local] = {}
        self._resharded: dict[tuple[Instruction, HloSharding], Instruction] = {}

    def for_body(self, name: str) -> _Partitioner:
        """A partitioner of one called computation (a loop's body or condition): the same
        mesh and report, a builder, values and reshards of its own."""
        sub = object.__new__(type(self))
        sub.src, sub.mesh, sub.params, sub.outs = self.src, self.mesh, {}, None
        sub.free, sub.wants, sub.loop_hints, sub.chosen = frozenset(), Wants(), {}, {}
        sub.b = Builder(name)
        sub.report = self.report
        sub.env = {}
        sub._resharded = {}
        return sub

    def replicated(self, rank: int) -> HloSharding:
        return HloSharding.replicated(self.mesh, rank)

    def refuse(self, inst: Instruction, reason: str) -> None:
        self.report.refusals.append(Refusal(inst.name or "", inst.opcode, reason))

    def run(self) -> Partitioned:
        entry = self.src.entry
        params = sorted(entry.parameters, key=lambda p: p.parameter_number)
        b = self.b
        pid = b.parameter(Shape("s32", ()), name="partition-id", number=len(params))
        self.rs = Resharder(b, self.mesh, pid, self.report)
        for p in params:
            s = self.params.get(p.parameter_number)
            if p.parameter_number in self.free:  # (its readers' want; else whole)
                s = self.wants.params.get(p.parameter_number)
            s = fit(s, p.shape.dimensions) if s is not None and not p.shape.is_tuple else s
            if s is None and not p.shape.is_tuple:
                s = self.replicated(p.shape.rank)
            shape = p.shape if s is None else Shape(p.shape.element_type,
                                                    s.local_shape(p.shape.dimensions))
            new = b.parameter(shape, name=p.name, number=p.parameter_number)
            self.chosen[p.parameter_number] = s
            new.metadata.update({k: v for k, v in p.metadata.items() if k != CONSTRAINT_KEY})
            self.env[p] = self.constrain(p, Local(new, s))
        for inst in entry.post_order():
            if inst.opcode == "parameter":
                continue
            if inst is entry.root:
                break
            self.env[inst] = self.constrain(inst, self.visit(inst))
        root = entry.root
        out_shardings: list[HloSharding | None] = []
        if root.opcode == "tuple" and root.operands and root.parent is entry:
            pieces = []
            for k, o in enumerate(root.operands):
                inst_k, s = self.output(o, k)
                pieces.append(inst_k)
                out_shardings.append(s)
            new_root = b.tuple(pieces)
        else:
            if root.opcode != "parameter" and root not in self.env:
                self.env[root] = self.constrain(root, self.visit(root))
            new_root, s = self.output(root, 0)
            out_shardings.append(s)
        comp = b.build_computation(new_root)
        comp.remove_dead()
        module = Module(self.src.name, comp)
        module.config = dict(self.src.config)
        return Partitioned(module, out_shardings, self.report, dict(self.chosen))

    def output(self, o: Instruction, k: int) -> tuple[Instruction, HloSharding | None]:
        v = self.env[o]
        want = self.outs[k] if self.outs is not None and k < len(self.outs) else None
        if v.sharding is None:
            return v.inst, None
        if want is None:
            want = v.sharding
        want = fit(want, o.shape.dimensions)
        return self.rs.reshard(v, want, "the output's sharding"), want

    def constrain(self, inst: Instruction, v: Local) -> Local:
        want = inst.metadata.get(CONSTRAINT_KEY)
        if want is None or v.sharding is None or want.mesh != self.mesh:
            return v
        want = fit(want, inst.shape.dimensions)
        return Local(self.rs.reshard(v, want, "with_sharding_constraint"), want)

    # -- building ----------------------------------------------------------------------------

    def emit(self, inst: Instruction, operands: list[Instruction], s: HloSharding | None,
             attrs: dict[str, Any] | None = None) -> Instruction:
        """`inst` on per-device operands, with the local shape of sharding `s`."""
        shape = inst.shape if s is None else Shape(inst.shape.element_type,
                                                   s.local_shape(inst.shape.dimensions))
        md = {k: v for k, v in inst.metadata.items() if k != CONSTRAINT_KEY}
        return self.b.op(inst.opcode, operands, dict(inst.attrs if attrs is None else attrs),
                         shape=shape, called=list(inst.called_computations), metadata=md,
                         name=inst.name)

    def get(self, inst: Instruction, target: HloSharding | None, why: str) -> Instruction:
        """`inst`'s per-device value laid out as `target`, made once per layout. A value
        computed whole from cheap pieces (broadcasts, iotas, elementwise ops, transposes
        of them) and wanted split is computed again for the block from its operands'
        blocks (`_remake`) rather than whole and sliced; partial sums are added once."""
        v = self.env[inst]
        key = (inst, target)
        got = self._resharded.get(key)
        if got is not None:
            return got
        if target is not None and not v.partial and v.sharding is not None \
                and v.sharding != target:
            got = self._remake(inst, v.sharding, target, why)
            if got is not None:
                self._resharded[key] = got
                return got
        if v.partial and not self.rs.scatters(v, target):
            # (added up once: every later reader gets the sums without another all-reduce)
            v = self.env[inst] = self.rs.resolve(v, why)
        got = self._resharded[key] = self.rs.reshard(v, target, why)
        return got

    def _remake(self, inst: Instruction, have: HloSharding, target: HloSharding, why: str
                ) -> Instruction | None:
        """`inst` emitted again at `target`'s blocks, or None where that is no cheaper than
        slicing: a broadcast split further (from its operand's block), and, for a value
        whole on every device, an iota, an elementwise op or a transpose."""
        op = inst.opcode
        if op == "broadcast" and all(w[:len(h)] == h for h, w in zip(have.dims, target.dims)):
            want = HloSharding(self.mesh, tuple(target.dims[d]
                                                for d in inst.attrs["dimensions"]))
            return self.emit(inst, [self.get(inst.operands[0], want, why)], target)
        if not have.is_replicated:
            return None
        if op == "iota":
            return self._local_iota(inst, target)
        if op == "transpose":
            perm = inst.attrs["dimensions"]
            dims = [()] * len(perm)
            for i, p in enumerate(perm):
                dims[p] = target.dims[i]
            want = HloSharding(self.mesh, tuple(dims))
            return self.emit(inst, [self.get(inst.operands[0], want, why)], target)
        if inst.is_elementwise() and inst.operands and all(
                o.shape.dimensions in ((), inst.shape.dimensions) for o in inst.operands):
            ops = [self.get(o, target if o.shape.rank == inst.shape.rank
                            else self.replicated(0), why) for o in inst.operands]
            return self.emit(inst, ops, target)
        return None

    def _local_iota(self, inst: Instruction, target: HloSharding) -> Instruction:
        """A device's block of an iota: an iota of the block's shape, plus the block's
        offset along the counted dimension when that one is split."""
        b, d = self.b, inst.attrs["iota_dimension"]
        et = inst.shape.element_type
        local = Shape(et, target.local_shape(inst.shape.dimensions))
        out = b.op("iota", [], {"iota_dimension": d}, shape=local, metadata=inst.metadata)
        if target.dims[d]:
            start = b.convert(self.rs.offset(target.dims[d], local.dimensions[d]), et)
            out = b.add(out, b.broadcast(start, local.dimensions, ()))
        return out

    # -- rules -------------------------------------------------------------------------------

    def visit(self, inst: Instruction) -> Local:
        op = inst.opcode
        if op in ("tuple", "get-tuple-element", "while", "conditional"):  # (spmd_loops.py)
            return getattr(self, "_" + op.replace("-", "_"))(inst)
        if op == "reduce" and not any(o.shape.is_tuple for o in inst.operands):
            return self._reduce(inst)  # (a variadic one's result is a tuple)
        if inst.shape.is_tuple or any(o.shape.is_tuple for o in inst.operands):
            return self.whole(inst)
        moved = self.permuted_select(inst)  # (spmd_indexing.py: ppermute's zeros)
        if moved is not None:
            return moved
        if inst.is_elementwise() and all(o.shape.dimensions in ((), inst.shape.dimensions)
                                         for o in inst.operands) and inst.operands:
            return self.elementwise(inst)
        rule = getattr(self, "_" + op.replace("-", "_"), None)
        if rule is not None:
            return rule(inst)
        return self.whole(inst)

    def whole(self, inst: Instruction, reason: str = "") -> Local:
        """`inst` computed whole on every device, its operands gathered."""
        split = [o for o in inst.operands if (v := self.env[o]).partial
                 or (v.sharding is not None and not v.sharding.is_replicated)
                 or any(e is not None and not e.is_replicated for e in v.elements or ())]
        if split:
            self.refuse(inst, reason or f"no partitioning rule for {inst.opcode}: operands "
                        "gathered, computed whole on every device")
        ops = [self.whole_tuple(o, reader(inst)) if o.shape.is_tuple
               else self.get(o, self.replicated(o.shape.rank), reader(inst))
               for o in inst.operands]
        s = None if inst.shape.is_tuple else self.replicated(inst.shape.rank)
        return Local(self.emit(inst, ops, s), s)

    def elementwise(self, inst: Instruction) -> Local:
        rank = inst.shape.rank
        cands = [self.env[o].sharding for o in inst.operands if o.shape.rank == rank]
        target = max(cands, key=blocks_of) if cands else self.replicated(rank)
        wanted = self.wants.values.get(inst)
        if wanted is not None and wanted in cands:  # (operands disagree: the readers' pick)
            target = wanted
        ops = [self.get(o, target if o.shape.rank == rank else self.replicated(0),
                        reader(inst)) for o in inst.operands]
        return Local(self.emit(inst, ops, target), target)


def _worth_again(first: _Partitioner, wants: Wants) -> bool:
    """Whether a second forward pass with `wants` can differ from the first: a free
    parameter is wanted split, an elementwise op's operands disagree and one of them is
    wanted, a loop's carry or a whole scatter is wanted split."""
    if wants.carries:
        return True
    if any(k in first.free for k in wants.params):
        return True
    for inst, s in wants.values.items():
        v = first.env.get(inst)
        if inst.opcode == "scatter" and v is not None and v.sharding is not None \
                and v.sharding.is_replicated:  # (its whole operand may be sliced)
            return True
        if v is not None and v.sharding != s and inst.is_elementwise() and any(
                first.env[o].sharding == s for o in inst.operands if o in first.env):
            return True
    return False


def partition(module: Module, mesh: MeshAxes, params: dict[int, HloSharding],
              outs: Sequence[HloSharding | None] | None = None,
              free: Sequence[int] = ()) -> Partitioned:
    """The per-device module of `module` (see the module docstring); `module` unchanged.
    Parameters numbered in `free` have no sharding of their own: they take the one their
    readers want (backward propagation, spmd_backward.py), else are whole. A forward pass,
    the backward pass over its result, then, where the wants can change anything, a
    second forward pass that follows them (the first one's module dropped)."""
    first = _Partitioner(module, mesh, params, outs, frozenset(free))
    done = first.run()
    wants = propagate_back(first.src.entry, first.env, outs, first.loop_hints)
    if not _worth_again(first, wants):
        return done
    return _Partitioner(module, mesh, params, outs, frozenset(free), wants,
                        src=first.src).run()


class SpmdPartitioner(HloPass):
    """The partitioner as a pass: `run(module)` makes `module` its per-device module in
    place (False, unchanged, for a mesh of one device); `report` and `out_shardings` say
    what it did."""

    name = "spmd-partitioner"

    def __init__(self, mesh: MeshAxes, params: dict[int, HloSharding],
                 outs: Sequence[HloSharding | None] | None = None) -> None:
        self.mesh = mesh
        self.params = params
        self.outs = outs
        self.report = PartitionReport()
        self.out_shardings: list[HloSharding | None] = []

    def run(self, module: Module) -> bool:
        if int(np.prod([s for _, s in self.mesh])) <= 1:
            return False
        done = partition(module, self.mesh, self.params, self.outs)
        new = done.module
        module.entry, module._extra, module.uniquer = new.entry, new._extra, new.uniquer
        note_callees_changed()
        self.report, self.out_shardings = done.report, done.out_shardings
        return True
