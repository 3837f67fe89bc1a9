"""Regions of a loop kernel's iteration space inside which every pad, concatenate and
dynamic-update-slice reads one known operand, so their per-element selects disappear.

Input: the roots a loop nest stores (their dimensions are the nest's) and the instructions
read from buffers (where index maps stop). Output (`plan`): a partition of the output's
index space into boxes, a [lo, hi) range per dimension, as a tree of intervals per
dimension (`Tree`) that the loop nest follows (loops.for_regions); the indices of each box
carry it as static `Index.ranges`; the element generators then see that a pad's index is
all interior (a plain read that vectorizes), all border (the pad value and no read at all)
or still mixed (the select, as before), and likewise which operand of a concatenate or an
update an index reads. Splitting never changes a value: a box only tells the generators
facts that hold for each of its indices.

How: every instruction's index is, per dimension, an affine function a*i_r + c of one root
index i_r (`DimMap`), or unknown (a reshape that regroups dimensions, a gather's index, a
dynamic start). A walk from the roots carries these maps through broadcast, transpose,
reverse, slice, pad and concatenate, and with them the range of indices each instruction
takes over the box being split; a border of a pad, concatenate or static-start
dynamic-update-slice that falls inside its range along a dimension with a known map is a
split point of that root dimension. The split is hierarchical, major dimension first: each
slab is split again only at the borders that still matter inside it, and the walk does not
enter what a slab never reads (the operand of a pad that is all padding there, the pieces
of a concatenate outside it), so a 2-D pad makes 5 boxes, not 9. Invariants: boxes are
non-empty, disjoint, and cover the index space; at most MAX_BOXES of them (else the most
major dimensions are left unsplit: the minor dimension's splits are the ones that let the
innermost loop vectorize); a walk that would visit more than MAX_VISITS (instruction, map)
pairs gives up and leaves its box whole.

The per-opcode range rules the generators use (`pad_dim`, `piece_range`) live here too, so
the planner and the generators agree on where borders are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ember.hlo.ir import Instruction
from ember.hlo.opcodes import OPCODES

# Boxes per kernel: 5 for a 2-D pad, 7 for a 3-D one. Each box is a loop of its own with
# its own copy of the element code (a border box of a pad holds only a store of the pad
# value): the bound keeps LLVM's time in check.
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


# A region tree: per dimension of the walk (major first), the intervals it is cut into, each
# with the tree of the dimensions below it inside that interval; [] below the last one.
Tree = list[tuple[Range, "Tree"]]


def plan(roots: Sequence[Instruction], inputs: Iterable[Instruction],
         order: Sequence[int] | None = None) -> Tree:
    """How a loop nest over the roots' dimensions is split: a region tree over the
    dimensions in `order` (major to minor in memory; row-major by default), one interval
    per level when nothing splits. Major dimension first: each interval is split again
    only at the borders that still matter inside it (a slab of pad rows is padding
    whatever the column: it stays whole), so a loop nest that follows the tree keeps each
    row's pieces inside one loop over the rows."""
    dims = roots[0].shape.dimensions
    order = list(order) if order is not None else list(range(len(dims)))
    whole = [(0, n) for n in dims]
    inputs = set(inputs)
    live = _bordered(roots, inputs)
    if dims and all(n > 0 for n in dims) and any(id(r) in live for r in roots):
        for first in range(len(dims)):  # too many boxes: leave the major dimensions whole
            tree = _split(roots, live, order, first, 0, list(whole), [0])
            if tree is not None:
                return tree
    return _whole(order, whole)


def is_split(tree: Tree) -> bool:
    """Whether the tree has more than one region."""
    return len(tree) > 1 or any(is_split(sub) for _, sub in tree)


_BORDERED = frozenset({"pad", "concatenate", "dynamic-update-slice"})


