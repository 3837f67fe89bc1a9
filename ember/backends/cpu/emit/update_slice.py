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
A sweep fused element by element (plan/sweep_fusion.py) is one kernel of such updates,
`void <name>(ptr buffers...)` (`emit_fused_sweep`), its buffers each member's slots once:
    chain values of times < begin: loaded from the arrays (the driver's first block
                                   wrote them, or left them)
    for t in [begin, end):
        each load Y (offset c): v = Y[c + t]
        for each member K in order, each of its writes X (window start s):
            v = X's update at row t - lag_K, its chain reads the registers of the sources
            they read; X[s + t - lag_K] = v
        each source's chain shifts: its value d times ago <- d - 1 times ago, ..., v
Its values are the ones each member's own kernel computes (the same element generators,
the same operations in the same order: bit for bit); no store reaches an element a later
load of the loop reads as an old value (sweep_fusion.py); members hold no sine/cosine/tan,
so no element asks for a precise rerun.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.emit.kernels import emit_loop_kernel, with_precise_rerun
from ember.backends.cpu.plan.in_place import in_place_outputs
from ember.backends.cpu.plan.sweep_fusion import Load, Write
from ember.codegen.elemental import Buf, ElementGenerator, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import I64, PTR, VOID, i64, mem_type
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


class _ChainElements(LoopElements):
    """Element values of one member, its chain reads answered from registers."""

    def __init__(self, b: ir.IRBuilder, inputs: dict[Instruction, Buf],
                 chained: dict[Instruction, ir.Value]) -> None:
        super().__init__(b, inputs, False)
        self.chained = chained

    def provides(self, inst: Instruction) -> bool:
        return inst in self.chained

    def value(self, inst: Instruction, idx: Index) -> ir.Value:
        v = self.chained.get(inst)
        return v if v is not None else super().value(inst, idx)


def emit_fused_sweep(module: ir.Module, name: str, sweep, contexts: list) -> tuple[
        ir.Function, list]:
    """The fused loop of `sweep` (the module docstring); `contexts`: the members'
    KernelContexts, in order."""
    fusion = sweep.fusion
    slots: list = []
    for ctx in contexts:
        slots += [s for s in ctx.arg_slots if s not in slots]
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * len(slots)), name=name)
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")
    shared = {s.buffer for s in slots if sum(t.buffer == s.buffer for t in slots) > 1}
    for a, s in zip(fn.args, slots):
        if s.buffer not in shared:  # (two members' views of one buffer may alias)
            a.add_attribute("noalias")
    arg = dict(zip(slots, fn.args))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    inputs = [{i: Buf(arg[s], i.shape) for i, s in ctx.bound.items()} for ctx in contexts]
    sources, lags = fusion.sources, sweep.lags
    writes = [(x, w) for x, w in enumerate(sources) if isinstance(w, Write)]
    bufs = [Buf(arg[contexts[w.member].outs[w.output]], w.update.shape) if isinstance(w, Write)
            else inputs[w.member][w.param] for w in sources]
    # the row a source has at time t: a write's row of its array, a load's
    first = [w.start - lags[w.member] if isinstance(w, Write) else w.offset for w in sources]
    # chain[x][k]: source x's value of k + 1 times ago, starting with rows the first block
    # wrote or left (row first + begin - k - 1)
    init = [[load(b, bufs[x], i64(first[x] + fusion.begin - k - 1))
             for k in range(fusion.depth[x])] for x in range(len(sources))]

    def body(t: ir.Value) -> None:
        chain = [[b.phi(v.type) for v in vs] for vs in init]
        for phis, vs in zip(chain, init):
            for phi, v in zip(phis, vs):
                phi.add_incoming(v, entry)
        now: dict[int, ir.Value] = {  # each source's value at this time, loads first
            x: load(b, bufs[x], b.add(t, i64(first[x])))
            for x, w in enumerate(sources) if isinstance(w, Load)}
        for j in range(len(contexts)):
            chained = {r.slice: now[r.source] if r.distance == 0
                       else chain[r.source][r.distance - 1]
                       for r in fusion.reads if r.member == j}
            gen = _ChainElements(b, inputs[j], chained)
            row = b.sub(t, i64(lags[j]))
            for x, w in writes:
                if w.member != j:
                    continue
                update = w.update.operands[1]
                now[x] = gen.value(update, Index(b, update.shape.dimensions, multi=[row]))
                store(b, bufs[x], b.add(row, i64(w.start)), now[x])
            if gen.flags:  # (sweep_fusion.py takes no member that raises them)
                raise AssertionError(f"{name}: a fused member asks for a precise rerun")
        latch = b.block
        for x, phis in enumerate(chain):
            for k, phi in enumerate(phis):
                phi.add_incoming(now[x] if k == 0 else phis[k - 1], latch)

    entry = b.block
    for_span(b, i64(fusion.begin), i64(fusion.end), body, name="time")
    b.ret_void()
    return fn, slots


KIND = _UpdateSliceKind()
OUTPUTS = _UpdateSlicesKind()

__all__ = ["KIND", "OUTPUTS", "emit_fused_sweep", "emit_update_slice_in_place"]
