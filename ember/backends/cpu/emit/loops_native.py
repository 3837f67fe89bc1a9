"""Native `while` and `conditional`: their sub-computations scheduled inside the entry point.

Input: a schedule being built (schedule.py) that meets a `while` or `conditional`
instruction whose result buffers are already allocated. Output: a plan in
`sched.control[inst]` naming the kernels of each called computation (scheduled like the
entry: temporaries in the same scratch block, constants in the same table) and the copies
that move values between buffers; `emit_control` turns a plan into basic blocks of the
entry function, so a loop runs with no Python between iterations.

A while loop, with `state` = the while's own result buffers (one per leaf of its tuple):
    state <- init                              (memcpy of every leaf, before the loop)
  cond:
    run cond's kernels (its parameter is `state`); p = load pred
    if !p goto exit
    run body's kernels (its parameter is `state`; results land in temporaries)
    stage <- root leaves that are other state leaves   (a permutation such as (b, a) must
    state <- root leaves                                read every old value before any write)
    goto cond
  exit:
A large leaf whose new value the body computes into a temporary of its own is not copied:
`state` and that temporary trade places (two pointer variables swapped at the end of each
iteration; `slot_ptr.redirect` makes every use in the loop read the variable), and after
the loop one copy moves the final value into `state` when it ended in the temporary.
A conditional: load the selector; a pred runs branch 0 when true and branch 1 when false, an
s32 index outside [0, n) runs the last branch (as the evaluator's `branch_index`); each
branch's kernels read its operand's buffers and its root leaves are copied into the
conditional's result buffers. A `call` inside a called computation is scheduled in place:
its result is its callee's root buffers, no copy.
Invariants: kernels of a body never write the state (they write temporaries), so reading
the state anywhere in the body is safe; the state is written only by the copies at the end
of an iteration. Every called computation is scheduled once per call site: one reused by a
second site is cloned first (fresh instruction names, so kernel symbols stay unique).
Element-sized state (a counter, a scalar) costs one small kernel call and a 4- or 8-byte
memcpy, which LLVM turns into a load and a store.
Imported only by a program that has a while or conditional: schedule.py and scratch_plan.py
import it on meeting one, the emitter goes through control_steps.py (issue 4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import llvmlite.ir as ir

from ember.backends.cpu.errors import CpuCompileError
from ember.codegen.irtypes import I1, I8, I32, I64, PTR, VOID, i64
from ember.hlo.ir import Computation, Instruction, Module, clone_computation
from ember.hlo.shape import Shape

CONTROL_OPCODES = frozenset({"while", "conditional"})
Copy = tuple  # (source Slot, destination Slot)


@dataclass
class WhilePlan:
    state: list  # flattened state Slots
    init: list[Copy]
    cond: list[Instruction]
    pred: object  # Slot of cond's pred[] root
    body: list[Instruction]
    stage: list[Copy]  # old state values a permuting root reads, saved first
    update: list[Copy]
    # (state leaf, body result): the two buffers trade places after each iteration instead
    # of a copy (`_swapped_leaves`); emission reaches both through pointer variables
    swaps: list[Copy] = field(default_factory=list)


@dataclass
class CondPlan:
    selector: object  # Slot: pred[] or s32[]
    branches: list[tuple[list[Instruction], list[Copy]]] = field(default_factory=list)


def _sched_api():  # schedule.py imports this module lazily; import its helpers the same way
    from ember.backends.cpu.plan import schedule
    return schedule


def _alloc_tree(sched, shape: Shape, label: str):
    s = _sched_api()
    if shape.is_tuple:
        return tuple(_alloc_tree(sched, t, f"{label}{{{k}}}")
                     for k, t in enumerate(shape.tuple_shapes))
    return s.alloc_temp(sched, shape, label)


def _own(sched, module: Module, comp: Computation) -> Computation:
    """`comp`, or a fresh clone of it when another call site already scheduled it (its
    instructions would otherwise get two sets of buffers)."""
    seen = sched.scheduled_computations
    if comp in seen:
        comp = clone_computation(comp, {c: c for c in comp.called_computations()})
        module.add_computation(comp)  # unique instruction names
    seen.add(comp)
    return comp


def schedule_computation(sched, module: Module, comp: Computation, params: list
                         ) -> list[Instruction]:
    """Buffers for every value of `comp` given its parameters' buffer trees; returns the
    instructions to run in order (kernels and nested control instructions)."""
    s = _sched_api()
    steps: list[Instruction] = []
    for inst in comp.post_order():
        op = inst.opcode
        if op == "parameter":
            sched.buffers[inst] = params[inst.parameter_number]
        elif op == "constant":
            sched.buffers[inst] = sched.add_constant(inst.value, inst.shape)
        elif op == "tuple":
            sched.buffers[inst] = tuple(sched.buffers[o] for o in inst.operands)
        elif op == "get-tuple-element":
            sched.buffers[inst] = sched.buffers[inst.operand][inst.attrs["index"]]
        elif s.is_view(inst):
            sched.buffers[inst] = s.view_of(sched.buffers[inst.operands[0]], inst.shape)
        elif op == "call":
            callee = _own(sched, module, inst.called_computations[0])
            steps += schedule_computation(sched, module, callee,
                                          [sched.buffers[o] for o in inst.operands])
            sched.buffers[inst] = sched.buffers[callee.root]
        else:
            sched.buffers[inst] = _alloc_tree(sched, inst.shape, inst.name)
            if op in CONTROL_OPCODES:
                plan_control(sched, module, inst)
                steps.append(inst)
                continue
            if inst.shape.size > 0 or inst.shape.is_tuple:
                steps.append(inst)
            # the same work buffers build_schedule gives entry kernels
            if op == "sort" or s.has_dot(inst):
                s.add_work(sched, inst)
    return steps


def plan_control(sched, module: Module, inst: Instruction) -> None:
    """Schedule the computations `inst` calls and record its plan (buffers of `inst`
    itself must already be in `sched.buffers`)."""
    s = _sched_api()
    result = s.flatten_slots(sched.buffers[inst])
    if inst.opcode == "while":
        cond = _own(sched, module, inst.while_condition)
        body = _own(sched, module, inst.while_body)
        tree = sched.buffers[inst]
        init = list(zip(s.flatten_slots(sched.buffers[inst.operands[0]]), result))
        cond_steps = schedule_computation(sched, module, cond, [tree])
        pred = sched.buffers[cond.root]
        body_steps = schedule_computation(sched, module, body, [tree])
        roots = s.flatten_slots(sched.buffers[body.root])
        if isinstance(pred, tuple) or len(roots) != len(result):
            raise CpuCompileError(f"malformed while {inst.name}")
        roots = _update_in_place(sched, body, body_steps, roots, result)
        in_state = {x.buffer for x in result}
        stage, update = [], []
        for src, dst in zip(roots, result):
            if src == dst:
                continue  # the body passes this leaf through unchanged
            if src.buffer in in_state:  # another leaf's old value (or a view of it):
                # save it before any write
                tmp = s.alloc_temp(sched, src.shape, f"{inst.name} stage {len(stage)}")
                stage.append((src, tmp))
                src = tmp
            update.append((src, dst))
        swaps = _swapped_leaves(sched, body_steps, update, stage)
        update = [pair for pair in update if (pair[1], pair[0]) not in swaps]
        sched.control[inst] = WhilePlan(result, init, cond_steps, pred, body_steps,
                                        stage, update, swaps)
        return
    plan = CondPlan(sched.buffers[inst.operands[0]])
    for k, comp in enumerate(inst.branch_computations):
        comp = _own(sched, module, comp)
        steps = schedule_computation(sched, module, comp, [sched.buffers[inst.operands[1 + k]]])
        roots = s.flatten_slots(sched.buffers[comp.root])
        plan.branches.append((steps, [(a, b) for a, b in zip(roots, result) if a != b]))
    sched.control[inst] = plan


SWAP_MIN_BYTES = 4096  # smaller leaves are cheaper to copy than to reach through a pointer


def _writes(sched, steps: list[Instruction]) -> set:
    """Every slot the steps (nested plans included) write."""
    s = _sched_api()
    out: set = set()
    for k in steps:
        out |= set(s.flatten_slots(sched.buffers[k]))
        plan = sched.control.get(k)
        if isinstance(plan, WhilePlan):
            out |= _writes(sched, plan.cond + plan.body) | {d for _, d in plan.stage}
        elif plan is not None:
            out |= _writes(sched, [x for steps_, _ in plan.branches for x in steps_])
    return out


def _swapped_leaves(sched, body: list[Instruction], update: list[Copy], stage: list[Copy]
                    ) -> list[Copy]:
    """Carried leaves whose end-of-iteration copy becomes a pointer swap (issue 7 item 4):
    the body's result leaf T is a temporary the body itself writes (an outer value must
    never be written by the next iteration), is copied into one state leaf S only, and is
    not a staged old value; S and T then alternate as "current" and "next" buffers (the
    buffer assignment keeps T to itself for the whole loop, scratch_plan.py)."""
    made = _writes(sched, body)
    staged = {d for _, d in stage}
    sources = [src for src, _ in update]
    swaps = []
    for src, dst in update:
        nbytes = dst.shape.size * dst.shape.dtype.itemsize
        if (src.kind == "temp" and src in made and src not in staged
                and sources.count(src) == 1 and nbytes >= SWAP_MIN_BYTES):
            swaps.append((dst, src))
    return swaps


def _reads(sched, inst: Instruction) -> set:
    """Every slot `inst` may read (a control instruction: those of its whole plan)."""
    s = _sched_api()
    out = {x for o in inst.operands for x in s.flatten_slots(sched.buffers[o])}
    plan = sched.control.get(inst)
    if plan is not None:
        nested = (plan.cond + plan.body if isinstance(plan, WhilePlan)
                  else [k for steps, _ in plan.branches for k in steps])
        for k in nested:
            out |= _reads(sched, k)
    return out


def _update_in_place(sched, body: Computation, steps: list[Instruction], roots: list,
                     state: list) -> list:
    """Let a body kernel write its carry leaf straight into the state buffer when that is
    safe, so the end-of-iteration copy disappears (issue 7 item 4). Leaf k's producer K
    may do so when: K is an array kernel whose only user is the body's root, which holds
    it once; K reads state[k] only at the index it writes (in_place.py's rule, or not at
    all); no later step of the body reads state[k]; and no root leaf reads the old
    state[k] (a permutation). Returns the root leaves with K's buffers re-pointed."""
    from ember.backends.cpu.plan.in_place import in_place_operands

    s = _sched_api()
    producer = {sched.buffers[k]: k for k in steps if k not in sched.control
                and not k.shape.is_tuple and k.opcode != "custom-call"}
    roots = list(roots)
    for k, (src, dst) in enumerate(zip(roots, state)):
        kern = producer.get(src)
        if (kern is None or src == dst or src.kind != "temp" or roots.count(src) != 1
                or dst.buffer in {r.buffer for r in roots}
                or kern.users != [body.root]
                or body.root.operands.count(kern) != 1):
            continue
        reads_dst = [p for p, o in enumerate(kern.operands)
                     if any(x.buffer == dst.buffer for x in s.flatten_slots(sched.buffers[o]))]
        if any(sched.buffers[kern.operands[p]] != dst for p in reads_dst):
            continue  # state[k] read through a view of another shape
        if reads_dst and not set(reads_dst) <= set(in_place_operands(kern)):
            continue
        if any(dst.buffer in {r.buffer for r in _reads(sched, later)}
               for later in steps[steps.index(kern) + 1:]):
            continue
        sched.buffers[kern] = dst
        roots[k] = dst
    return roots


