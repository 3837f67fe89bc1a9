"""Row fusion: reductions over the minor dimension broadcast back and recombined with their
input (softmax and layernorm as users write them) become one fusion, so the backend can run
the dependent reductions and the epilogue per block of rows while the row is in cache.

Input: the entry computation. Output: groups `(root, members)` for `fusion.py` to build
(kind=kInput: the group holds reductions). Refusals are appended to the caller's decision
list.

Rewrites (D = [rows..., n], reduce over the last dimension):
  out = f(x, broadcast(g(reduce(h(x)))), ...)  =>  fusion(x, ...), kind=kInput  (one kernel)
  and with one value per row out of dependent reductions (a reduction of values that need
  another one: a row variance, logsumexp, a cross-entropy), which would otherwise write a
  full-shape temporary (the squared deviations, exp(x - max)) and read it back:
  out = k(reduce(f(x, broadcast(g(reduce(h(x))))))) =>  fusion(x, ...), kind=kInput
A root of shape D takes any reduction; a root with one value per row only dependent ones
(one reduction, or independent siblings, are one pass already: fusion.py's kInput).

Group members, by level:
- row level (shape D): elementwise ops; broadcasts of row values (shape rows, or rows with
  1s inserted) mapped onto the row dimensions in order; broadcasts of scalars or of vectors
  (read at the column index).
- other shapes (vectors along the row): cheap index and elementwise ops on inputs only.
- row-value level (one value per row): elementwise ops, reshapes, in-order broadcasts, and
  reduces of a row-level value over exactly the last dimension with a scalar init.
Invariants: every row-level member is only ever read at the current (row, column) and every
row-value member at the current row, which is what lets the kernel keep them in registers
or a row-local scratch; a member's users are all in the group (nothing is duplicated, so the
`x - max(x)` seen by a reduction is the one recombined with it; constant fills, which have no
arithmetic, are copied into every group that reads them); a row of every full-shape
input plus the expensive intermediates must fit in `ROW_CACHE_BYTES`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ember.hlo.ir import Computation, Instruction
from ember.hlo.opcodes import OPCODES
from ember.passes.grouping import grow_group, is_constant_fill

ROW_CACHE_BYTES = 256 * 1024  # about half of this host's L2 per core


def _squeeze(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d for d in dims if d != 1)


class _RowShape:
    def __init__(self, dims: tuple[int, ...]) -> None:
        self.dims = dims
        self.outer = dims[:-1]
        self.n = dims[-1]
        self.rows = math.prod(self.outer)

    def is_row_value(self, dims: Sequence[int]) -> bool:
        return _squeeze(dims) == _squeeze(self.outer) and math.prod(dims) == self.rows

    def level(self, inst: Instruction) -> str:
        """'row' (full shape), 'rv' (one value per row), 'scalar', or ''."""
        if inst.shape.is_tuple:
            return ""
        dims = inst.shape.dimensions
        if dims == self.dims:
            return "row"
        if inst.shape.size == 1 and not (self.rows == 1 and dims):
            return "scalar"
        if self.is_row_value(dims):
            return "rv"
        return ""


def _in_order_onto(src: Sequence[int], dst: Sequence[int], dims: Sequence[int],
                   limit: int) -> bool:
    """A broadcast keeps the linear order of the operand's non-1 dims and maps each onto an
    equal-sized output dim below `limit` (so the operand's linear index is the row's)."""
    last = -1
    for i, d in enumerate(dims):
        if src[i] == 1:
            continue
        if d <= last or d >= limit or dst[d] != src[i]:
            return False
        last = d
    return True


_COLUMN_OPS = frozenset({"broadcast", "reshape", "transpose", "slice", "convert", "reverse"})


def _member_reason(inst: Instruction, rs: _RowShape) -> str:
    """'' when `inst` may be a member of a row group of shape rs, else why not."""
    op = inst.opcode
    lvl = rs.level(inst)
    if not lvl:
        # other shapes (g and b of layernorm, read along the row): cheap ops on inputs only,
        # evaluated wherever they are read
        info = OPCODES.get(op)
        if info is None or info.expensive or inst.shape.is_tuple:
            return f"{op} of shape {inst.shape} would be recomputed for each row"
        if op not in _COLUMN_OPS and not (info.elementwise and op != "map"):
            return f"{op} is not row-fusible"
        if any(rs.level(o) not in ("", "scalar") for o in inst.operands):
            return f"{op} of shape {inst.shape} reads row values"
        return ""
    if op == "constant":
        return "" if lvl == "scalar" else "array constant stays in memory"
    if op == "iota":  # (made from the index: a causal mask's row and column numbers)
        return ""
    if op == "parameter":
        return "parameter"
    if op == "reduce":
        if len(inst.operands) != 2 or lvl != "rv":
            return "variadic reduce"
        x, init = inst.operands
        if x.shape.dimensions != rs.dims or tuple(inst.attrs["dimensions"]) != (
                len(rs.dims) - 1,):
            return "reduce is not over the last dimension of the row shape"
        if init.shape.size != 1:
            return "reduce init value is not a scalar"
        return ""
    if op == "broadcast":
        src = inst.operand.shape.dimensions
        if inst.operand.shape.size == 1:
            return ""
        dst = inst.shape.dimensions
        limit = len(rs.outer) if lvl == "row" else len(dst)
        if rs.is_row_value(src):
            if _in_order_onto(src, dst, inst.attrs["dimensions"], limit):
                return ""
            return "broadcast does not map rows onto rows"
        return ""  # a vector along the row (layernorm's g): read at the column index
    if op == "reshape":
        return "" if lvl in ("rv", "scalar") else "reshape at the row level"
    info = OPCODES.get(op)
    if info is not None and info.elementwise and op != "map":
        return ""
    return f"{op} is not row-fusible"


def grow_row_group(root: Instruction, pos: dict[Instruction, int],
                   decisions: list[tuple[str, str, str]],
                   row_counts: set[int] | None = None) -> list[Instruction] | None:
    """The row group rooted at `root`, or None when it holds no reduction (or does not fit).
    A root of the full row shape (softmax, layernorm) groups any reduction; a root with one
    value per row (a row variance, logsumexp, a cross-entropy) only dependent ones: a
    reduction of values that need another reduction (else one reduce fusion is one pass).
    `row_counts` (when given) holds the row count of every last-dimension reduce in the
    computation: a root of another size has no reduce to group, found without a walk."""
    if root.shape.is_tuple or root.shape.rank == 0:
        return None
    full: list[tuple[str, str, str]] = []  # (the refusals of the attempt that is kept)
    if root.shape.dimensions[-1] >= 2 and root.opcode not in ("reduce", "constant"):
        members = _grow(root, _RowShape(root.shape.dimensions), pos, full)
        if members is not None:
            decisions += full
            return members
    if row_counts is not None and root.shape.size not in row_counts:
        decisions += full
        return None
    dims = _reduced_row_shape(root)
    per_row: list[tuple[str, str, str]] = []
    members = None if dims is None else _grow(root, _RowShape(dims), pos, per_row)
    if members is None or _phases(members) < 2:
        decisions += full
        return None
    decisions += per_row
    return members


def _row_reduce_operand(inst: Instruction) -> tuple[int, ...] | None:
    """The operand dims of `inst` if it is a reduce over the last dimension of a rank >= 2
    operand with rows of at least 2 (the reductions a row group can hold)."""
    if inst.opcode != "reduce" or len(inst.operands) != 2:
        return None
    x = inst.operands[0]
    if (x.shape.rank >= 2 and x.shape.dimensions[-1] >= 2
            and tuple(inst.attrs["dimensions"]) == (x.shape.rank - 1,)):
        return x.shape.dimensions
    return None


def _reduced_row_shape(root: Instruction) -> tuple[int, ...] | None:
    """The row shape D whose rows a one-value-per-row `root` reduces: the operand shape of
    the first reduce over a last dimension found below it through row values."""
    stack, seen = [root], set()
    while stack:
        inst = stack.pop()
        if inst in seen or inst.shape.is_tuple:
            continue
        seen.add(inst)
        if inst.opcode == "reduce":
            xdims = _row_reduce_operand(inst)
            if xdims is not None and _RowShape(xdims).is_row_value(root.shape.dimensions):
                return xdims
            continue
        if inst.shape.size == root.shape.size:  # (row values: elementwise ops, reshapes)
            stack.extend(inst.operands)
    return None


def _phases(members: list[Instruction]) -> int:
    """The longest chain of reductions in `members` (2: one reduces values that need
    another, as the squared deviations of a variance need the mean)."""
    group = set(members)
    phase: dict[Instruction, int] = {}
    for m in reversed(members):  # (grow_group lists consumers first)
        p = max((phase.get(o, 0) for o in m.operands if o in group), default=0)
        phase[m] = p + 1 if m.opcode == "reduce" else p
    return max(phase.values(), default=0)


def _grow(root: Instruction, rs: _RowShape, pos: dict[Instruction, int],
          decisions: list[tuple[str, str, str]]) -> list[Instruction] | None:
    if _member_reason(root, rs):
        return None

    def accept(p: Instruction, group: set[Instruction]) -> bool:
        why = _member_reason(p, rs)
        if not why and any(u not in group for u in p.users) and not is_constant_fill(p):
            why = "used outside the row fusion; not duplicated"
        if why and p.opcode not in ("parameter", "constant"):
            users = [u for u in p.users if u in group]
            decisions.append((p.name, users[0].name if users else root.name,
                              f"row fusion: {why}"))
        return not why

    members = grow_group(root, pos, accept)
    group = set(members)
    if not any(m.opcode == "reduce" for m in members):
        return None
    # the row of every full-shape input and of every expensive row-level value must fit
    row_inputs = {o for m in members for o in m.operands
                  if o not in group and o.shape.dimensions == rs.dims}
    expensive = [m for m in members if rs.level(m) == "row" and OPCODES[m.opcode].expensive]
    row_bytes = rs.n * sum(i.shape.dtype.itemsize for i in [*row_inputs, *expensive])
    if row_bytes > ROW_CACHE_BYTES:
        decisions.append((root.name, root.name, f"row fusion: a row of {row_bytes} bytes does "
                                                f"not fit in {ROW_CACHE_BYTES} bytes of cache"))
        return None
    return members


def form_row_groups(comp: Computation, decisions: list[tuple[str, str, str]],
                    order: list[Instruction] | None = None
                    ) -> list[tuple[Instruction, list[Instruction]]]:
    """Row groups of `comp`, latest roots first claiming their producers (`order`:
    `comp.post_order()`, when the caller has it)."""
    order = comp.post_order() if order is None else order
    pos = {inst: k for k, inst in enumerate(order)}
    # (rows each candidate reduce makes: roots of other sizes skip the walk down to one,
    # which would make the pass quadratic in a long chain of row-less code)
    row_counts = {math.prod(d[:-1]) for d in map(_row_reduce_operand, order) if d}
    claimed: set[Instruction] = set()
    groups = []
    for inst in reversed(order):
        if inst in claimed:
            continue
        members = grow_row_group(inst, pos, decisions, row_counts)
        # (constant fills are copied into every group that reads them: never claimed)
        if members is None or claimed.intersection(members):
            continue
        claimed.update(m for m in members if not is_constant_fill(m))
        groups.append((inst, members))
    groups.reverse()
    return groups
