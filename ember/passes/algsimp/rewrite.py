"""The rewrite registry: rewrites are small functions keyed by the opcode they match.

Input: an instruction. Output: a replacement instruction (already in the computation, with a
compatible shape) or None. `@rewrite("multiply")` registers an exact rewrite;
`@rewrite("add", unsafe=True)` one that may change results (runs only with unsafe math).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ember.hlo.ir import Instruction
from ember.records import FrozenRecord

RewriteFn = Callable[[Instruction], Instruction | None]


class Rewrite(FrozenRecord):
    """A registered rewrite (a record, not a dataclass, for import time: ember/records.py)."""

    FIELDS = ("fn", "opcodes", "unsafe")

    fn: RewriteFn
    opcodes: tuple[str, ...]
    unsafe: bool

    def __init__(self, fn: RewriteFn, opcodes: tuple[str, ...], unsafe: bool) -> None:
        self._freeze(fn, opcodes, unsafe)

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()


REWRITES: dict[str, list[Rewrite]] = defaultdict(list)
ALL_REWRITES: list[Rewrite] = []


def rewrite(*opcodes: str, unsafe: bool = False) -> Callable[[RewriteFn], RewriteFn]:
    def register(fn: RewriteFn) -> RewriteFn:
        r = Rewrite(fn, opcodes, unsafe)
        ALL_REWRITES.append(r)
        for op in opcodes:
            REWRITES[op].append(r)
        return fn

    return register
