"""Two processes under mpiexec: every MpiCommunicator method and initialize() vs NumPy.

One mpiexec run (about 3 s) of mpi_collective_checks.py covers all_reduce (sum, prod, max,
min), all_gather, reduce_scatter, all_to_all, permute, subgroup and barrier over 12 dtypes
(bool, ints, float16, bfloat16, float32/64, complex) and shapes (), (0,), (7,), (4, 3),
(2, 3, 5), on the world communicator, a reversed subgroup and singleton subgroups;
initialize()'s topology, its errors, shutdown and initializing again. In-process tests
check the parts that need no second process and no MPI in the test process (the
missing-MPI error, argument errors raised before MPI starts, the timeout flag, the buffer
recycler, that importing ember.distributed loads no MPI).
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from mpi_harness import run_mpi

import ember
from ember.config import child_environment, config


def test_collectives_across_two_processes():
    done, seconds = run_mpi("mpi_collective_checks.py", timeout=120)
    text = f"stdout:\n{done.stdout[-6000:]}\nstderr:\n{done.stderr[-2000:]}"
    assert done.returncode == 0, text
    found = re.search(r"checks passed per process: (\d+) (\d+)\n", done.stdout)
    assert found, text
    assert min(map(int, found.groups())) > 1500, found.group(0)  # (every case ran)
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


@pytest.mark.parametrize("text", ["abc", "0"])
def test_collective_timeout_variable_must_be_positive(text):
    done = subprocess.run([sys.executable, "-c", "import ember"], capture_output=True,
                          text=True, timeout=60,
                          env=child_environment(EMBER_COLLECTIVE_TIMEOUT_S=text))
    assert done.returncode != 0
    assert f"EMBER_COLLECTIVE_TIMEOUT_S must be a positive number of seconds, got {text!r}" \
        in done.stderr


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


def test_import_does_not_load_mpi():
    code = ("import sys, ember, ember.distributed; "
            "print('mpi4py' in sys.modules, ember.distributed.is_initialized())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.split() == ["False", "False"], out


@pytest.mark.parametrize("kwargs,match", [
    (dict(local_device_ids=[1]), r"local_device_ids must be distinct ids of this process's "
                                 r"1 CPU device\(s\) \(0..0\), got \[1\]"),
    (dict(local_device_ids=[0, 0]), "local_device_ids must be distinct"),
    (dict(cluster_detection_method="slurm"), "Ember joins processes through MPI only"),
])
def test_initialize_argument_errors(kwargs, match):
    # (checked before MPI starts: nothing is joined)
    with pytest.raises(ValueError, match=match):
        ember.distributed.initialize(**kwargs)
    assert not ember.distributed.is_initialized()
