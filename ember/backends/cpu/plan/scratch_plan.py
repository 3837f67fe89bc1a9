"""Place a schedule's temporaries in the scratch block: liveness, in-place chains, packing.

Input: a `Schedule` (schedule.py) whose temporary Slots still hold logical numbers
(`Slot("temp", k, shape)`, k indexing `sched.temp_labels`). Output: the same schedule with
every temporary Slot rewritten to `Slot("temp", byte offset, shape)`, `sched.scratch_bytes`
set to the block's size and `sched.assignment` holding the `BufferAssignment`
(buffer_assignment.py) for printing and memory_analysis.

Liveness. The schedule is walked in execution order, nested loop bodies and branches
included, giving each step a position (a kernel; a while's initial copies, its predicate
test and its end-of-iteration copies; a conditional's selector and each branch's result
copies; the final copies into the outputs). A temporary lives from the first position that
touches it to the last. Loops need one more rule: a value defined before a loop starts and
read inside it is read again by every later iteration, so it stays live to the loop's
end (`_extend_over_loops`); the loop state itself is written by the initial copies and so
falls under the same rule. Values defined and last read inside one iteration keep their
plain ranges: the next iteration writes them again before reading them. Branches are
laid out one after the other; only one runs, so sharing between them is safe.

In place. A kernel's result may take an operand's memory when in_place.py allows it, the
operand dies in that kernel, and both have the same Shape: the two then become the same
Slot, which the emitter passes as ONE `noalias` pointer (two different Slots on the same
memory would break that promise).
Invariant: two temporaries read or written by one step never overlap in memory unless
they are the same Slot.
"""

from __future__ import annotations

from ember.backends.cpu.plan.buffer_assignment import LogicalBuffer, assign_buffers
from ember.backends.cpu.plan.in_place import in_place_operands


def _is_while(plan) -> bool:
    """A WhilePlan, else a CondPlan. Asked only of a plan that exists, so a program
    without loops or branches never imports loops_native.py (issue 4)."""
    from ember.backends.cpu.plan.loops_native import WhilePlan
    return isinstance(plan, WhilePlan)


def _leaves(tree) -> list:
    if isinstance(tree, tuple):
        return [s for t in tree for s in _leaves(t)]
    return [tree]


class _Liveness:
    """Positions at which each logical temporary is touched, and the loops' extents."""

    def __init__(self, sched) -> None:
        self.sched = sched
        self.clock = 0
        self.uses: dict[int, list[int]] = {}
        self.param_uses: dict[int, list[int]] = {}
        self.position: dict = {}  # entry-level kernel -> its position
        self.loop_start: dict = {}  # while -> the position of its initial copies
        self.loops: list[tuple[int, int]] = []
        self.reusable: dict[int, list[int]] = {}  # result temp -> operand temps it may take
        self.defined_at: dict[int, int] = {}  # result temp -> the kernel writing it

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def touch(self, slots, at: int) -> None:
        for s in slots:
            if s.kind == "temp":
                self.uses.setdefault(s.index, []).append(at)
            elif s.kind == "param":
                self.param_uses.setdefault(s.index, []).append(at)

    def walk(self, steps) -> None:
        bufs = self.sched.buffers
        for inst in steps:
            plan = self.sched.control.get(inst)
            if plan is not None and _is_while(plan):
                start = self.tick()
                self.loop_start[inst] = start
                self.touch([x for pair in plan.init for x in pair], start)
                self.walk(plan.cond)
                self.touch([plan.pred], self.tick())
                self.walk(plan.body)
                end = self.tick()
                self.touch([x for pair in plan.stage + plan.update + plan.swaps
                            for x in pair], end)
                # a swapped leaf's temporary is the state's twin: its own for the whole loop
                self.touch([t for _, t in plan.swaps], start)
                self.loops.append((start, end))
            elif plan is not None:  # a CondPlan
                at = self.tick()
                self.touch([plan.selector, *_leaves(bufs[inst])], at)
                for branch, copies in plan.branches:
                    self.walk(branch)
                    self.touch([x for pair in copies for x in pair], self.tick())
            else:
                at = self.tick()
                self.position[inst] = at
                outs = _leaves(bufs[inst])
                ins = [s for o in inst.operands for s in _leaves(bufs[o])]
                self.touch(outs + ins + self.sched.work.get(inst, []), at)
                self._note_in_place(inst, outs, at)

    def _note_in_place(self, inst, outs: list, at: int) -> None:
        if len(outs) != 1 or outs[0].kind != "temp":
            return
        out = outs[0]
        reads = [s for o in inst.operands for s in _leaves(self.sched.buffers[o])]
        views: dict | None = None  # buffer -> the Slots `inst` reads it through
        for k in in_place_operands(inst):
            a = self.sched.buffers[inst.operands[k]]
            if not isinstance(a, tuple) and a.kind == "temp" and a.shape == out.shape:
                if views is None:  # (once per kernel: a test per operand was quadratic)
                    views = {}
                    for r in reads:
                        views.setdefault(r.buffer, set()).add(r)
                # the kernel must not also read a's memory through a view of another
                # shape: writing it in place would give one kernel two different pointers
                # to the same bytes
                if not views[a.buffer] - {a}:
                    self.reusable.setdefault(out.index, []).append(a.index)
        self.defined_at.setdefault(out.index, at)

    def ranges(self) -> dict[int, tuple[int, int]]:
        spans = {k: (min(p), max(p)) for k, p in self.uses.items()}
        return _extend_over_loops(spans, self.uses, self.loops)