def _bordered(roots: Sequence[Instruction], inputs: set[Instruction]) -> set[int]:
    """The ids of the instructions at or above some instruction with borders (the walks
    need not enter anything else: most kernels have no such instruction at all, and a
    long elementwise chain under a pad would cost each walk milliseconds)."""
    order: list[Instruction] = []  # a depth-first pre-order: users before operands
    seen: set[int] = set()
    stack = list(roots)
    found = False
    while stack:
        inst = stack.pop()
        if id(inst) in seen or inst in inputs:
            continue
        seen.add(id(inst))
        order.append(inst)
        found = found or inst.opcode in _BORDERED
        stack.extend(inst.operands)
    if not found:  # (the common case: one cheap walk)
        return set()
    users: dict[int, list[Instruction]] = {}
    for inst in order:
        for o in inst.operands:
            if id(o) in seen:
                users.setdefault(id(o), []).append(inst)
    out: set[int] = set()
    up = [inst for inst in order if inst.opcode in _BORDERED]
    while up:  # everything above a bordered instruction, through the users in the graph
        inst = up.pop()
        if id(inst) in out:
            continue
        out.add(id(inst))
        up.extend(users.get(id(inst), ()))
    return out


def _whole(order: list[int], whole: list[Range]) -> Tree:
    tree: Tree = []
    for d in reversed(order):
        tree = [(whole[d], tree)]
    return tree


def boxes(roots: Sequence[Instruction], inputs: Iterable[Instruction],
          order: Sequence[int] | None = None) -> list[Box]:
    """The leaves of `plan`'s tree as boxes, a [lo, hi) range per dimension (in dimension
    order, not walk order)."""
    rank = roots[0].shape.rank
    order = list(order) if order is not None else list(range(rank))
    out: list[Box] = []

    def leaves(tree: Tree, k: int, box: list[Range]) -> None:
        if k == rank:
            out.append(tuple(box))
            return
        for rng, sub in tree:
            box[order[k]] = rng
            leaves(sub, k + 1, box)

    leaves(plan(roots, inputs, order), 0, [(0, 0)] * rank)
    return out


def settled_concatenates(roots: Sequence[Instruction], inputs: Iterable[Instruction],
                         order: Sequence[int] | None = None) -> set[int]:
    """The ids of the concatenates that, in every box of `plan`'s split, read one operand
    at every index they are read at (the generator then evaluates only that operand: per
    element of a concatenate, each operand costs its share of the dimension, not one
    evaluation). A concatenate whose dimension has no known map, or that a walk over some
    box leaves out, is not in the set; a walk past MAX_VISITS gives the empty set."""
    roots = list(roots)
    inputs = set(inputs)
    live = _bordered(roots, inputs)
    if not live:
        return set()
    rank = roots[0].shape.rank
    identity: tuple[DimMap, ...] = tuple((d, 1, 0) for d in range(rank))
    settled: set[int] = set()
    mixed: set[int] = set()
    for box in boxes(roots, inputs, order):
        stack = [(root, identity) for root in roots]
        seen: set[tuple[int, tuple[DimMap, ...]]] = set()
        while stack:
            inst, maps = stack.pop()
            key = (id(inst), maps)
            if key in seen or id(inst) not in live:
                continue
            seen.add(key)
            if len(seen) > MAX_VISITS:
                return set()
            ranges = [_range(m, box, n) for m, n in zip(maps, inst.shape.dimensions)]
            _, reads = _borders(inst, maps, ranges)
            if inst.opcode == "concatenate":
                known = maps[inst.attrs["dimension"]] is not None
                (settled if known and len(reads) <= 1 else mixed).add(id(inst))
            stack.extend(reads)
    return settled - mixed


def _split(roots: Sequence[Instruction], live: set[int], order: list[int],
           first: int, k: int, box: list[Range], count: list[int]) -> Tree | None:
    """The tree below level k of `box` (whose dimensions order[:k] are settled), splitting
    only the dimensions order[first:]; `count` carries the number of leaves so far, `live`
    is `_bordered`'s set. None past MAX_BOXES leaves or MAX_VISITS."""
    if k == len(order):
        count[0] += 1
        return [] if count[0] <= MAX_BOXES else None
    r = order[k]
    cuts: list[int] = []
    if k >= first:
        found = split_points(roots, live, box, r)
        if found is None:
            return None
        cuts = sorted(p for p in found if box[r][0] < p < box[r][1])
    tree: Tree = []
    for lo, hi in zip([box[r][0], *cuts], [*cuts, box[r][1]]):
        sub = _split(roots, live, order, first, k + 1,
                     [*box[:r], (lo, hi), *box[r + 1:]], count)
        if sub is None:
            return None
        tree.append(((lo, hi), sub))
    return tree


