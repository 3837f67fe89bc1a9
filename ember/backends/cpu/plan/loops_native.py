"""Native `while` and `conditional`, planned: their sub-computations scheduled in the entry.

Input: a schedule being built (schedule.py) that meets a `while` or `conditional`
instruction whose result buffers are already allocated. Output: a plan in
`sched.control[inst]` naming the kernels of each called computation (scheduled like the
entry: temporaries in the same scratch block, constants in the same table) and the copies
that move values between buffers. This module only plans: loops_emit.py turns a plan into
basic blocks of the entry function (a loop runs with no Python between iterations), and
nothing here imports it, so scheduling and buffer assignment never load the emission code.

A while loop, with `state` = the while's own result buffers (one per leaf of its tuple):
    state <- init                              (memcpy of every leaf, before the loop)
  cond:
    run cond's kernels (its parameter is `state`); p = load pred
    if !p goto exit
    run body's kernels (its parameter is `state`; results land in temporaries)
    stage <- root leaves that are other state leaves   (a permutation such as (b, a) must
             which a copy below overwrites          read every old value before any write)
    state <- root leaves
    goto cond
  exit:
A large leaf whose new value the body computes into a temporary of its own is not copied:
`state` and that temporary trade places (`swaps`: the emitter reaches both buffers through
pointer variables swapped at the end of each iteration), and after the loop one copy moves
the final value into `state` when it ended in the temporary. A swap names two BUFFERS: every
Slot of either (a view with other dimensions, a Slot with a layout) means the variable
inside the loop. Loops nest over one buffer: when an inner loop is the last step of an outer
body, the outer loop's "next" buffer is the inner loop's state, so both loops swap it; the
inner loop's variables then start from, and its final copy goes to, wherever the outer
loop's variable points (loops_emit.py keeps one scope of variables per loop).
A conditional: load the selector; a pred runs branch 0 when true and branch 1 when false, an
s32 index outside [0, n) runs the last branch (as the evaluator's `branch_index`); each
branch's kernels read its operand's buffers and its root leaves are copied into the
conditional's result buffers. A `call` inside a called computation is scheduled in place:
its result is its callee's root buffers, no copy.
Invariants: a body kernel writes the state only where `_update_in_place` let it (its new
value is that leaf's root value, and no later step reads the old value); every other
kernel writes temporaries, which the copies at the end of an iteration move into the
state. Consecutive in-place window updates of a body run as sweeps (sweeps.py, in
`WhilePlan.sweeps`): block by block, each lagging the ones before it. Every called
computation is scheduled once per call site: one reused by a second site is cloned first
(fresh instruction names, so kernel symbols stay unique).
Element-sized state (a counter, a scalar) costs one small kernel call and a 4- or 8-byte
memcpy, which LLVM turns into a load and a store.
Imported only by a program that has a while or conditional: schedule.py and scratch_plan.py
import it on meeting one, the emitter goes through control_steps.py (issue 4).
A swap's two buffers are distinct from each other and from every other swap of the same
loop (`_swapped_leaves`: its temporary is a body result copied into one state leaf only).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from ember.backends.cpu.errors import CpuCompileError
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
    # runs of body kernels that update arrays in place, run block by block (sweeps.py)
    sweeps: list = field(default_factory=list)


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
            if op == "sort" or s.has_dot(inst) or s.has_lapack(inst):
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
        # (src == dst: the body passes this leaf through unchanged, or wrote it in place)
        pairs = [(src, dst) for src, dst in zip(roots, result) if src != dst]
        swaps = _swapped_leaves(sched, body_steps, pairs, [])
        copies = [pair for pair in pairs if (pair[1], pair[0]) not in swaps]
        written = {dst.buffer for _, dst in copies}
        stage, update = [], []
        for src, dst in copies:
            if src.buffer in in_state and src.buffer in written:
                # another leaf's old value (or a view of it) that a copy overwrites: saved
                # first. (A leaf whose buffer only trades places keeps its contents: the
                # leapfrog's (prev, u) <- (u, new) copies u into prev directly.)
                tmp = s.alloc_temp(sched, src.shape, f"{inst.name} stage {len(stage)}")
                stage.append((src, tmp))
                src = tmp
            update.append((src, dst))
        from ember.backends.cpu.plan.sweeps import plan_sweeps

        sched.control[inst] = WhilePlan(result, init, cond_steps, pred, body_steps,
                                        stage, update, swaps, plan_sweeps(sched, body_steps))
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
    safe, so the end-of-iteration copy disappears (issue 7 item 4). Output j of kernel K
    (its result, or one output of a multi-output fusion) may write leaf k's state when: it
    is root leaf k alone; K reads state[k] only through the operands that output may
    overwrite (in_place.py: `in_place_operands`, or `in_place_outputs` for one output of
    several), or not at all; no later step of the body reads the old state[k]; no root
    leaf is the old state[k] (a permutation); and every reader of the result is a kernel
    of the body or the root (they are then pointed at the state buffer with it: a view,
    a tuple or a nested loop's copies would keep the temporary's slot). Later kernels
    that read the new value (FDTD's hz from the new ex and ey) read it from the state.
    Returns the root leaves with those outputs re-pointed."""
    s = _sched_api()
    kernels = [k for k in steps if k not in sched.control and k.opcode != "custom-call"]
    producer = {leaf: (k, j) for k in kernels
                for j, leaf in enumerate(s.flatten_slots(sched.buffers[k]))}
    kernel_set = set(kernels)
    roots = list(roots)
    for k, (src, dst) in enumerate(zip(roots, state)):
        hit = producer.get(src)
        if (hit is None or src == dst or src.kind != "temp" or roots.count(src) != 1
                or dst.buffer in {r.buffer for r in roots}):
            continue
        kern, j = hit
        readers = _result_readers(kern, j)
        if readers is None or not all(r is body.root or r in kernel_set for r in readers):
            continue
        positions = _overwritable(kern, j)
        old = _readers_of(sched, steps, dst)  # before any of dst's writers is re-pointed
        if _reads_in_place(sched, kern, dst, positions) is None or _read_after(
                steps, kern, old, ()):
            continue
        _repoint(sched, kern, j, dst)
        roots[k] = dst
        _chain_in_place(sched, steps, producer, kern, positions, dst, old)
    return roots