def kernels_in_order(sched, steps: list[Instruction] | None = None) -> Iterator[Instruction]:
    """Every kernel of the schedule (nested ones included), each once, control
    instructions left out."""
    for inst in sched.kernels if steps is None else steps:
        plan = sched.control.get(inst)
        if plan is None:
            yield inst
        elif isinstance(plan, WhilePlan):
            yield from kernels_in_order(sched, plan.cond)
            yield from kernels_in_order(sched, plan.body)
        else:
            for branch, _ in plan.branches:
                yield from kernels_in_order(sched, branch)


# -- emission --------------------------------------------------------------------------------

def _memcpy(b: ir.IRBuilder, dst: ir.Value, src: ir.Value, nbytes: int) -> None:
    module = b.module
    name = "llvm.memcpy.p0.p0.i64"
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I64, I1]), name=name)
    b.call(fn, [dst, src, i64(nbytes), ir.Constant(I1, 0)])


def _copies(b: ir.IRBuilder, copies: list[Copy], slot_ptr: Callable) -> None:
    for src, dst in copies:
        n = src.shape.size * src.shape.dtype.itemsize
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


def _emit_while(b, sched, inst, plan: WhilePlan, emit_call, slot_ptr) -> None:
    fn = b.function
    cond_bb = fn.append_basic_block(f"{inst.name}.cond")
    body_bb = fn.append_basic_block(f"{inst.name}.body")
    exit_bb = fn.append_basic_block(f"{inst.name}.exit")
    _copies(b, plan.init, slot_ptr)
    # swapped leaves: a pointer variable per buffer, read wherever the loop uses it
    real = {}
    for state, temp in plan.swaps:
        for slot in (state, temp):
            real[slot] = slot_ptr(slot)
            with b.goto_entry_block():
                var = b.alloca(PTR)
            b.store(real[slot], var)
            slot_ptr.redirect[slot] = var
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
        vs, vt = slot_ptr.redirect[state], slot_ptr.redirect[temp]
        now, nxt = b.load(vs, typ=PTR), b.load(vt, typ=PTR)
        b.store(nxt, vs)
        b.store(now, vt)
    b.branch(cond_bb)
    b.position_at_end(exit_bb)
    for state, temp in plan.swaps:
        # the final value may sit in the other buffer (an odd number of iterations)
        cur = b.load(slot_ptr.redirect.pop(state), typ=PTR)
        del slot_ptr.redirect[temp]
        with b.if_then(b.icmp_unsigned("!=", cur, real[state])):
            _memcpy(b, real[state], cur, state.shape.size * state.shape.dtype.itemsize)


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


__all__ = ["CONTROL_OPCODES", "CondPlan", "WhilePlan", "emit_steps", "kernels_in_order", "nest",
           "plan_control", "schedule_computation"]


def nest(shape: Shape, leaves: Iterator):
    """The buffer tree of `shape` from its leaves' slots in flat order."""
    if shape.is_tuple:
        return tuple(nest(t, leaves) for t in shape.tuple_shapes)
    return next(leaves)
