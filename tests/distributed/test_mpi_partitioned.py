"""jit partitioned across processes: two processes of two CPU devices each under mpiexec
(mpi_partitioned_checks.py): a 2x2 mesh whose data axis spans the processes runs a matmul
chain, ppermutes under jit(shard_map) and 20 steps of an MLP's training, equal to one
device's (the eager shard_map's for the ppermutes)."""

from __future__ import annotations

from mpi_harness import errors_of_each_process


def test_partitioned_jit_across_two_processes():
    errors, seconds = errors_of_each_process("mpi_partitioned_checks.py", "partitioned checks")
    print(f"2-process partitioned checks: {seconds:.1f} s, errors {errors}")
