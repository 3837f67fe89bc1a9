"""The CPU's element generator: ember/codegen's, with the CPU's vector math plugged in.

Input/output as `ember.codegen.elemental.ElementGenerator`; transcendental opcodes emit the
CPU math library's polynomial code (mathlib.CPU_MATH), with fast sin/cos/tan raising
"rerun precisely" flags. Every CPU kernel builds its element values through this class.
`LoopElements` is the one a kernel's loop body uses when it may rerun precisely
(kernels.py's `with_precise_rerun` and `rerun_per_unit`, the dot epilogue, eager kernels):
each `flush()` (one per element) hands the flags raised since the last one to `on_flags`,
typically or-ing them into an i8 slot of the kernel's frame (`report_to`) that the code
after the loop tests.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from ember.backends.cpu.mathlib import CPU_MATH
from ember.codegen.elemental import ElementGenerator
from ember.codegen.irtypes import I8


class CpuElements(ElementGenerator):
    math = CPU_MATH


class LoopElements(CpuElements):
    """CpuElements for a loop body: flags raised by an element go to `on_flags` at each
    `flush()`; `raised` says whether any code emitted so far raised one (if none did, the
    kernel needs no precise rerun at all)."""

    on_flags: Callable[[list[ir.Value]], None] | None = None
    raised = False

    def flush(self) -> None:
        if self.flags and self.on_flags is not None:
            self.on_flags(self.flags)
            self.raised = True
        self.flags = []

    def report_to(self, slot: ir.Value) -> None:
        """Or every flushed flag into the i8 at `slot` (nonzero: rerun precisely)."""
        self.on_flags = lambda flags: _or_flags(self.b, slot, flags)


def _or_flags(b: ir.IRBuilder, slot: ir.Value, flags: list[ir.Value]) -> None:
    any_: ir.Value = flags[0]
    for f in flags[1:]:
        any_ = b.or_(any_, f)
    cur = b.load(slot, typ=I8)
    b.store(b.or_(cur, b.zext(any_, I8)), slot)
