"""Which process this is among how many, and how it talks to the others.

Input: `set_current` (called by `ember.distributed.initialize()` once MPI says who this
process is). Output: `current()`, read by `ember.devices()`, `process_index()` and the
runtime's collectives. Invariant: the default is one process, index 0, no communicator; a
`Communicator` moves NumPy buffers between processes (one participant per process, ranks
equal to process indices) without pickling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

REDUCTIONS = ("sum", "prod", "max", "min")


class Communicator(Protocol):
    """Collectives over the processes of one group, on contiguous NumPy buffers.

    Every call is collective: each member calls it with buffers of the same shape and
    dtype, in the same order. `op` is one of `REDUCTIONS`."""

    rank: int
    size: int

    def all_reduce(self, send: np.ndarray, op: str, out: np.ndarray | None = None
                   ) -> np.ndarray:
        """The elementwise reduction of every member's `send` (written into `out` and
        `out` returned where the communicator can: a buffer of the result's shape and
        dtype; else a new array)."""
        ...

    def all_gather(self, send: np.ndarray) -> np.ndarray:
        """Every member's `send` stacked on a new leading axis, in rank order."""
        ...

    def reduce_scatter(self, send: np.ndarray, op: str) -> np.ndarray:
        """The reduction of every member's `send`, split on axis 0 into `size` equal
        blocks, of which this member keeps block `rank`."""
        ...

    def all_to_all(self, send: np.ndarray) -> np.ndarray:
        """Block j of axis 0 (of `size` equal blocks) goes to member j; the result holds
        the blocks received, block i from member i."""
        ...

    def permute(self, send: np.ndarray, pairs: tuple[tuple[int, int], ...]) -> np.ndarray:
        """Send to `dst` and receive from `src` for each (src, dst) pair naming this
        member; a member no pair sends to receives zeros."""
        ...

    def exchange(self, sends: Sequence[tuple[int, int, np.ndarray]],
                 receives: Sequence[tuple[int, int, np.ndarray]]) -> None:
        """Point to point: each (rank, tag, buffer) of `sends` goes to member `rank`; each
        (rank, tag, out) of `receives` is filled in place by the send of member `rank` with
        that tag. Every member calls it, perhaps with nothing to move."""
        ...

    def subgroup(self, ranks: tuple[int, ...]) -> Communicator:
        """The communicator of the members `ranks`, whose rank i is `ranks[i]`. Collective
        over all members: every member calls it, with the same `ranks` or with the group
        that holds it (groups that partition the members); a member not in its `ranks`
        takes part, then gets a ValueError."""
        ...

    def barrier(self) -> None:
        """Returns once every member has called it."""
        ...


@dataclass(frozen=True)
class ProcessTopology:
    """This process's place: its index, the number of processes, each process's number
    of local devices (in process order), and the communicator (None for one process)."""

    process_index: int = 0
    process_count: int = 1
    local_device_counts: tuple[int, ...] | None = None
    communicator: Communicator | None = None


_current = ProcessTopology()


def current() -> ProcessTopology:
    """The topology `initialize()` set, or the single-process default."""
    return _current


def set_current(topology: ProcessTopology) -> None:
    """Install the topology of a joined process group (by `ember.distributed.initialize`)."""
    global _current
    _current = topology
