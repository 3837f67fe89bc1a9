"""shard_map across processes: two processes of two CPU devices each under mpiexec
(mpi_sharded_checks.py, about 3 s): psum over the 4-device mesh, over one axis of a 2x2
mesh, a table of ppermute (shift, permutation, partial pairs), all_gather, psum_scatter,
all_to_all and axis_index, ppermutes along each axis of the 2x2 mesh (each run as stages,
then as one per-device module; bit for bit against NumPy), and a data-parallel training
step whose parameters after 20 steps equal one process's."""

from __future__ import annotations

from mpi_harness import errors_of_each_process


def test_shard_map_across_two_processes():
    errors, seconds = errors_of_each_process("mpi_sharded_checks.py", "sharded checks")
    print(f"2-process sharded checks: {seconds:.1f} s, errors {errors}")
