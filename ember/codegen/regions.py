"""Regions of a loop kernel's iteration space inside which every pad, concatenate and
dynamic-update-slice reads one known operand, so their per-element selects disappear.

Input: the roots a loop nest stores (their dimensions are the nest's) and the instructions
read from buffers (where index maps stop). Output (`boxes`): a partition of the output's
index space into boxes, a [lo, hi) range per dimension. Each box is walked by its own loop
nest and its indices carry the box as static `Index.ranges`; the element generators then
see that a pad's index is all interior (a plain read that vectorizes), all border (the pad
value and no read at all) or still mixed (the select, as before), and likewise which
operand of a concatenate an index reads. Splitting never changes a value: a box only
tells the generators facts that hold for each of its indices.

How: every instruction's index is, per dimension, an affine function a*i_r + c of one root
index i_r (`DimMap`), or unknown (a reshape that regroups dimensions, a gather's index, a
dynamic start). The walk from the roots carries these maps through broadcast, transpose,
reverse, slice, pad and concatenate; each border of a pad, concatenate or static-start
dynamic-update-slice along a dimension with a known map becomes a split point of that
root dimension. Invariants: boxes are non-empty, disjoint, and cover the index space; at
most MAX_BOXES of them (splits of the most major dimensions are dropped first: the minor
dimension's are the ones that let the innermost loop vectorize); a walk that would visit
more than MAX_VISITS (instruction, map) pairs gives up and returns the one whole box.

The per-opcode range rules the generators use (`pad_dim`, `piece_range`) live here too, so
the planner and the generators agree on where borders are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import product

import numpy as np

from ember.hlo.ir import Instruction
from ember.hlo.opcodes import OPCODES

# A box per region; 3x3 for a 2-D pad, 27 for a 3-D one. Each box is a loop nest of its
# own with its own copy of the element code (a border box of a pad holds only a store of
# the pad value): the bound keeps LLVM's time in check.
MAX_BOXES = 32
MAX_VISITS = 4096

Range = tuple[int, int]
Box = tuple[Range, ...]
# index along one dimension of an instruction = a * i[root_dim] + c; None: not affine
DimMap = tuple[int, int, int] | None

IN, OUT, MIXED = "in", "out", "mixed"


def pad_dim(r: Range, lo: int, interior: int, n: int) -> tuple[str, Range]:
    """Where the output indices r = [a, b) of a pad fall along one dimension whose operand
    has n > 0 elements placed at lo, lo + step, ... (step = interior + 1): IN (every index
    reads an operand element), OUT (every index is padding) or MIXED; with the range of
    operand indices read (for MIXED: of the indices that are operand elements)."""
    step = interior + 1
    t_lo, t_hi = r[0] - lo, r[1] - 1 - lo  # inclusive, in the operand's dilated frame
    last = (n - 1) * step
    if t_hi < 0 or t_lo > last:
        return OUT, (0, 0)
    first_k = -(-max(t_lo, 0) // step)  # the operand elements inside [t_lo, t_hi]
    last_k = min(t_hi, last) // step
    if first_k > last_k:
        return OUT, (0, 0)
    if t_lo >= 0 and t_hi <= last and (step == 1 or t_lo == t_hi):
        return IN, (first_k, last_k + 1)
    return MIXED, (first_k, last_k + 1)


def piece_range(r: Range, offset: int, n: int) -> Range | None:
    """The local indices [a, b) of a concatenate's operand at `offset` (n long) that output
    indices r read; None when r does not reach it."""
    a, b = max(r[0] - offset, 0), min(r[1] - offset, n)
    return (a, b) if a < b else None


def static_starts(inst: Instruction, first: int, limits: Sequence[int]) -> list[int] | None:
    """A dynamic slice's or update's start indices when every one is a constant (clamped
    into [0, limit] as XLA does), else None."""
    out = []
    for k, lim in enumerate(limits):
        s = inst.operands[first + k]
        if s.opcode != "constant" or s.shape.size != 1:
            return None
        v = int(np.asarray(s.value).reshape(-1)[0])
        out.append(min(max(v, 0), max(lim, 0)))
    return out


def unit_reshape(src: Sequence[int], dst: Sequence[int]) -> list[int | None] | None:
    """For a reshape from dims `src` to `dst` that only inserts or drops dimensions of size
    1: for each dst dimension, the src dimension it is (None for an inserted 1); None for
    any other reshape."""
    big = [d for d, n in enumerate(src) if n != 1]
    if [src[d] for d in big] != [n for n in dst if n != 1]:
        return None
    it = iter(big)
    return [next(it) if n != 1 else None for n in dst]


# -- the planner ---------------------------------------------------------------------------


def boxes(roots: Sequence[Instruction], inputs: Iterable[Instruction],
          order: Sequence[int] | None = None) -> list[Box]:
    """The boxes a loop nest over the roots' dimensions is split into (one box, the whole
    space, when nothing splits). `order`: the dimensions from major to minor in memory (for
    which splits go first when there are too many); row-major by default."""
    dims = roots[0].shape.dimensions
    rank = len(dims)
    whole: Box = tuple((0, n) for n in dims)
    if rank == 0 or any(n == 0 for n in dims):
        return [whole]
    points = split_points(roots, set(inputs))
    if points is None:
        return [whole]
    cuts = [sorted(p for p in points[r] if 0 < p < dims[r]) for r in range(rank)]
    for r in (order if order is not None else range(rank)):  # major splits go first
        if _count(cuts) <= MAX_BOXES:
            break
        cuts[r] = []
    if _count(cuts) > MAX_BOXES:  # the minor dimension alone has too many
        return [whole]
    intervals = [list(zip([0, *c], [*c, n])) for c, n in zip(cuts, dims)]
    return [tuple(box) for box in product(*intervals)]


def _count(cuts: list[list[int]]) -> int:
    total = 1
    for c in cuts:
        total *= len(c) + 1
    return total


def split_points(roots: Sequence[Instruction], inputs: set[Instruction]
                 ) -> list[set[int]] | None:
    """Per root dimension, the indices p where some pad's, concatenate's or static update's
    choice of operand may differ between p - 1 and p; None if the walk is too large."""
    rank = roots[0].shape.rank
    points: list[set[int]] = [set() for _ in range(rank)]
    identity: tuple[DimMap, ...] = tuple((r, 1, 0) for r in range(rank))
    stack = [(root, identity) for root in roots]
    seen: set[tuple[int, tuple[DimMap, ...]]] = set()
    while stack:
        inst, maps = stack.pop()
        key = (id(inst), maps)
        if key in seen or inst in inputs or all(m is None for m in maps):
            continue
        seen.add(key)
        if len(seen) > MAX_VISITS:
            return None
        for d, v in _borders(inst):
            _split(points, maps[d], v)
        stack.extend(_operand_maps(inst, maps))
    return points


def _split(points: list[set[int]], m: DimMap, v: int) -> None:
    """Record the root index where `a * i + c >= v` changes truth."""
    if m is None:
        return
    r, a, c = m
    if a > 0:
        points[r].add(-(-(v - c) // a))
    else:  # a*i + c >= v  <=>  i <= (c - v) / -a
        points[r].add((c - v) // -a + 1)


def _borders(inst: Instruction) -> list[tuple[int, int]]:
    """(dimension, v) pairs: along that dimension, indices >= v and < v read differently."""
    op = inst.opcode
    out: list[tuple[int, int]] = []
    if op == "pad":
        o = inst.operands[0]
        if o.shape.size == 0:
            return out
        for d, (n, (lo, _hi, interior)) in enumerate(zip(o.shape.dimensions,
                                                         inst.attrs["padding"])):
            out += [(d, lo), (d, lo + (n - 1) * (interior + 1) + 1)]
    elif op == "concatenate":
        dim = inst.attrs["dimension"]
        off = 0
        for o in inst.operands[:-1]:
            off += o.shape.dimensions[dim]
            out.append((dim, off))
    elif op == "dynamic-update-slice":
        o, upd = inst.operands[0], inst.operands[1]
        udims = upd.shape.dimensions
        starts = static_starts(inst, 2, [n - u for n, u in zip(o.shape.dimensions, udims)])
        if starts is not None and upd.shape.size:
            for d, (s, u) in enumerate(zip(starts, udims)):
                out += [(d, s), (d, s + u)]
    return out


def _operand_maps(inst: Instruction, maps: tuple[DimMap, ...]
                  ) -> list[tuple[Instruction, tuple[DimMap, ...]]]:
    """Each operand with the maps of its own dimensions, for the operands read at an
    index that depends on the instruction's (scalar operands and index operands are
    left out: they carry no border)."""
    op = inst.opcode
    ops = inst.operands
    dims = inst.shape.dimensions
    if op in ("copy", "map") or OPCODES[op].elementwise:  # (a bitcast-convert between
        # widths has other dims: an operand of other dims is a scalar or reads elsewhere)
        return [(o, maps) for o in ops if o.shape.dimensions == dims]
    if op == "broadcast":
        return [(ops[0], tuple(maps[d] for d in inst.attrs["dimensions"]))]
    if op == "transpose":
        perm = inst.attrs["dimensions"]
        out: list[DimMap] = [None] * len(perm)
        for i, p in enumerate(perm):
            out[p] = maps[i]
        return [(ops[0], tuple(out))]
    if op == "reverse":
        rev = set(inst.attrs["dimensions"])
        return [(ops[0], tuple(_affine(m, -1, n - 1) if d in rev else m
                               for d, (m, n) in enumerate(zip(maps, dims))))]
    if op == "slice":
        return [(ops[0], tuple(_affine(m, stride, start) for m, (start, _, stride)
                               in zip(maps, inst.attrs["slice"])))]
    if op == "pad":
        return [(ops[0], tuple(_affine(m, 1, -lo) if interior == 0 else None
                               for m, (lo, _, interior) in zip(maps, inst.attrs["padding"])))]
    if op == "concatenate":
        dim = inst.attrs["dimension"]
        res, off = [], 0
        for o in ops:
            res.append((o, tuple(_affine(m, 1, -off) if d == dim else m
                                 for d, m in enumerate(maps))))
            off += o.shape.dimensions[dim]
        return res
    if op == "reshape":
        where = unit_reshape(dims, ops[0].shape.dimensions)
        if where is None:
            return []
        return [(ops[0], tuple(None if d is None else maps[d] for d in where))]
    if op == "dynamic-slice":
        o = ops[0]
        sizes = inst.attrs["dynamic_slice_sizes"]
        starts = static_starts(inst, 1, [n - s for n, s in zip(o.shape.dimensions, sizes)])
        if starts is None:
            return []
        return [(o, tuple(_affine(m, 1, s) for m, s in zip(maps, starts)))]
    if op == "dynamic-update-slice":
        o, upd = ops[0], ops[1]
        udims = upd.shape.dimensions
        starts = static_starts(inst, 2, [n - u for n, u in zip(o.shape.dimensions, udims)])
        res = [(o, maps)]
        if starts is not None:
            res.append((upd, tuple(_affine(m, 1, -s) for m, s in zip(maps, starts))))
        return res
    return []


def _affine(m: DimMap, a: int, c: int) -> DimMap:
    """The map of a * x + c where x = m."""
    if m is None:
        return None
    r, a0, c0 = m
    return (r, a * a0, a * c0 + c)
