"""A jitted function partitioned over a mesh: one per-device module (the SPMD partitioner's,
ember/passes/spmd_partitioner.py) compiled once and run on every device of this process,
its collectives meeting in memory (and over MPI between processes).

Input: a traced function (ClosedJaxpr), its mesh, a sharding per flat argument (those
numbered in `free` were given none: the partitioner chooses theirs) and a wanted sharding
(or None) per flat output. Output: `PartitionedProgram`: `program(leaves)` returns
one `ShardedArray` per output laid out as the partitioner said; `module` (the per-device
HLO, with its collectives), `report` (collectives and refusals), `out_shardings`.
How a call runs: each local device gets its block of every argument (an argument already
laid out so is not copied), the hidden constants and its partition id; the devices run the
compiled module on threads of their own; a collective's code (the CPU backend's host
callback, or the evaluator) hands the device's buffer to the call's rendezvous
(`_Launch`), whose last arrival computes every member's result with the shard_map
runtime's collectives (`run_in_groups`), in group order, so members get the same bits.
Donated arguments (`donated`, jit's donate_argnums): an output of a device's module with
a donated block's shape is written into that block where nothing else references it (a
block cut for the call, or a shard only the donated array holds), and the donated arrays
are deleted after the call, as JAX does.
Invariants: devices meet collectives in the same order (one module); a device that fails
aborts the call's rendezvous, so the others raise instead of waiting forever; while a call
runs, the CPU kernels' threads are divided among the local devices (`_KernelThreads`);
calls from several Python threads take turns.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ember import backends, callbacks
from ember.array import ArrayImpl
from ember.compiler import _compile_on, backend_name
from ember.config import config
from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr
from ember.donation import exclusive_shard
from ember.hlo.evaluator.collectives import running_on
from ember.hlo.sharding import HloSharding
from ember.lowering import LoweredModule, lower_jaxpr
from ember.passes.spmd_partitioner import partition
from ember.sharding._array import ShardedArray
from ember.sharding._mesh import Mesh, PartitionSpec
from ember.sharding._shardings import NamedSharding
from ember.spmd import _runtime
from ember.spmd._collectives import run_in_groups

# (or and and on booleans are max and min; on integers the runtime has no bitwise ones)
_REDUCE_NAMES = {"add": "psum", "maximum": "pmax", "minimum": "pmin", "or": "pmax",
                 "and": "pmin"}
_WAIT_S = 0.5  # how often a waiting device looks whether the call was aborted


def mesh_axes(mesh: Mesh) -> tuple[tuple[str, int], ...]:
    return tuple((str(a), int(s)) for a, s in mesh.shape.items())


def to_hlo(sharding: NamedSharding, ndim: int) -> HloSharding:
    """The HLO form of a NamedSharding of a rank-`ndim` array."""
    return HloSharding(mesh_axes(sharding.mesh), sharding.spec._normalized(ndim))


def to_named(mesh: Mesh, s: HloSharding) -> NamedSharding:
    """The NamedSharding of an HLO sharding (trailing whole dims left out of the spec)."""
    parts: list[Any] = [None if not a else a[0] if len(a) == 1 else tuple(a)
                        for a in s.dims]
    while parts and parts[-1] is None:
        parts.pop()
    return NamedSharding(mesh, PartitionSpec(*parts))


@functools.lru_cache(maxsize=256)
def _members(mesh: Mesh, groups: tuple) -> tuple[list, list[list]]:
    """The mesh's devices in partition-id order, and each replica group's devices."""
    flat = list(mesh.devices.flat)
    return flat, [[flat[p] for p in g] for g in groups]


class _Launch:
    """One call's rendezvous: collective number k of every local device meets in slot k."""

    def __init__(self, mesh: Mesh, devices: list, process: int, communicator: Any) -> None:
        self.mesh = mesh
        self.n = len(devices)
        self.process = process
        self.communicator = communicator
        self.cond = threading.Condition()
        self.slots: dict[int, dict[str, Any]] = {}
        self.failed: BaseException | None = None

    def runner_for(self, device: Any) -> Any:
        count = [0]

        def runner(opcode: str, reducer: str | None, groups: tuple, dim: int | None,
                   value: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
            k = count[0]
            count[0] += 1
            return self.arrive(k, device, opcode, reducer, groups, dim, value, out)
        return runner

    def abort(self, e: BaseException) -> None:
        with self.cond:
            if self.failed is None:
                self.failed = e
            self.cond.notify_all()

    def arrive(self, k: int, device: Any, opcode: str, reducer: str | None, groups: tuple,
               dim: int | None, value: np.ndarray, out: np.ndarray | None = None
               ) -> np.ndarray:
        if self.n == 1:  # (this process's only device: nobody to wait for here)
            try:
                got = self._combine(opcode, reducer, groups, dim, {device: value},
                                    {device: out} if out is not None else {})
            except BaseException as e:  # noqa: B036 - re-raised, the call's first failure
                self.failed = self.failed or e
                raise
            return got[device]
        with self.cond:
            slot = self.slots.setdefault(k, {"vals": {}, "outs": {}, "out": None})
            # (not copied: the device's code waits here until every member's result is
            # made, and results never alias another device's operand)
            slot["vals"][device] = np.asarray(value)
            if out is not None:
                slot["outs"][device] = out
            if len(slot["vals"]) == self.n:
                try:
                    slot["out"] = self._combine(opcode, reducer, groups, dim, slot["vals"],
                                                slot["outs"])
                except BaseException as e:  # noqa: B036 - every waiting device must hear
                    self.failed = self.failed or e
                self.cond.notify_all()
            while slot["out"] is None and self.failed is None:
                self.cond.wait(_WAIT_S)
            if self.failed is not None:
                raise RuntimeError(f"{opcode}: another device of this partitioned call "
                                   f"failed ({self.failed})")
            return slot["out"][device]

    def _combine(self, opcode: str, reducer: str | None, groups: tuple, dim: int | None,
                 vals: dict[Any, np.ndarray], outs: dict[Any, np.ndarray]
                 ) -> dict[Any, np.ndarray]:
        flat, members = _members(self.mesh, groups)
        if opcode == "all-reduce":
            if reducer not in _REDUCE_NAMES:
                raise NotImplementedError(f"all-reduce combining with {reducer}")
            name, params = _REDUCE_NAMES[reducer], {}
        elif opcode == "all-gather":
            name, params = "all_gather", {"all_gather_dimension": dim, "tiled": True}
        elif opcode == "reduce-scatter":
            if reducer != "add":
                raise NotImplementedError(f"reduce-scatter combining with {reducer}")
            name, params = "reduce_scatter", {"scatter_dimension": dim, "tiled": True}
        elif opcode == "all-to-all":
            name, params = "all_to_all", {"split_axis": dim, "concat_axis": dim}
        elif opcode == "collective-permute":  # (`groups`: its pairs, of partition ids)
            return run_in_groups([flat], "ppermute", {"perm": groups}, vals, self.process,
                                 self.communicator, outs)
        else:
            raise NotImplementedError(f"no collective {opcode}")
        return run_in_groups(members, name, params, vals, self.process, self.communicator,
                             outs)


class _KernelThreads:
    """While partitioned calls run, the CPU kernels' thread count is divided among the
    local devices (k devices each running a pool of n threads on n cores would spin
    against each other; results never depend on the thread count). Counted, so
    overlapping calls restore the count once, after the last."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.saved = 0

    @contextlib.contextmanager
    def divided(self, devices: int) -> Iterator[None]:
        from ember.backends.cpu.runtime import threads

        with self.lock:
            if self.active == 0:
                self.saved = threads.get_num_threads()
                threads.set_num_threads(max(1, self.saved // max(devices, 1)))
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                if self.active == 0:
                    threads.set_num_threads(self.saved)


_KERNEL_THREADS = _KernelThreads()


_NO_RUNNER = object()


def _fast_runner(compiled: Any) -> Any:
    """The CPU executable's one-native-call path (the hidden constants bound; made once
    per compiled module), or None (the interpreter; a nested tuple root)."""
    got = getattr(compiled, "_ember_device_runner", _NO_RUNNER)
    if got is _NO_RUNNER:
        make = getattr(compiled.executable, "unguarded_fast_runner", None)
        got = make(compiled.lowered.hidden_consts) if make is not None else None
        compiled._ember_device_runner = got
    return got


def run_on_devices(compiled: Any, mesh: Mesh, devices: list, blocks: list[list[np.ndarray]],
                   owned: Sequence[tuple[int, ...]] | None, process: int, communicator: Any
                   ) -> list[list[np.ndarray]]:
    """Each of `devices`' outputs of a per-device module (taking its blocks, the hidden
    constants and its partition id), the devices on threads of their own meeting at the
    collectives; a device that fails aborts the others, and its error is raised."""
    flat = list(mesh.devices.flat)
    launch = _Launch(mesh, devices, process, communicator)
    exe = compiled.executable
    hidden = compiled.lowered.hidden_consts
    tuple_result = compiled.lowered.tuple_result
    fast = _fast_runner(compiled)
    types = list(getattr(exe, "_param_dtypes", ()))

    def one(k: int) -> list[np.ndarray]:
        dev = devices[k]
        try:
            with running_on(launch.runner_for(dev)):
                pid = np.int32(flat.index(dev))
                if fast is not None:  # (it takes C-contiguous arrays of the right dtypes)
                    vals = [np.require(b, t, "C") for b, t in zip(blocks[k], types)]
                    return callbacks.run_guarded(fast, [*vals, np.array(pid)],
                                                 owned[k] if owned else ())
                out = (exe(*blocks[k], *hidden, pid, owned=owned[k]) if owned and owned[k]
                       else exe(*blocks[k], *hidden, pid))
        except BaseException as e:
            launch.abort(e)
            raise
        return list(out) if tuple_result else [out]

    if len(devices) == 1:  # (one device in this process: no threads to divide or start)
        with _ONE_CALL_AT_A_TIME:
            try:
                return [one(0)]
            except BaseException:  # (the collective's own error, not its wrapper)
                if launch.failed is not None:
                    raise launch.failed from None
                raise
    results, errors = [], []
    with _ONE_CALL_AT_A_TIME, _KERNEL_THREADS.divided(len(devices)):
        # (the first device runs on this thread: one hand-over fewer per call)
        futures = [_runtime._pool(len(devices)).submit(one, k)
                   for k in range(1, len(devices))]
        try:
            results.append(one(0))
        except BaseException as e:  # noqa: B036 - re-raised below
            errors.append(e)
        for f in futures:
            try:
                results.append(f.result())
            except BaseException as e:  # noqa: B036 - re-raised below
                errors.append(e)
    if errors:  # (what failed first, a device or a collective, not those it aborted)
        raise launch.failed if launch.failed is not None else errors[0]
    return results
# Partitioned calls from several Python threads take turns: the device pool's workers could
# otherwise all wait at rendezvous whose other members are queued behind them (and every
# process must meet the collectives of its calls in one order)
_ONE_CALL_AT_A_TIME = threading.Lock()


class PartitionedProgram:
    """A function compiled for every device of `mesh` (see the module docstring)."""

    def __init__(self, closed: ClosedJaxpr, name: str, mesh: Mesh,
                 in_shardings: Sequence[HloSharding],
                 out_wanted: Sequence[HloSharding | None],
                 out_given: Sequence[NamedSharding | None] = (),
                 free: Sequence[int] = (), donated: Sequence[int] = ()) -> None:
        self.mesh = mesh
        self.closed = closed
        lowered = lower_jaxpr(closed, name)
        self.lowered = lowered
        self.free = tuple(free)
        given = {k: s for k, s in enumerate(in_shardings) if k not in free}
        part = partition(lowered.module, mesh_axes(mesh), given, list(out_wanted), free)
        self.module = part.module
        self.report = part.report
        # (an argument in `free` cut as the partitioner chose: by the host, no collective)
        in_shardings = [part.in_shardings.get(k) or s if k in free else s
                        for k, s in enumerate(in_shardings)]
        self.in_shardings = list(in_shardings)
        self._in_named = [to_named(mesh, s) for s in in_shardings]
        self._indices: dict[int, dict] = {}
        # (a result laid out as the user's out sharding carries that very object)
        given = list(out_given) + [None] * (len(part.out_shardings) - len(out_given))
        self.out_shardings = [
            g if g is not None and s is not None and to_hlo(g, len(s.dims)) == s
            else to_named(mesh, s) if s is not None else None
            for s, g in zip(part.out_shardings, given)]
        out_avals = [ShapedArray(s.local_shape(a.shape) if s is not None else a.shape,
                                 a.dtype, a.weak_type)
                     for s, a in zip(part.out_shardings, closed.out_avals)]
        per_device = LoweredModule(part.module, lowered.hidden_consts, out_avals,
                                   lowered.tuple_result)
        unsafe = bool(config.ember_unsafe_math)
        compiled = None
        # the CPU backend (collectives as host callbacks) unless the interpreter is chosen;
        # the interpreter runs anything (xla-cpu and tpu take no per-device collectives yet)
        chosen = "interpreter" if backend_name() == "interpreter" else "cpu"
        self.donated = tuple(donated)
        for backend in dict.fromkeys((chosen, "interpreter")):
            compiled = _compile_on(backends.get(backend), per_device, unsafe, True,
                                   self.donated)
            if compiled is not None:
                break
        assert compiled is not None
        self.compiled = callbacks.guard(compiled)

    def _blocks(self, leaves: Sequence[Any], devices: list
                ) -> tuple[list[list[np.ndarray]], list[tuple[int, ...]]]:
        """Each device's blocks of the arguments: an argument laid out as its sharding says
        lends its own buffers; any other value is cut (its slices computed once). And per
        device, the donated positions whose block it may write an output into: a block
        cut here, or a donated array's shard nothing else references."""
        per_arg = []
        owned: list[list[int]] = [[] for _ in devices]
        donated = set(self.compiled.donated)
        for j, (x, named, aval) in enumerate(zip(leaves, self._in_named,
                                                 self.closed.in_avals)):
            if isinstance(x, ShardedArray) and (x.sharding == named or x.sharding
                                                .is_equivalent_to(named, aval.ndim)):
                if j in donated:  # (asked before this frame holds the buffers)
                    for k, d in enumerate(devices):
                        if exclusive_shard(x, d) is not None:
                            owned[k].append(j)
                shards = x._shards
                per_arg.append([np.asarray(shards[d]) for d in devices])
                continue
            if j in donated:
                for k in range(len(devices)):
                    owned[k].append(j)
            value = np.asarray(x._ember_value() if hasattr(x, "_ember_value") else x)
            value = value.astype(aval.dtype, copy=False)
            index = self._indices.get(j)
            if index is None:
                index = self._indices[j] = named.devices_indices_map(aval.shape)
            per_arg.append([np.array(value[index[d]], order="C") for d in devices])
        return ([[arg[k] for arg in per_arg] for k in range(len(devices))],
                [tuple(o) for o in owned])

    def __call__(self, leaves: Sequence[Any]) -> list[Any]:
        from ember.distributed import topology

        topo = topology.current()
        devices = [d for d in self.mesh.devices.flat if d.process_index == topo.process_index]
        blocks, owned = self._blocks(leaves, devices)
        results = run_on_devices(self.compiled, self.mesh, devices, blocks, owned,
                                 topo.process_index, topo.communicator)
        blocks.clear()  # (the donated arrays deleted next hold the last references)
        for j in self.donated:  # (as JAX: a donated array is deleted by the call)
            if isinstance(leaves[j], ArrayImpl):
                leaves[j].delete()
        outs = []
        for j, (aval, named) in enumerate(zip(self.closed.out_avals, self.out_shardings)):
            by_dev = {}
            for k, d in enumerate(devices):
                buf = np.require(results[k][j], dtype=aval.dtype, requirements="C")
                if buf.flags.writeable:
                    buf.setflags(write=False)
                by_dev[d] = buf
            outs.append(ShardedArray(ShapedArray(aval.shape, aval.dtype, aval.weak_type),
                                     named, by_dev, lazy=True))
        return outs
