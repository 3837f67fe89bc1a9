"""Meshes: devices laid out in an n-d grid with a name per axis (`jax.sharding.Mesh`), and
`PartitionSpec`, which says which mesh axes split each dimension of an array.

Input: an ndarray of devices and axis names (`Mesh`), or axis sizes and names
(`make_mesh`, which takes `ember.devices()` in order). Output: `Mesh` (`shape`, an ordered
name -> size map; `axis_names`; `devices`; `size`; `device_ids`; a context manager that
makes it the current mesh), `PartitionSpec` (a tuple-like spec, entries None, a name or a
tuple of names). Invariants: a mesh is immutable and hashes by its device ids and names;
the current mesh is per thread.
"""

from __future__ import annotations

import collections
import enum
import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import device_state


class PartitionSpec:
    """Which mesh axes split each array dimension: None (not split), a mesh axis name, or
    a tuple of names (split over their product, the first name major). Dimensions past the
    spec's length are not split, so P('x') equals P('x', None) as a sharding's spec."""

    __slots__ = ("_parts", "unreduced", "reduced")
    UNCONSTRAINED = None

    def __init__(self, *parts: Any, unreduced: Any = frozenset(), reduced: Any = frozenset()
                 ) -> None:
        for p in parts:
            if isinstance(p, list):
                p = tuple(p)
            if not (p is None or isinstance(p, (str, tuple)) or p is _UNCONSTRAINED):
                raise TypeError(f"PartitionSpec entries must be None, a str or a tuple of "
                                f"str, got {p!r}")
        self._parts = tuple(tuple(p) if isinstance(p, list) else p for p in parts)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __len__(self) -> int:
        return len(self._parts)

    def __getitem__(self, i: Any) -> Any:
        return self._parts[i]

    def __iter__(self):
        return iter(self._parts)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, PartitionSpec):
            return self._parts == other._parts
        if isinstance(other, tuple):
            return self._parts == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._parts)

    def __repr__(self) -> str:
        return "P(" + ", ".join(repr(p) for p in self._parts) + ("," if len(self) == 1
                                                                  else "") + ")"

    def _normalized(self, ndim: int) -> tuple[tuple[str, ...], ...]:
        """Per array dimension, the tuple of mesh axes splitting it (() for none)."""
        out = []
        for i in range(ndim):
            p = self._parts[i] if i < len(self._parts) else None
            out.append(() if p is None or p is _UNCONSTRAINED
                       else (p,) if isinstance(p, str) else tuple(p))
        return tuple(out)


class AxisType(enum.Enum):
    """How a mesh axis is used (JAX's `AxisType`): Ember records it; partitioning by the
    compiler ("Auto"/"Explicit") is a later slice, and shard_map bodies are "Manual"."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


_UNCONSTRAINED = _Unconstrained()
PartitionSpec.UNCONSTRAINED = _UNCONSTRAINED  # type: ignore[assignment]


class Mesh:
    """Devices in a grid, one name per axis; `with mesh:` makes it the current mesh."""

    def __init__(self, devices: Any, axis_names: str | Sequence[str],
                 axis_types: Any = None) -> None:
        devs = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) \
            else devices
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devs.ndim != len(names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the "
                f"length of its second argument (`axis_names`), but got devices.ndim == "
                f"{devs.ndim} and len(axis_names) == {len(names)}.")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        self._devices = devs
        self._devices.flags.writeable = False
        self.axis_names: tuple[str, ...] = names
        if axis_types is None:
            axis_types = ("Auto",) * len(names)
        elif not isinstance(axis_types, tuple):
            axis_types = (axis_types,) * len(names)
        if len(axis_types) != len(names):
            raise ValueError(f"Number of axis names should match the number of axis_types. "
                             f"Got axis_names={names} and axis_types={axis_types}")
        self.axis_types = tuple(str(getattr(t, "name", t)) for t in axis_types)
        self._ids = tuple(int(d.id) for d in devs.flat)

    @property
    def devices(self) -> np.ndarray:
        """The mesh's devices, an array of the mesh's shape."""
        return self._devices

    @property
    def shape(self) -> collections.OrderedDict:
        """Axis name -> size, in the mesh's axis order."""
        return collections.OrderedDict(zip(self.axis_names, self._devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The size of each axis, in order."""
        return tuple(self._devices.shape)

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        """(axis name, size) pairs, in order."""
        return tuple(zip(self.axis_names, self._devices.shape))

    @property
    def size(self) -> int:
        """The number of devices in the mesh."""
        return math.prod(self._devices.shape)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no devices."""
        return self._devices.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        """The ids of the mesh's devices, an int array of the mesh's shape."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self._devices)

    @property
    def local_devices(self) -> list:
        """The mesh's devices that belong to this process."""
        me = device_state.process_index()
        return [d for d in self._devices.flat if d.process_index == me]

    @property
    def is_multi_process(self) -> bool:
        """Whether the mesh's devices belong to more than one process."""
        return len({d.process_index for d in self._devices.flat}) > 1

    def coords(self, device: Any) -> tuple[int, ...]:
        """The device's index along each mesh axis."""
        pos = self._ids.index(device.id)
        return tuple(int(i) for i in np.unravel_index(pos, self._devices.shape))

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, Mesh) and self._ids == other._ids
                and self.axis_names == other.axis_names
                and self._devices.shape == other._devices.shape)

    def __hash__(self) -> int:
        return hash((self._ids, self.axis_names, self._devices.shape))

    def _types(self) -> str:
        inner = ", ".join(self.axis_types)
        return f"({inner},)" if len(self.axis_types) == 1 else f"({inner})"

    def _short(self) -> str:
        body = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh({body}, axis_types={self._types()})"

    def __repr__(self) -> str:
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self._types()})")

    def __enter__(self) -> Mesh:
        _stack.meshes.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack.meshes.pop()


class _MeshStack(threading.local):
    def __init__(self) -> None:
        self.meshes: list[Mesh] = []


_stack = _MeshStack()


def current_mesh() -> Mesh | None:
    """The mesh of the innermost `with mesh:` (or `set_mesh`) of this thread, or None."""
    return _stack.meshes[-1] if _stack.meshes else None


class set_mesh:  # noqa: N801 (JAX's name for a class used as a function)
    """Make `mesh` this thread's current mesh (as jax.set_mesh): a global setter when
    called, and restored to the previous one at the end of a `with set_mesh(mesh):`."""

    __slots__ = ("prev",)

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        from ember.core.trace import transforms_active
        if transforms_active():
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        self.prev = list(_stack.meshes)
        _stack.meshes[:] = [] if mesh is None else [*self.prev, mesh]

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _stack.meshes[:] = self.prev


def get_mesh() -> Mesh | None:
    """The current mesh (`set_mesh` or `with mesh:`), or None."""
    return current_mesh()


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], *,
              devices: Sequence[Any] | None = None, axis_types: Any = None) -> Mesh:
    """A mesh of `axis_shapes` over `devices` (default: every device, in id order), as
    `jax.make_mesh`; the axes' product must be the number of devices."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError("Length of axis spec and axis names must be equal. "
                         f"Got {axis_shapes} and {axis_names}")
    devs = list(device_state.global_devices() if devices is None else devices)
    if math.prod(axis_shapes) != len(devs):
        raise ValueError(
            f"Number of devices {len(devs)} must equal the product of mesh_shape "
            f"{axis_shapes}")
    grid = np.empty(len(devs), dtype=object)
    grid[:] = devs
    return Mesh(grid.reshape(axis_shapes), axis_names,
                axis_types=("Explicit",) * len(axis_names) if axis_types is None
                else axis_types)