def _result_readers(kern: Instruction, j: int) -> list[Instruction] | None:
    """The instructions that read output j of `kern` (through a get-tuple-element for a
    multi-output kernel); None when something else than get-tuple-element reads a tuple."""
    if not kern.shape.is_tuple:
        return list(kern.users)
    out = []
    for u in kern.users:
        if u.opcode != "get-tuple-element":
            return None
        if u.attrs["index"] == j:
            out += u.users
    return out


def _overwritable(kern: Instruction, j: int) -> list[int]:
    """Operand positions whose buffers output j of `kern` may be written over."""
    from ember.backends.cpu.plan.in_place import in_place_operands, in_place_outputs

    if not kern.shape.is_tuple:
        return in_place_operands(kern)
    p = in_place_outputs(kern).get(j)
    return [] if p is None else [p]


def _repoint(sched, kern: Instruction, j: int, dst) -> None:
    """Output j of `kern` (and each get-tuple-element of it) now lives in `dst`."""
    if not kern.shape.is_tuple:
        sched.buffers[kern] = dst
        return
    tree = list(sched.buffers[kern])
    tree[j] = dst
    sched.buffers[kern] = tuple(tree)
    for u in kern.users:
        if u.attrs["index"] == j:
            sched.buffers[u] = dst


def _reads_in_place(sched, kern: Instruction, dst, positions: list[int]) -> list[int] | None:
    """The operand positions through which `kern` reads the state leaf `dst`, when it reads
    it only through `positions` (those it may overwrite; [] when it does not read it); None
    when it reads it otherwise, or through a view of another shape."""
    s = _sched_api()
    reads = [p for p, o in enumerate(kern.operands)
             if any(x.buffer == dst.buffer for x in s.flatten_slots(sched.buffers[o]))]
    if any(sched.buffers[kern.operands[p]] != dst for p in reads):
        return None
    if reads and not set(reads) <= set(positions):
        return None
    return reads


def _readers_of(sched, steps: list[Instruction], dst) -> set[Instruction]:
    """The steps that read buffer `dst` now."""
    return {k for k in steps if dst.buffer in {r.buffer for r in _reads(sched, k)}}


def _read_after(steps: list[Instruction], kern: Instruction, readers: set[Instruction],
                skip: Collection[Instruction]) -> bool:
    """Whether a step after `kern` (those in `skip` aside) is one of `readers`."""
    return any(later in readers for later in steps[steps.index(kern) + 1:]
               if later not in skip)


def _chain_in_place(sched, steps: list[Instruction], producer: dict, last: Instruction,
                    positions: list[int], dst, old: set[Instruction]) -> None:
    """Kernels before `last` (whose output now writes state leaf `dst` in place, and may
    overwrite its operands at `positions`) that form a chain of in-place updates from `dst`
    write it in place too: `x.at[0].set(r)` then `x.at[1:].set(x[1:] - ...)` is two window
    writes into the state, where the first otherwise copied the whole leaf into a
    temporary. A kernel P joins when `cur` (the chain's first member so far) may overwrite
    P's result in place, P's only user is `cur`, P reads `dst` only at the index it writes,
    and no step after P outside the chain reads the old `dst` (`old`: its readers before
    any re-pointing; the readers of the new value read it from `dst` on purpose)."""
    from ember.backends.cpu.plan.in_place import in_place_operands

    kernels = {k for k, _ in producer.values()}
    chain = [last]
    cur = last
    while True:
        prev = None
        for p in positions:
            o = cur.operands[p]
            if (o in kernels and not o.shape.is_tuple and o.users == [cur]
                    and sched.buffers[o].kind == "temp" and sched.buffers[o] != dst):
                prev = o
                break
        if prev is None:
            return
        positions = in_place_operands(prev)
        if not _reads_in_place(sched, prev, dst, positions) or _read_after(steps, prev, old,
                                                                           chain):
            return
        sched.buffers[prev] = dst
        chain.append(prev)
        cur = prev


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


__all__ = ["CONTROL_OPCODES", "SWAP_MIN_BYTES", "CondPlan", "WhilePlan", "kernels_in_order",
           "nest", "plan_control", "schedule_computation"]


def nest(shape: Shape, leaves: Iterator):
    """The buffer tree of `shape` from its leaves' slots in flat order."""
    if shape.is_tuple:
        return tuple(nest(t, leaves) for t in shape.tuple_shapes)
    return next(leaves)
