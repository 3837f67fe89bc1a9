"""Moving a value of a per-device module from one sharding to another: the collectives and
local slices the SPMD partitioner (spmd_partitioner.py) inserts, and the report of them.

Input: a Builder of the per-device entry computation, the mesh, the partition-id parameter
(s32[], each device's number), and a `Local` (a value's per-device instruction, the
sharding of the whole value, and the mesh axes over which the local values are partial
sums still to be added). Output: `Resharder.reshard(local, target)`: the per-device
instruction of the value laid out as `target`, through, in this order:
  partial sums -> reduce-scatter along a dimension the target splits over exactly those
                  axes (and only they), then all-reduce over the axes left;
  a dimension split over axes the target moves to a dimension the value has whole (and
                  the target has the first whole) -> all-to-all over those axes: each
                  device keeps 1/n of its block and swaps the rest, n times fewer bytes
                  than gathering the whole dimension and slicing the other;
  a dimension split otherwise than the target splits it (unless its axes are a prefix of
                  the target's) -> all-gather along it;
  a dimension the target splits further -> dynamic-slice at the device's block (a table of
                  offsets indexed by the partition id: no communication).
Every collective is recorded (`Collective`: opcode, result name, bytes each device sends
and receives as a ring moves them: all-reduce 2(n-1)/n of its buffer, all-gather (n-1)/n
of its result, reduce-scatter (n-1)/n of its operand, all-to-all (n-1)/n of its
operand; collective-permute, which the partitioner's rules make themselves, its block).
Invariants: a reshard to the value's own sharding adds nothing; partial sums are only
ever sums (the partitioner keeps other reductions' results whole).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ember.hlo.builder import Builder
from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape
from ember.hlo.sharding import HloSharding, MeshAxes, block_index, replica_groups


@dataclass
class Local:
    """A value of the original module in the per-device one."""

    inst: Instruction
    sharding: HloSharding | None  # None: a tuple (its elements' shardings: `elements`)
    partial: tuple[str, ...] = ()  # mesh axes whose partitions' values still add up
    # a tuple's elements' shardings (None: every element whole on every device)
    elements: list[HloSharding | None] | None = None


@dataclass
class Collective:
    opcode: str
    name: str
    shape: str
    group_size: int
    bytes_sent: int  # per device
    bytes_received: int  # per device
    reason: str
    where: str = ""  # "": once per call; else e.g. "each iteration of %body"


@dataclass
class Refusal:
    name: str
    opcode: str
    reason: str


@dataclass
class PartitionReport:
    """What the partitioner inserted and where it could not keep a value split."""

    num_partitions: int = 1
    collectives: list[Collective] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)


def _nbytes(shape: Shape) -> int:
    return math.prod(shape.dimensions) * np.dtype(shape.dtype).itemsize


class Resharder:
    """Builds reshards into `b` (see the module docstring)."""

    def __init__(self, b: Builder, mesh: MeshAxes, pid: Instruction,
                 report: PartitionReport, where: str = "") -> None:
        self.b = b
        self.where = where
        self.mesh = mesh
        self.pid = pid
        self.report = report
        self._offsets: dict[tuple, Instruction] = {}
        self._combiners: dict[tuple[str, str], Computation] = {}

    # -- pieces ----------------------------------------------------------------------------

    def combiner(self, opcode: str, element_type: str) -> Computation:
        """The scalar `opcode` computation of an all-reduce or reduce-scatter."""
        key = (opcode, element_type)
        comp = self._combiners.get(key)
        if comp is None:
            cb = Builder(f"{opcode}.{element_type}")
            s = Shape(element_type, ())
            comp = cb.build_computation(cb.binary(opcode, cb.parameter(s, name="lhs"),
                                                  cb.parameter(s, name="rhs")))
            self._combiners[key] = comp
        return comp

    def _record(self, inst: Instruction, n: int, moved: int, reason: str) -> None:
        self.report.collectives.append(Collective(
            inst.opcode, inst.name or "", str(inst.shape), n, moved, moved, reason,
            self.where))

    def all_reduce(self, x: Instruction, axes: tuple[str, ...], opcode: str,
                   reason: str, to_apply: Computation | None = None) -> Instruction:
        groups = replica_groups(self.mesh, axes)
        comp = to_apply or self.combiner(opcode, x.shape.element_type)
        out = self.b.op("all-reduce", [x], {"replica_groups": groups}, called=[comp],
                        metadata=dict(x.metadata))
        n = len(groups[0])
        self._record(out, n, 2 * (n - 1) * _nbytes(x.shape) // n, reason)
        return out

    def all_gather(self, x: Instruction, d: int, axes: tuple[str, ...], reason: str
                   ) -> Instruction:
        groups = replica_groups(self.mesh, axes)
        out = self.b.op("all-gather", [x], {"dimensions": (d,), "replica_groups": groups},
                        metadata=dict(x.metadata))
        n = len(groups[0])
        self._record(out, n, (n - 1) * _nbytes(out.shape) // n, reason)
        return out

    def reduce_scatter(self, x: Instruction, d: int, axes: tuple[str, ...], reason: str
                       ) -> Instruction:
        groups = replica_groups(self.mesh, axes)
        out = self.b.op("reduce-scatter", [x], {"dimensions": (d,), "replica_groups": groups},
                        called=[self.combiner("add", x.shape.element_type)],
                        metadata=dict(x.metadata))
        n = len(groups[0])
        self._record(out, n, (n - 1) * _nbytes(x.shape) // n, reason)
        return out

    def all_to_all(self, x: Instruction, src: int, dst: int, axes: tuple[str, ...],
                   reason: str) -> Instruction:
        """`x` (a block split over `axes` along dim `src`, whole along `dst`) as the block
        split over `axes` along `dst` and whole along `src`: dim `dst` cut into one chunk
        per member (a new axis before it), the chunks swapped (chunk j to member j, the
        one from member j put at j), then that axis merged into `src` as its major part
        (member j held block j of `src`)."""
        groups = replica_groups(self.mesh, axes)
        n = len(groups[0])
        b = self.b
        shape = list(x.shape.dimensions)
        cut = shape[:dst] + [n, shape[dst] // n] + shape[dst + 1:]
        y = b.reshape(x, cut)
        y = b.op("all-to-all", [y], {"dimensions": (dst,), "replica_groups": groups},
                 metadata=dict(x.metadata))
        self._record(y, n, (n - 1) * _nbytes(x.shape) // n, reason)
        at = src if src < dst else src + 1  # (where `src` sits in `cut`)
        perm = [d for d in range(len(cut)) if d != dst]
        perm.insert(perm.index(at), dst)
        if perm != list(range(len(cut))):
            y = b.transpose(y, perm)
        out = list(shape)
        out[src], out[dst] = shape[src] * n, shape[dst] // n
        return b.reshape(y, out)

    def collective_permute(self, x: Instruction, pairs: tuple[tuple[int, int], ...],
                           n: int, reason: str) -> Instruction:
        """`x` moved from each pair's source partition to its target (zeros on a partition
        no pair targets); recorded as the busiest device's bytes: its whole block, sent and
        received (nothing where every pair stays on its device)."""
        out = self.b.op("collective-permute", [x], {"source_target_pairs": pairs},
                        metadata=dict(x.metadata))
        moved = _nbytes(x.shape) if any(s != t for s, t in pairs) else 0
        self._record(out, n, moved, reason)
        return out

    def offset(self, axes: tuple[str, ...], block: int) -> Instruction:
        """s32[]: this device's block index over `axes` times `block`."""
        key = (axes, block)
        got = self._offsets.get(key)
        if got is None:
            n = math.prod(s for _, s in self.mesh)
            table = np.array([block_index(self.mesh, axes, p) * block for p in range(n)],
                             np.int32)
            b = self.b
            picked = b.dynamic_slice(b.constant(table), [self.pid], [1])
            got = self._offsets[key] = b.reshape(picked, ())
        return got

    # -- the reshard ---------------------------------------------------------------------

    def _scatter_dims(self, v: Local, target: HloSharding) -> list[int]:
        """The dims a reshard of `v`'s partial sums to `target` reduce-scatters along."""
        if v.sharding is None:
            return []
        return [d for d, axes in enumerate(target.dims)
                if axes and not v.sharding.dims[d] and set(axes) <= set(v.partial)
                and v.inst.shape.dimensions[d] % target.blocks(d) == 0]

    def scatters(self, v: Local, target: HloSharding | None) -> bool:
        """Whether resharding `v` to `target` reduce-scatters (else its sums are all-reduced
        first, whatever the target)."""
        return target is not None and bool(self._scatter_dims(v, target))

    def resolve(self, v: Local, reason: str) -> Local:
        """`v` with its partial sums added up (an all-reduce)."""
        if not v.partial:
            return v
        axes = tuple(a for a, _ in self.mesh if a in v.partial)
        out = self.all_reduce(v.inst, axes, "add", reason)
        return Local(out, v.sharding)

    def reshard(self, v: Local, target: HloSharding | None, reason: str) -> Instruction:
        """`v`'s per-device value laid out as `target` (see the module docstring)."""
        if v.sharding is None or target is None:  # (tuples stay whole)
            return v.inst
        x, cur = v.inst, v.sharding
        partial = list(v.partial)
        if partial:
            for d in self._scatter_dims(v, target):
                axes = target.dims[d]
                if set(axes) <= set(partial):
                    x = self.reduce_scatter(x, d, axes, reason)
                    cur = cur.with_dim(d, axes)
                    partial = [a for a in partial if a not in axes]
            if partial:
                x = self.resolve(Local(x, cur, tuple(partial)), reason).inst
        for d, (have, want) in enumerate(zip(cur.dims, target.dims)):
            if not have or want:
                continue
            dst = next((e for e, (h, w) in enumerate(zip(cur.dims, target.dims))
                        if not h and w[:len(have)] == have
                        and x.shape.dimensions[e] % math.prod(cur.sizes[a] for a in have)
                        == 0), None)
            if dst is not None:
                x = self.all_to_all(x, d, dst, have, reason)
                cur = cur.with_dim(d, ()).with_dim(dst, have)
        for d, (have, want) in enumerate(zip(cur.dims, target.dims)):
            if have and have != want[:len(have)]:
                x = self.all_gather(x, d, have, reason)
                cur = cur.with_dim(d, ())
        if cur == target:
            return x
        starts, sizes, sliced = [], [], False
        zero = None
        for d, (have, want) in enumerate(zip(cur.dims, target.dims)):
            rest = want[len(have):]
            size = x.shape.dimensions[d] // math.prod(target.sizes[a] for a in rest)
            sizes.append(size)
            if rest:
                sliced = True
                starts.append(self.offset(rest, size))
            else:
                zero = zero or self.b.constant(np.int32(0))
                starts.append(zero)
        if sliced:
            x = self.b.dynamic_slice(x, starts, sizes)
        return x
