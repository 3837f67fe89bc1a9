"""Run under `mpiexec -n 2`: every MpiCommunicator method and initialize() vs NumPy.

Input: the MPI job (2 processes; any size works). Each process builds every process's
buffers from seeded generators, so it knows the exact expected result of each collective.
Output: process 0 prints `checks passed per process: N0 N1`; a process with failures
prints them and exits with status 1.
Started by tests/distributed/test_mpi_collectives.py (one mpiexec for all the checks).
"""

from __future__ import annotations

import sys
import time
import traceback

import numpy as np

import ember
from ember.config import config
from ember.distributed import MpiCommunicator, topology

try:
    from ml_dtypes import bfloat16
except ImportError:  # (installed with jax, in the test extra)
    bfloat16 = None

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128] + ([bfloat16] if bfloat16 else [])
SHAPES = [(), (0,), (7,), (4, 3), (2, 3, 5)]
OPS = ("sum", "prod", "max", "min")
failures: list[str] = []
passed = 0


def data(rank: int, dtype, shape, salt: int) -> np.ndarray:
    """Process `rank`'s buffer for one case: small values (products stay exact), NaNs in
    float buffers of process 1 (max/min must keep them)."""
    rng = np.random.default_rng([rank, salt, len(shape), int(np.prod(shape))])
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    x = rng.integers(-3 if dtype.kind != "u" else 0, 4, shape)
    if dtype.kind in "fcV":
        x = x + rng.integers(0, 4, shape) * 0.25
        if dtype.kind == "c":
            x = x + 1j * rng.integers(-3, 4, shape)
        if rank == 1 and x.size > 2:
            x.reshape(-1)[::3] = np.nan
    return np.asarray(x).astype(dtype)


def expected_reduce(stacked: np.ndarray, op: str) -> np.ndarray:
    dtype = stacked.dtype
    if dtype == np.bool_:
        return (np.any if op in ("sum", "max") else np.all)(stacked, axis=0)
    wide = stacked.astype(np.float64) if dtype.name in ("float16", "bfloat16") else stacked
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    return ufunc.reduce(wide, axis=0, dtype=wide.dtype).astype(dtype)


def same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    global passed
    try:
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
        wide = np.complex128 if want.dtype.kind == "c" else (
            np.float64 if want.dtype.kind in "fV" else want.dtype)
        np.testing.assert_array_equal(got.astype(wide), want.astype(wide))
        passed += 1
    except AssertionError as e:
        failures.append(f"{what}: {e}")


def raises(kind: type, fn, what: str) -> None:
    global passed
    try:
        fn()
    except kind:
        passed += 1
        return
    except Exception as e:  # noqa: BLE001
        failures.append(f"{what}: raised {type(e).__name__}: {e}")
        return
    failures.append(f"{what}: did not raise {kind.__name__}")


def check_communicator(comm: MpiCommunicator, tag: str) -> None:
    """The protocol's methods on `comm` over every dtype and shape."""
    n, me = comm.size, comm.rank
    world = comm.members  # (buffers are made by process index, so subgroups differ)
    for salt, (dtype, shape) in enumerate((d, s) for d in DTYPES for s in SHAPES):
        everyone = [data(world[r], dtype, shape, salt) for r in range(n)]
        stacked = np.stack(everyone)
        mine = everyone[me]
        case = f"{tag} {np.dtype(dtype).name}{list(shape)}"
        same(comm.all_gather(mine), stacked, f"all_gather {case}")
        for op in OPS:
            same(comm.all_reduce(mine, op), expected_reduce(stacked, op),
                 f"all_reduce {op} {case}")
        blocked = (n * 2,) + shape  # (axis 0 split into n equal blocks)
        everyone = [data(world[r], dtype, blocked, salt) for r in range(n)]
        mine = everyone[me]
        for op in ("sum", "max"):
            same(comm.reduce_scatter(mine, op), expected_reduce(np.stack(everyone), op)[
                2 * me:2 * me + 2], f"reduce_scatter {op} {case}")
        same(comm.all_to_all(mine), np.concatenate([e[2 * me:2 * me + 2] for e in everyone]),
             f"all_to_all {case}")
        shift = tuple((r, (r + 1) % n) for r in range(n))
        same(comm.permute(mine, shift), everyone[(me - 1) % n], f"permute shift {case}")
        partial = ((0, n - 1),)
        same(comm.permute(mine, partial),
             everyone[0] if me == n - 1 else np.zeros_like(mine), f"permute partial {case}")
        # exchange: two messages to the next member told apart by their tags (received in
        # the other order), and one to itself
        nxt, prv = (me + 1) % n, (me - 1) % n
        other = data(world[me], dtype, blocked, salt + 1000)
        first, second, own = (np.empty_like(mine), np.empty_like(other),
                              np.empty_like(mine))
        comm.exchange([(nxt, 3, mine), (nxt, 4, other), (me, 5, mine)],
                      [(prv, 4, second), (prv, 3, first), (me, 5, own)])
        same(first, everyone[prv], f"exchange tag 3 {case}")
        same(second, data(world[prv], dtype, blocked, salt + 1000), f"exchange tag 4 {case}")
        same(own, mine, f"exchange to itself {case}")
        comm.exchange([], [])  # (nothing to move: counted, returns)
    x = np.arange(6.0, dtype=np.float32)
    if n > 1:
        raises(ValueError, lambda: comm.reduce_scatter(np.zeros(2 * n + 1), "sum"),
               f"{tag} reduce_scatter of an uneven axis")
    raises(ValueError, lambda: comm.all_to_all(np.float32(1)), f"{tag} all_to_all of a scalar")
    raises(ValueError, lambda: comm.all_reduce(x, "mean"), f"{tag} unknown reduction")
    raises(ValueError, lambda: comm.permute(x, ((0, 0), (n - 1, 0))),
           f"{tag} permute with a repeated destination")
    comm.barrier()


