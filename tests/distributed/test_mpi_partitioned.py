"""jit partitioned across processes: two processes of two CPU devices each under mpiexec
(mpi_partitioned_checks.py): a 2x2 mesh whose data axis spans the processes runs a matmul
chain and 20 steps of an MLP's training, equal to one device's."""

from __future__ import annotations

import re

from mpi_harness import run_mpi


def test_partitioned_jit_across_two_processes():
    done, seconds = run_mpi("mpi_partitioned_checks.py", timeout=180)
    text = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, text
    # (mpiexec may join the two processes' lines without a newline between them)
    passed = re.findall(r"partitioned checks passed (\d) (\d\.\d+e[-+]\d+)", done.stdout)
    assert sorted(p for p, _ in passed) == ["0", "1"], text
    print(f"2-process partitioned checks: {seconds:.1f} s, errors {[e for _, e in passed]}")
