"""Sweeps: consecutive in-place window updates of a loop body run together, block by block.

Input: a loop body's steps (loops_native.py), after its carried arrays are written in place
(`_update_in_place`). Output: `Sweep`s, each a run of two or more consecutive body kernels
that update arrays in place (in_place.py: a dynamic-update-slice, fused or alone, written
into the array it updates, or a multi-output fusion of such updates), with a lag per
member. The emitter runs a sweep as one loop over blocks of rows (dimension 0):
    for t0 in range(0, extent, block):
        for each member K (in order): K on its window rows [t0 - lag_K, t0 + block - lag_K)
so the rows a member writes are still in the L1 cache when the next member reads them
(Jacobi's `b = b.at[1:-1].set(f(a)); a = a.at[1:-1].set(g(b))` of 3200 f64: two passes over
51 KB, more than L1, become one).
Correctness. Row r of a member's window is computed at time r + lag; within one time (and
one block) members run in program order. Member K reads array X at rows `a + r` for each
of its reads of X (a slice starting at row a whose elements reach the update elementwise,
row r to row r; an in-window read of its own target is one with a = the window's start);
any other read of an array another member writes (a broadcast, a reduction, a transposed
or reversed read...) keeps the two out of one sweep. For an earlier member I and a later J
(window starts s_I, s_J on dimension 0):
  J reads X that I writes (new values):   lag_J >= lag_I + max(a - s_I)
  I reads Y that J writes (old values):   lag_J >= lag_I + max(s_J - b)
  both write Z (J's writes last):         lag_J >= lag_I + s_J - s_I
Each inequality puts every row a member needs from another before (new) or after (old)
the time it is read; a block only regroups times, keeping that order. Lags are the least
that meet them, in program order.
Serpentine. Every other call the driver runs the sweep backwards: row r of a member at
time (R - 1 - r) + back_lag (R: the most rows of any member), with the inequalities'
offsets negated (`back_lags`); the rows a call touched last are then the first the next
one touches, still in the cache when the arrays together overflow it (Jacobi's 51 KB over
an L1 of 48, FDTD's 1.06 MB over an L2 of 1 MB). The driver flips a byte the loop gives
it (`flag`, a Slot of kind "flag": loops_emit.py points it at a variable of the loop).
Element fusion. A sweep of 1-D members may run most of its times as one loop that
computes every member's row of a time together, passing values between members in
registers (`Sweep.fusion`, sweep_fusion.py); such a sweep always runs forward.
Invariants: members are consecutive steps of one body, each an array kernel with static
window starts and no sine/cosine/tan (whose precise reruns re-read whole inputs); a sweep
runs more than one block (a one-block sweep is the plain sequence of calls), or fuses.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ember.backends.cpu.plan.in_place import (
    RERUN_OPCODES,
    in_place_operands,
    in_place_outputs,
)
from ember.backends.cpu.plan.sweep_fusion import plan_element_fusion
from ember.hlo.ir import Instruction

# Rows of a block: enough rows for this many elements of the widest window (measured on
# Jacobi 1-D over 3200 f64: 512 to 2048 within noise; fewer calls per row than that
# cost more than the cache saves).
BLOCK_ELEMENTS = 1024


@dataclass
class Sweep:
    members: list[Instruction]
    lags: list[int]
    rows: list[int]  # each member's window rows (the most of its outputs')
    block: int  # rows per block
    extent: int  # max(lag + rows): the times the sweep runs
    back_lags: list[int]  # the lags of a backward run
    back_extent: int  # max(rows) + max(back_lags)
    flag: object = None  # Slot("flag", k, pred[]): the byte saying which way the next run goes
    fusion: object = None  # sweep_fusion.ElementFusion: the members fused element by element


@dataclass
class _Access:
    writes: dict  # buffer -> (window start, window rows) on dimension 0
    reads: dict  # buffer -> set of (start row, rows) of its row-aligned reads, or None
    rows: int
    row_elements: int


def _start(dus: Instruction) -> int | None:
    s = dus.operands[2]
    if s.opcode != "constant" or s.shape.size != 1:
        return None
    return int(np.asarray(s.value).reshape(-1)[0])


def _static_starts(dus: Instruction) -> bool:
    return all(s.opcode == "constant" and s.shape.size == 1 for s in dus.operands[2:])


def _row_aligned(read: Instruction) -> bool:
    """Every use chain from `read` reaches a dynamic-update-slice as its update through
    elementwise instructions of `read`'s dimensions: row r of `read` makes row r of the
    update alone."""
    dims = read.shape.dimensions
    stack, seen = [read], set()
    while stack:
        inst = stack.pop()
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        for u in inst.users:
            if u.opcode == "dynamic-update-slice":
                if u.operands[1] is not inst or any(o is inst for o in u.operands[2:]) \
                        or u.operands[0] is inst:
                    return False
                continue
            if (not u.is_elementwise() or u.shape.is_tuple or u.shape.dimensions != dims
                    or u.opcode in RERUN_OPCODES):
                return False
            stack.append(u)
    return True


def _read_rows(param: Instruction, target_of: set[Instruction]) -> set | None:
    """(start row, rows) of each of `param`'s row-aligned reads (a parameter a member
    updates in place is also the array its update is written into: not a read); None
    when some read is not one."""
    rows = set()
    for u in param.users:
        if u.opcode == "dynamic-update-slice" and u.operands[0] is param and param in target_of:
            continue
        if u.opcode != "slice" or u.attrs["slice"][0][2] != 1 or not _row_aligned(u):
            return None
        rows.add((u.attrs["slice"][0][0], u.shape.dimensions[0]))
    return rows


def _access(sched, k: Instruction) -> _Access | None:
    """What member candidate `k` writes and reads, by buffer; None if it cannot join."""
    s = _sched_api()
    outs = s.flatten_slots(sched.buffers[k])
    if k.opcode == "fusion":
        comp = k.fused_computation
        if comp.root.opcode == "tuple":
            places = in_place_outputs(k)
            if len(places) != len(outs):
                return None
            pairs = [(comp.root.operands[j], p) for j, p in places.items()]
        else:
            places = in_place_operands(k)
            if comp.root.opcode != "dynamic-update-slice" or not places:
                return None
            pairs = [(comp.root, comp.root.operands[0].parameter_number)]
        if any(i.opcode in RERUN_OPCODES for i in comp.instructions):
            return None
        params = {p.parameter_number: p for p in comp.parameters}
    elif k.opcode == "dynamic-update-slice":
        if 0 not in in_place_operands(k):
            return None
        pairs, params = [(k, 0)], None
    else:
        return None
    writes, rows, width = {}, 0, 1
    for j, (dus, p) in enumerate(pairs):
        out = outs[j]
        if (sched.buffers[k.operands[p]] != out or out.shape.rank == 0
                or not _static_starts(dus)):
            return None
        udims = dus.operands[1].shape.dimensions
        writes[out.buffer] = (_start(dus), udims[0])
        rows = max(rows, udims[0])
        width = max(width, int(np.prod(udims[1:], dtype=np.int64)))
    reads: dict = {}
    targets = {dus.operands[0] for dus, _ in pairs}
    for pos, o in enumerate(k.operands):
        leaves = s.flatten_slots(sched.buffers[o])
        if len(leaves) != 1:
            return None
        buf = leaves[0].buffer
        if params is None:  # a lone update: its target, or its update (rows unknown)
            got = {writes[buf]} if pos == 0 else None  # (in place: as an in-window read)
        else:
            got = _read_rows(params[pos], targets)
            if got is not None and params[pos] in targets:
                got |= {writes[buf]}
        if buf not in reads:
            reads[buf] = got
        elif got is None or reads[buf] is None:
            reads[buf] = None  # (one unknown read makes the buffer's rows unknown)
        else:
            reads[buf] |= got
    return _Access(writes, reads, rows, width)


def _meet(x: tuple[int, int], y: tuple[int, int]) -> bool:
    """Whether rows [x0, x0 + x1) and [y0, y0 + y1) share one."""
    return max(x[0], y[0]) < min(x[0] + x[1], y[0] + y[1])


def _lag_after(earlier: _Access, lag: int, later: _Access, sign: int = 1) -> int | None:
    """The least lag of `later` that the module docstring's inequalities allow after
    `earlier` (at `lag`), for the rows the two share (`sign` -1: for a backward run);
    None when `later` reads an array `earlier` writes, or the other way round, at rows it
    cannot tell."""
    need = 0
    for buf, w in earlier.writes.items():
        rows = later.reads.get(buf, set())
        if rows is None:
            return None
        for r in rows:
            if _meet(r, w):  # later reads new values
                need = max(need, lag + sign * (r[0] - w[0]))
        if buf in later.writes and _meet(later.writes[buf], w):
            need = max(need, lag + sign * (later.writes[buf][0] - w[0]))
    for buf, w in later.writes.items():
        rows = earlier.reads.get(buf, set())
        if rows is None:
            return None
        for r in rows:
            if _meet(r, w):  # earlier reads old values
                need = max(need, lag + sign * (w[0] - r[0]))
    return need


def _lags(run: list[_Access], sign: int) -> list[int] | None:
    """Each member's least lag after the ones before it; None if two cannot share a run."""
    lags: list[int] = []
    for j, acc in enumerate(run):
        lag = 0
        for a, lag_i in zip(run[:j], lags):
            need = _lag_after(a, lag_i, acc, sign)
            if need is None:
                return None
            lag = max(lag, need)
        lags.append(lag)
    return lags


