"""The rewrite registry: rewrites are small functions keyed by the opcode they match.

Input: an instruction. Output: a replacement instruction (already in the computation, with a
compatible shape) or None. `@rewrite("multiply")` registers an exact rewrite;
`@rewrite("add", unsafe=True)` one that may change results (runs only with unsafe math).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import FrozenInstanceError

from ember.hlo.ir import Instruction

RewriteFn = Callable[[Instruction], Instruction | None]


class Rewrite:
    """A registered rewrite. A frozen record (equality, hash and repr over its fields, as the
    frozen dataclass it was), written by hand: building a dataclass costs about half a
    millisecond of import, which every first compile paid (issue 4)."""

    fn: RewriteFn
    opcodes: tuple[str, ...]
    unsafe: bool

    def __init__(self, fn: RewriteFn, opcodes: tuple[str, ...], unsafe: bool) -> None:
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "opcodes", opcodes)
        object.__setattr__(self, "unsafe", unsafe)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return ((self.fn, self.opcodes, self.unsafe)
                    == (other.fn, other.opcodes, other.unsafe))  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.fn, self.opcodes, self.unsafe))

    def __repr__(self) -> str:
        return f"Rewrite(fn={self.fn!r}, opcodes={self.opcodes!r}, unsafe={self.unsafe!r})"

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
