"""Buffer assignment: which temporaries share memory in the scratch block.

Input: the temporaries of a schedule as `LogicalBuffer`s: a byte size and a live range
[start, end] in kernel positions (written by kernel `start`, last read by kernel `end`), and
for each the operands it may overwrite in place. Output: a `BufferAssignment`: a byte offset
per buffer inside one scratch block, the block's size, and a printable table.

How:
1. In place. A kernel that reads operand `a` only at the index it writes (an elementwise
   kernel of a same-sized operand) may write its result `b` over `a` when `a` dies in that
   kernel (`a.end == b.start`): every element is read before it is overwritten, and nothing
   reads `a` afterwards. `a` and `b` then form one chain whose live range is
   [a.start, b.end]; a chain grows only at its end (one successor per buffer).
2. Packing. Chains are placed in decreasing size order (ties: earlier first) at the lowest
   64-byte aligned offset where they overlap, in memory, no chain already placed whose
   live range overlaps theirs (ranges [s1, e1] and [s2, e2] overlap when s1 <= e2 and
   s2 <= e1: a kernel's output never shares memory with an operand it reads, unless step 1
   chained them). This is a greedy interval packing, as XLA's heap simulator's
   "decreasing size, best fit" does; it is not optimal, but it is deterministic and
   keeps the peak flat for chains of elementwise kernels.
Invariants: two buffers whose live ranges overlap never share a byte, except a chained
pair (the in-place case above); offsets are 64-byte aligned; the result depends only on
the input list (same program, same offsets).
"""

from __future__ import annotations

import numpy as np

from ember.records import FrozenRecord, Record

ALIGNMENT = 64


class LogicalBuffer(FrozenRecord):
    """One temporary value. `reusable` names operands this buffer may overwrite in place;
    `label` says what it holds (an instruction name), for printing. (Records, not
    dataclasses, for import time: ember/records.py; Chain and BufferAssignment too.)"""

    FIELDS = ("name", "size", "start", "end", "reusable", "label")

    name: str
    size: int
    start: int
    end: int
    reusable: tuple[str, ...]
    label: str

    def __init__(self, name: str, size: int, start: int, end: int,
                 reusable: tuple[str, ...] = (), label: str = "") -> None:
        self._freeze(name, size, start, end, reusable, label)


class Chain(Record):
    """Buffers that occupy the same memory one after the other."""

    FIELDS = ("members", "offset")

    def __init__(self, members: list[LogicalBuffer] | None = None, offset: int = 0) -> None:
        self.members = [] if members is None else members
        self.offset = offset

    @property
    def size(self) -> int:
        return max(b.size for b in self.members)

    @property
    def start(self) -> int:
        return self.members[0].start

    @property
    def end(self) -> int:
        return max(b.end for b in self.members)

    def overlaps_in_time(self, other: Chain) -> bool:
        return self.start <= other.end and other.start <= self.end


class BufferAssignment(Record):
    """Byte offset per buffer name, the chains, and the scratch block's size."""

    FIELDS = ("offsets", "chains", "total_bytes")

    def __init__(self, offsets: dict[str, int], chains: list[Chain], total_bytes: int) -> None:
        self.offsets = offsets
        self.chains = chains
        self.total_bytes = total_bytes

    @property
    def buffer_count(self) -> int:
        """Distinct memory regions: chains placed at different offsets or overlapping in
        time count apart; chains reusing the same region at disjoint times count once."""
        regions: set[tuple[int, int]] = {(c.offset, c.size) for c in self.chains}
        return len(regions)

    def to_text(self) -> str:
        """One line per buffer: offset, size, live range, and what it overwrites in place."""
        lines = [f"scratch: {self.total_bytes} bytes in {len(self.chains)} chains"]
        for c in sorted(self.chains, key=lambda c: (c.offset, c.start)):
            lines.append(f"  [{c.offset:>10}, {c.offset + c.size:>10})  "
                         f"live {c.start}..{c.end}")
            prev = None
            for b in c.members:
                how = (f"  (in place of {prev.label or prev.name})"
                       if prev is not None else "")
                lines.append(f"      {b.label or b.name}: {b.size} bytes, "
                             f"live {b.start}..{b.end}{how}")
                prev = b
        return "\n".join(lines)


