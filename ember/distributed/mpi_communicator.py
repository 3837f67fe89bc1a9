"""`MpiCommunicator`: the `topology.Communicator` protocol on an MPI communicator.

Input: an mpi4py communicator (a duplicate of `MPI.COMM_WORLD`, from
`ember.distributed.initialize()`, or a sub-communicator of one) and, per call, a NumPy buffer
of the same shape and dtype on every member. Output: the result of the matching MPI
collective, a new NumPy array.

Each method is one of MPI's buffer-based nonblocking collectives (`Iallreduce`,
`Iallgather`, `Ireduce_scatter_block`, `Ialltoall`, `Ibarrier`; `permute` and `exchange`
are `Isend` and `Irecv` per message) on the array's memory: no pickling, no Python per element. Data
movement (gather, all-to-all, permute) travels as bytes, so every dtype moves, bfloat16
included; reductions follow `mpi_reduce.plan` (16-bit floats in float32, NaN-propagating
max/min). Every wait is `deadline.Waiter.wait`: a dead or absent member makes the others
raise `CollectiveTimeoutError` after `ember_collective_timeout_s` instead of hanging.
Invariants: `rank`/`size` are MPI's; `members[rank]` is this process's index in the job
(the world rank); results are C-contiguous, never alias the input, and are never written
again once returned (large ones come from buffers.py's recycler, which reuses a buffer
only after the caller dropped it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.distributed import mpi_reduce
from ember.distributed.buffers import Recycler
from ember.distributed.deadline import Waiter, install_abort_hook
from ember.distributed.mpi_import import load_mpi

_PERMUTE_TAG = 0x7E12


def _bytes(a: np.ndarray) -> np.ndarray:
    """The buffer's memory as a flat uint8 array (a view)."""
    return a.reshape(-1).view(np.uint8)


def _blocks(send: np.ndarray, size: int, name: str) -> None:
    if send.ndim == 0 or send.shape[0] % size:
        raise ValueError(f"{name} splits axis 0 into {size} equal blocks (one per process), "
                         f"but got a buffer of shape {send.shape}")


