"""The SPMD partitioner's rules, one per opcode family: how a value's sharding follows
from its operands', what each operand must be resharded to, and the per-device
instruction (spmd_partitioner.py drives them over the module in program order).

Input: the partitioner's state (`get`, `emit`, `refuse`, `whole`, the mesh and the values
made so far). Output: the `Local` of an instruction. The rules:
  elementwise         the operands' most split sharding; the others sliced to it
  broadcast           operand dim i's split on result dim dimensions[i]; new dims whole;
                      partial sums stay pending where a slice back to no more elements
                      is its only reader (and it its operand's)
  transpose           permuted
  reshape             a split dim keeps its split where it is the major dim of a group of
                      dims whose product the reshape keeps and the result's major dim of
                      that group divides by its blocks; else gathered (a refusal)
  reduce              kept dims keep their split; a split reduced dim reduces locally, then
                      sums stay partial (added where needed: all-reduce or reduce-scatter;
                      sums, reshapes and transposes of partial sums stay partial too),
                      max/min (and or/and on booleans) all-reduce at once; any other
                      combiner, and a variadic reduce (argmax), all-gathers each device's
                      partial results and reduces them again, where its inits are
                      constants the combiner keeps (`combines_again`); else gathers (a
                      refusal)
  dot                 batch and free dims keep their operands' split; a contracting dim split
                      the same on both sides multiplies locally, leaving partial sums (an
                      all-reduce where used: the contraction across shards); split on one
                      side only, the other side is sliced to match; a mesh axis wanted by two
                      dims of the result keeps the first (contracting, batch, lhs, rhs)
  slice, concatenate, dims they leave whole keep their split; the others are gathered
  reverse, pad, sort, (a refusal); a slice that is its operand's only reader keeps the
  dynamic-slice       operand's partial sums pending
  tuple, while,       spmd_loops.py
  conditional
  convolution         spmd_conv.py
  anything else       operands gathered, computed whole on every device (a refusal, said
                      in the report, when an operand was split)
Invariants: a rule only ever splits a value the way its operands' blocks allow; where it
cannot keep a split it gathers, and says why (`refuse`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.hlo.evaluator.core import apply_pointwise, plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding
from ember.passes.spmd_reshard import Local

SPLIT_REDUCERS = ("add", "maximum", "minimum", "or", "and")



class AxisTaker:
    """`take(axes)`: the mesh axes themselves the first time any of them is asked for, ()
    after (one operation splits each mesh axis over one of its dimensions at most);
    `free(axes)`: none of them taken yet."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def free(self, axes: tuple[str, ...]) -> bool:
        return not self.used & set(axes)

    def __call__(self, axes: tuple[str, ...]) -> tuple[str, ...]:
        if not axes or not self.free(axes):
            return ()
        self.used.update(axes)
        return axes

def fit(s: HloSharding, shape: Sequence[int]) -> HloSharding:
    """`s` with the split of any dimension it does not divide evenly dropped."""
    dims = tuple(a if n % s.blocks(d) == 0 else () for d, (n, a) in
                 enumerate(zip(shape, s.dims)))
    return HloSharding(s.mesh, dims)


def reader(inst: Instruction) -> str:
    """Why a reshard is there: the instruction that needs it."""
    return f"for %{inst.name} ({inst.opcode})"


def blocks_of(s: HloSharding) -> int:
    return int(np.prod([s.blocks(d) for d in range(len(s.dims))])) if s.dims else 1


def is_identity(init: Instruction, reducer: str) -> bool:
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


def combines_again(inst: Instruction) -> bool:
    """Whether a reduce may reduce its partial results again: its inits are constants its
    combiner leaves unchanged when combined with themselves (bit for bit), so the extra
    inits of the partial reductions change nothing (the combiner assumed associative and
    commutative, as any reduce's)."""
    n = len(inst.operands) // 2
    inits = inst.operands[n:]
    if any(i.opcode != "constant" or i.shape.rank for i in inits):
        return False
    vals = [np.asarray(i.value, i.shape.dtype) for i in inits]
    try:
        out = apply_pointwise(inst.to_apply, vals + vals)
    except Exception:  # noqa: BLE001 - a combiner the evaluator cannot run: not combined
        return False
    outs = out if isinstance(out, tuple) else (out,)
    return all(np.asarray(o, v.dtype).tobytes() == v.tobytes() for o, v in zip(outs, vals))


