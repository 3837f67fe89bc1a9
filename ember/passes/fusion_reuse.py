"""Recomputation cost of a fusion group: how often the element generator evaluates each
member, and how much work that repeats (the fusion pass's "reuses operand elements" check,
as a work estimate rather than an opcode flag).

Input: a group grown by the fusion pass (root first, every member after the members that
read it). Output: `worst_recomputation(root, members)`, the member whose repeated
evaluation costs the most, with the numbers, or None.

The model follows what the element generator (`ember/codegen/elemental.py`) emits: a
member is evaluated once per element of each index it is read at (values are cached per
index, so elementwise readers at one index share an evaluation), and
    evals(p) = sum over the indices p is read at of the evaluations made at that index
    fanin(c, p) = evaluations of p per evaluation of its reader c:
        reduce            operand.size / reduce.size (each output element reads its window)
        concatenate       1 per operand (a select chain evaluates every operand), or the
                          operand's share of the dimension with the branching form (>= 8)
                          or where the loop nest's regions settle which operand each
                          index reads (codegen/regions.py: a wrap-mode pad's
                          concatenate of slices reads one piece per region)
        everything else   1 (pad included: it reads its operand at every output index,
                          clamped, and selects; slice/broadcast/reshape/... read one element)
    reuse(p) = evals(p) / p.size
    cost(p)  = own(p) + sum over operands o of fanin(p, o) * (cost(o) if o is a member
               else one load)           (per element; a tree sum: an estimate, capped)
    extra(p) = (evals(p) - p.size) * cost(p)     (work done beyond computing p once)
A broadcast of a vector into a matrix has a large reuse but costs nothing itself; what
matters is extra work per element of the kernel's iteration space: a pool backward that
reads a 25-tap sum through four interior-padded slices of a broadcast evaluates each tap
sum 16 times (hundreds of operations per output element); a bias scaled before its
broadcast repeats one multiply per element, which the memory traffic hides.

Invariant: pure analysis, no rewriting; every number is finite (costs are capped).
"""

from __future__ import annotations

from ember.codegen.regions import settled_concatenates
from ember.hlo.ir import Instruction
from ember.hlo.opcodes import OPCODES
from ember.passes.grouping import readers_in

# the element generator's branching-concatenate threshold (codegen/elemental.py's
# BRANCHING_CONCAT; tests/codegen/test_fusion_reuse.py checks the two agree)
BRANCHING_CONCAT = 8
# per-element costs, in "simple operations": an add or compare is 1, a load 1, a
# transcendental or divide about 10 (a polynomial or a long-latency instruction)
EXPENSIVE_COST = 10.0
LOAD_COST = 1.0
_FREE = frozenset({"broadcast", "reshape", "transpose", "slice", "reverse", "bitcast",
                   "copy", "iota", "constant", "parameter", "get-tuple-element", "tuple"})
_COST_CAP = 1e9
# Groups with more concatenates than this keep the select-chain count (no regions walk):
# a wrap-mode pad has one per padded dimension, while a chain of rolls (two pieces each)
# would make the walk's maps multiply (the roll Jacobi of 20 steps compiled 2x slower).
MAX_SETTLED_CONCATENATES = 4


def own_cost(inst: Instruction) -> float:
    """Operations to compute one element of `inst` from its operands' elements (index
    arithmetic that the loop's induction variables absorb counts as free)."""
    op = inst.opcode
    if op in _FREE:
        return 0.0
    if op == "pad":
        return 2.0  # the in-bounds test and the select
    if op == "concatenate":
        n = len(inst.operands)
        return 2.0 if n >= BRANCHING_CONCAT else float(n)
    if op in ("gather", "dynamic-slice", "dynamic-update-slice"):
        return 2.0
    if op == "dot":
        return 0.0  # the product is computed once; its epilogue reads it
    info = OPCODES.get(op)
    if info is not None and info.expensive:
        return EXPENSIVE_COST
    return 1.0


def fanin(consumer: Instruction, producer: Instruction,
          settled: frozenset[int] | set[int] = frozenset()) -> float:
    """Evaluations of `producer` per evaluation of `consumer` (see the module docstring);
    `settled`: the ids of the concatenates whose operand is known in each region."""
    op = consumer.opcode
    if op == "reduce":
        n = len(consumer.operands) // 2
        if producer in consumer.operands[:n] and consumer.shape.size > 0:
            out = consumer.shape.tuple_shapes[0] if consumer.shape.is_tuple else consumer.shape
            return producer.shape.size / max(out.size, 1)
        return 1.0
    if op == "concatenate" and (len(consumer.operands) >= BRANCHING_CONCAT
                                or id(consumer) in settled):
        dim = consumer.attrs["dimension"]
        total = consumer.shape.dimensions[dim]
        return producer.shape.dimensions[dim] / total if total else 0.0
    return 1.0


def _passes_index(consumer: Instruction, producer: Instruction) -> bool:
    # the generator's shared-index case (fusion.passes_index; repeated here to keep this
    # module below fusion.py)
    return (OPCODES[consumer.opcode].elementwise
            and producer.shape.dimensions == consumer.shape.dimensions)


