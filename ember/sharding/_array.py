"""Arrays split over devices: `ShardedArray`, one buffer per addressable shard, and the
constructors of `jax` that make one (`device_put` with a sharding, `make_array_from_callback`,
`make_array_from_process_local_data`, `make_array_from_single_device_arrays`).

Input: a global value or per-device pieces, and a `Sharding`. Output: a `ShardedArray`
(an `ember.Array` whose `sharding`, `addressable_shards` and `is_fully_replicated` describe
the layout); each `Shard` has `device`, `index` (a slice per dimension), `data` (an Array of
the shard's shape) and `replica_id`. Invariants: a shard's buffer is its own (C-contiguous,
read-only), so a process holds only its shards; an array whose devices are all in this
process is also assembled once into the global value (when made, or, for a partitioned
jit's results, when first read), which eager operations read (a
jit call with such arguments is partitioned: ember/spmd/_jit.py); so is an array whose
blocks all have a copy in this process (a replicated one); reading the value of an array
some of whose blocks live only in other processes raises JAX's error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.sharding._shardings import Index, NamedSharding, Sharding, SingleDeviceSharding

_NOT_ADDRESSABLE = (
    "Fetching value for `jax.Array` that spans non-addressable (non process local) devices "
    "is not possible. You can use `jax.experimental.multihost_utils.process_allgather` to "
    "print the global array or use `.addressable_shards` method of jax.Array to inspect the "
    "addressable (process local) shards.")


class Shard:
    """One device's piece of an array: `device`, `index` (into the global array), `data`."""

    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device: Any, index: Index, data: Any, replica_id: int = 0) -> None:
        self.device = device
        self.index = index
        self.data = data
        self.replica_id = replica_id

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


def _replica_ids(sharding: Sharding, shape: tuple[int, ...]) -> dict[Any, int]:
    seen: dict[Any, int] = {}
    out = {}
    for dev, idx in sharding.devices_indices_map(shape).items():
        key = tuple((s.start, s.stop) for s in idx)
        out[dev] = seen.get(key, 0)
        seen[key] = out[dev] + 1
    return out


