"""The devices Ember runs on: this process's CPU devices and, once processes are joined, every
process's (as `jax.devices()`).

Input: `config.jax_num_cpu_devices` (the number of CPU devices of this process; -1 means
one) and `ember.distributed.topology.current()` (this process's index, the process count
and each process's number of local devices). Output: `global_devices()`,
`local_devices()`, `process_index()`, `process_count()`, each device a `CpuDevice` with
JAX's attributes (`id`, `platform`, `device_kind`, `process_index`; repr `CpuDevice(id=0)`).
Invariants: the list is built once, at the first query (the backend "starts" then); after
that `config.update("jax_num_cpu_devices", n)` with a different n raises JAX's error.
Global ids run over the processes in order: process p's devices come after those of every
process before it. Devices hash and compare by value (id and process), so a list rebuilt
by `reset` still finds the devices of before.
"""

from __future__ import annotations

import threading

from ember import config as _config_module
from ember.config import config
from ember.distributed import topology


class DeviceBase:
    """What every device answers as JAX's do: `host_id` (its process) and `client`."""

    __slots__ = ()
    process_index: int

    @property
    def host_id(self) -> int:
        return self.process_index

    @property
    def client(self) -> None:
        return None


class CpuDevice(DeviceBase):
    """One CPU device: `id` (global), `process_index` (the process that holds it)."""

    __slots__ = ("id", "process_index", "local_hardware_id")
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int, process_index: int, local_hardware_id: int) -> None:
        self.id = id
        self.process_index = process_index
        self.local_hardware_id = local_hardware_id

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    # (by value, so a device list rebuilt by `reset` still finds the devices of before)
    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CpuDevice) and other.id == self.id
                and other.process_index == self.process_index)

    def __hash__(self) -> int:
        return hash(("cpu", self.id))

    def __str__(self) -> str:
        return f"TFRT_CPU_{self.id}"


_lock = threading.Lock()
_devices: list[CpuDevice] | None = None


def _local_count() -> int:
    n = config.jax_num_cpu_devices
    return 1 if n is None or n < 0 else max(int(n), 1)


def _build() -> list[CpuDevice]:
    topo = topology.current()
    local = _local_count()
    counts = topo.local_device_counts or (local,) * topo.process_count
    out: list[CpuDevice] = []
    for p, count in enumerate(counts):
        for k in range(count):
            out.append(CpuDevice(len(out), p, k))
    return out


def global_devices() -> list[CpuDevice]:
    """Every device of every process, by id (the backend starts at the first call)."""
    global _devices
    devs = _devices
    if devs is None:
        with _lock:
            if _devices is None:
                _devices = _build()
            devs = _devices
    return devs


def local_devices() -> list[CpuDevice]:
    """The devices of this process, by id."""
    me = topology.current().process_index
    return [d for d in global_devices() if d.process_index == me]


def default_device() -> CpuDevice:
    """The first local device: where a value with no sharding lives."""
    return local_devices()[0]


def process_index() -> int:
    """This process's index among the joined processes (0 alone)."""
    return topology.current().process_index


def process_count() -> int:
    """The number of joined processes (1 alone)."""
    return topology.current().process_count


def started() -> bool:
    """Whether the device list has been built."""
    return _devices is not None


def reset() -> None:
    """Forget the device list, so the next query builds it again from the config and the
    topology (for tests, and for `ember.distributed.initialize`, which joins processes
    before any device is used). Arrays and meshes made before keep their old devices."""
    global _devices
    with _lock:
        _devices = None


_config_module.set_devices_started_probe(started)
