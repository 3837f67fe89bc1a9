"""A sweep's members fused element by element: one loop over times (plan/sweep_fusion.py).

Input: the LLVM module, a `Sweep` whose `fusion` is set, and its members' kernel contexts
(their bound buffers and output slots, as their own kernels were emitted with). Output:
`void <name>(ptr buffers...)`, its buffers each member's slots once (in the members'
order), and those slots:
    chain values of times < begin: loaded from the arrays (the driver's first block
                                   wrote them, or left them)
    for t in [begin, end):
        each load Y (offset c): v = Y[c + t]
        for each member K in order, each of its writes X (window start s):
            v = X's update at row t - lag_K, its chain reads the registers of the sources
            they read; X[s + t - lag_K] = v
        each source's chain shifts: its value d times ago <- d - 1 times ago, ..., v
Invariants: the values are the ones each member's own kernel computes (the same element
generators, the same operations in the same order: bit for bit); no store reaches an
element a later load of the loop reads as an old value (sweep_fusion.py); members hold no
sine/cosine/tan, so no element asks for a precise rerun.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.plan.sweep_fusion import Load, Write
from ember.codegen.elemental import Buf, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import PTR, VOID, i64
from ember.codegen.loops import for_span
from ember.hlo.ir import Instruction


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
    for a in fn.args:
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


__all__ = ["emit_fused_sweep"]
