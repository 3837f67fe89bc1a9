"""Two processes under mpiexec: every MpiCommunicator method and initialize() vs NumPy.

One mpiexec run (about 3 s) of mpi_collective_checks.py covers all_reduce (sum, prod, max,
min), all_gather, reduce_scatter, all_to_all, permute, subgroup and barrier over 12 dtypes
(bool, ints, float16, bfloat16, float32/64, complex) and shapes (), (0,), (7,), (4, 3),
(2, 3, 5), on the world communicator, a reversed subgroup and singleton subgroups;
initialize()'s topology, its errors, shutdown and initializing again. In-process tests
check the parts that need no second process (the missing-MPI error, the timeout flag).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from mpi_harness import run_mpi

import ember
from ember.config import config


def test_collectives_across_two_processes():
    done, seconds = run_mpi("mpi_collective_checks.py", timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("rank ")]
    assert done.returncode == 0, done.stdout[-6000:]
    passed = sorted(line.split(":")[0] for line in lines if "checks passed" in line)
    assert passed == ["rank 0", "rank 1"], done.stdout[-6000:]
    counts = [int(line.split(": ")[1].split()[0]) for line in lines]
    assert min(counts) > 1500, lines  # (every case ran, none skipped)
    print(f"2-process collective checks: {seconds:.1f} s")


def test_missing_mpi4py_names_the_extra(monkeypatch):
    from ember.distributed import mpi_import
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # (import mpi4py now raises)
    with pytest.raises(ImportError, match=r"pip install 'ember\[mpi\]'"):
        mpi_import.load_mpi()


def test_not_initialized_is_one_process():
    from ember.distributed import topology
    ember.distributed.shutdown()  # (does nothing when not initialized)
    assert not ember.distributed.is_initialized()
    t = topology.current()
    assert (t.process_index, t.process_count, t.communicator) == (0, 1, None)


@pytest.mark.parametrize("bad", [0, -1.0, "5", True])
def test_collective_timeout_flag_must_be_positive(bad):
    with pytest.raises(ValueError, match="positive number of seconds"):
        config.update("ember_collective_timeout_s", bad)
    assert config.ember_collective_timeout_s == 300.0


def test_reduce_plans():
    pytest.importorskip("mpi4py")
    from ember.distributed import mpi_reduce
    from ember.distributed.mpi_import import load_mpi
    mpi = load_mpi()
    assert mpi_reduce.plan(mpi, np.dtype(np.float16), "sum").wire == np.float32
    assert mpi_reduce.plan(mpi, np.dtype(np.float32), "max").nan_pass
    assert not mpi_reduce.plan(mpi, np.dtype(np.int32), "max").nan_pass
    assert mpi_reduce.plan(mpi, np.dtype(np.complex64), "min").wire is None
    assert mpi_reduce.plan(mpi, np.dtype(np.bool_), "prod").mpi_op == mpi.LAND
    with pytest.raises(ValueError, match="reduction must be one of"):
        mpi_reduce.plan(mpi, np.dtype(np.float32), "mean")
    with pytest.raises(TypeError, match="cannot reduce"):
        mpi_reduce.plan(mpi, np.dtype("U3"), "sum")


def test_recycler_reuses_only_dropped_buffers():
    from ember.distributed.buffers import MIN_BYTES, Recycler

    def address(a: np.ndarray) -> int:
        return a.__array_interface__["data"][0]

    r = Recycler(keep=2)
    big = (MIN_BYTES // 4,)
    a = r.empty(big, np.float32)
    b = r.empty(big, np.float32)
    seen = {address(a), address(b)}
    assert len(seen) == 2
    del a
    c = r.empty(big, np.int32)  # (same bytes, another dtype: the dropped buffer again)
    assert address(c) in seen and c.dtype == np.int32 and c.shape == big
    view = c[::3]
    del c
    d = r.empty(big, np.float32)  # (c's buffer is still seen through `view`)
    assert address(d) not in seen and address(view) in seen
    small = r.empty((3, 5), np.float64)  # (below MIN_BYTES: plain np.empty)
    assert small.shape == (3, 5) and small.dtype == np.float64
    assert r.empty((0,), np.float32).shape == (0,)
