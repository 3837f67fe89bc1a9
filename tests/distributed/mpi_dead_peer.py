"""Run under `mpiexec -n 2` (or more): process 1 dies or hangs before a collective; the
others must not wait forever.

Input: argv[1], how process 1 leaves: `exit` (os._exit(1)), or `hang` (sleeps 120 s and
never calls the collective); argv[2], the collective every other process calls
(`all_reduce`, `all_gather`, `barrier`, `permute`, ...). Output: process 0 prints
`RAISED <type>: <message> after <seconds>` when the collective raises, or `RETURNED` if it
(wrongly) completes (the others print nothing); then each exits, and Ember's exit hook
aborts the job (so the hung process 1 ends too). Started by
tests/distributed/test_mpi_dead_peer.py with EMBER_COLLECTIVE_TIMEOUT_S set.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import ember
from ember.distributed import topology

CALLS = {
    "all_reduce": lambda c, x: c.all_reduce(x, "sum"),
    "all_gather": lambda c, x: c.all_gather(x),
    "reduce_scatter": lambda c, x: c.reduce_scatter(x, "max"),
    "all_to_all": lambda c, x: c.all_to_all(x),
    "permute": lambda c, x: c.permute(x, ((1, 0), (0, 1))),
    "exchange": lambda c, x: c.exchange([(1, 7, x)], [(1, 7, np.empty_like(x))]),
    "barrier": lambda c, x: c.barrier(),
    "subgroup": lambda c, x: c.subgroup((0, 1)),
}


def _shard_map_ring() -> object:
    """A shard_map ppermute over one device per process, run twice by every process (its
    NumPy stages, then its per-device module): the third call is collective-permute in
    compiled code, whose exchange between the processes must time out."""
    from ember import lax
    from ember.sharding import NamedSharding, P

    mesh = ember.make_mesh((ember.process_count(),), ("i",))
    n = ember.process_count()
    f = ember.shard_map(lambda a: lax.ppermute(a * 2, "i", [(r, (r + 1) % n) for r in range(n)]),
                        mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    xs = ember.make_array_from_process_local_data(NamedSharding(mesh, P("i")),
                                                  np.ones(8, np.float32))
    f(xs)
    f(xs)
    return lambda c, x: f(xs)


def main() -> None:
    how, name = sys.argv[1], sys.argv[2]
    ember.distributed.initialize()
    comm = topology.current().communicator
    x = np.arange(1 << 16, dtype=np.float32)
    if name == "shard_map":
        CALLS[name] = _shard_map_ring()
    comm.all_reduce(x, "sum")  # (all alive and joined up to here)
    if comm.rank == 1:
        if how == "exit":
            os._exit(1)
        time.sleep(120)
        os._exit(0)
    say = print if comm.rank == 0 else (lambda *a, **k: None)  # (one printer: mpiexec
    start = time.monotonic()                                    # interleaves outputs)
    try:
        CALLS[name](comm, x)
        say("RETURNED", flush=True)
    except Exception as e:  # noqa: BLE001
        say(f"RAISED {type(e).__name__}: {e} after {time.monotonic() - start:.2f}",
            flush=True)
        try:  # the communicator stays broken
            comm.barrier()
        except Exception as again:  # noqa: BLE001
            say(f"AGAIN {type(again).__name__}: {again}", flush=True)
        if comm.rank != 0:  # (the first survivor to exit aborts the job: let 0 report)
            time.sleep(3)
        sys.exit(3)


if __name__ == "__main__":
    main()
