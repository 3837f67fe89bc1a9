"""Shardings: how an array's elements are laid out over devices (`jax.sharding`).

Input: a device (`SingleDeviceSharding`) or a mesh and a `PartitionSpec` (`NamedSharding`).
Output: the layout queries JAX users call: `shard_shape(global_shape)`,
`devices_indices_map(global_shape)` (each device's index: one slice per dimension),
`addressable_devices_indices_map`, `device_set`, `addressable_devices`,
`is_fully_replicated`, `is_fully_addressable`, `num_devices`. Invariants: a dimension split
over mesh axes (a, b) is cut into size(a) * size(b) equal blocks, a's coordinate major;
devices along mesh axes that the spec does not name hold copies (replicas); a shape that
does not divide evenly raises JAX's error. Shardings compare and hash by value.
"""

from __future__ import annotations

import math
from typing import Any

from ember import device_state
from ember.sharding._mesh import Mesh, PartitionSpec, current_mesh

Index = tuple[slice, ...]


class Sharding:
    """The common queries, written on `devices_indices_map` and `device_set`."""

    memory_kind = "device"

    @property
    def device_set(self) -> set:
        """The set of devices that hold a part of an array with this sharding."""
        raise NotImplementedError

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Any, Index]:
        """Device -> the index (a tuple of slices) of the block of an array of `global_shape`
        that the device holds."""
        raise NotImplementedError

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of one device's block of an array of `global_shape`."""
        raise NotImplementedError

    @property
    def num_devices(self) -> int:
        """The number of devices in `device_set`."""
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set:
        """The devices of `device_set` that belong to this process."""
        me = device_state.process_index()
        return {d for d in self.device_set if d.process_index == me}

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device of the sharding belongs to this process."""
        return len(self.addressable_devices) == len(self.device_set)

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]
                                        ) -> dict[Any, Index]:
        """`devices_indices_map` restricted to this process's devices."""
        mine = self.addressable_devices
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in mine}

    def is_equivalent_to(self, other: Any, ndim: int) -> bool:
        """Whether the two shardings place the blocks of an array of rank `ndim` on the same
        devices."""
        shape = (0,) * ndim
        try:
            return (self.device_set == other.device_set and
                    _slices_key(self.devices_indices_map(shape)) ==
                    _slices_key(other.devices_indices_map(shape)))
        except ValueError:
            return False

    def with_memory_kind(self, kind: str) -> Sharding:
        """This sharding in the memory kind `kind` (the CPU has only "device")."""
        if kind != "device":
            raise ValueError(f"Could not find memory addressable by device cpu. Device cpu "
                             f"can address the following memory kinds: device. Got "
                             f"memory_kind={kind}")
        return self


def _slices_key(m: dict) -> dict:
    return {d.id: tuple((s.start, s.stop) for s in idx) for d, idx in m.items()}


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device

    @property
    def device_set(self) -> set:
        """The set of devices that hold a part of an array with this sharding."""
        return {self._device}

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return True

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Any, Index]:
        """Device -> the index (a tuple of slices) of the block of an array of `global_shape`
        that the device holds."""
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of one device's block of an array of `global_shape`."""
        return tuple(global_shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device.id))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class NamedSharding(Sharding):
    """An array split over a mesh as `spec` says: dimension i over the mesh axes spec[i]."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None
                 ) -> None:
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, tuple) or spec is None:
                spec = PartitionSpec(*(spec or ()))
            else:
                raise TypeError("spec of NamedSharding must be an instance of "
                                f"PartitionSpec. Got {type(spec)}")
        self.mesh = mesh
        self.spec = spec
        check_spec(mesh, spec)

    @property
    def device_set(self) -> set:
        """The set of devices that hold a part of an array with this sharding."""
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self) -> list:
        return list(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return all(self.mesh.shape[a] == 1 for part in self.spec._normalized(len(self.spec))
                   for a in part)

    def _splits(self, ndim: int) -> tuple[int, ...]:
        sizes = self.mesh.shape
        return tuple(math.prod(sizes[a] for a in part)
                     for part in self.spec._normalized(ndim))

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of one device's block of an array of `global_shape`."""
        global_shape = tuple(global_shape)
        if len(self.spec) > len(global_shape):
            raise ValueError(f"Sharding {self!r} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(global_shape)}")
        splits = self._splits(len(global_shape))
        for i, (n, k) in enumerate(zip(global_shape, splits)):
            if n % k:
                raise ValueError(
                    f"Sharding {self!r} implies that array axis {i} is partitioned {k} "
                    f"times, but the dimension size is {n} (full shape: {global_shape}, "
                    f"per-dimension tiling factors: {list(splits)} should evenly divide the "
                    "shape)")
        return tuple(n // k for n, k in zip(global_shape, splits))

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Any, Index]:
        """Device -> the index (a tuple of slices) of the block of an array of `global_shape`
        that the device holds."""
        block = self.shard_shape(global_shape)
        parts = self.spec._normalized(len(global_shape))
        names = self.mesh.axis_names
        sizes = self.mesh.shape
        out: dict[Any, Index] = {}
        for dev in self.mesh.devices.flat:
            coords = dict(zip(names, self.mesh.coords(dev)))
            idx = []
            for part, b in zip(parts, block):
                if not part:
                    idx.append(slice(None))
                    continue
                k = 0
                for a in part:  # row-major over the dimension's mesh axes
                    k = k * sizes[a] + coords[a]
                idx.append(slice(k * b, (k + 1) * b))
            out[dev] = tuple(idx)
        return out

    def __eq__(self, other: Any) -> bool:
        # (as JAX: P('x') and P('x', None) lay arrays out alike, yet the shardings differ;
        # `is_equivalent_to` compares layouts)
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and other.spec == self.spec)

    def __hash__(self) -> int:
        parts = self.spec._normalized(len(self.spec))
        while parts and not parts[-1]:
            parts = parts[:-1]
        return hash((self.mesh, parts))

    def __repr__(self) -> str:
        return (f"NamedSharding(mesh={self.mesh._short()}, spec={self.spec!r}, "
                "memory_kind=device)")


def check_spec(mesh: Mesh, spec: PartitionSpec) -> None:
    """JAX's errors for a spec naming an axis the mesh lacks, or one axis twice."""
    seen: set[str] = set()
    for part in spec._normalized(len(spec)):
        for a in part:
            if a not in mesh.shape:
                raise ValueError(f"Resource axis: {a} of {spec!r} is not found in mesh: "
                                 f"{mesh.axis_names}.")
            if a in seen:
                raise ValueError(
                    "A single NamedSharding spec specification can map every mesh axis to "
                    f"at most one positional dimension, but {spec!r} has duplicate entries "
                    f"for `{a}`")
            seen.add(a)


def as_sharding(s: Any, what: str = "sharding") -> Sharding:
    """A Sharding, a device (its SingleDeviceSharding), or a PartitionSpec under the
    current mesh (`with mesh:`)."""
    if isinstance(s, Sharding):
        return s
    if isinstance(s, device_state.CpuDevice):
        return SingleDeviceSharding(s)
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError(
                f"{what}: a PartitionSpec ({s!r}) needs a mesh: use NamedSharding(mesh, "
                "spec) or call inside `with mesh:`.")
        return NamedSharding(mesh, s)
    raise TypeError(f"{what} must be a Sharding, a device or a PartitionSpec, got {s!r}")
