"""A dynamic-update-slice that writes into its operand's buffer: only the window is stored.

Input: an LLVM function being built, a `dynamic-update-slice` (alone, or the root of a
fusion that computes its update) whose result buffer is its operand 0's buffer (buffer
assignment put them on one Slot: in_place.py allows it when the operand dies there, as a
loop's carried array does), its input buffers and the output.
Output: the kernel body
    s[d] = clamp(start[d], 0, dim[d] - update_dim[d])     (XLA's rule: the window fits)
    for w in the update (row-major):  out[s + w] = update[w]
so a step of `scan` writing one row of its stacked outputs costs one row, not a copy of the
whole stack. Invariants: every store is in bounds (the window fits after clamping); the
update is another buffer, or computed by the fusion from buffers other than the one
written, so no store changes a value the loops read later (and a precise rerun of the
window recomputes the same values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.emit.kernels import with_precise_rerun
from ember.codegen.elemental import Buf, ElementGenerator, store
from ember.codegen.index import Index
from ember.codegen.loops import for_nest
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext


def emit_update_slice_in_place(b: ir.IRBuilder, dus: Instruction,
                               inputs: dict[Instruction, Buf], out: Buf) -> None:
    operand, update = dus.operands[0], dus.operands[1]
    dims = operand.shape.dimensions
    udims = update.shape.dimensions
    if update.shape.size == 0:
        return

    def body(gen: ElementGenerator) -> None:
        starts = gen.clamped_starts(dus, 2, [n - u for n, u in zip(dims, udims)])

        def element(w: list[ir.Value]) -> None:
            at = Index(b, dims, multi=[b.add(s, i) for s, i in zip(starts, w)])
            store(b, out, at.linear, gen.value(update, Index(b, udims, multi=w)))
            gen.flush()  # type: ignore[attr-defined]

        for_nest(b, udims, element, name="w")

    # a fused update may use fast sin/cos: rerun the window precisely if a lane asks
    # (safe in place: the update never reads the array it is written into, in_place.py)
    with_precise_rerun(b, body, lambda precise: LoopElements(b, inputs, precise))


class _UpdateSliceKind:
    """A dynamic-update-slice into its own operand's buffer: serial (one window)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        emit_update_slice_in_place(ctx.builder, ctx.root, ctx.inputs, ctx.outputs[0])


KIND = _UpdateSliceKind()

__all__ = ["KIND", "emit_update_slice_in_place"]
