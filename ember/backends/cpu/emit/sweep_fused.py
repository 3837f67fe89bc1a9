"""A sweep's members fused element by element: one loop over times (plan/sweep_fusion.py).

Input: the LLVM module, a `Sweep` whose `fusion` is set, and its members' kernel contexts
(their bound buffers and output slots, as their own kernels were emitted with). Output:
`void <name>(ptr buffers...)`, its buffers each member's slots once (in the members'
order), and those slots:
    chain values of times < begin: loaded from the arrays (the driver's first block
                                   wrote them)
    for t in [begin, end):
        for each member K in order: v_K = K's update at row t - lag_K, its chain reads
                                    the registers of its writers; X_K[s_K + t - lag_K] = v_K
        each writer's chain shifts: its value d times ago <- d - 1 times ago, ..., v_K
Invariants: the values are the ones each member's own kernel computes (the same element
generators, the same operations in the same order: bit for bit); no store reaches an
element a later load of the loop reads as an old value (sweep_fusion.py); members hold no
sine/cosine/tan, so no element asks for a precise rerun.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
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
    outs = [Buf(arg[ctx.outs[0]], ctx.outs[0].shape) for ctx in contexts]
    roots, starts = [ctx.root for ctx in contexts], fusion.starts
    # chain[i][k]: member i's value of k + 1 times ago, starting with rows the first block
    # wrote (row s_i + (begin - k - 1 - lag_i) of its array)
    init = [[load(b, outs[i], i64(starts[i] + fusion.begin - k - 1 - sweep.lags[i]))
             for k in range(fusion.depth[i])] for i in range(len(contexts))]

    def body(t: ir.Value) -> None:
        chain = [[b.phi(v.type) for v in vs] for vs in init]
        for phis, vs in zip(chain, init):
            for phi, v in zip(phis, vs):
                phi.add_incoming(v, entry)
        now: list[ir.Value | None] = [None] * len(contexts)
        for j, root in enumerate(roots):
            chained = {r.slice: now[r.writer] if r.distance == 0
                       else chain[r.writer][r.distance - 1]
                       for r in fusion.reads if r.member == j}
            gen = _ChainElements(b, inputs[j], chained)
            row = b.sub(t, i64(sweep.lags[j]))
            update = root.operands[1]
            now[j] = gen.value(update, Index(b, update.shape.dimensions, multi=[row]))
            if gen.flags:  # (sweep_fusion.py takes no member that raises them)
                raise AssertionError(f"{name}: a fused member asks for a precise rerun")
            store(b, outs[j], b.add(row, i64(starts[j])), now[j])
        latch = b.block
        for j, phis in enumerate(chain):
            for k, phi in enumerate(phis):
                phi.add_incoming(now[j] if k == 0 else phis[k - 1], latch)

    entry = b.block
    for_span(b, i64(fusion.begin), i64(fusion.end), body, name="time")
    b.ret_void()
    return fn, slots


__all__ = ["emit_fused_sweep"]