def check_nan_placement(comm: MpiCommunicator) -> None:
    """A NaN on one process only, at both positions of a pair, survives max and min."""
    x = np.array([np.nan, 1.0, 2.0, np.nan], np.float32) if comm.rank == 0 else \
        np.array([3.0, np.nan, 0.5, np.nan], np.float32)
    for op in ("max", "min"):
        got = comm.all_reduce(x, op)
        same(np.isnan(got), np.array([True, True, False, True]), f"NaN placement {op}")


def check_late_arrivals(comm: MpiCommunicator) -> None:
    """A member that comes after the others started announcing (grace 0.3 s of a 3 s
    limit), but within the limit: no error, and later collectives are unaffected by the
    notes."""
    config.update("ember_collective_timeout_s", 3.0)
    try:
        for late in range(comm.size):
            if comm.rank == late:
                time.sleep(0.5)
            got = comm.all_reduce(np.full(3, comm.rank + 1.0), "sum")
            same(got, np.full(3, comm.size * (comm.size + 1) / 2), f"late process {late}")
            same(comm.all_gather(np.int32(comm.rank)), np.arange(comm.size, dtype=np.int32),
                 f"after late process {late}")
    finally:
        config.update("ember_collective_timeout_s", 300.0)


def check_large_results_stay(comm: MpiCommunicator) -> None:
    """Results of 1 MB and more come from recycled buffers: one the caller holds (or a
    view of it) is never written by a later collective; dropped ones are reused."""
    n = 1 << 19  # (2 MB of float32)
    first = comm.all_reduce(np.full(n, comm.rank + 1.0, np.float32), "sum")
    view = comm.all_gather(np.full(n // 2, comm.rank, np.float32))[1, ::2]
    for k in range(3):
        comm.all_reduce(np.full(n, float(k), np.float32), "max")
        comm.all_to_all(np.full(n, float(k), np.float32))
        comm.permute(np.full(n, float(k), np.float32), ((0, 0),))
    total = comm.size * (comm.size + 1) / 2
    same(first, np.full(n, total, np.float32), "a held large result is not overwritten")
    same(view, np.full(n // 4, 1, np.float32), "a view of a large result is not overwritten")


def check_all_reduce_into(comm: MpiCommunicator) -> None:
    """all_reduce(out=): a fitting buffer receives the result and is returned; one of
    another dtype or shape, or the send buffer itself, is left alone (a new result)."""
    global passed
    x = np.arange(6, dtype=np.float32) * (comm.rank + 1)
    want = np.arange(6, dtype=np.float32) * (comm.size * (comm.size + 1) // 2)
    into = np.full(6, -1.0, np.float32)
    got = comm.all_reduce(x, "sum", out=into)
    same(got, want, "all_reduce into a buffer")
    passed += got is into
    if got is not into:
        failures.append("all_reduce into a buffer: not written in place")
    for bad, what in ((np.zeros(6, np.float64), "of another dtype"),
                      (np.zeros(5, np.float32), "of another shape"), (x, "the send buffer")):
        before = bad.copy()
        got = comm.all_reduce(x, "sum", out=bad)
        same(got, want, f"all_reduce into a buffer {what}")
        same(bad, before if bad is not x else x, f"all_reduce leaves a buffer {what}")


def check_shard_map_one_device_each() -> None:
    """shard_map over one device per process: a psum and a pmax with a NaN (the reduction
    written straight into the per-device module's result: the path above) and a ppermute
    ring, each called three times (NumPy stages, then the per-device module)."""
    from ember import lax
    from ember.sharding import NamedSharding, P

    n, me = ember.process_count(), ember.process_index()
    mesh = ember.make_mesh((n,), ("i",))
    split = NamedSharding(mesh, P("i"))
    x = np.arange(5, dtype=np.float32) + 10 * me
    if me == 0:
        x[2] = np.nan
    xs = ember.make_array_from_process_local_data(split, x)
    every = [np.arange(5, dtype=np.float32) + 10 * r for r in range(n)]
    every[0][2] = np.nan
    f = ember.shard_map(lambda a: (lax.psum(a, "i"), lax.pmax(a, "i"),
                                   lax.ppermute(a, "i", [(r, (r + 1) % n) for r in range(n)])),
                        mesh=mesh, in_specs=P("i"), out_specs=(P(), P(), P("i")))
    for call in range(3):
        total, top, moved = f(xs)
        same(np.asarray(total.addressable_shards[0].data), np.sum(every, axis=0),
             f"shard_map psum, call {call}")
        same(np.asarray(top.addressable_shards[0].data), np.max(every, axis=0),
             f"shard_map pmax, call {call}")
        same(np.asarray(moved.addressable_shards[0].data), every[(me - 1) % n],
             f"shard_map ppermute, call {call}")


def check_plans() -> None:
    """The reduction plans mpi_reduce.py documents."""
    global passed
    import mpi4py.MPI as MPI

    from ember.distributed import mpi_reduce
    f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
    facts = {
        "float16 sums travel as float32": mpi_reduce.plan(MPI, f16, "sum").wire == f32,
        "float max has the NaN pass": mpi_reduce.plan(MPI, f32, "max").nan_pass,
        "int max has none": not mpi_reduce.plan(MPI, np.dtype(np.int32), "max").nan_pass,
        "complex min gathers": mpi_reduce.plan(MPI, np.dtype(np.complex64), "min").wire is None,
        "bool prod is and": mpi_reduce.plan(MPI, np.dtype(np.bool_), "prod").mpi_op == MPI.LAND,
    }
    failures.extend(f"plan: {k}" for k, ok in facts.items() if not ok)
    passed += sum(facts.values())
    raises(ValueError, lambda: mpi_reduce.plan(MPI, f32, "mean"), "plan of an unknown op")
    raises(TypeError, lambda: mpi_reduce.plan(MPI, np.dtype("U3"), "sum"), "plan of text")


def main() -> None:
    global passed
    import mpi4py.MPI as MPI
    rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
    assert not ember.distributed.is_initialized()
    ember.distributed.initialize()
    topo = topology.current()
    same(np.array([topo.process_index, topo.process_count]), np.array([rank, size]),
         "initialize: process index and count")
    same(np.array(topo.local_device_counts), np.ones(size, np.int64).astype(int),
         "initialize: local device counts")
    raises(RuntimeError, ember.distributed.initialize, "initialize twice")
    comm = topo.communicator
    assert isinstance(comm, MpiCommunicator) and ember.distributed.is_initialized()
    check_communicator(comm, "world")
    check_nan_placement(comm)
    check_plans()
    check_late_arrivals(comm)
    check_large_results_stay(comm)
    check_all_reduce_into(comm)
    check_shard_map_one_device_each()
    # subgroups: all name the same group, reversed (rank i is ranks[i]); a partition
    reverse = comm.subgroup(tuple(range(size))[::-1])
    same(np.array([reverse.rank, reverse.size]), np.array([size - 1 - rank, size]),
         "reversed subgroup rank")
    check_communicator(reverse, "reversed")
    alone = comm.subgroup((rank,))
    same(np.array([alone.rank, alone.size]), np.array([0, 1]), "singleton subgroup")
    check_communicator(alone, "singleton")
    if rank != 0:
        raises(ValueError, lambda: comm.subgroup((0,)), "subgroup without this process")
    else:
        comm.subgroup((0,))
    ember.distributed.shutdown()
    same(np.array([ember.distributed.is_initialized(), topology.current().process_count]),
         np.array([False, 1]), "shutdown")
    ember.distributed.shutdown()  # (does nothing when not initialized)
    ember.distributed.initialize(num_processes=size, process_id=rank, local_device_ids=0)
    again = topology.current()
    same(np.array([again.process_index, *again.local_device_counts]),
         np.array([rank] + [1] * size), "initialize again")
    raises(ValueError, lambda: ember.distributed.process_group._check_given(
        "num_processes", size + 1, size, "positive"), "num_processes that MPI disagrees with")
    ember.distributed.shutdown()


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        failures.append(traceback.format_exc())
    import mpi4py.MPI as MPI
    world = MPI.COMM_WORLD
    if failures:  # (each process its own: the checks may have left the others behind)
        print(f"rank {world.Get_rank()}: {len(failures)} FAILED\n" + "\n".join(failures[:40]),
              flush=True)
        sys.exit(1)
    # one line, printed by process 0: mpiexec interleaves the processes' output in chunks
    counts = np.empty(world.Get_size(), np.int64)
    world.Allgather(np.array([passed], np.int64), counts)
    if world.Get_rank() == 0:
        print(f"checks passed per process: {' '.join(map(str, counts))}", flush=True)