def split_points(roots: Sequence[Instruction], live: set[int],
                 box: Sequence[Range], r: int) -> set[int] | None:
    """The indices p of root dimension r where, for root indices in `box`, some pad's,
    concatenate's or static update's choice of operand may differ between p - 1 and p
    (an instruction settled over the whole box, such as a pad all padding, adds none, nor
    do the operands it does not read); None if the walk is too large. The walk enters
    only the instructions in `live` (ids: those with such an instruction at or below)."""
    rank = roots[0].shape.rank
    points: set[int] = set()
    identity: tuple[DimMap, ...] = tuple((d, 1, 0) for d in range(rank))
    stack = [(root, identity) for root in roots]
    seen: set[tuple[int, tuple[DimMap, ...]]] = set()
    while stack:
        inst, maps = stack.pop()
        key = (id(inst), maps)
        if key in seen or id(inst) not in live or all(m is None for m in maps):
            continue
        seen.add(key)
        if len(seen) > MAX_VISITS:
            return None
        ranges = [_range(m, box, n) for m, n in zip(maps, inst.shape.dimensions)]
        borders, operands = _borders(inst, maps, ranges)
        for d, v in borders:
            m = maps[d]
            if m is not None and m[0] == r:
                points.add(_crossing(m, v))
        stack.extend(operands)
    return points


def _range(m: DimMap, box: Sequence[Range], n: int) -> Range:
    """The indices a dimension of map m takes over the box (the whole dimension when the
    map is unknown)."""
    if m is None:
        return (0, n)
    r, a, c = m
    lo, hi = box[r]
    x, y = a * lo + c, a * (hi - 1) + c
    return (max(min(x, y), 0), min(max(x, y) + 1, n))


def _crossing(m: tuple[int, int, int], v: int) -> int:
    """The root index where `a * i + c >= v` changes truth."""
    _, a, c = m
    if a > 0:
        return -(-(v - c) // a)
    return (c - v) // -a + 1  # a*i + c >= v  <=>  i <= (c - v) / -a


def _borders(inst: Instruction, maps: tuple[DimMap, ...], ranges: list[Range]
             ) -> tuple[list[tuple[int, int]], list[tuple[Instruction, tuple[DimMap, ...]]]]:
    """(dimension, v) pairs: along that dimension, indices >= v and < v read differently
    somewhere in `ranges`; and the operands read there, with their maps."""
    op = inst.opcode
    if op == "pad":
        o = inst.operands[0]
        if o.shape.size == 0:
            return [], []
        cfg = inst.attrs["padding"]
        where = [pad_dim(rg, lo, interior, n)[0] for rg, n, (lo, _, interior)
                 in zip(ranges, o.shape.dimensions, cfg)]
        if OUT in where:
            return [], []
        out = []
        for d, (w, n, (lo, _, interior)) in enumerate(zip(where, o.shape.dimensions, cfg)):
            if w == MIXED:
                out += [(d, lo), (d, lo + (n - 1) * (interior + 1) + 1)]
        return out, _operand_maps(inst, maps)
    if op == "concatenate":
        dim = inst.attrs["dimension"]
        out, reads, off = [], [], 0
        for o, om in _operand_maps(inst, maps):
            n = o.shape.dimensions[dim]
            if piece_range(ranges[dim], off, n) is not None:
                reads.append((o, om))
                if off > ranges[dim][0]:
                    out.append((dim, off))
            off += n
        return out, reads
    if op == "dynamic-update-slice":
        o, upd = inst.operands[0], inst.operands[1]
        udims = upd.shape.dimensions
        starts = static_starts(inst, 2, [n - u for n, u in zip(o.shape.dimensions, udims)])
        if starts is None or upd.shape.size == 0:
            return [], _operand_maps(inst, maps)
        where = [piece_range(rg, s, u) for rg, s, u in zip(ranges, starts, udims)]
        base, update = _operand_maps(inst, maps)
        if any(w is None for w in where):
            return [], [base]
        if all(w == (rg[0] - s, rg[1] - s) for w, rg, s in zip(where, ranges, starts)):
            return [], [update]
        out = [(d, v) for d, (s, u) in enumerate(zip(starts, udims)) for v in (s, s + u)]
        return out, [base, update]
    return [], _operand_maps(inst, maps)


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
