"""Starting a script under `mpiexec` from the test suite, with a time limit.

Input: a script in this folder, its arguments, the number of processes, extra mpiexec
flags and environment variables. Output: `run_mpi(...)`, the finished
`subprocess.CompletedProcess` (stdout and stderr apart, as text) and its wall time.
Invariant: where mpi4py or mpiexec is missing the calling test is skipped with the reason
(the `mpi` extra), except when the CI variable is set: CI installs the test extra, which
includes MPI, so there a missing MPI fails the test instead of hiding it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ember.config import child_environment

HERE = Path(__file__).resolve().parent


def mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel puts it in the venv's bin), else
    the one on PATH; skips (or fails under CI) when MPI is not installed."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    missing = [name for name, ok in (("mpi4py", importlib.util.find_spec("mpi4py")),
                                     ("mpiexec", found)) if not ok]
    if missing:
        reason = (f"{' and '.join(missing)} not installed: pip install 'ember[mpi]' (or the "
                  "test extra) to run the multi-process tests")
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the multi-process tests, but {reason}")
        print(f"SKIPPED: {reason}")
        pytest.skip(reason)
    return found


def run_mpi(script: str, *args: str, n: int = 2, flags: tuple[str, ...] = (),
            timeout: float = 60, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run `mpiexec [flags] -n n python script args` (killed after `timeout` seconds)."""
    command = [mpiexec(), *flags, "-n", str(n), sys.executable, str(HERE / script), *args]
    start = time.monotonic()
    # (stderr apart: MPI's own messages would otherwise land inside the scripts' lines)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=child_environment(**env))
    return done, time.monotonic() - start


def errors_of_each_process(script: str, what: str, timeout: float = 180
                           ) -> tuple[list[str], float]:
    """Run `script` on two processes; each must exit 0 and print `<what> passed <process>
    <largest relative error>`: the errors in process order, and the seconds it took."""
    import re

    done, seconds = run_mpi(script, timeout=timeout)
    text = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, text
    # (mpiexec may join the two processes' lines without a newline between them)
    passed = re.findall(rf"{what} passed (\d) (\d\.\d+e[-+]\d+)", done.stdout)
    assert sorted(p for p, _ in passed) == ["0", "1"], text
    return [e for _, e in sorted(passed)], seconds
