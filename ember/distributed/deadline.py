"""Waiting for a collective with a time limit, and naming the processes that never came.

Input: the MPI requests of one nonblocking collective (or point-to-point exchange) that
this process started, the collective's name, and the communicator's members.
Output: `Waiter.wait(...)` returns when the requests complete; after
`config.ember_collective_timeout_s` seconds (EMBER_COLLECTIVE_TIMEOUT_S) it raises
`CollectiveTimeoutError` naming the collective and the processes that did not arrive.

How the stragglers are named: each communicator counts its collectives (every member
calls them in the same order, so collective k is the same call everywhere). A process still
waiting after `min(1 s, timeout / 10)` tells every other member "I am in collective k" by a
one-number message on a private duplicate of the communicator; at the time limit (plus the
same grace, so a late but live member's note arrives) the members that never said "k" (or
a later number) are the ones reported. Fast collectives send no notes at all.

Why polling rather than MPI's blocking calls: a blocking call on a dead peer can wait
forever (MPICH's `mpiexec` ends the whole job when a rank dies with a nonzero status, but not
under `-disable-auto-cleanup`, nor when a live peer never calls the collective, nor under
other launchers). Polling `Test` drives MPI's progress as the blocking call does, yielding
the CPU every 1024 polls as MPICH's own waits do: a 32 MB all-reduce of 2 processes takes
1.00-1.04x mpi4py's blocking `Allreduce` (benchmarks/allreduce.py, on a loaded 2-core host).

Invariants: after a timeout the communicator is broken (its pending messages can never be
matched), every later call on it raises at once, and when the process exits it calls
`MPI_Abort`, which ends the other processes of the job instead of letting `MPI_Finalize`
wait for the dead or stuck one forever.
"""

from __future__ import annotations

import atexit
import os
import time
from types import ModuleType
from typing import Any

import numpy as np

from ember.config import config
from ember.core.errors import JaxRuntimeError

_NOTE_TAG = 0x7E11


class CollectiveError(JaxRuntimeError):
    """A collective between processes failed (MPI reported an error, or the communicator
    is broken by an earlier failure)."""


class CollectiveTimeoutError(CollectiveError):
    """A collective between processes did not complete within the time limit."""


_failed = False
_abort_hook_installed = False


def _abort_if_failed(mpi: ModuleType) -> None:
    if _failed:  # (a peer is dead or stuck: MPI_Finalize would wait for it forever)
        mpi.COMM_WORLD.Abort(1)


def install_abort_hook(mpi: ModuleType) -> None:
    """Make the exit of a process whose collective failed abort the MPI job (once)."""
    global _abort_hook_installed
    if not _abort_hook_installed:
        atexit.register(_abort_if_failed, mpi)
        _abort_hook_installed = True


class Waiter:
    """The collective counter and straggler notes of one communicator."""

    def __init__(self, mpi: ModuleType, comm: Any, members: tuple[int, ...]) -> None:
        self._mpi = mpi
        # (its own context: a note never matches other traffic; made by the nonblocking
        # Idup, finished within the first wait, so a missing member cannot hang it)
        self._notes, self._notes_pending = comm.Idup()
        self._rank = comm.Get_rank()
        self.members = members  # process index of each rank of `comm`
        self._heard = [-1] * len(members)  # the latest collective each rank said it is in
        self._sent: list[tuple[Any, np.ndarray]] = []  # unfinished note sends and buffers
        self.count = 0
        self.broken: str | None = None

    def check(self, name: str) -> None:
        """Raise if an earlier failure broke this communicator."""
        if self.broken is not None:
            raise CollectiveError(f"{name}: this communicator is unusable after an earlier "
                                  f"failure ({self.broken})")

    def fail(self, message: str, timed_out: bool = False) -> CollectiveError:
        """Mark the communicator broken; the error to raise."""
        global _failed
        self.broken = message
        _failed = True
        return (CollectiveTimeoutError if timed_out else CollectiveError)(message)

    def wait(self, requests: list[Any], name: str, waiting_on: tuple[int, ...] | None = None,
             timeout: float | None = None) -> None:
        """Complete `requests` (collective number `self.count + 1`) or raise.
        `waiting_on`: the ranks whose arrival completes them (default: every member)."""
        self.count += 1
        limit = float(config.ember_collective_timeout_s if timeout is None else timeout)
        if self._notes_pending is not None:
            requests = [*requests, self._notes_pending]
        if not requests:  # (a member with nothing to send or receive: counted only)
            return
        test = requests[0].Test if len(requests) == 1 else (
            lambda: self._mpi.Request.Testall(requests))
        try:
            start = time.monotonic()
            grace = min(1.0, limit / 10)
            announced = False
            polls = 0
            while not test():
                polls += 1
                if polls % 1024 and not announced:
                    continue  # (spin, as MPI's blocking calls do)
                # every 1024 polls (each call): let a peer sharing this CPU run, as MPICH's
                # own waits do; it made a loaded host's 32 MB all-reduce 10% faster
                os.sched_yield()
                elapsed = time.monotonic() - start
                if elapsed < grace:
                    continue
                if not announced:
                    self._announce()
                    announced = True
                if elapsed >= limit + grace:
                    raise self._timed_out(name, limit, waiting_on)
            self._notes_pending = None
        except self._mpi.Exception as e:
            raise self.fail(f"{name}: MPI error: {e.Get_error_string()}") from e

    def _notes_ready(self) -> bool:
        if self._notes_pending is not None and self._notes_pending.Test():
            self._notes_pending = None
        return self._notes_pending is None

    def _announce(self) -> None:
        if not self._notes_ready():
            return  # (the first collective: nobody can be named, see _timed_out)
        self._sent = [(r, b) for r, b in self._sent if not r.Test()]
        for peer in range(len(self.members)):
            if peer != self._rank:
                buf = np.array([self.count], np.int64)
                self._sent.append((self._notes.Isend(buf, dest=peer, tag=_NOTE_TAG), buf))

    def _drain(self) -> None:
        if not self._notes_ready():
            return
        status = self._mpi.Status()
        buf = np.empty(1, np.int64)
        while self._notes.Iprobe(source=self._mpi.ANY_SOURCE, tag=_NOTE_TAG, status=status):
            source = status.Get_source()
            self._notes.Recv(buf, source=source, tag=_NOTE_TAG)
            self._heard[source] = max(self._heard[source], int(buf[0]))

    def _timed_out(self, name: str, limit: float, waiting_on: tuple[int, ...] | None
                   ) -> CollectiveError:
        self._drain()
        ranks = range(len(self.members)) if waiting_on is None else waiting_on
        missing = [self.members[r] for r in ranks
                   if r != self._rank and self._heard[r] < self.count]
        if not self._notes_ready():  # (some member never came to this communicator at all)
            missing = [m for i, m in enumerate(self.members) if i != self._rank]
            who = f"some of process(es) {missing} never joined this communicator"
        else:
            who = (f"process(es) {missing} did not arrive" if missing else
                   "every process arrived but the exchange did not finish")
        return self.fail(
            f"{name} between processes {list(self.members)} (collective #{self.count}, called "
            f"by process {self.members[self._rank]}) did not complete within {limit:g} s "
            f"(ember_collective_timeout_s): {who}; a process died, hangs, or called a "
            "different collective", timed_out=True)
