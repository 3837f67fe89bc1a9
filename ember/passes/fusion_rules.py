"""Fusion's per-edge rules: which producer may be computed inside its consumer's kernel.

Input: a consumer, a producer and what the caller knows of the group being grown (its
members, whether the consumer's value is read several times per output, which
instructions feed a reduction). Output: a `Decision` (ok, or the reason why not), the
`FusionDecision` record each refusal becomes, how many times the element generator would
emit a producer (`emissions`), and whether a dot may take its epilogue (`should_fuse_dot`).
Invariants: the rules only read the graph; fusion.py's module doc states the policy they
implement (expensive producers never duplicated, no float duplicate feeding a reduction
and another consumer, kOutput epilogues elementwise on the dot's dims).
"""

from __future__ import annotations

from ember.hlo.ir import Instruction
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import memory_order
from ember.passes.grouping import is_constant_fill
from ember.records import FrozenRecord

# Ops that may sit inside a kLoop fusion (index-remapping ops and elementwise ops).
LOOP_FUSIBLE: frozenset[str] = frozenset(
    {n for n, r in OPCODES.items() if r.elementwise and n != "map"}
    | {"broadcast", "reshape", "transpose", "slice", "pad", "concatenate", "iota", "reverse",
       "convert", "select", "compare", "clamp", "bitcast-convert", "constant", "gather",
       "dynamic-update-slice"}
)
# Roots a group may grow from: loop-fusible ops and reductions (kInput).
ROOT_FUSIBLE: frozenset[str] = (LOOP_FUSIBLE - {"constant", "iota"}) | {"reduce"}


class Decision(FrozenRecord):
    """Whether a producer may fuse into a consumer, and why not. (Records, not dataclasses,
    for import time: ember/records.py; FusionDecision too.)"""

    FIELDS = ("ok", "reason")

    ok: bool
    reason: str

    def __init__(self, ok: bool, reason: str = "") -> None:
        d = self.__dict__  # (_freeze's effect, written out: the rules answer every edge)
        d["ok"] = ok
        d["reason"] = reason


# (one shared yes: the rules answer it for most of the edges of a program)
OK = Decision(True)


class FusionDecision(FrozenRecord):
    """A refused fusion: `producer` was not fused into `consumer` because of `reason`."""

    FIELDS = ("producer", "consumer", "reason")

    producer: str
    consumer: str
    reason: str

    def __init__(self, producer: str, consumer: str, reason: str) -> None:
        d = self.__dict__  # (_freeze's effect, written out: one per refused edge)
        d["producer"] = producer
        d["consumer"] = consumer
        d["reason"] = reason

    def __str__(self) -> str:
        return f"%{self.producer} -> %{self.consumer}: {self.reason}"


def expands(inst: Instruction) -> bool:
    """True when `inst` reads some operand element for several output elements."""
    if inst.opcode == "gather":
        return True  # indices may repeat: one operand element read for many outputs
    if inst.opcode != "broadcast":
        return False
    return inst.shape.size > inst.operand.shape.size


def _feeds_reduction(inst: Instruction) -> bool:
    """Does `inst` reach a reduce through a chain of loop-fusible users?"""
    seen: set[Instruction] = set()
    stack = list(inst.users)
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.opcode == "reduce":
            return True
        if u.opcode in LOOP_FUSIBLE:
            stack.extend(u.users)
    return False


def _exact(inst: Instruction) -> bool:
    """An integer or predicate value: every copy of a cheap one computes the same bits
    (no rounding, no fast or precise variant), so copies of it may feed a reduction and
    another consumer (Levinson-Durbin's clipped gather indices, read by a masked sum and
    by the update: two kernels of 1001 elements per step less)."""
    et = inst.shape.element_type
    return et == "pred" or et[0] in "su" and et[1:].isdigit()


def reaches_reduction(order: list[Instruction]) -> dict[Instruction, bool]:
    """`_feeds_reduction` of every instruction of a computation (`order`: its post order)
    in one walk, users first: a walk per candidate made the pass quadratic in the program
    (an unrolled loop of 600 steps spent 6 of its 9 s of fusion there)."""
    out: dict[Instruction, bool] = {}
    for inst in reversed(order):
        out[inst] = any(u.opcode == "reduce" or (u.opcode in LOOP_FUSIBLE and out.get(u, False))
                        for u in inst.users)
    return out


