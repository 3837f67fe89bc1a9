"""shard_map across processes: two processes of two CPU devices each under mpiexec
(mpi_sharded_checks.py): psum over the 4-device mesh, over one axis of a 2x2 mesh, and a
data-parallel training step whose parameters after 20 steps equal one process's."""

from __future__ import annotations

import re

from mpi_harness import run_mpi


def test_shard_map_across_two_processes():
    done, seconds = run_mpi("mpi_sharded_checks.py", timeout=180)
    text = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, text
    # (mpiexec may join the two processes' lines without a newline between them)
    passed = re.findall(r"sharded checks passed (\d) (\d\.\d+e[-+]\d+)", done.stdout)
    assert sorted(p for p, _ in passed) == ["0", "1"], text
    print(f"2-process sharded checks: {seconds:.1f} s, errors {[e for _, e in passed]}")
