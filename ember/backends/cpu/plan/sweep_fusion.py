"""Element-level fusion of a sweep: its members computed element by element in one loop.

Input: a sweep's members, lags and rows (plan/sweeps.py) and the schedule. Output: an
`ElementFusion`, or None when the sweep does not qualify: the times [begin, end) that one
loop runs (emit/update_slice.py `emit_fused_sweep`), and the reads it takes from
registers (`ChainRead`).
At time t the loop computes, member by member in program order, member K's window row
t - lag_K (so the sweep's order of times, and of members within a time, is kept: the
lag inequalities of sweeps.py hold element by element as they do block by block). The
driver runs times [0, begin) and [end, extent) through the members' own kernels, as two
blocks (emit/loops_emit.py `emit_driver`).
Chain reads. Member J's slice of X starting at row a, X written by an earlier member I
(window start s_I), reads at time t the row I computed at time t - d, where
    d = lag_J - lag_I - (a - s_I)   (>= 0: sweeps.py's first inequality)
so the loop keeps I's last `depth` values in registers (d = 0: this time's value) and
loads nothing of X: one load per element of the source array and one store per member,
against a load of each read and a store per member when the members run apart. LLVM
vectorizes such chains (fixed-order recurrences: a vector of this time's values shuffled
with the previous one). Chain values before `begin` are loaded from memory on entry: the
rows the first block wrote. Reads of an array that no earlier member writes, at several
row offsets, share one load per row the same way (a `Load` source: `_memory_reads`).
Qualifies: every member a fusion whose outputs (its root, or each of its tuple root's) are
dynamic-update-slices of rank-1 arrays with static starts, written in place, each array
written once in the sweep (a second write would make a register value stale), and at
least MIN_TIMES times in which every write has a row and every chain read reads inside
its writer's window (outside it, rows the sweep never writes: memory).
Invariants: every remaining memory dependence inside the loop is a load before a store of
the same element (old values: sweeps.py's second inequality), which vectorizing keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ember.hlo.ir import Instruction

# Fewer fused times than this leave the sweep as blocks (the loop's setup, its chain
# loads, would outweigh the rows it fuses).
MIN_TIMES = 64
# Registers a writer's chain may hold (d up to this); beyond, the values spill anyway.
MAX_DEPTH = 8


@dataclass
class Write:
    member: int  # the member (its position in the sweep)
    output: int  # which of its outputs
    update: Instruction  # the dynamic-update-slice, in the member's fused computation
    start: int  # its window's first row
    rows: int


@dataclass
class Load:
    member: int  # a member that reads the array (its parameter `param`)
    param: Instruction
    offset: int  # the loop loads row offset + t at time t (before any member runs)


@dataclass
class ChainRead:
    member: int  # J: the member whose slice this is
    slice: Instruction  # the slice in J's fused computation
    source: int  # the `Write` (of a member I < J) or `Load` of the array, in `sources`
    distance: int  # d: the value computed or loaded d times earlier


@dataclass
class ElementFusion:
    begin: int  # the first time the loop runs
    end: int  # one past its last
    sources: list  # every member's `Write`s, in the members' order, then the `Load`s
    reads: list[ChainRead]
    depth: list[int]  # per source: how many of its earlier values the loop keeps


def _writes(j: int, k: Instruction) -> list[Write] | None:
    """A member's in-place writes: its fusion's root (or each output of its tuple root) a
    dynamic-update-slice of a rank-1 array at a constant start inside the array (None
    otherwise: sweeps.py admits only members whose outputs are all written in place)."""
    if k.opcode != "fusion":
        return None
    root = k.fused_computation.root
    out = []
    for o, dus in enumerate(root.operands if root.opcode == "tuple" else [root]):
        if dus.opcode != "dynamic-update-slice" or dus.shape.rank != 1:
            return None
        s = dus.operands[2]
        if s.opcode != "constant" or s.shape.size != 1:
            return None
        start, n = int(np.asarray(s.value).reshape(-1)[0]), dus.shape.dimensions[0]
        rows = dus.operands[1].shape.dimensions[0]
        if not 0 <= start <= n - rows:  # (a start XLA would clamp: leave it to the blocks)
            return None
        out.append(Write(j, o, dus, start, rows))
    return out


def plan_element_fusion(sched, members: list[Instruction], lags: list[int],
                        rows: list[int]) -> ElementFusion | None:
    """The element-level fusion of a sweep of `members` (the module docstring), or None."""
    from ember.backends.cpu.plan.schedule import flatten_slots

    writes: list[Write] = []
    writer: dict = {}  # buffer -> its write's position in `writes`
    begin, end = 0, min(lag + n for lag, n in zip(lags, rows))
    for j, k in enumerate(members):
        ws = _writes(j, k)
        outs = flatten_slots(sched.buffers[k])
        if ws is None or len(ws) != len(outs):
            return None
        for w, out in zip(ws, outs):
            if out.buffer in writer:
                return None
            writer[out.buffer] = len(writes)
            writes.append(w)
            begin, end = max(begin, lags[j]), min(end, lags[j] + w.rows)
    reads: list[ChainRead] = []
    for j, k in enumerate(members):
        for p in k.fused_computation.parameters:
            leaves = flatten_slots(sched.buffers[k.operands[p.parameter_number]])
            x = writer.get(leaves[0].buffer) if len(leaves) == 1 else None
            if x is None or writes[x].member >= j:
                continue  # (old values, or its own target: memory)
            w = writes[x]
            for u in p.users:
                if u.opcode != "slice" or u.attrs["slice"][0][2] != 1:
                    return None  # (sweeps.py admits none: kept for safety)
                a = u.attrs["slice"][0][0]
                d = lags[j] - lags[w.member] - (a - w.start)
                if not 0 <= d <= MAX_DEPTH:
                    return None
                # the times at which J's row r = t - lag_J reads X's row a + r in I's window
                begin = max(begin, w.start - a + lags[j])
                end = min(end, w.start + w.rows - a + lags[j])
                reads.append(ChainRead(j, u, x, d))
    if end - begin < MIN_TIMES:
        return None
    sources: list = list(writes)
    for got in _memory_reads(sched, members, lags, writer, writes).values():
        lead = max(c for _, _, c in got)
        if len({c for _, _, c in got}) < 2 or lead - min(c for _, _, c in got) > MAX_DEPTH:
            continue  # (one offset: nothing to reuse)
        j, u, _ = got[0]
        sources.append(Load(j, u.operand, lead))
        reads += [ChainRead(j, u, len(sources) - 1, lead - c) for j, u, c in got]
    depth = [max([r.distance for r in reads if r.source == x], default=0)
             for x in range(len(sources))]
    return ElementFusion(begin, end, sources, reads, depth)


def _memory_reads(sched, members: list[Instruction], lags: list[int], writer: dict,
                  writes: list[Write]) -> dict:
    """buffer -> [(member J, slice, c)] for the arrays the loop reads from memory (written
    by no member before J), each read a slice whose row a + r feeds J's row r alone, read
    at time t at row c + t (c = a - lag_J); buffers read any other way are left out.
    Reuse. Row x is read first by the read of the largest c (the lead), at time x - c_max,
    then by a read of offset c at time x - c, d = c_max - c times later, and nothing
    writes it in between: its writers are the reading members or later ones (a member
    that writes it earlier reads it by chain), which write it after these reads of old
    values (sweeps.py's second inequality). So the loop loads the lead's rows once, at
    the start of each time, and every read takes the value loaded d times before."""
    from ember.backends.cpu.plan.schedule import flatten_slots
    from ember.backends.cpu.plan.sweeps import _row_aligned

    out: dict = {}
    mixed: set = set()  # buffers some read of which is not a row-aligned slice
    for j, k in enumerate(members):
        for p in k.fused_computation.parameters:
            leaves = flatten_slots(sched.buffers[k.operands[p.parameter_number]])
            if len(leaves) != 1 or p.shape.rank != 1:
                if len(leaves) == 1:
                    mixed.add(leaves[0].buffer)
                continue
            buf = leaves[0].buffer
            x = writer.get(buf)
            if x is not None and writes[x].member < j:
                continue  # (chain reads of a value written earlier in the time)
            for u in p.users:
                if u.opcode == "dynamic-update-slice" and u.operands[0] is p:
                    continue  # (its own target: written, not read)
                if u.opcode != "slice" or u.attrs["slice"][0][2] != 1 or not _row_aligned(u):
                    mixed.add(buf)
                    break
                out.setdefault(buf, []).append((j, u, u.attrs["slice"][0][0] - lags[j]))
    return {buf: got for buf, got in out.items() if buf not in mixed}


__all__ = ["MAX_DEPTH", "MIN_TIMES", "ChainRead", "ElementFusion", "Load", "Write",
           "plan_element_fusion"]
