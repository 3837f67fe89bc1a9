"""Growing a fusion group from its root through its producers (shared by loop/input fusion
and row fusion).

Input: a root instruction, each instruction's post-order position, and an `accept` rule.
Output: the group's members, root first. Invariant: a candidate is decided only after every
consumer of it that could join has been decided (latest in post order first).
`is_constant_fill` names the producers both fusions copy into every group that reads them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ember.hlo.ir import Instruction


def grow_group(root: Instruction, pos: dict[Instruction, int],
               accept: Callable[[Instruction, set[Instruction]], bool]) -> list[Instruction]:
    """The fusion group grown from `root` through its producers, latest in post order
    first (`pos`), so every consumer of a candidate is decided before it; `accept(p, group)`
    decides each candidate (and records why not). Returns the members, root first."""
    group: set[Instruction] = {root}
    members = [root]
    heap: list[tuple[int, int, Instruction]] = []
    queued: set[Instruction] = set()

    def push(m: Instruction) -> None:
        for p in m.operands:
            if p not in queued and p not in group:
                queued.add(p)
                heapq.heappush(heap, (-pos[p], id(p), p))

    push(root)
    while heap:
        _, _, p = heapq.heappop(heap)
        if accept(p, group):
            group.add(p)
            members.append(p)
            push(p)
    return members


def readers_in(p: Instruction, group: set[Instruction], order: dict[Instruction, int]
               ) -> list[Instruction]:
    """The users of `p` in `group`: in `p.users` order, or, when `p` has many more users
    than the group has members (a scalar constant every reduction of an unrolled loop
    shares after CSE), found from the members and sorted by `order`: a walk of all the
    users per group made growing n such groups n^2."""
    if len(p.users) <= 4 * len(group):
        return [u for u in p.users if u in group]
    return sorted((m for m in group if any(o is p for o in m.operands)), key=order.__getitem__)


def is_constant_fill(inst: Instruction) -> bool:
    """A scalar constant, a broadcast of one, or an iota: values made without arithmetic,
    so a copy in each group that reads it has the bits of the original (and a kernel of its
    own would only write memory its readers then read back)."""
    if inst.opcode == "iota":
        return True
    if inst.opcode == "broadcast":
        inst = inst.operand
    return inst.opcode == "constant" and inst.shape.size <= 1
