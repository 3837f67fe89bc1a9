"""shard_map across processes: two processes of two CPU devices each under mpiexec
(mpi_sharded_checks.py): psum over the 4-device mesh, over one axis of a 2x2 mesh, and a
data-parallel training step whose parameters after 20 steps equal one process's."""

from __future__ import annotations

from mpi_harness import errors_of_each_process


def test_shard_map_across_two_processes():
    errors, seconds = errors_of_each_process("mpi_sharded_checks.py", "sharded checks")
    print(f"2-process sharded checks: {seconds:.1f} s, errors {errors}")
