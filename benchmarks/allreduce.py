"""All-reduce across 2 processes, three ways in the same run: a user's
`shard_map(lambda a: lax.psum(a, "i"))` over a mesh of one device per process (issue 27's
goal: 32 MB of float32 within 1.2x of mpi4py), Ember's MpiCommunicator alone (what the
shard_map runtime calls), and mpi4py's own `Allreduce` of the same buffer (the peer).
A second table does the same for a ring shift, `lax.ppermute` (the per-device module's
collective-permute: tagged Isend/Irecv through `MpiCommunicator.exchange`), against
mpi4py's `Sendrecv` of the same buffer.

Each round runs all three on every size, each call after a barrier; a call's time is the
slowest process's (the times are gathered), and the table shows the median over rounds.
Smaller sizes show the fixed cost per call (Python: the shard_map call's signature lookup,
its runtime, the communicator's NaN-free polling path).

Run (it starts mpiexec itself when not started by it):
    python benchmarks/allreduce.py [--repeat 21] [-n 2]
    .venv/bin/mpiexec -n 2 .venv/bin/python benchmarks/allreduce.py

Informative only: shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES_BYTES = (4 << 10, 1 << 20, 32 << 20)
GOAL = 1.2  # (at 32 MB)


def _under_mpiexec() -> bool:
    return any(k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK"))


def _timed(comm, fn) -> float:
    """One call's time in ms, as the slowest process saw it."""
    comm.Barrier()
    t0 = time.perf_counter()
    fn()
    mine = np.array([time.perf_counter() - t0])
    everyone = np.empty(comm.Get_size())
    comm.Allgather(mine, everyone)
    return float(everyone.max() * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("-n", type=int, default=2, help="processes (when starting mpiexec)")
    args = parser.parse_args()
    if not _under_mpiexec():
        mpiexec = Path(sys.executable).parent / "mpiexec"
        sys.exit(subprocess.call([str(mpiexec), "-n", str(args.n), sys.executable, __file__,
                                  "--repeat", str(args.repeat)]))
    import ember
    from ember import lax
    from ember.distributed import topology
    from ember.sharding import NamedSharding, P
    ember.distributed.initialize()
    mesh = ember.make_mesh((ember.device_count(),), ("i",))
    split = NamedSharding(mesh, P("i"))
    psum = ember.shard_map(lambda a: lax.psum(a, "i"), mesh=mesh, in_specs=P("i"),
                           out_specs=P())
    n = ember.process_count()
    ring = [(r, (r + 1) % n) for r in range(n)]
    shift = ember.shard_map(lambda a: lax.ppermute(a, "i", ring), mesh=mesh,
                            in_specs=P("i"), out_specs=P("i"))
    comm = topology.current().communicator
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    rows = []
    shift_rows = []
    me = world.Get_rank()
    nxt, prv = (me + 1) % n, (me - 1) % n
    for size in SIZES_BYTES:
        x = np.random.default_rng(world.Get_rank()).random(size // 4, dtype=np.float32)
        out = np.empty_like(x)
        xs = ember.make_array_from_process_local_data(split, x)  # (this process's block)
        fns = {"shard_map": lambda xs=xs: psum(xs),
               "ember": lambda x=x: comm.all_reduce(x, "sum"),
               "mpi4py": lambda x=x, out=out: world.Allreduce(x, out, op=MPI.SUM)}
        got = comm.all_reduce(x, "sum")
        world.Allreduce(x, out, op=MPI.SUM)
        assert np.array_equal(got, out)  # (same algorithm and order: the same bits)
        mapped = psum(xs)
        assert np.array_equal(np.asarray(mapped.addressable_shards[0].data), out)
        times: dict[str, list[float]] = {k: [] for k in fns}
        for fn in fns.values():  # warm-up
            fn()
        for _ in range(args.repeat):
            for k, fn in fns.items():
                times[k].append(_timed(world, fn))
        med = {k: float(np.median(v)) for k, v in times.items()}
        rows.append((size, med["shard_map"], med["ember"], med["mpi4py"]))
        # the ring shift: each process sends its buffer to the next, receives the last's
        got = np.empty_like(x)
        fns = {"shard_map": lambda xs=xs: shift(xs),
               "ember": lambda x=x, got=got: comm.exchange([(nxt, 1, x)], [(prv, 1, got)]),
               "mpi4py": lambda x=x, out=out: world.Sendrecv(x, nxt, 2, out, prv, 2)}
        world.Sendrecv(x, nxt, 2, out, prv, 2)
        moved = shift(xs)
        moved = shift(xs)  # (the second call runs the per-device module)
        assert np.array_equal(np.asarray(moved.addressable_shards[0].data), out)
        times = {k: [] for k in fns}
        for fn in fns.values():
            fn()
        for _ in range(args.repeat):
            for k, fn in fns.items():
                times[k].append(_timed(world, fn))
        med = {k: float(np.median(v)) for k, v in times.items()}
        shift_rows.append((size, med["shard_map"], med["ember"], med["mpi4py"]))
    if world.Get_rank() == 0:
        print(f"all-reduce (sum, float32) across {world.Get_size()} processes, median of "
              f"{args.repeat} rounds; {MPI.Get_library_version().splitlines()[0].strip()}")
        print(f"{'bytes':>10} {'shard_map ms':>13} {'comm ms':>9} {'mpi4py ms':>10} "
              f"{'shard_map/mpi4py':>17} {'comm/mpi4py':>12}")
        for size, sm, e, m in rows:
            print(f"{size:>10} {sm:>13.3f} {e:>9.3f} {m:>10.3f} {sm / m:>17.2f} {e / m:>12.2f}")
        print(f"ring shift (ppermute) across {world.Get_size()} processes: shard_map, "
              "MpiCommunicator.exchange, mpi4py Sendrecv")
        print(f"{'bytes':>10} {'shard_map ms':>13} {'comm ms':>9} {'mpi4py ms':>10} "
              f"{'shard_map/mpi4py':>17} {'comm/mpi4py':>12}")
        for size, sm, e, m in shift_rows:
            print(f"{size:>10} {sm:>13.3f} {e:>9.3f} {m:>10.3f} {sm / m:>17.2f} {e / m:>12.2f}")
        ratio = rows[-1][1] / rows[-1][3]
        print(f"goal: shard_map(psum) of 32 MB within {GOAL}x of mpi4py's Allreduce: "
              f"{ratio:.2f}x, {'met' if ratio <= GOAL else 'NOT met'}")
    ember.distributed.shutdown()


if __name__ == "__main__":
    main()