class MpiCommunicator:
    """The collectives of one MPI communicator (see the module docstring)."""

    def __init__(self, comm: Any, members: tuple[int, ...] | None = None) -> None:
        self._mpi = load_mpi()
        install_abort_hook(self._mpi)
        self.comm = comm
        self.rank: int = comm.Get_rank()
        self.size: int = comm.Get_size()
        if members is None:
            members = tuple(range(self.size))
        self.members = members
        self._waiter = Waiter(self._mpi, comm, members)
        self._buffers = Recycler()  # (results of 1 MB and more: buffers.py)

    def __repr__(self) -> str:
        return f"MpiCommunicator(rank={self.rank}, size={self.size}, members={self.members})"

    def _start(self, name: str, send: Any) -> np.ndarray:
        self._waiter.check(name)
        return np.asarray(send, order="C")  # (ascontiguousarray makes a 0-d array 1-d)

    def all_reduce(self, send: np.ndarray, op: str, out: np.ndarray | None = None
                   ) -> np.ndarray:
        """The elementwise reduction (`op`: sum, prod, max, min) of every member's `send`;
        written into `out` (and `out` returned) when it is a C-contiguous writable buffer
        of the result's shape and dtype apart from `send` and the reduction needs no
        conversion, else into a new buffer."""
        send = self._start("all_reduce", send)
        p = mpi_reduce.plan(self._mpi, send.dtype, op)
        if p.wire is None:
            return mpi_reduce.numpy_reduce(self.all_gather(send), op)
        wire = send.astype(p.wire) if p.wire != send.dtype else send
        if not (out is not None and wire is send and out.shape == send.shape
                and out.dtype == send.dtype and out.flags.c_contiguous
                and out.flags.writeable and not np.may_share_memory(out, send)):
            out = self._buffers.empty(wire.shape, wire.dtype)
        self._wait([self.comm.Iallreduce([wire, p.datatype], [out, p.datatype], p.mpi_op)],
                   "all_reduce")
        if p.nan_pass:
            self._mark_nans(wire, out)
        return out.astype(send.dtype) if out.dtype != send.dtype else out

    def _mark_nans(self, send: np.ndarray, out: np.ndarray, scatter: bool = False) -> None:
        """Set `out` to NaN where any member's `send` (this member's block of it, for
        reduce_scatter) is NaN: MPI's MAX/MIN compare and may drop a NaN."""
        mpi = self._mpi
        nans = np.isnan(send)
        flag = np.array(bool(nans.any()))
        anywhere = np.empty_like(flag)
        self._wait([self.comm.Iallreduce([flag, mpi.C_BOOL], [anywhere, mpi.C_BOOL], mpi.LOR)],
                   "all_reduce (NaN check)")
        if not anywhere:
            return
        mask = np.empty(out.shape, np.bool_)
        if scatter:
            self._wait([self.comm.Ireduce_scatter_block([nans, mpi.C_BOOL],
                                                        [mask, mpi.C_BOOL], mpi.LOR)],
                       "reduce_scatter (NaN mask)")
        else:
            self._wait([self.comm.Iallreduce([nans, mpi.C_BOOL], [mask, mpi.C_BOOL], mpi.LOR)],
                       "all_reduce (NaN mask)")
        out[mask] = np.nan

    def all_gather(self, send: np.ndarray) -> np.ndarray:
        """Every member's `send` stacked on a new leading axis, in rank order."""
        send = self._start("all_gather", send)
        out = self._buffers.empty((self.size,) + send.shape, send.dtype)
        self._wait([self.comm.Iallgather(_bytes(send), _bytes(out))], "all_gather")
        return out

    def reduce_scatter(self, send: np.ndarray, op: str) -> np.ndarray:
        """The reduction of every member's `send`, split on axis 0 into `size` equal
        blocks, of which this member keeps block `rank`."""
        send = self._start("reduce_scatter", send)
        _blocks(send, self.size, "reduce_scatter")
        p = mpi_reduce.plan(self._mpi, send.dtype, op)
        shape = (send.shape[0] // self.size,) + send.shape[1:]
        if p.wire is None:
            whole = self.all_reduce(send, op)
            return whole[self.rank * shape[0]:(self.rank + 1) * shape[0]].copy()
        wire = send.astype(p.wire) if p.wire != send.dtype else send
        out = self._buffers.empty(shape, p.wire)
        self._wait([self.comm.Ireduce_scatter_block([wire, p.datatype], [out, p.datatype],
                                                    p.mpi_op)], "reduce_scatter")
        if p.nan_pass:
            self._mark_nans(wire, out, scatter=True)
        return out.astype(send.dtype) if out.dtype != send.dtype else out

    def all_to_all(self, send: np.ndarray) -> np.ndarray:
        """Block j of axis 0 (of `size` equal blocks) goes to member j; the result holds
        the blocks received, block i from member i."""
        send = self._start("all_to_all", send)
        _blocks(send, self.size, "all_to_all")
        out = self._buffers.empty(send.shape, send.dtype)
        self._wait([self.comm.Ialltoall(_bytes(send), _bytes(out))], "all_to_all")
        return out

    def permute(self, send: np.ndarray, pairs: tuple[tuple[int, int], ...]) -> np.ndarray:
        """Send to `dst` and receive from `src` for each (src, dst) pair naming this
        member; a member no pair sends to receives zeros."""
        send = self._start("permute", send)
        pairs = tuple((int(s), int(d)) for s, d in pairs)
        sources = [s for s, _ in pairs]
        dests = [d for _, d in pairs]
        if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
            raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}.")
        if any(not 0 <= r < self.size for r in sources + dests):
            raise ValueError(f"permute pairs name processes outside 0..{self.size - 1}: "
                             f"{pairs}")
        out = self._buffers.empty(send.shape, send.dtype)
        if self.rank not in dests:
            out.fill(0)
        requests = []
        came_from = ()
        for s, d in pairs:
            if s == d == self.rank:
                out[...] = send
            elif d == self.rank:
                requests.append(self.comm.Irecv(_bytes(out), source=s, tag=_PERMUTE_TAG))
                came_from = (s,)
            elif s == self.rank:
                requests.append(self.comm.Isend(_bytes(send), dest=d, tag=_PERMUTE_TAG))
        # (only the source this member receives from must arrive; a send to a dead peer
        # may still finish locally, as MPI buffers small messages)
        self._wait(requests, "permute", waiting_on=came_from or None)
        return out

    def exchange(self, sends: Sequence[tuple[int, int, np.ndarray]],
                 receives: Sequence[tuple[int, int, np.ndarray]]) -> None:
        """Point to point: each (rank, tag, buffer) of `sends` goes to member `rank`;
        each (rank, tag, out) of `receives` is filled, in place, by the send of member
        `rank` with that tag (same size in bytes; `out` C-contiguous). Every member makes
        the call (with nothing to move, too), so the collectives stay counted alike."""
        self._waiter.check("exchange")
        keep = [np.asarray(b, order="C") for _, _, b in sends]  # (alive until sent)
        requests = [self.comm.Irecv(_bytes(out), source=int(r), tag=int(t))
                    for r, t, out in receives]
        requests += [self.comm.Isend(_bytes(b), dest=int(r), tag=int(t))
                     for (r, t, _), b in zip(sends, keep)]
        peers = tuple(sorted({int(r) for r, _, _ in receives} | {int(r) for r, _, _ in sends}))
        self._wait(requests, "exchange", waiting_on=peers)

    def subgroup(self, ranks: tuple[int, ...]) -> MpiCommunicator:
        """The communicator of the members `ranks` (collective over all members), whose
        rank i is `ranks[i]`. Every member calls it: either all with the same `ranks`, or
        each with the group that holds it (replica groups that partition the members);
        a member that is not in its `ranks` takes part, then gets a ValueError."""
        self._waiter.check("subgroup")
        ranks = tuple(int(r) for r in ranks)
        if not ranks or len(set(ranks)) != len(ranks) or any(
                not 0 <= r < self.size for r in ranks):
            raise ValueError(f"subgroup ranks must be distinct ranks in 0..{self.size - 1}, "
                             f"got {ranks}")
        # MPI_Comm_split blocks: a timed barrier first, so a missing member raises here
        self._wait([self.comm.Ibarrier()], "subgroup")
        member = self.rank in ranks
        color = min(ranks) if member else self._mpi.UNDEFINED
        comm = self.comm.Split(color, ranks.index(self.rank) if member else 0)
        if not member:
            raise ValueError(f"process {self.members[self.rank]} (rank {self.rank}) is not "
                             f"in the subgroup {ranks}")
        return MpiCommunicator(comm, tuple(self.members[r] for r in ranks))

    def barrier(self) -> None:
        """Returns once every member has called it."""
        self._waiter.check("barrier")
        self._wait([self.comm.Ibarrier()], "barrier")

    def _wait(self, requests: list[Any], name: str, waiting_on: tuple[int, ...] | None = None,
              timeout: float | None = None) -> None:
        self._waiter.wait(requests, name, waiting_on, timeout)
