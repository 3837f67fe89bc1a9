"""Growing a fusion group from its root through its producers (shared by loop/input fusion
and row fusion).

Input: a root instruction, each instruction's post-order position, and an `accept` rule.
Output: the group's members, root first. Invariant: a candidate is decided only after every
consumer of it that could join has been decided (latest in post order first).
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