def _align(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _build_chains(buffers: list[LogicalBuffer]) -> list[Chain]:
    by_name = {b.name: b for b in buffers}
    chain_of: dict[str, Chain] = {}
    chains: list[Chain] = []
    for b in sorted(buffers, key=lambda b: (b.start, b.name)):
        target = None
        for name in b.reusable:
            a = by_name.get(name)
            # `a` must be written by an earlier kernel and die in the one writing `b`.
            if a is None or a.start >= b.start or a.end != b.start or a.size < b.size:
                continue
            c = chain_of[name]
            if c.members[-1] is a:  # the chain may grow only at its end
                target = c
                break
        if target is None:
            target = Chain()
            chains.append(target)
        target.members.append(b)
        chain_of[b.name] = target
    return chains


# Chains placed before which `_Placed` answers with NumPy instead of a Python loop (a call
# costs ~30 us of NumPy either way; a loop over a few dozen chains costs less).
VECTOR_MIN_CHAINS = 64


class _Placed:
    """The chains placed so far: live range [start, end] and memory [lo, hi) of each."""

    def __init__(self, capacity: int) -> None:
        self.rows: list[tuple[int, int, int, int]] = []
        self._cols = np.zeros((4, max(capacity, 1)), dtype=np.int64)

    def add(self, start: int, end: int, lo: int, hi: int) -> None:
        self._cols[:, len(self.rows)] = (start, end, lo, hi)
        self.rows.append((start, end, lo, hi))

    def lowest_free(self, start: int, end: int, need: int) -> int:
        """The lowest offset where `need` bytes live over kernels [start, end] overlap none
        of the placed chains live at the same time: first fit over those chains' memory
        ranges in address order. (Each chain's live range and size are computed once, by
        the caller: recomputing them per pair made placing a 1,200-kernel program's
        buffers take seconds; a program of thousands of kernels has thousands of chains
        alive at once, its sums' scalars, so the scan runs in NumPy: one pass over every
        placed chain per chain placed is quadratic, but at C speed.)"""
        if len(self.rows) < VECTOR_MIN_CHAINS:
            busy = sorted((lo, hi) for s, e, lo, hi in self.rows if s <= end and start <= e)
            offset = 0
            for lo, hi in busy:
                if offset + need <= lo:
                    break
                offset = max(offset, hi)
            return offset
        s, e, lo, hi = self._cols[:, :len(self.rows)]
        live = (s <= end) & (start <= e)
        lo, hi = lo[live], hi[live]
        if not lo.size:
            return 0
        order = lo.argsort(kind="stable")  # (the method: np.argsort's wrapper costs more)
        lo, hi = lo[order], hi[order]
        if need <= lo[0]:
            return 0  # (below the lowest range)
        reach = np.maximum.accumulate(hi)  # the first-fit offset once each range is passed
        # range k > 0 is tried at the reach of those before it
        fits = np.flatnonzero(reach[:-1] + need <= lo[1:])
        return int(reach[fits[0]]) if fits.size else int(reach[-1])


def assign_buffers(buffers: list[LogicalBuffer]) -> BufferAssignment:
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        raise ValueError("logical buffer names must be unique")
    for b in buffers:
        if b.end < b.start:
            raise ValueError(f"buffer {b.name} ends (kernel {b.end}) before it starts "
                             f"(kernel {b.start})")
    chains = _build_chains(buffers)
    placed = _Placed(len(chains))
    for c in sorted(chains, key=lambda c: (-c.size, c.start, c.members[0].name)):
        start, end, need = c.start, c.end, _align(c.size)
        c.offset = placed.lowest_free(start, end, need)
        placed.add(start, end, c.offset, c.offset + need)
    offsets = {b.name: c.offset for c in chains for b in c.members}
    total = max((c.offset + _align(c.size) for c in chains), default=0)
    return BufferAssignment(offsets, chains, total)


__all__ = ["ALIGNMENT", "VECTOR_MIN_CHAINS", "BufferAssignment", "Chain", "LogicalBuffer",
           "assign_buffers"]