def _extend_over_loops(spans: dict[int, tuple[int, int]], uses: dict[int, list[int]],
                       loops: list[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """A value live on entry to a loop [s, e] and touched inside it stays live to e."""
    out = dict(spans)
    for s, e in loops:
        for k, (lo, hi) in out.items():
            if lo <= s and hi < e and any(s < p <= e for p in uses[k]):
                out[k] = (lo, e)
    return out


def _liveness(sched) -> _Liveness:
    live = _Liveness(sched)
    live.walk(sched.kernels)
    live.touch([s for _, s in sched.copy_outs], live.tick())
    return live


def _start_loops_in_their_init(sched, live: _Liveness) -> bool:
    """A temporary that only initializes a loop's state (its last use is the loop's
    initial copy) becomes the state buffer itself: its producer writes straight into the
    state and the copy goes (a scan's zero-filled stacked outputs, a carry computed just
    before the loop, a loop's final state that only starts the next loop). Returns whether
    anything changed."""
    rename: dict = {}
    shapes: dict = {}
    for slot in _all_slots(sched):  # a temporary seen through views of other shapes
        shapes.setdefault(slot.buffer, set()).add(slot.shape)
    for inst, start in live.loop_start.items():
        plan = sched.control[inst]
        for src, dst in plan.init:
            if (src.kind == "temp" and src != dst and src.shape == dst.shape
                    and len(shapes[src.buffer]) == 1
                    and src not in rename and max(live.uses[src.index]) == start
                    and dst not in rename.values()):
                rename[src] = dst
    if not rename:
        return False

    def final(s):
        # Chains resolve to their last loop: a loop whose state only starts the next loop
        # (a scan's stacked residuals read by the backward scan) hands it the same memory.
        while s in rename:
            s = rename[s]
        return s

    _remap(sched, final)
    for plan in sched.control.values():
        if _is_while(plan):
            plan.init = [(a, b) for a, b in plan.init if a != b]
    return True


def place_temporaries(sched, donated: tuple[int, ...] = ()) -> None:
    live = _liveness(sched)
    if _start_loops_in_their_init(sched, live):
        live = _liveness(sched)
    if donated:
        _alias_donated(sched, live, donated)
    spans = live.ranges()
    shapes = _temp_shapes(sched)
    buffers = []
    for k, label in enumerate(sched.temp_labels):
        if k not in shapes or k not in spans:
            # allocated, then replaced (a loop body kernel writing the state, an update in
            # place): nothing reads or writes it, so it needs no memory
            continue
        lo, hi = spans[k]
        shape = shapes[k]
        reusable = tuple(str(a) for a in live.reusable.get(k, ())
                         if live.defined_at.get(k) == lo)
        buffers.append(LogicalBuffer(str(k), shape.size * shape.dtype.itemsize, lo, hi,
                                     reusable, label))
    assignment = assign_buffers(buffers)
    sched.assignment = assignment
    sched.scratch_bytes = assignment.total_bytes
    offsets = {int(name): off for name, off in assignment.offsets.items()}
    _remap(sched, lambda s: type(s)("temp", offsets.get(s.index, 0), s.shape)
           if s.kind == "temp" else s)


def _alias_donated(sched, live: _Liveness, donated: tuple[int, ...]) -> None:
    """Write outputs straight into donated parameters (`sched.aliases`: (output, param)).

    Output `pos` of kernel K may take parameter p's memory when both have the same Shape,
    K is a kernel of the entry (not inside a loop), nothing reads p after K, and K itself
    either does not read p or reads it only at the index it writes (in_place.py). The
    output's Slot then becomes p's Slot, so K gets one pointer for both."""
    copied = {pos for pos, _ in sched.copy_outs}
    writer: dict[int, object] = {}
    for inst in sched.kernels:
        if inst not in sched.control:
            for s in _leaves(sched.buffers[inst]):
                if s.kind == "out":
                    writer[s.index] = inst
    taken: set[int] = set()
    rename: dict = {}
    for p in sorted(set(donated)):
        shape = sched.params[p]
        uses = live.param_uses.get(p, [])
        for pos, out_shape in enumerate(sched.outputs):
            kern = writer.get(pos)
            if pos in taken or pos in copied or kern is None or out_shape != shape:
                continue
            at = live.position[kern]
            if any(u > at for u in uses):
                continue
            reads = [k for k, o in enumerate(kern.operands)
                     if any(s.kind == "param" and s.index == p
                            for s in _leaves(sched.buffers[o]))]
            outs = _leaves(sched.buffers[kern])
            mine = [s for s in outs if s.kind == "out" and s.index == pos]
            if reads and (len(outs) != 1 or not set(reads) <= set(in_place_operands(kern))
                          or any(sched.buffers[kern.operands[k]] != type(outs[0])(
                              "param", p, mine[0].shape) for k in reads)):
                continue  # (or p read through a view of other dimensions: two pointers)
            taken.add(pos)
            rename[pos] = p
            sched.aliases.append((pos, p))
            break
    if rename:  # every Slot of those outputs (views included) now names the parameter
        _remap(sched, lambda s: type(s)("param", rename[s.index], s.shape)
               if s.kind == "out" and s.index in rename else s)


def _all_slots(sched):
    for tree in sched.buffers.values():
        yield from _leaves(tree)
    for slots in sched.work.values():
        yield from slots
    for plan in sched.control.values():
        if _is_while(plan):
            yield from plan.state
            yield plan.pred
            for pair in plan.init + plan.stage + plan.update + plan.swaps:
                yield from pair
        else:
            yield plan.selector
            for _, copies in plan.branches:
                for pair in copies:
                    yield from pair


def _temp_shapes(sched) -> dict:
    return {s.index: s.shape for s in _all_slots(sched) if s.kind == "temp"}


def _remap(sched, f) -> None:
    def tree(t):
        return tuple(tree(x) for x in t) if isinstance(t, tuple) else f(t)

    def pairs(ps):
        return [(f(a), f(b)) for a, b in ps]

    sched.buffers = {k: tree(v) for k, v in sched.buffers.items()}
    sched.work = {k: [f(s) for s in v] for k, v in sched.work.items()}
    sched.copy_outs = [(pos, f(s)) for pos, s in sched.copy_outs]  # (never aliased ones)
    for plan in sched.control.values():
        if _is_while(plan):
            plan.state = [f(s) for s in plan.state]
            plan.pred = f(plan.pred)
            plan.init, plan.stage, plan.update = (pairs(plan.init), pairs(plan.stage),
                                                  pairs(plan.update))
            plan.swaps = pairs(plan.swaps)
        else:
            plan.selector = f(plan.selector)
            plan.branches = [(steps, pairs(c)) for steps, c in plan.branches]


def _nbytes(shape) -> int:
    return shape.size * shape.dtype.itemsize


def describe(sched) -> str:
    """The printed buffer assignment: parameters, outputs (and what writes each), then the
    scratch block's allocations with their live ranges and in-place chains."""
    writer: dict = {}
    for inst, tree in sched.buffers.items():
        for k, s in enumerate(_leaves(tree)):
            if s.kind == "out" and inst.opcode not in ("tuple", "get-tuple-element"):
                writer.setdefault(s.index, inst.name + (f"{{{k}}}" if isinstance(tree, tuple)
                                                        else ""))
    copied = {pos: s for pos, s in sched.copy_outs}
    params_of = dict(sched.aliases)
    aliased = {}
    for inst, tree in sched.buffers.items():
        if inst.opcode in ("tuple", "get-tuple-element", "parameter"):
            continue
        for s in _leaves(tree):
            for pos, p in sched.aliases:
                if s.kind == "param" and s.index == p:
                    aliased.setdefault(pos, inst.name)
    lines = [f"parameters: {len(sched.params)}, "
             f"{sum(_nbytes(p) for p in sched.params)} bytes"]
    lines += [f"  parameter {k}: {p}, {_nbytes(p)} bytes"
              for k, p in enumerate(sched.params)]
    lines.append(f"outputs: {len(sched.outputs)}, "
                 f"{sum(_nbytes(o) for o in sched.outputs)} bytes")
    for k, o in enumerate(sched.outputs):
        src = copied.get(k)
        how = (f"copied from {src.kind} {src.index}" if src is not None
               else f"written by {writer.get(k, '?')}")
        if k in aliased:
            how = f"written by {aliased[k]} into donated parameter {params_of[k]}"
        lines.append(f"  output {k}: {o}, {_nbytes(o)} bytes, {how}")
    if sched.assignment is not None:
        lines.append(sched.assignment.to_text())
    return "\n".join(lines)


__all__ = ["describe", "place_temporaries"]