def iteration_size(root: Instruction) -> int:
    """Elements the kernel's loop visits: the root's, or a reduction's input's."""
    if root.opcode == "reduce":
        return max(root.operands[0].shape.size, 1)
    return max(root.shape.size, 1)


def settled_in(root: Instruction, members: list[Instruction]) -> set[int]:
    """The group's concatenates of fewer than BRANCHING_CONCAT operands whose loop regions
    read one operand per index (`regions.settled_concatenates`; no walk without one, nor
    with more than MAX_SETTLED_CONCATENATES)."""
    n = sum(m.opcode == "concatenate" and len(m.operands) < BRANCHING_CONCAT
            for m in members)
    if not 0 < n <= MAX_SETTLED_CONCATENATES:
        return set()
    group = set(members)
    inputs = {o for m in members for o in m.operands if o not in group}
    return settled_concatenates([root], inputs)


def evaluations(root: Instruction, members: list[Instruction],
                settled: set[int] | None = None) -> dict[Instruction, float]:
    """Total element evaluations of each member when the kernel runs once (`settled`:
    `settled_in`'s answer, computed when not given)."""
    if settled is None:
        settled = settled_in(root, members)
    group = set(members)
    order = {m: k for k, m in enumerate(members)}
    # per member: evaluations made at each index it is read at, keyed by the member that
    # made the index (elementwise readers at one shape pass theirs on)
    at: dict[Instruction, dict[Instruction, float]] = {root: {root: float(root.shape.size)}}
    out: dict[Instruction, float] = {root: float(root.shape.size)}
    for p in members[1:]:
        idx: dict[Instruction, float] = {}
        for c in readers_in(p, group, order):
            if c not in at:
                continue
            if _passes_index(c, p):
                idx.update(at[c])
            else:
                idx[c] = idx.get(c, 0.0) + out[c] * fanin(c, p, settled)
        at[p] = idx
        out[p] = sum(idx.values())
    return out


def subtree_costs(members: list[Instruction],
                  settled: frozenset[int] | set[int] = frozenset()) -> dict[Instruction, float]:
    """cost(m): operations to compute one element of m inside the group (module docstring)."""
    group = set(members)
    cost: dict[Instruction, float] = {}
    for m in reversed(members):  # producers first
        c = own_cost(m)
        if m.opcode != "dot":
            for o in dict.fromkeys(m.operands):  # x*x reads x once
                if o in group:
                    c += fanin(m, o, settled) * cost[o]
                elif not (o.opcode == "constant" and o.shape.size <= 1):
                    c += fanin(m, o, settled) * LOAD_COST
        cost[m] = min(c, _COST_CAP)
    return cost


class Recomputation:
    """The member of a group whose repeated evaluation costs the most: `member`, the
    reader that evaluates it most (`consumer`), its `reuse` (evaluations per element), its
    `cost` per element, and `per_element`, the work repeated per element of the kernel's
    iteration space."""

    __slots__ = ("member", "consumer", "reuse", "cost", "per_element")

    def __init__(self, member: Instruction, consumer: Instruction, reuse: float, cost: float,
                 per_element: float) -> None:
        self.member, self.consumer = member, consumer
        self.reuse, self.cost, self.per_element = reuse, cost, per_element

    def reason(self, limit: float) -> str:
        """The refusal as the explain tool prints it."""
        return (f"reused operand elements: each element would be computed {self.reuse:.3g} "
                f"times (about {self.cost:.3g} operations each), {self.per_element:.3g} "
                f"repeated operations per element of the fusion, above the limit of "
                f"{limit:g}; computed once in a kernel of its own")


def worst_recomputation(root: Instruction, members: list[Instruction],
                        limit: float | None = None) -> Recomputation | None:
    """The member (not the root, a broadcast, a constant fill or a dot: those cost nothing
    to re-read, or are never recomputed) whose repeated evaluation repeats the most work,
    or None when nothing is evaluated more than once per element. With a `limit`, the
    loop regions' walk (`settled_in`, which can only lower the counts) runs only when the
    select-chain model's worst is above it: a pass over a long chain of rolls stays
    linear in the program."""
    worst = _worst(root, members, set())
    if worst is None or (limit is not None and worst.per_element <= limit):
        return worst
    settled = settled_in(root, members)
    return _worst(root, members, settled) if settled else worst


def _worst(root: Instruction, members: list[Instruction], settled: set[int]
           ) -> Recomputation | None:
    evals = evaluations(root, members, settled)
    candidates = [m for m in members[1:]
                  if m.opcode not in ("broadcast", "constant", "iota", "dot")
                  and m.shape.size != 0]
    if not any(evals[m] - m.shape.size > 0 for m in candidates):
        return None  # (nothing evaluated twice: no costs needed, costs are never negative)
    costs = subtree_costs(members, settled)
    best: tuple[float, Instruction] | None = None
    for m in candidates:
        extra = (evals[m] - m.shape.size) * costs[m]
        if extra > 0 and (best is None or extra > best[0]):
            best = (extra, m)
    if best is None:
        return None
    extra, m = best
    group = set(members)
    readers = [u for u in m.users if u in group]
    consumer = max(readers, key=lambda u: evals[u] * fanin(u, m, settled))
    return Recomputation(m, consumer, evals[m] / m.shape.size, costs[m],
                         extra / iteration_size(root))