def reshape_groups(a: Sequence[int], b: Sequence[int]) -> list[tuple[list[int], list[int]]]:
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


class PartitionRules:
    """The per-opcode rules, mixed into the partitioner (`_<opcode>` methods)."""

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
        # (partial sums stay pending where the operand's only reader is this broadcast and
        # its only reader a slice back to no more elements than the operand: linear, and
        # never added on more elements; shard_map's psum_scatter under jit, whose sums
        # become a reduce-scatter)
        size = math.prod(x.shape.dimensions)
        if len(x.users) == 1 and len(inst.users) == 1 and inst.users[0].opcode == "slice" \
                and math.prod(inst.users[0].shape.dimensions) <= size:
            local, partial = self.get_linear(x, sx, reader(inst))
            return Local(self.emit(inst, [local], s), s, partial)
        return Local(self.emit(inst, [self.get(x, sx, reader(inst))], s), s)

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
        local, partial = self.get_linear(x, sx, reader(inst))
        return Local(self.emit(inst, [local], s), s, partial)

    def _reshape(self, inst: Instruction) -> Local:
        (x,) = inst.operands
        sx = self.env[x].sharding
        a, out = x.shape.dimensions, inst.shape.dimensions
        keep = list(sx.dims)
        dims: list[tuple[str, ...]] = [()] * len(out)
        for gi, gj in reshape_groups(a, out):
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
        local, partial = self.get_linear(x, target, reader(inst))
        return Local(self.emit(inst, [local], s), s, partial)

    def _reduce(self, inst: Instruction) -> Local:
        if len(inst.operands) != 2:  # (a variadic reduce: argmax, argmin)
            return self._reduce_gathered(inst)
        x, init = inst.operands
        v = self.env[x]
        sx = v.sharding
        rdims = set(inst.attrs["dimensions"])
        reducer = plain_binary_opcode(inst.to_apply)
        axes = tuple(a for d in sorted(rdims) for a in sx.dims[d])
        target = sx
        if axes and (reducer not in SPLIT_REDUCERS or not is_identity(init, reducer)):
            if combines_again(inst):
                return self._reduce_gathered(inst)
            self.refuse(inst, f"reduce with combiner {reducer or 'computation'} over split "
                        f"dims: its init {init.name} is not the combiner's identity (nor a "
                        "constant it keeps when combined with itself): gathered")
            target = HloSharding(self.mesh, tuple(() if d in rdims else a
                                                  for d, a in enumerate(sx.dims)))
            axes = ()
        s = HloSharding(self.mesh, tuple(a for d, a in enumerate(target.dims)
                                         if d not in rdims))
        pending: tuple[str, ...] = ()
        if reducer == "add" and is_identity(init, reducer):  # (a sum: linear)
            operand, pending = self.get_linear(x, target, reader(inst))
        else:
            operand = self.get(x, target, reader(inst))
        local = self.emit(inst, [operand, self.get(init, self.replicated(0), reader(inst))], s)
        if not axes:
            return Local(local, s, pending)
        order = self._mesh_order(axes)
        if reducer == "add":
            return Local(local, s, self._mesh_order(set(order) | set(pending)))
        out = self.rs.all_reduce(local, order, reducer, f"reduce {inst.name} over split "
                                 "dims", to_apply=inst.to_apply)
        return Local(out, s)

    def _reduce_gathered(self, inst: Instruction) -> Local:
        """A reduce (one input or several) whose split reduced dims are reduced locally,
        then each device's partial results gathered (a new major dim) and reduced once
        more, where the combiner allows (`combines_again`); else those dims gathered
        first (a refusal, with the reason)."""
        n = len(inst.operands) // 2
        xs, inits = inst.operands[:n], inst.operands[n:]
        rdims = set(inst.attrs["dimensions"])
        target = max((self.env[x].sharding for x in xs), key=blocks_of)
        for x in xs:
            target = fit(target, x.shape.dimensions)
        axes = tuple(a for d in sorted(rdims) for a in target.dims[d])
        if axes and not combines_again(inst):
            self.refuse(inst, "reduce over split dims whose init is not its combiner's "
                        "identity (combining it with itself changes it), or not a "
                        "constant: gathered")
            target = HloSharding(self.mesh, tuple(() if d in rdims else a
                                                  for d, a in enumerate(target.dims)))
            axes = ()
        s = HloSharding(self.mesh, tuple(a for d, a in enumerate(target.dims)
                                         if d not in rdims))
        why = reader(inst)
        ops = [self.get(x, target, why) for x in xs]
        ops += [self.get(i, self.replicated(0), why) for i in inits]
        b = self.b
        kept = s.local_shape([m for d, m in enumerate(xs[0].shape.dimensions)
                              if d not in rdims])
        shapes = [Shape(x.shape.element_type, kept) for x in xs]
        shape = shapes[0] if n == 1 else Shape.tuple_of(shapes)
        md = dict(inst.metadata)
        md.pop(CONSTRAINT_KEY, None)
        out = b.op("reduce", ops, dict(inst.attrs), shape=shape,
                   called=[inst.to_apply], metadata=md, name=inst.name)
        if axes:
            order = self._mesh_order(axes)
            parts = [out] if n == 1 else [
                b.op("get-tuple-element", [out], {"index": k}, shape=sh)
                for k, sh in enumerate(shapes)]
            gathered = [self.rs.all_gather(b.reshape(p, (1, *kept)), 0, order,
                                           f"reduce {inst.name}: each device's partial "
                                           "result") for p in parts]
            out = b.op("reduce", gathered + ops[n:], {"dimensions": (0,)}, shape=shape,
                       called=[inst.to_apply], metadata=md)
        if n == 1:
            return Local(out, s)
        return Local(out, None, elements=[s] * n)

    def _dot(self, inst: Instruction) -> Local:
        lhs, rhs = inst.operands
        sl, sr = self.env[lhs].sharding, self.env[rhs].sharding
        at = inst.attrs
        lb, rb = list(at["lhs_batch_dims"]), list(at["rhs_batch_dims"])
        lc, rc = list(at["lhs_contracting_dims"]), list(at["rhs_contracting_dims"])
        lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
        rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
        take = AxisTaker()
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
        want_l = fit(HloSharding(self.mesh, tuple(tl)), lhs.shape.dimensions)
        want_r = fit(HloSharding(self.mesh, tuple(tr)), rhs.shape.dimensions)
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
        ops = [self.get(lhs, want_l, reader(inst)),
               self.get(rhs, want_r, reader(inst))]
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
        # (a slice is linear and no larger than its operand: where it is the operand's only
        # reader, partial sums stay pending, added on the fewer elements where read)
        if len(x.users) == 1:
            local, partial = self.get_linear(x, target, reader(inst))
        else:
            local, partial = self.get(x, target, reader(inst)), ()
        return Local(self.emit(inst, [local], target, {**inst.attrs, "slice": local_spec}),
                     target, partial)

    def _keep_dims(self, inst: Instruction, keep: Sequence[bool], what: str,
                   extra: Sequence[Instruction] = (), attrs: Any = None) -> Local:
        """`inst` on its first operand split as it is on the dims `keep` says, whole on the
        others (a refusal when one of those was split); `extra` operands whole. `attrs`:
        a function of the target sharding giving the local instruction's attributes."""
        x = inst.operands[0]
        sx = self.env[x].sharding
        target = HloSharding(self.mesh, tuple(a if k else () for a, k in zip(sx.dims, keep)))
        if target != sx:
            self.refuse(inst, f"{what} of a split dim: gathered")
        ops = [self.get(x, target, reader(inst))]
        ops += [self.get(o, self.replicated(o.shape.rank), reader(inst)) for o in extra]
        local = None if attrs is None else attrs(target)
        return Local(self.emit(inst, ops, target, local), target)

    def _dynamic_slice(self, inst: Instruction) -> Local:
        """Dims taken whole (their start clamps to 0) keep their split."""
        x = inst.operands[0]
        sizes = inst.attrs["dynamic_slice_sizes"]
        keep = [n == m for n, m in zip(sizes, x.shape.dimensions)]

        def local(target: HloSharding) -> dict:
            return {**inst.attrs, "dynamic_slice_sizes": target.local_shape(sizes)}
        return self._keep_dims(inst, keep, "dynamic slice", inst.operands[1:], local)

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
        best = max(cands, key=blocks_of).with_dim(d, ())
        target = best
        for o in inst.operands:
            target = fit(target, o.shape.dimensions)
        ops = [self.get(o, target, reader(inst)) for o in inst.operands]
        return Local(self.emit(inst, ops, target), target)
