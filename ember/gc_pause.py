"""The cyclic garbage collector paused while a program is traced and compiled.

Input: none; `paused_gc()` is a context manager around a trace or a compile.
Output: inside it the collector does not run; on exit it runs as before.
Why: a trace and a compile allocate hundreds of thousands of objects that live until the
compile ends (tracers, jaxpr equations, HLO instructions, LLVM IR values); each 700 of
them start a collection, and every tenth of those and every hundredth walk older objects,
the whole heap at last (everything the user's program holds, another library's objects
too). An unrolled 600-step program spent 30% of its compile there (0.4 of 1.3 s of CPU,
with JAX's objects in the same process) and more the larger the heap. Paused, the garbage
the compile leaves is collected once afterwards, in the collections the allocations after
it start.
Invariants: re-entrant (a compile inside a trace pauses nothing more and resumes nothing);
the collector is resumed only by the `paused_gc` that paused it, so a caller that had it
disabled keeps it disabled; nothing else about memory changes (reference counting frees
everything without cycles as before).
"""

from __future__ import annotations

import gc
from types import TracebackType


class _PausedGC:
    """The context manager: one shared object, so entering allocates nothing the collector
    counts (a fresh context-manager object per `with` could itself start the collection
    the pause is for). A stack of "was it enabled" answers makes it re-entrant; threads
    that interleave pop each other's answers, but the collector is enabled again exactly
    when the last pause that found it enabled has ended."""

    def __init__(self) -> None:
        self._was_enabled: list[bool] = []

    def __enter__(self) -> None:
        self._was_enabled.append(gc.isenabled())
        gc.disable()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._was_enabled.pop():
            gc.enable()


_PAUSED = _PausedGC()


def paused_gc() -> _PausedGC:
    """`with paused_gc(): ...` runs the block with the cyclic collector paused."""
    return _PAUSED


__all__ = ["paused_gc"]
