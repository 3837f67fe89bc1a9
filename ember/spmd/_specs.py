"""shard_map's bookkeeping of partition specs: per-device shapes, a global array cut into
device blocks, and the global shape of the blocks the devices return.

Input: a `Mesh`, one `PartitionSpec` per array, global shapes or values. Output: the
per-device (block) shape of each array, the blocks each device gets (`cut`), the global
shape of the devices' outputs (`global_shape`). Invariants: a dimension split over mesh
axes (a, b) has size(a) * size(b) blocks, a major (NamedSharding's layout); devices that
differ only along mesh axes the spec leaves out hold the same block (a ShardedArray's value
takes the first of them: coordinate 0 on those axes). Errors use JAX's texts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.sharding._mesh import Mesh, PartitionSpec
from ember.sharding._shardings import NamedSharding


def parts(spec: PartitionSpec, ndim: int) -> tuple[tuple[str, ...], ...]:
    """The mesh axes splitting each of `ndim` dimensions."""
    return spec._normalized(ndim)


def check_spec(mesh: Mesh, spec: Any, ndim: int, what: str) -> PartitionSpec:
    """`spec` as a PartitionSpec, checked against the mesh and the array's rank."""
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what} must be PartitionSpecs (or a pytree prefix of "
                        f"them), got {spec!r}")
    if len(spec) > ndim:
        raise ValueError(f"shard_map applied to the function with {what} {spec!r} which has "
                         f"length {len(spec)}, but it was applied to a value of rank {ndim}")
    NamedSharding(mesh, spec)  # (unknown or repeated axis names: JAX's errors)
    return spec


def block_shape(mesh: Mesh, spec: PartitionSpec, shape: tuple[int, ...], what: str
                ) -> tuple[int, ...]:
    """The per-device shape of an array of `shape` split as `spec` says."""
    sizes = mesh.shape
    out = []
    for d, (n, axes) in enumerate(zip(shape, parts(spec, len(shape)))):
        k = math.prod(sizes[a] for a in axes)
        if n % k:
            names = ", ".join(f"'{a}'" for a in axes)
            raise ValueError(
                f"shard_map applied to the function with {what} {spec!r}: array axis {d} "
                f"of size {n} is split over mesh axes ({names}) of total size {k}, which "
                f"does not evenly divide it")
        out.append(n // k)
    return tuple(out)


def cut(value: np.ndarray, mesh: Mesh, spec: PartitionSpec, devices: list) -> list[np.ndarray]:
    """The block of `value` each of `devices` gets."""
    index = NamedSharding(mesh, spec).devices_indices_map(value.shape)
    return [np.array(value[index[d]], order="C") for d in devices]


def global_shape(mesh: Mesh, spec: PartitionSpec, block: tuple[int, ...]) -> tuple[int, ...]:
    """The global shape whose blocks under `spec` have shape `block`."""
    sizes = mesh.shape
    return tuple(n * math.prod(sizes[a] for a in axes)
                 for n, axes in zip(block, parts(spec, len(block))))
