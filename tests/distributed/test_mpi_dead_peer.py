"""A process that dies or hangs before a collective: the others end within a time limit.

Each case is one `mpiexec -n 2` run of mpi_dead_peer.py with a 1 s collective limit
(EMBER_COLLECTIVE_TIMEOUT_S), about 3-4 s each:
- MPICH's default: process 1 exits with status 1, and mpiexec ends the whole job at once
  (process 0 never returns from its collective; the job's status is nonzero);
- `-disable-auto-cleanup` (mpiexec keeps the survivors running), process 1 exits: process
  0's collective raises CollectiveTimeoutError naming process 1 after about 1 s;
- process 1 alive but never calling the collective: the same error (all_reduce, permute,
  which waits only for its source, and exchange, the runtime's ppermute; with 3 processes
  only process 1 is named, not process 2, which arrived), then Ember's exit hook aborts the
  job, so the hung process does not keep it running for its 120 s.
"""

from __future__ import annotations

import re

import pytest
from mpi_harness import run_mpi

LIMIT = "1"


def _text(done) -> str:
    return f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-2000:]}"


def _run(*args: str, flags: tuple[str, ...] = (), n: int = 2):
    done, seconds = run_mpi("mpi_dead_peer.py", *args, n=n, flags=flags, timeout=60,
                            EMBER_COLLECTIVE_TIMEOUT_S=LIMIT)
    assert seconds < 30, f"took {seconds:.1f} s\n{_text(done)}"
    return done


def test_dead_process_ends_the_job_under_mpich_defaults():
    done = _run("exit", "all_reduce")
    assert done.returncode != 0, _text(done)
    assert "RETURNED" not in done.stdout


@pytest.mark.parametrize("how,collective,flags,n", [
    ("exit", "barrier", ("-disable-auto-cleanup",), 2),
    ("hang", "all_reduce", (), 2),
    ("hang", "permute", (), 2),
    ("hang", "exchange", (), 2),  # (the runtime's ppermute between processes)
    ("hang", "all_gather", (), 3),  # (process 2 arrived: only process 1 is named)
])
def test_survivor_raises_naming_the_missing_process(how, collective, flags, n):
    done = _run(how, collective, flags=flags, n=n)
    out = done.stdout
    found = re.search(r"RAISED CollectiveTimeoutError: (.*called by process 0.*) after "
                      r"([\d.]+)", out)
    assert found, _text(done)
    message, seconds = found.group(1), float(found.group(2))
    assert message.startswith(f"{collective} between processes {list(range(n))}"), message
    assert "process(es) [1] did not arrive" in message and "within 1 s" in message, message
    assert 1.0 <= seconds < 10, seconds  # (the limit plus its grace, on a loaded host)
    if how == "hang":  # (after an exit, mpiexec may kill process 0 before this line)
        assert "AGAIN CollectiveError: barrier: this communicator is unusable" in out
    assert done.returncode != 0  # (the exit hook aborted the job)


def test_survivor_of_a_shard_map_collective_raises():
    """The same through a shard_map body's per-device module: its collective-permute (a
    host callback) raises the communicator's error out of the compiled call."""
    done = _run("hang", "shard_map")
    found = re.search(r"RAISED CollectiveTimeoutError: (.*) after ([\d.]+)", done.stdout)
    assert found, _text(done)
    message, seconds = found.group(1), float(found.group(2))
    assert message.startswith("exchange between processes [0, 1]"), message
    assert "process(es) [1] did not arrive" in message, message
    assert 1.0 <= seconds < 10, seconds
    assert done.returncode != 0
