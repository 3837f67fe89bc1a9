"""Native `while` and `conditional`, emitted: basic blocks of the entry from their plans.

Input: a `Schedule` whose `control` holds the plans loops_native.py made (buffers already
placed by scratch_plan.py), an LLVM builder positioned in the entry function, `emit_call`
(appends one kernel's calls) and `slot_ptr` (a Slot -> its address, with a `redirect`
dict: buffer (`Slot.buffer`) -> pointer variable that holds the buffer's address while a
loop that swaps it runs). Output: the steps appended at the builder's position, the
builder left after them. The block layout of a loop and of a conditional is the one
loops_native.py's docstring draws.

Swapped leaves. A loop that swaps a state buffer S with its body's result T reaches both
through two pointer variables: every kernel, copy and nested loop inside the loop reads
`redirect`, keyed by buffer so that a view of S (other dimensions, another layout) follows
the variable as S itself does. The variables start from the addresses S and T have where
the loop begins, which is the enclosing loop's variable when that loop swaps the same
buffer (an inner loop that ends an outer body: the outer loop's T is the inner loop's S).
On exit the final value is copied to S's starting address when it ended in the other
buffer, and the enclosing loop's variables are put back (a scope per loop, not one flat
map: an inner loop must not drop or replace an outer loop's variable).
Invariants: `redirect` holds, at every point of emission, exactly the buffers swapped by
the loops around that point, each mapped to its innermost loop's variable; it is the same
on return as on entry. Imported only through control_steps.py, by a program with a while
or conditional (issue 4).
A loop body's sweep (plan/sweeps.py) is called through a driver function (`emit_driver`)
that runs its members' kernels block by block.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from ember.backends.cpu.plan.loops_native import CondPlan, Copy, WhilePlan
from ember.codegen.irtypes import I1, I8, I32, I64, PTR, VOID, i64
from ember.codegen.loops import for_span, smax, smin
from ember.hlo.ir import Instruction


def _memcpy(b: ir.IRBuilder, dst: ir.Value, src: ir.Value, nbytes: int) -> None:
    module = b.module
    name = "llvm.memcpy.p0.p0.i64"
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I64, I1]), name=name)
    b.call(fn, [dst, src, i64(nbytes), ir.Constant(I1, 0)])


def _nbytes(slot) -> int:
    return slot.shape.size * slot.shape.dtype.itemsize


def _copies(b: ir.IRBuilder, copies: list[Copy], slot_ptr: Callable) -> None:
    for src, dst in copies:
        n = _nbytes(src)
        if n:
            _memcpy(b, slot_ptr(dst), slot_ptr(src), n)


def emit_steps(b: ir.IRBuilder, sched, steps: list[Instruction],
               emit_call: Callable[[Instruction], None], slot_ptr: Callable) -> None:
    """Append `steps` at `b`'s position: kernel calls through `emit_call`, control
    instructions as basic blocks (the builder ends positioned after them)."""
    for inst in steps:
        plan = sched.control.get(inst)
        if plan is None:
            emit_call(inst)
        elif isinstance(plan, WhilePlan):
            _emit_while(b, sched, inst, plan, emit_call, slot_ptr)
        else:
            _emit_conditional(b, sched, inst, plan, emit_call, slot_ptr)


class _SwapScope:
    """The pointer variables of one loop's swapped buffers, installed in `redirect` for
    the loop's blocks and removed after them (the enclosing scope's ones restored)."""

    def __init__(self, b: ir.IRBuilder, swaps: list[Copy], slot_ptr: Callable) -> None:
        self.redirect: dict = slot_ptr.redirect
        buffers = [s.buffer for pair in swaps for s in pair]
        if len(set(buffers)) != len(buffers):  # loops_native.py's invariant
            raise AssertionError(f"a buffer swapped twice by one loop: {swaps}")
        # where each buffer is on entry (read before this loop installs anything: an
        # enclosing loop's variable when it swaps the buffer too)
        self.start = {s.buffer: slot_ptr(s) for pair in swaps for s in pair}
        self.saved = {key: self.redirect.get(key) for key in self.start}
        for key, ptr in self.start.items():
            with b.goto_entry_block():  # (before the entry's terminator, if it has one)
                var = b.alloca(PTR)
            b.store(ptr, var)
            self.redirect[key] = var

    def close(self) -> None:
        for key, var in self.saved.items():
            if var is None:
                del self.redirect[key]
            else:
                self.redirect[key] = var


def _emit_while(b, sched, inst, plan: WhilePlan, emit_call, slot_ptr) -> None:
    fn = b.function
    cond_bb = fn.append_basic_block(f"{inst.name}.cond")
    body_bb = fn.append_basic_block(f"{inst.name}.body")
    exit_bb = fn.append_basic_block(f"{inst.name}.exit")
    _copies(b, plan.init, slot_ptr)
    scope = _SwapScope(b, plan.swaps, slot_ptr)
    for sweep in plan.sweeps:  # the byte each sweep's driver flips (its direction)
        with b.goto_entry_block():
            flag, var = b.alloca(I8), b.alloca(PTR)
        b.store(ir.Constant(I8, 0), flag)
        b.store(flag, var)
        slot_ptr.redirect[sweep.flag.buffer] = var
    b.branch(cond_bb)
    b.position_at_end(cond_bb)
    emit_steps(b, sched, plan.cond, emit_call, slot_ptr)
    p = b.load(slot_ptr(plan.pred), typ=I8)
    b.cbranch(b.icmp_unsigned("!=", p, ir.Constant(I8, 0)), body_bb, exit_bb)
    b.position_at_end(body_bb)
    emit_steps(b, sched, plan.body, emit_call, slot_ptr)
    _copies(b, plan.stage, slot_ptr)
    _copies(b, plan.update, slot_ptr)
    for state, temp in plan.swaps:  # next iteration: the new value is the current one
        vs, vt = scope.redirect[state.buffer], scope.redirect[temp.buffer]
        now, nxt = b.load(vs, typ=PTR), b.load(vt, typ=PTR)
        b.store(nxt, vs)
        b.store(now, vt)
    b.branch(cond_bb)
    b.position_at_end(exit_bb)
    for state, _ in plan.swaps:
        # the final value may sit in the other buffer (an odd number of iterations)
        cur = b.load(scope.redirect[state.buffer], typ=PTR)
        home = scope.start[state.buffer]
        with b.if_then(b.icmp_unsigned("!=", cur, home)):
            _memcpy(b, home, cur, _nbytes(state))
    scope.close()
    for sweep in plan.sweeps:
        del slot_ptr.redirect[sweep.flag.buffer]


def _emit_conditional(b, sched, inst, plan: CondPlan, emit_call, slot_ptr) -> None:
    fn = b.function
    n = len(plan.branches)
    blocks = [fn.append_basic_block(f"{inst.name}.branch{k}") for k in range(n)]
    merge = fn.append_basic_block(f"{inst.name}.merge")
    sel = plan.selector
    if sel.shape.element_type == "pred":
        # pred: true runs branch 0, false branch 1
        p = b.load(slot_ptr(sel), typ=I8)
        b.cbranch(b.icmp_unsigned("!=", p, ir.Constant(I8, 0)), blocks[0], blocks[1])
    else:
        # s32 index; anything outside [0, n) (negative included) runs the last branch
        k = b.load(slot_ptr(sel), typ=I32)
        sw = b.switch(k, blocks[-1])
        for j in range(n - 1):
            sw.add_case(ir.Constant(I32, j), blocks[j])
    for (steps, copies), bb in zip(plan.branches, blocks):
        b.position_at_end(bb)
        emit_steps(b, sched, steps, emit_call, slot_ptr)
        _copies(b, copies, slot_ptr)
        b.branch(merge)
    b.position_at_end(merge)


def span_calls(b: ir.IRBuilder, members: list[tuple[ir.Function, list]], sweep, arg: dict,
               t0: int, t1: int) -> None:
    """Each member's call on its rows of times [t0, t1) (one forward block, bounds known
    at compile time; members with no row there are not called)."""
    for (kfn, ss), lag, rows in zip(members, sweep.lags, sweep.rows):
        lo, hi = max(t0 - lag, 0), min(t1 - lag, rows)
        if lo < hi:
            b.call(kfn, [arg[s] for s in ss] + [i64(lo), i64(hi)])


def emit_driver(module: ir.Module, name: str, sweep, members: list[tuple[ir.Function, list]],
                fused: tuple[ir.Function, list] | None = None) -> tuple[ir.Function, list]:
    """A sweep's driver (plan/sweeps.py): `void <name>(ptr buffers..., ptr flag)`, its
    buffers the members' slots, each once, then the sweep's flag, and those slots (to call
    it with); `members`: per member in order, its kernel function (buffers, then (begin,
    end) rows of its window) and slots. A run forward (flag 0), then backward:
        for (t0 = 0; t0 < extent; t0 += block)
            for each member K: forward   lo = t0 - lag,                hi = lo + block
                               backward  hi = R + back_lag - t0,       lo = hi - block
                               (clamped to [0, rows)) if lo < hi: K(buffers of K..., lo, hi)
    With `fused` (a sweep fused element by element: update_slice.py `emit_fused_sweep`'s
    function and its slots, a subset of the members'), forward only: the times before the
    fused loop's as one block, the loop, the times after it as one block.
    The emitter calls it where the members' calls would be (consecutive steps)."""
    slots: list = []
    for _, ss in members:
        slots += [s for s in ss if s not in slots]
    slots.append(sweep.flag)
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * len(slots)), name=name)
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")
    for a in fn.args:
        a.add_attribute("noalias")
    arg = dict(zip(slots, fn.args))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    top = max(sweep.rows)

    def run(backward: bool) -> None:
        lags = sweep.back_lags if backward else sweep.lags

        def block(t0: ir.Value) -> None:
            for (kfn, ss), lag, rows in zip(members, lags, sweep.rows):
                if backward:
                    end = b.sub(i64(top + lag), t0)
                    start = b.sub(end, i64(sweep.block))
                else:
                    start = b.sub(t0, i64(lag))
                    end = b.add(start, i64(sweep.block))
                lo, hi = smax(b, start, i64(0)), smin(b, end, i64(rows))
                with b.if_then(b.icmp_signed("<", lo, hi)):
                    b.call(kfn, [arg[s] for s in ss] + [lo, hi])

        extent = sweep.back_extent if backward else sweep.extent
        for_span(b, i64(0), i64(extent), block, name="back" if backward else "t",
                 step=sweep.block)

    if fused is not None:  # blocks of the times before and after the fused loop's
        span_calls(b, members, sweep, arg, 0, sweep.fusion.begin)
        b.call(fused[0], [arg[s] for s in fused[1]])
        span_calls(b, members, sweep, arg, sweep.fusion.end, sweep.extent)
        b.ret_void()
        return fn, slots
    flag = arg[sweep.flag]
    backward = b.trunc(b.load(flag, typ=I8), I1)
    b.store(b.zext(b.not_(backward), I8), flag)
    with b.if_else(backward) as (back, fwd):
        with back:
            run(True)
        with fwd:
            run(False)
    b.ret_void()
    return fn, slots


__all__ = ["emit_driver", "emit_steps"]
