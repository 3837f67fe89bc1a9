"""SPMD partitioning: one HLO module over a device mesh -> the one module every device runs
on its own blocks, with the collectives between them explicit (GSPMD's approach, small).

Input: a module whose entry parameters have shardings (`HloSharding`, by parameter
number; the hidden constants after them are whole on every device), shardings wanted for
the outputs (None: as propagated), and `with_sharding_constraint`s (instruction metadata
`CONSTRAINT_KEY`, which the lowering sets). Output (`partition`): a new module whose entry
takes each parameter's block, then `s32[] partition-id` (the device's number, row-major
over the mesh), and returns each output's block; the output shardings; a
`PartitionReport` (the collectives inserted, the refusals).
Propagation is forward, in program order, one rule per opcode family; a value's sharding
is that of its operands where the rule allows, and operands are resharded to what the rule
needs (spmd_reshard.py: local slices cost nothing, all-gathers are communication):
  elementwise         the operands' most split sharding; the others sliced to it
  broadcast           operand dim i's split on result dim dimensions[i]; new dims whole
  transpose           permuted
  reshape             a split dim keeps its split where it is the major dim of a group of
                      dims whose product the reshape keeps and the result's major dim of
                      that group divides by its blocks; else gathered (a refusal)
  reduce (one input)  kept dims keep their split; a split reduced dim reduces locally, then
                      sums stay partial (added where needed: all-reduce or reduce-scatter;
                      sums, reshapes and transposes of partial sums stay partial too),
                      max/min (and or/and on booleans) all-reduce at once; any other
                      combiner, or an init that is not its identity, gathers (a refusal)
  dot                 batch and free dims keep their operands' split; a contracting dim split
                      the same on both sides multiplies locally, leaving partial sums (an
                      all-reduce where used: the contraction across shards); split on one
                      side only, the other side is sliced to match; a mesh axis wanted by two
                      dims of the result keeps the first (contracting, batch, lhs, rhs)
  slice, concatenate, dims they leave whole keep their split; the others are gathered
  reverse, pad, sort  (a refusal)
  anything else       operands gathered, computed whole on every device (a refusal, said
                      in the report, when an operand was split)
A broadcast wanted split further is broadcast again from its operand's block, and a whole
iota, elementwise op or transpose wanted split is computed again for the block from its
operands' blocks (no whole temporary: `get`); dead leftovers are removed. A
constraint reshards the value to its sharding; an output is resharded to its wanted
sharding, else its partial sums are added. A sharding that does not divide a dimension
leaves that dimension whole.
Invariants: every device computes the same program; collectives appear in the same order
on every device; the result equals the unpartitioned module's (sums in another order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ember.hlo.builder import Builder
from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction, Module
from ember.hlo.shape import Shape
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding, MeshAxes
from ember.passes.base import HloPass
from ember.passes.spmd_reshard import Local, PartitionReport, Refusal, Resharder

# reduce combiners the partitioner splits, and their identities (the init they need)
_SPLIT_REDUCERS = ("add", "maximum", "minimum", "or", "and")


@dataclass
class Partitioned:
    module: Module
    out_shardings: list[HloSharding | None]
    report: PartitionReport


def _fit(s: HloSharding, shape: Sequence[int]) -> HloSharding:
    """`s` with the split of any dimension it does not divide evenly dropped."""
    dims = tuple(a if n % s.blocks(d) == 0 else () for d, (n, a) in
                 enumerate(zip(shape, s.dims)))
    return HloSharding(s.mesh, dims)


def _for(inst: Instruction) -> str:
    """Why a reshard is there: the instruction that needs it."""
    return f"for %{inst.name} ({inst.opcode})"


def _blocks(s: HloSharding) -> int:
    return int(np.prod([s.blocks(d) for d in range(len(s.dims))])) if s.dims else 1


def _is_identity(init: Instruction, reducer: str) -> bool:
    if init.opcode != "constant":
        return False
    v = np.asarray(init.value)
    if reducer == "add":
        return bool(np.all(v == 0))
    if v.dtype == np.bool_:  # (or and max keep False; and and min keep True)
        return bool(v) == (reducer in ("minimum", "and"))
    if reducer in ("or", "and"):  # (bitwise on integers: not split, see _reduce)
        return False
    if np.issubdtype(v.dtype, np.floating):
        return bool(v == (-np.inf if reducer == "maximum" else np.inf))
    info = np.iinfo(v.dtype)
    return bool(v == (info.min if reducer == "maximum" else info.max))


def _reshape_groups(a: Sequence[int], b: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pairs (operand dims, result dims) whose products are equal, in order."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        gi: list[int] = []
        gj: list[int] = []
        pa = pb = 1
        if i < len(a):
            pa, i = pa * a[i], i + 1
            gi.append(i - 1)
        if j < len(b):
            pb, j = pb * b[j], j + 1
            gj.append(j - 1)
        while pa != pb:
            if pa < pb and i < len(a):
                pa, i = pa * a[i], i + 1
                gi.append(i - 1)
            elif pb < pa and j < len(b):
                pb, j = pb * b[j], j + 1
                gj.append(j - 1)
            else:
                break
        groups.append((gi, gj))
    return groups


class _Partitioner:
    def __init__(self, module: Module, mesh: MeshAxes,
                 params: dict[int, HloSharding], outs: Sequence[HloSharding | None] | None
                 ) -> None:
        self.src = module.clone()
        self.mesh = mesh
        self.params = params
        self.outs = outs
        self.b = Builder(self.src.entry.name)
        self.report = PartitionReport(num_partitions=int(np.prod([s for _, s in mesh])))
        self.env: dict[Instruction, Local] = {}
        self._resharded: dict[tuple[Instruction, HloSharding], Instruction] = {}

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
            s = _fit(s, p.shape.dimensions) if s is not None and not p.shape.is_tuple else s
            if s is None and not p.shape.is_tuple:
                s = self.replicated(p.shape.rank)
            shape = p.shape if s is None else Shape(p.shape.element_type,
                                                    s.local_shape(p.shape.dimensions))
            new = b.parameter(shape, name=p.name, number=p.parameter_number)
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
        return Partitioned(module, out_shardings, self.report)

    def output(self, o: Instruction, k: int) -> tuple[Instruction, HloSharding | None]:
        v = self.env[o]
        want = self.outs[k] if self.outs is not None and k < len(self.outs) else None
        if v.sharding is None:
            return v.inst, None
        if want is None:
            want = v.sharding
        want = _fit(want, o.shape.dimensions)
        return self.rs.reshard(v, want, "the output's sharding"), want

    def constrain(self, inst: Instruction, v: Local) -> Local:
        want = inst.metadata.get(CONSTRAINT_KEY)
        if want is None or v.sharding is None or want.mesh != self.mesh:
            return v
        want = _fit(want, inst.shape.dimensions)
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
        if inst.shape.is_tuple or any(o.shape.is_tuple for o in inst.operands):
            return self.whole(inst)
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
                 or (v.sharding is not None and not v.sharding.is_replicated)]
        if split:
            self.refuse(inst, reason or f"no partitioning rule for {inst.opcode}: operands "
                        "gathered, computed whole on every device")
        ops = [self.get(o, None if o.shape.is_tuple else self.replicated(o.shape.rank),
                        _for(inst))
               for o in inst.operands]
        s = None if inst.shape.is_tuple else self.replicated(inst.shape.rank)
        return Local(self.emit(inst, ops, s), s)

    def elementwise(self, inst: Instruction) -> Local:
        rank = inst.shape.rank
        cands = [self.env[o].sharding for o in inst.operands if o.shape.rank == rank]
        target = max(cands, key=_blocks) if cands else self.replicated(rank)
        ops = [self.get(o, target if o.shape.rank == rank else self.replicated(0),
                        _for(inst)) for o in inst.operands]
        return Local(self.emit(inst, ops, target), target)

    def _constant(self, inst: Instruction) -> Local:
        s = self.replicated(inst.shape.rank)
        return Local(self.emit(inst, [], s), s)

    _iota = _constant

    def _broadcast(self, inst: Instruction) -> Local:
        (x,) = inst.operands
        sx = self.env[x].sharding
        dims = [()] * inst.shape.rank
        for i, d in enumerate(inst.attrs["dimensions"]):
            dims[d] = sx.dims[i]
        s = HloSharding(self.mesh, tuple(dims))
        return Local(self.emit(inst, [self.get(x, sx, _for(inst))], s), s)

    def get_linear(self, inst: Instruction, target: HloSharding, why: str
                   ) -> tuple[Instruction, tuple[str, ...]]:
        """For a reader linear in `inst` (the sum of its results on partial sums is its
        result on the sum): the value laid out as `target` with its sums left pending
        (gathered or sliced as they are), and the axes they are pending over."""
        v = self.env[inst]
        if not v.partial:
            return self.get(inst, target, why), ()
        return self.rs.reshard(Local(v.inst, v.sharding), target, why), v.partial

    def _mesh_order(self, axes: Sequence[str]) -> tuple[str, ...]:
        return tuple(a for a, _ in self.mesh if a in axes)

    def _transpose(self, inst: Instruction) -> Local:
        (x,) = inst.operands
        sx = self.env[x].sharding
        s = HloSharding(self.mesh, tuple(sx.dims[p] for p in inst.attrs["dimensions"]))
        local, partial = self.get_linear(x, sx, _for(inst))
        return Local(self.emit(inst, [local], s), s, partial)

    def _reshape(self, inst: Instruction) -> Local:
        (x,) = inst.operands
        sx = self.env[x].sharding
        a, out = x.shape.dimensions, inst.shape.dimensions
        keep = list(sx.dims)
        dims: list[tuple[str, ...]] = [()] * len(out)
        for gi, gj in _reshape_groups(a, out):
            split = [i for i in gi if sx.dims[i]]
            if not split:
                continue
            major_i = next((i for i in gi if a[i] != 1), None)
            major_j = next((j for j in gj if out[j] != 1), None)
            i = split[0]
            if (len(split) == 1 and i == major_i and major_j is not None
                    and out[major_j] % sx.blocks(i) == 0):
                dims[major_j] = sx.dims[i]
            else:
                for i in split:
                    keep[i] = ()
                self.refuse(inst, f"reshape {list(a)} -> {list(out)} cannot keep dims "
                            f"{split} split: gathered")
        target = HloSharding(self.mesh, tuple(keep))
        s = HloSharding(self.mesh, tuple(dims))
        local, partial = self.get_linear(x, target, _for(inst))
        return Local(self.emit(inst, [local], s), s, partial)

    def _reduce(self, inst: Instruction) -> Local:
        if len(inst.operands) != 2:
            return self.whole(inst)
        x, init = inst.operands
        v = self.env[x]
        sx = v.sharding
        rdims = set(inst.attrs["dimensions"])
        reducer = plain_binary_opcode(inst.to_apply)
        axes = tuple(a for d in sorted(rdims) for a in sx.dims[d])
        target = sx
        if axes and (reducer not in _SPLIT_REDUCERS or not _is_identity(init, reducer)):
            self.refuse(inst, f"reduce with combiner {reducer or 'computation'} and init "
                        f"{init.name} over split dims: gathered")
            target = HloSharding(self.mesh, tuple(() if d in rdims else a
                                                  for d, a in enumerate(sx.dims)))
            axes = ()
        s = HloSharding(self.mesh, tuple(a for d, a in enumerate(target.dims)
                                         if d not in rdims))
        pending: tuple[str, ...] = ()
        if reducer == "add" and _is_identity(init, reducer):  # (a sum: linear)
            operand, pending = self.get_linear(x, target, _for(inst))
        else:
            operand = self.get(x, target, _for(inst))
        local = self.emit(inst, [operand, self.get(init, self.replicated(0), _for(inst))], s)
        if not axes:
            return Local(local, s, pending)
        order = self._mesh_order(axes)
        if reducer == "add":
            return Local(local, s, self._mesh_order(set(order) | set(pending)))
        out = self.rs.all_reduce(local, order, reducer, f"reduce {inst.name} over split "
                                 "dims", to_apply=inst.to_apply)
        return Local(out, s)

    def _dot(self, inst: Instruction) -> Local:
        lhs, rhs = inst.operands
        sl, sr = self.env[lhs].sharding, self.env[rhs].sharding
        at = inst.attrs
        lb, rb = list(at["lhs_batch_dims"]), list(at["rhs_batch_dims"])
        lc, rc = list(at["lhs_contracting_dims"]), list(at["rhs_contracting_dims"])
        lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
        rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
        used: set[str] = set()

        def take(axes: tuple[str, ...]) -> tuple[str, ...]:
            if not axes or used & set(axes):
                return ()
            used.update(axes)
            return axes

        contract = [take(sl.dims[i] or sr.dims[j]) for i, j in zip(lc, rc)]
        batch = [take(sl.dims[i] or sr.dims[j]) for i, j in zip(lb, rb)]
        lout = [take(sl.dims[d]) for d in lfree]
        rout = [take(sr.dims[d]) for d in rfree]
        tl = [()] * lhs.shape.rank
        tr = [()] * rhs.shape.rank
        for (i, j), axes in zip(zip(lc, rc), contract):
            tl[i] = tr[j] = axes
        for (i, j), axes in zip(zip(lb, rb), batch):
            tl[i] = tr[j] = axes
        for d, axes in zip(lfree, lout):
            tl[d] = axes
        for d, axes in zip(rfree, rout):
            tr[d] = axes
        want_l = _fit(HloSharding(self.mesh, tuple(tl)), lhs.shape.dimensions)
        want_r = _fit(HloSharding(self.mesh, tuple(tr)), rhs.shape.dimensions)
        # a contraction split on one side only, or unevenly, is not split at all
        for i, j in zip(lc, rc):
            if want_l.dims[i] != want_r.dims[j]:
                want_l, want_r = want_l.with_dim(i, ()), want_r.with_dim(j, ())
        for i, j in zip(lb, rb):
            if want_l.dims[i] != want_r.dims[j]:
                want_l, want_r = want_l.with_dim(i, ()), want_r.with_dim(j, ())
        dropped = [d for d in range(lhs.shape.rank) if sl.dims[d] and
                   sl.dims[d] != want_l.dims[d]]
        dropped += [d for d in range(rhs.shape.rank) if sr.dims[d] and
                    sr.dims[d] != want_r.dims[d]]
        if dropped:
            self.refuse(inst, "dot: a mesh axis splits two dims of the product (or a "
                        "contraction unevenly): those operand dims gathered")
        dims = ([want_l.dims[i] for i in lb] + [want_l.dims[d] for d in lfree]
                + [want_r.dims[d] for d in rfree])
        s = HloSharding(self.mesh, tuple(dims))
        ops = [self.get(lhs, want_l, _for(inst)),
               self.get(rhs, want_r, _for(inst))]
        partial = tuple(a for a, _ in self.mesh
                        if any(a in want_l.dims[i] for i in lc))
        return Local(self.emit(inst, ops, s), s, partial)

    def _slice(self, inst: Instruction) -> Local:
        (x,) = inst.operands
        sx = self.env[x].sharding
        spec = inst.attrs["slice"]
        full = [(a, b, c) == (0, n, 1) for (a, b, c), n in zip(spec, x.shape.dimensions)]
        target = HloSharding(self.mesh, tuple(a if f else () for a, f in zip(sx.dims, full)))
        if target != sx:
            self.refuse(inst, "slice of a split dim (a part of it, or strided): gathered")
        local_spec = tuple((0, n // target.blocks(d), 1) if full[d] else spec[d]
                           for d, n in enumerate(x.shape.dimensions))
        return Local(self.emit(inst, [self.get(x, target, _for(inst))], target,
                               {**inst.attrs, "slice": local_spec}), target)

    def _keep_dims(self, inst: Instruction, keep: Sequence[bool], what: str,
                   extra: Sequence[Instruction] = ()) -> Local:
        """`inst` on its first operand split as it is on the dims `keep` says, whole on the
        others (a refusal when one of those was split); `extra` operands whole."""
        x = inst.operands[0]
        sx = self.env[x].sharding
        target = HloSharding(self.mesh, tuple(a if k else () for a, k in zip(sx.dims, keep)))
        if target != sx:
            self.refuse(inst, f"{what} of a split dim: gathered")
        ops = [self.get(x, target, _for(inst))]
        ops += [self.get(o, self.replicated(o.shape.rank), _for(inst)) for o in extra]
        return Local(self.emit(inst, ops, target), target)

    def _reverse(self, inst: Instruction) -> Local:
        dims = set(inst.attrs["dimensions"])
        return self._keep_dims(inst, [d not in dims for d in range(inst.shape.rank)],
                               "reverse")

    def _pad(self, inst: Instruction) -> Local:
        keep = [tuple(c) == (0, 0, 0) for c in inst.attrs["padding"]]
        return self._keep_dims(inst, keep, "padding", extra=inst.operands[1:])

    def _sort(self, inst: Instruction) -> Local:
        if len(inst.operands) != 1:
            return self.whole(inst)
        d = inst.attrs["dimension"]
        return self._keep_dims(inst, [i != d for i in range(inst.shape.rank)],
                               "sort along")

    def _concatenate(self, inst: Instruction) -> Local:
        d = inst.attrs["dimension"]
        cands = [self.env[o].sharding for o in inst.operands]
        if any(c.dims[d] for c in cands):
            self.refuse(inst, "concatenate along a split dim: gathered")
        best = max(cands, key=_blocks).with_dim(d, ())
        target = best
        for o in inst.operands:
            target = _fit(target, o.shape.dimensions)
        ops = [self.get(o, target, _for(inst)) for o in inst.operands]
        return Local(self.emit(inst, ops, target), target)


def partition(module: Module, mesh: MeshAxes, params: dict[int, HloSharding],
              outs: Sequence[HloSharding | None] | None = None) -> Partitioned:
    """The per-device module of `module` (see the module docstring); `module` unchanged."""
    return _Partitioner(module, mesh, params, outs).run()


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
        self.report, self.out_shardings = done.report, done.out_shardings
        return True
