"""`initialize()`, `shutdown()`, `is_initialized()`: joining this process to its MPI job.

Input: the MPI job this process was started in (`mpiexec -n N python prog.py`; run alone,
a job of one), and `initialize`'s arguments, which JAX's signature has. Output: the
topology `topology.current()` returns from then on: this process's index (MPI's rank), the
number of processes (MPI's size), each process's local device count (gathered from all:
the `jax_num_cpu_devices` flag where Ember has it, else 1, or `len(local_device_ids)`),
and an `MpiCommunicator` on a private duplicate of `MPI.COMM_WORLD` (so Ember's messages
never match the program's own MPI traffic).

Differences from JAX, which starts its own coordinator service: MPI already knows who is
who, so no argument is needed; `num_processes` and `process_id`, when given, must agree
with MPI's; `coordinator_address` and the heartbeat/shutdown/bind settings are accepted
and unused (MPI does the rendezvous; `ember_collective_timeout_s` bounds every collective);
`initialization_timeout` bounds the gathering of device counts. Invariants: initialize
twice raises JAX's RuntimeError; `shutdown()` does nothing when not initialized, else
waits for every process (at most `shutdown_timeout_seconds`) and restores the
one-process topology; MPI itself stays initialized until the process exits (MPI cannot
start twice), so initialize may be called again after shutdown.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ember.config import config
from ember.distributed import topology
from ember.distributed.mpi_communicator import MpiCommunicator
from ember.distributed.mpi_import import load_mpi

_state: dict[str, object] = {}  # "communicator", "shutdown_timeout" while initialized


def _available_local_devices() -> int:
    """CPU devices per process: the jax_num_cpu_devices flag where Ember defines it (JAX's
    default, -1, and unset mean one)."""
    try:
        count = config.read("jax_num_cpu_devices")
    except AttributeError:  # (no such flag in this Ember)
        return 1
    return int(count) if count is not None and int(count) > 0 else 1


def _local_device_count(local_device_ids: int | Sequence[int] | None) -> int:
    available = _available_local_devices()
    if local_device_ids is None:
        return available
    ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
    bad = [i for i in ids if not isinstance(i, (int, np.integer)) or not 0 <= i < available]
    if bad or len(set(ids)) != len(ids) or not ids:
        raise ValueError(f"local_device_ids must be distinct ids of this process's "
                         f"{available} CPU device(s) (0..{available - 1}), got {ids}")
    return len(ids)


def _check_given(name: str, given: int | None, actual: int, kind: str) -> None:
    if given is None:
        return
    if not isinstance(given, int) or isinstance(given, bool):
        raise TypeError(f"{name} must be a {kind} int. Got {name}={given} of type "
                        f"{type(given)}.")
    if given != actual:
        raise ValueError(f"{name}={given} does not match MPI, which started this process as "
                         f"{'rank' if name == 'process_id' else 'one of'} {actual}"
                         f"{'' if name == 'process_id' else ' processes'}: launch the program "
                         f"with `mpiexec -n N python ...`, and leave {name} out to take MPI's")


def initialize(coordinator_address: str | None = None,
               num_processes: int | None = None,
               process_id: int | None = None,
               local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None,
               slice_index: int | None = None,
               partition_index: int | None = None) -> None:
    """Join this process to the MPI job it runs in (as jax.distributed.initialize).

    Under `mpiexec` no argument is needed: the rank and size come from MPI. Afterwards
    `ember.distributed.topology.current()` has this process's index, the process count,
    every process's local device count and the communicator the runtime's collectives
    use. Raises RuntimeError when called twice, ImportError naming the `mpi` extra when
    mpi4py is missing, and ValueError when `num_processes`/`process_id` disagree with MPI.
    """
    if "communicator" in _state:
        raise RuntimeError("distributed.initialize should only be called once.")
    if cluster_detection_method not in (None, "mpi4py", "deactivate"):
        raise ValueError(f"cluster_detection_method={cluster_detection_method!r}: Ember joins "
                         "processes through MPI only ('mpi4py', or None)")
    count = _local_device_count(local_device_ids)
    mpi = load_mpi()
    world = mpi.COMM_WORLD
    _check_given("num_processes", num_processes, world.Get_size(), "positive")
    _check_given("process_id", process_id, world.Get_rank(), "nonnegative")
    # Ember's collectives run on a private duplicate of the world communicator, so they
    # never match the program's own MPI messages; made (and the device counts gathered)
    # within initialization_timeout
    joining = MpiCommunicator(world)
    private, made = world.Idup()
    local = np.array([count], np.int64)
    gathered = np.empty(joining.size, np.int64)
    joining._wait([world.Iallgather(local, gathered), made], "initialize",
                  timeout=float(initialization_timeout))
    communicator = MpiCommunicator(private)
    topology.set_current(topology.ProcessTopology(
        process_index=communicator.rank, process_count=communicator.size,
        local_device_counts=tuple(int(c) for c in gathered), communicator=communicator))
    _state["communicator"] = communicator
    from ember import device_state
    device_state.reset()  # (the device list now spans every process's devices)
    _state["shutdown_timeout"] = float(shutdown_timeout_seconds)


def is_initialized() -> bool:
    """Whether `initialize()` joined this process (and `shutdown()` has not left)."""
    return "communicator" in _state


def shutdown() -> None:
    """Leave the process group: wait for every process (at most shutdown_timeout_seconds
    of `initialize`), then restore the one-process topology. Does nothing when not
    initialized."""
    communicator = _state.get("communicator")
    if communicator is None:
        return
    try:
        assert isinstance(communicator, MpiCommunicator)
        if communicator._waiter.broken is None:
            communicator._wait([communicator.comm.Ibarrier()], "shutdown",
                               timeout=float(_state["shutdown_timeout"]))  # type: ignore
    finally:
        _state.clear()
        topology.set_current(topology.ProcessTopology())
        from ember import device_state
        device_state.reset()