class ShardedArray(ArrayImpl):
    """An Array held as one buffer per addressable device (see the module docstring)."""

    __slots__ = ("_sharding", "_shards", "_lazy")

    def __init__(self, aval: ShapedArray, sharding: Sharding, shards: dict[Any, np.ndarray],
                 value: np.ndarray | None = None, lazy: bool = False,
                 covers: bool | None = None) -> None:
        # `lazy`: the global value is assembled when first read, not now (a partitioned
        # jit's results: fed to the next call, their blocks are all that is read);
        # `covers`: whether `shards` hold every block, when the caller knows already
        covers = value is None and (_covers(aval, sharding, shards) if covers is None
                                    else covers)
        if covers and not lazy:
            value = _assemble(aval, sharding, shards)
        super().__init__(value, aval)  # type: ignore[arg-type]
        self._sharding = sharding
        self._shards = shards
        self._lazy = covers and lazy

    def _assembled(self) -> None:
        """Assemble a lazy array's global value (once)."""
        if self._lazy and self._value is None and not self._deleted:
            self._value = _assemble(self._aval, self._sharding, self._shards)
            self._lazy = False

    @property
    def sharding(self) -> Sharding:
        return self._sharding

    @property
    def device(self) -> Any:
        devs = self._sharding.device_set
        if len(devs) != 1:
            raise ValueError("Length of devices is greater than 1. Please use `.devices()`.")
        return next(iter(devs))

    def devices(self) -> set:
        return set(self._sharding.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        return self._sharding.is_fully_addressable

    @property
    def spans_devices(self) -> bool:
        """Whether the array is laid out over several devices (jit then partitions)."""
        return len(self._sharding.device_set) > 1

    @property
    def is_fully_replicated(self) -> bool:
        return self._sharding.is_fully_replicated

    @property
    def addressable_shards(self) -> list[Shard]:
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        indices = self._sharding.devices_indices_map(self.shape)
        replicas = _replica_ids(self._sharding, self.shape)
        return [Shard(dev, indices[dev], ArrayImpl(buf, ShapedArray(
            buf.shape, self.dtype, self.weak_type), buf), replicas[dev])
            for dev, buf in self._shards.items()]

    def addressable_data(self, index: int) -> ArrayImpl:
        """The data of the `index`-th addressable shard."""
        return self.addressable_shards[index].data

    @property
    def global_shards(self) -> list[Shard]:
        if not self.is_fully_addressable:
            raise RuntimeError("global_shards is only supported for fully addressable "
                               "arrays")
        return self.addressable_shards

    def _ember_value(self) -> np.ndarray:
        if self._value is None and not self._deleted:
            self._assembled()
            if self._value is None:
                raise RuntimeError(_NOT_ADDRESSABLE)
        return super()._ember_value()

    def _c_value(self) -> np.ndarray | None:
        if self._value is None and not self._deleted:
            self._assembled()
            if self._value is None:
                raise RuntimeError(_NOT_ADDRESSABLE)
        return super()._c_value()

    def delete(self) -> None:
        super().delete()
        self._shards = {}

    def __repr__(self) -> str:
        self._assembled()
        if self._value is None and not self._deleted:
            return f"Array(<not fully addressable>, shape={self.shape}, dtype={self.dtype})"
        return super().__repr__()

    def __reduce__(self):
        raise TypeError("a sharded ember.Array cannot be pickled; device_get it first")


def _key(idx: Index) -> tuple:
    return tuple((s.start, s.stop) for s in idx)


def covers(aval: ShapedArray, sharding: Sharding, shards: dict[Any, Any]) -> bool:
    """Whether shards on the devices `shards` names hold every block of an array of
    `aval`'s shape laid out by `sharding` (see `_covers`)."""
    return _covers(aval, sharding, shards)


def _covers(aval: ShapedArray, sharding: Sharding, shards: dict[Any, np.ndarray]) -> bool:
    """Whether this process's shards hold every block (always, when every device is
    local; also for a replicated array, or one split only across this process's devices)."""
    if sharding.is_fully_addressable:
        return True
    index = sharding.devices_indices_map(aval.shape)
    return {_key(i) for i in index.values()} == {_key(index[d]) for d in shards}


def _assemble(aval: ShapedArray, sharding: Sharding, shards: dict[Any, np.ndarray]
              ) -> np.ndarray:
    index = sharding.devices_indices_map(aval.shape)
    for dev, buf in shards.items():  # a shard holding the whole array is the value
        if all(s == slice(None) for s in index[dev]) and buf.shape == aval.shape \
                and not buf.flags.writeable:
            return buf
    out = np.empty(aval.shape, aval.dtype)
    done = set()
    for dev, idx in index.items():
        if dev in shards and _key(idx) not in done:
            done.add(_key(idx))
            out[idx] = shards[dev]
    out.setflags(write=False)
    return out


def _own(buf: Any, dtype: np.dtype) -> np.ndarray:
    arr = np.array(buf, dtype=dtype, copy=True, order="C")
    arr.setflags(write=False)
    return arr


def from_global(value: np.ndarray, sharding: Sharding, weak_type: bool = False
                ) -> ArrayImpl:
    """The array `value` laid out as `sharding` says (each addressable shard copied out)."""
    value = np.asarray(value)
    aval = ShapedArray(value.shape, value.dtype, weak_type)
    indices = sharding.addressable_devices_indices_map(value.shape)
    shards = {dev: _own(value[idx], value.dtype) for dev, idx in indices.items()}
    full = _own(value, value.dtype) if sharding.is_fully_addressable else None
    return ShardedArray(aval, sharding, shards, full)


def device_put_sharded_leaf(x: Any, sharding: Sharding) -> Any:
    """One leaf of `device_put(x, sharding)`: a tracer passes through unchanged (inside
    jit a layout is a with_sharding_constraint's business)."""
    from ember.core.trace import Tracer
    if isinstance(x, Tracer):
        return x
    if isinstance(x, ShardedArray) and x.sharding == sharding:
        return x
    if isinstance(x, ArrayImpl):
        value, weak = x._ember_value(), x.weak_type
    else:
        src = np.asarray(x)
        dt = dtypes.canonicalize(src.dtype)
        weak = isinstance(x, (int, float, complex)) and not isinstance(x, bool)
        value = src.astype(dt, copy=False)
    if isinstance(sharding, SingleDeviceSharding):
        (dev,) = sharding.device_set
        from ember.device_state import default_device
        if dev is default_device():
            return x if isinstance(x, ArrayImpl) and not isinstance(x, ShardedArray) \
                else ArrayImpl._from_user(value, weak_type=weak)
    if isinstance(sharding, NamedSharding) and len(sharding.spec) > len(value.shape):
        raise ValueError(f"Sharding {sharding!r} is only valid for values of rank at least "
                         f"{len(sharding.spec)}, but was applied to a value of rank "
                         f"{len(value.shape)}")
    return from_global(value, sharding, weak)


def make_array_from_callback(shape: Sequence[int], sharding: Sharding,
                             data_callback: Callable[[Index], Any], dtype: Any = None
                             ) -> ArrayImpl:
    """The array of `shape` whose shard on each addressable device is
    `data_callback(index)` (as jax.make_array_from_callback)."""
    shape = tuple(int(s) for s in shape)
    block = sharding.shard_shape(shape)
    shards: dict[Any, np.ndarray] = {}
    dt = None if dtype is None else np.dtype(dtype)
    for dev, idx in sharding.addressable_devices_indices_map(shape).items():
        piece = np.asarray(data_callback(idx))
        dt = dt or dtypes.canonicalize(piece.dtype)
        if piece.shape != block:
            raise ValueError(f"Expected shard shape {block} doesn't match the single device "
                             f"array shape {piece.shape}. Shape of Array is "
                             f"{ShapedArray(shape, dt).str_short()} with sharding "
                             f"{sharding}")
        shards[dev] = _own(piece, dt)
    if dt is None:
        dt = np.dtype(dtypes.default_float())
    return ShardedArray(ShapedArray(shape, dt, False), sharding, shards)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding,
                                         arrays: Sequence[Any], *, dtype: Any = None
                                         ) -> ArrayImpl:
    """The array of `shape` made of one array per addressable device of `sharding`, each
    the shard of that device (matched by each array's device, or by position in the
    sharding's device order when they all sit on one device)."""
    shape = tuple(int(s) for s in shape)
    indices = sharding.addressable_devices_indices_map(shape)
    if len(arrays) != len(indices):
        raise ValueError(f"The number of single device arrays ({len(arrays)}) does not match "
                         f"the number of addressable devices of the sharding "
                         f"({len(indices)}).")
    devs = [getattr(a, "device", None) for a in arrays]
    if set(devs) == set(indices):
        pairs = dict(zip(devs, arrays))
    else:
        pairs = dict(zip(indices, arrays))
    block = sharding.shard_shape(shape)
    shards = {}
    dt = None if dtype is None else np.dtype(dtype)
    for dev in indices:
        piece = np.asarray(pairs[dev])
        dt = dt or piece.dtype
        if piece.shape != block:
            raise ValueError(f"Expected shard shape {block} doesn't match the single device "
                             f"array shape {piece.shape}. Shape of Array is "
                             f"{ShapedArray(shape, dt).str_short()} with sharding "
                             f"{sharding}")
        shards[dev] = _own(piece, dt)
    return ShardedArray(ShapedArray(shape, dt or np.dtype(np.float32), False), sharding,
                        shards)


