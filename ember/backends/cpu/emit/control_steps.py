"""The entry point's steps, walked without importing the native loop code when there is none.

Input: a `Schedule` (schedule.py). Output: `kernels_in_order` (every kernel, nested ones
included, control instructions left out) and `emit_steps` (the steps appended to an LLVM
builder), the same as loops_native.py's `kernels_in_order` and loops_emit.py's `emit_steps`.
Why a module of its own: the emitter walks every schedule this way, but only a program
with a `while` or `conditional` (`sched.control` non-empty) needs loops_native.py (plans)
and loops_emit.py (their emission); a first compile of an elementwise function then
imports neither (issue 4: fewer modules imported on a first compile).
Invariant: with `sched.control` empty both functions are exactly those (a flat list of
kernels, each emitted by `emit_call` in order); otherwise they are those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ember.hlo.ir import Instruction


def kernels_in_order(sched, steps: list[Instruction] | None = None) -> Iterable[Instruction]:
    """Every kernel of the schedule, each once, control instructions left out."""
    if sched.control:
        from ember.backends.cpu.plan import loops_native
        return loops_native.kernels_in_order(sched, steps)
    return list(sched.kernels if steps is None else steps)


def emit_steps(b, sched, steps: list[Instruction], emit_call: Callable[[Instruction], None],
               slot_ptr: Callable) -> None:
    """Append `steps` at `b`'s position (loops_emit.emit_steps)."""
    if sched.control:
        from ember.backends.cpu.emit import loops_emit
        loops_emit.emit_steps(b, sched, steps, emit_call, slot_ptr)
        return
    for inst in steps:
        emit_call(inst)


__all__ = ["emit_steps", "kernels_in_order"]
