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
A multi-output fusion some of whose outputs are such updates written in place (a loop body's
carried arrays, in_place.py `in_place_outputs`) runs output by output: each in-place output
stores its window, each other output its whole array (the loop kernel's code, one root).
No output reads an array another one writes in place, so the order does not matter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.emit.kernels import emit_loop_kernel, with_precise_rerun
from ember.backends.cpu.plan.in_place import in_place_outputs
from ember.codegen.elemental import Buf, ElementGenerator, store
from ember.codegen.index import Index
from ember.codegen.irtypes import I64, i64, mem_type
from ember.codegen.loops import for_nest, for_span, smin
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

Span = tuple[ir.Value, ir.Value] | None


# In a sweep (plan/sweeps.py), rows of a window at least this long start with a scalar
# loop up to the first element whose store is aligned to STORE_ALIGN bytes: a window's
# first element is rarely aligned (u.at[1:-1]), and a vector store that straddles two
# cache lines costs about two (FDTD 200x220 f64, whose update reads its array at the index
# it stores: 1.87 -> 1.76 ms; Jacobi 1-D, whose loads stay unaligned either way: no
# change). Only there: reading the output's address (ptrtoint) costs the kernel's output
# argument LLVM's `writeonly` and `captures(none)`, which a kernel alone keeps.
ALIGN_MIN_ROW = 32
STORE_ALIGN = 64
NO_VECTORIZE = (("llvm.loop.vectorize.enable", False), "llvm.loop.unroll.disable")


def _first_aligned(b: ir.IRBuilder, out: Buf, linear: ir.Value, lo: ir.Value, hi: ir.Value
                   ) -> ir.Value:
    """The first index in [lo, hi] from which out's element `linear` + (index - lo) is
    STORE_ALIGN-aligned (hi when none is): lo + ((-address) mod STORE_ALIGN) / size."""
    size = out.shape.dtype.itemsize
    addr = b.ptrtoint(b.gep(out.ptr, [linear], source_etype=mem_type(out.shape.element_type)),
                      I64)
    skip = b.and_(b.sub(i64(0), addr), i64(STORE_ALIGN - 1))
    if size & (size - 1) or size > STORE_ALIGN:
        return lo  # (no element size divides the alignment: nothing to peel)
    skip = b.lshr(skip, i64(size.bit_length() - 1))
    return smin(b, b.add(lo, skip), hi)


def emit_update_slice_in_place(b: ir.IRBuilder, dus: Instruction,
                               inputs: dict[Instruction, Buf], out: Buf,
                               span: Span = None, peel: bool = False) -> None:
    """`span`: only the window's rows (dimension 0) in [begin, end) (a sweep's block,
    plan/sweeps.py; `end` may pass the window's last row). `peel`: long rows start with
    the scalar loop to an aligned store (ALIGN_MIN_ROW)."""
    operand, update = dus.operands[0], dus.operands[1]
    dims = operand.shape.dimensions
    udims = update.shape.dimensions
    if update.shape.size == 0:
        return
    rows = None if span is None else (span[0], smin(b, span[1], i64(udims[0])))

    def body(gen: ElementGenerator) -> None:
        starts = gen.clamped_starts(dus, 2, [n - u for n, u in zip(dims, udims)])

        def element(w: list[ir.Value]) -> None:
            at = Index(b, dims, multi=[b.add(s, i) for s, i in zip(starts, w)])
            store(b, out, at.linear, gen.value(update, Index(b, udims, multi=w)))
            gen.flush()  # type: ignore[attr-defined]

        if not peel or udims[-1] < ALIGN_MIN_ROW or not out.shape.is_row_major:
            for_nest(b, udims, element, name="w", span_at=0, span=rows)
            return

        def row(w: list[ir.Value]) -> None:  # the last window dimension, peeled
            lo, hi = (rows if rows is not None and len(udims) == 1
                      else (i64(0), i64(udims[-1])))
            at = Index(b, dims, multi=[b.add(s, i) for s, i in zip(starts, [*w, lo])])
            first = _first_aligned(b, out, at.linear, lo, hi)
            for_span(b, lo, first, lambda i: element([*w, i]), name="peel",
                     hints=NO_VECTORIZE)
            for_span(b, first, hi, lambda i: element([*w, i]), name="w")

        if len(udims) == 1:
            row([])
        else:
            for_nest(b, udims[:-1], row, name="w", span_at=0, span=rows)

    # a fused update may use fast sin/cos: rerun the window precisely if a lane asks
    # (safe in place: the update never reads the array it is written into, in_place.py)
    with_precise_rerun(b, body, lambda precise: LoopElements(b, inputs, precise))


class _UpdateSliceKind:
    """A dynamic-update-slice into its own operand's buffer: serial (one window)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        emit_update_slice_in_place(ctx.builder, ctx.root, ctx.inputs, ctx.outputs[0],
                                   ctx.span, ctx.swept)


class _UpdateSlicesKind:
    """A multi-output fusion with outputs written in place: serial, one output at a time."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        inst, b = ctx.inst, ctx.builder
        targets = in_place_outputs(inst)
        for j, (value, out) in enumerate(zip(ctx.root.operands, ctx.outputs)):
            p = targets.get(j)
            if p is not None and ctx.sched.buffers[inst.operands[p]] == ctx.outs[j]:
                emit_update_slice_in_place(b, value, ctx.inputs, out, ctx.span,
                                           ctx.swept)
            elif ctx.swept:  # (sweeps.py takes only kernels whose outputs are all in place)
                raise AssertionError(f"{inst.name}: output {j} of a swept kernel not in place")
            else:
                emit_loop_kernel(b, value, ctx.inputs, out, tail_fold=not ctx.in_loop)


KIND = _UpdateSliceKind()
OUTPUTS = _UpdateSlicesKind()

__all__ = ["KIND", "OUTPUTS", "emit_update_slice_in_place"]