def make_array_from_process_local_data(sharding: Sharding, local_data: Any,
                                       global_shape: Sequence[int] | None = None
                                       ) -> ArrayImpl:
    """The global array whose part on this process's devices is `local_data` (as
    jax.make_array_from_process_local_data): `local_data` covers the box this process's
    shards span; the global shape defaults to the local shape scaled by how many such
    boxes each dimension has."""
    local = np.asarray(local_data)
    local = local.astype(dtypes.canonicalize(local.dtype), copy=False)
    ndim = local.ndim
    if global_shape is None:
        global_shape = _infer_global_shape(sharding, local.shape)
    global_shape = tuple(int(s) for s in global_shape)
    indices = sharding.addressable_devices_indices_map(global_shape)
    starts = [min((idx[d].start or 0) for idx in indices.values()) for d in range(ndim)]
    stops = [max((global_shape[d] if idx[d].stop is None else idx[d].stop)
                 for idx in indices.values()) for d in range(ndim)]
    box = tuple(b - a for a, b in zip(starts, stops))
    if local.shape != box:
        raise ValueError(f"local_data of shape {local.shape} does not match this process's "
                         f"part of the global shape {global_shape}: expected {box}")
    shards = {}
    for dev, idx in indices.items():
        rel = tuple(slice((s.start or 0) - a, (global_shape[d] if s.stop is None else s.stop)
                          - a) for d, (s, a) in enumerate(zip(idx, starts)))
        shards[dev] = _own(local[rel], local.dtype)
    return ShardedArray(ShapedArray(global_shape, local.dtype, False), sharding, shards)


def _infer_global_shape(sharding: Sharding, local_shape: tuple[int, ...]) -> tuple[int, ...]:
    if sharding.is_fully_addressable:
        return tuple(local_shape)
    # per dimension: the local size times (blocks in all / blocks this process holds),
    # read off a probe shape with one element per block
    mine = sharding.addressable_devices
    dmap = sharding.devices_indices_map(tuple(
        _splits(sharding, len(local_shape))))
    out = []
    for d, n in enumerate(local_shape):
        every = {(i[d].start, i[d].stop) for i in dmap.values()}
        own = {(i[d].start, i[d].stop) for dev, i in dmap.items() if dev in mine}
        out.append(n * len(every) // max(len(own), 1))
    return tuple(out)


def _splits(sharding: Sharding, ndim: int) -> tuple[int, ...]:
    if isinstance(sharding, NamedSharding):
        return sharding._splits(ndim)
    return (1,) * ndim
