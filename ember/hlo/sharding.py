"""Shardings as HLO data: how a value of an HLO module is laid out over a device mesh.

Input: the mesh's axes (name and size, in mesh order) and, per array dimension, the mesh
axes that split it (major first), as `ember.sharding.NamedSharding` says. Output:
`HloSharding` with the questions the partitioner asks: the per-device (local) shape, the
block each partition holds, the replica groups of a collective over some axes.
Invariants: partitions are numbered 0..n-1 in row-major order over the mesh (the order of
`Mesh.devices.flat`); a dimension split over axes (a, b) is cut into size(a) * size(b)
equal blocks, a's coordinate major; partitions equal on every axis that splits a value
hold the same block (replicas). Plain data: hashable, comparable, no device objects.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

# (axis name, size) per mesh axis, in mesh order
MeshAxes = tuple[tuple[str, int], ...]
# the key of `Instruction.metadata` holding a `with_sharding_constraint`'s HloSharding
CONSTRAINT_KEY = "ember_sharding"
# the key of a gather's metadata saying it is ppermute's one-program form over the members
# stacked along one dimension: (that dimension, the (source, target) pairs of members)
PERMUTE_KEY = "ember_permute"


@dataclass(frozen=True)
class HloSharding:
    """Per dimension, the mesh axes splitting it (see the module docstring)."""

    mesh: MeshAxes
    dims: tuple[tuple[str, ...], ...]

    @staticmethod
    def replicated(mesh: MeshAxes, rank: int) -> HloSharding:
        return HloSharding(mesh, ((),) * rank)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.mesh)

    @property
    def num_partitions(self) -> int:
        return math.prod(s for _, s in self.mesh)

    @property
    def is_replicated(self) -> bool:
        return not any(self.dims)

    def used_axes(self) -> set[str]:
        return {a for axes in self.dims for a in axes}

    def blocks(self, d: int) -> int:
        """How many blocks dimension `d` is cut into."""
        sizes = self.sizes
        return math.prod(sizes[a] for a in self.dims[d])

    def local_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(n // self.blocks(d) for d, n in enumerate(shape))

    def divides(self, shape: Sequence[int]) -> bool:
        return all(n % self.blocks(d) == 0 for d, n in enumerate(shape))

    def with_dim(self, d: int, axes: tuple[str, ...]) -> HloSharding:
        dims = list(self.dims)
        dims[d] = tuple(axes)
        return HloSharding(self.mesh, tuple(dims))

    def __str__(self) -> str:
        inner = ", ".join("{" + ",".join(a) + "}" for a in self.dims)
        return f"[{inner}]"


def coords(mesh: MeshAxes, partition: int) -> dict[str, int]:
    """The partition's coordinate along each mesh axis."""
    shape = tuple(s for _, s in mesh)
    idx = [0] * len(shape)
    rest = partition
    for i in reversed(range(len(shape))):
        idx[i] = rest % shape[i]
        rest //= shape[i]
    return {name: c for (name, _), c in zip(mesh, idx)}


def block_index(mesh: MeshAxes, axes: Sequence[str], partition: int) -> int:
    """The row-major index of the partition's coordinates over `axes` (in that order)."""
    c = coords(mesh, partition)
    sizes = dict(mesh)
    out = 0
    for a in axes:
        out = out * sizes[a] + c[a]
    return out


def replica_groups(mesh: MeshAxes, axes: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The groups of a collective over `axes`: partitions equal on every other axis, each
    group in the order of its members' block index over `axes`."""
    names = [n for n, _ in mesh]
    sizes = dict(mesh)
    other = [a for a in names if a not in axes]
    groups = []
    for rest in itertools.product(*[range(sizes[a]) for a in other]):
        members = []
        for mine in itertools.product(*[range(sizes[a]) for a in axes]):
            c = dict(zip(other, rest))
            c.update(zip(axes, mine))
            pid = 0
            for a in names:
                pid = pid * sizes[a] + c[a]
            members.append(pid)
        groups.append(tuple(members))
    return tuple(groups)