def plan_sweeps(sched, steps: list[Instruction]) -> list[Sweep]:
    """The sweeps of a loop body's `steps` (the module docstring)."""
    out: list[Sweep] = []
    run: list[tuple[Instruction, _Access]] = []

    def close() -> None:
        accs = [a for _, a in run]
        lags, back = _lags(accs, 1), _lags(accs, -1)
        if len(run) >= 2 and lags is not None and back is not None:
            rows = [a.rows for a in accs]
            width = max(a.row_elements for a in accs)
            block = max(1, -(-BLOCK_ELEMENTS // width))
            extent = max(lag + n for lag, n in zip(lags, rows))
            members = [k for k, _ in run]
            fusion = plan_element_fusion(sched, members, lags, rows)
            if extent > block or fusion is not None:
                out.append(Sweep(members, lags, rows, block, extent, back,
                                 max(rows) + max(back), _flag(), fusion))
        run.clear()

    for k in steps:
        acc = None if k in sched.control else _access(sched, k)
        if acc is None:
            close()
            continue
        if run and (_lags([a for _, a in run] + [acc], 1) is None
                    or _lags([a for _, a in run] + [acc], -1) is None):
            close()
        run.append((k, acc))
    close()
    return out


_flags = itertools.count()


def _flag():
    from ember.hlo.shape import Shape

    s = _sched_api()
    return s.Slot("flag", next(_flags), Shape("pred", ()))


def _sched_api():
    from ember.backends.cpu.plan import schedule
    return schedule


__all__ = ["BLOCK_ELEMENTS", "Sweep", "plan_sweeps"]