def should_fuse(consumer: Instruction, producer: Instruction,
                group: set[Instruction] | None = None, amplified: bool = False,
                feeds: dict[Instruction, bool] | None = None) -> Decision:
    """May `producer` be computed inside the fusion that `consumer` belongs to?

    `group` is the consumer's group so far (users of `producer` outside it force a
    duplicate); `amplified` says the consumer's value is read several times per output of
    the group (a broadcast between it and the root); `feeds`: `reaches_reduction` of the
    computation, when the caller has it.
    """
    group = group if group is not None else {consumer}
    op = producer.opcode
    if producer.shape.is_tuple:
        return Decision(False, "tuple-shaped producer")
    if op == "constant":
        if producer.shape.size <= 1:
            return OK
        return Decision(False, "array constant stays in memory")
    if op not in LOOP_FUSIBLE:
        return Decision(False, f"{op} is not loop-fusible")
    if consumer.opcode == "reduce" and producer in consumer.operands[len(consumer.operands)
                                                                    // 2:]:
        if producer.shape.size > 1:
            return Decision(False, "reduce init value is not a scalar")
    if is_constant_fill(producer):
        # no arithmetic: every copy holds the same bits, and a kernel of its own would only
        # write memory its consumers then read
        return OK
    expensive = OPCODES[op].expensive
    if expensive and (amplified or expands(consumer)):
        return Decision(False, f"expensive {op} would be recomputed for each element of a "
                               f"broadcast")
    outside = [u for u in producer.users if u not in group]
    if outside:
        if op == "dynamic-update-slice":
            # its own kernel updates in place; a copy here would read the operand after it
            return Decision(False, "dynamic-update-slice has users outside the fusion; "
                                   "updated in place once, not duplicated")
        if expensive:
            return Decision(False, f"expensive {op} has {len(producer.users)} users; "
                                   f"not duplicated")
        if not _exact(producer) and (feeds[producer] if feeds is not None
                                     and producer in feeds else _feeds_reduction(producer)):
            return Decision(False, "feeds a reduction and another consumer (x - max(x) "
                                   "pattern); not duplicated")
    return OK


def passes_index(consumer: Instruction, producer: Instruction) -> bool:
    """Does the element generator read `producer` at `consumer`'s own index (the same Index
    object, so a diamond of such users emits it once)? True for elementwise consumers of
    the same dimensions; every other consumer computes a new index from its own."""
    return (OPCODES[consumer.opcode].elementwise
            and producer.shape.dimensions == consumer.shape.dimensions)


def emissions(producer: Instruction, consumers: list[Instruction],
              sources: dict[Instruction, frozenset[Instruction]],
              counts: dict[Instruction, int]) -> tuple[frozenset[Instruction], int]:
    """How many times the element generator would emit `producer` inside a fusion whose
    members `consumers` read it, as (index sources, count).

    An index source is the member that made an index (the root's index, or a consumer that
    remaps its index for its operand); a member is emitted once per index it is read at:
        sources(p) = U_c (sources(c) if c passes its index to p else {c})
        count(p)   = sum_{s in sources(p)} count(s),   count(root) = 1
    A set, not a sum over paths, so a diamond of elementwise users reading p at one index
    counts once; a stencil step read through 8 slices counts 8 times its consumers' count.
    """
    srcs: set[Instruction] = set()
    for c in consumers:
        srcs |= sources[c] if passes_index(c, producer) else {c}
    out = frozenset(srcs)
    return out, sum(counts[s] for s in out)


def should_fuse_dot(dot: Instruction, group: set[Instruction], root: Instruction) -> Decision:
    """May `dot` join `group` (grown from `root`) as a kOutput fusion's product? Every member
    from the dot up to the root must be elementwise on the dot's dims (the epilogue reads
    the product at the index it writes) with no user outside the group (no copy of it would
    need the product again)."""
    if any(m.opcode == "dot" for m in group):
        return Decision(False, "a kOutput fusion holds one dot")
    dims = dot.shape.dimensions
    stack, seen = [dot], set()
    while stack:
        inst = stack.pop()
        if inst in seen:
            continue
        seen.add(inst)
        if inst is not root and any(u not in group for u in inst.users):
            return Decision(False, f"{inst.opcode} on the dot's path has users outside the "
                                   f"fusion; the dot is not computed twice")
        if inst is not dot:
            info = OPCODES[inst.opcode]
            if not info.elementwise or inst.opcode == "map" or inst.shape.dimensions != dims:
                return Decision(False, f"{inst.opcode} reads the dot's result at other "
                                       f"indices; an epilogue must be elementwise")
            if memory_order(inst.shape) != memory_order(dot.shape):
                # (the epilogue stores each element where the product's block has it: a copy
                # into another layout moves elements, which a kLoop fusion does)
                return Decision(False, f"{inst.opcode} has another layout than the dot's; "
                                       f"an epilogue writes the product's layout")
        if inst is not root:
            stack.extend(inst.users)
    return OK


__all__ = ["LOOP_FUSIBLE", "ROOT_FUSIBLE", "Decision", "FusionDecision", "emissions", "expands",
           "passes_index", "reaches_reduction", "should_fuse", "should_fuse_dot"]
