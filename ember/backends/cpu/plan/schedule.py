"""Schedule and buffer assignment for the entry computation.

Input: an optimized, fused Module. Output: a `Schedule`: the kernels to run in order (every
entry instruction that computes something: fusions and lone ops), and for every entry
value its buffer, a slot in the executable's pointer table:
  [parameters..., outputs..., scratch base, constants...]
Temporaries live at 64-byte aligned offsets in one scratch block allocated per call: while
scheduling, a temporary's Slot holds a logical number; `build_schedule` ends by running buffer
assignment (scratch_plan.py: liveness over the scheduled kernels, in-place chains, packing),
which rewrites every temporary Slot to its byte offset, so temporaries whose lifetimes do
not overlap share memory.
A sort kernel also gets work buffers (`work`: scratch of its operands' sizes, used only
while it runs), and so does a dot or kOutput fusion (packed operands, the product under an
epilogue of another element size; dot_plan.py). Invariants: an output slot is written by
exactly one kernel; a row-major reshape is a view of its operand's buffer (`is_view`), not a
kernel; a root leaf that is not a kernel result written straight into its
output (a parameter, a constant, a repeated leaf) is copied into the output after the
native call (`copy_outs`); tuples and get-tuple-element are views of buffers, not kernels;
size-0 kernels are dropped; an opt-barrier is no kernel either (its buffers are its
operand's), it only orders what reads it after what it reads. A while or conditional is
one step of `kernels` whose plan (`control`, loops_native.py) holds the kernels of the
computations it runs, scheduled in the same buffers, table and scratch block.
"""

from __future__ import annotations

import numpy as np

from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.hlo.ir import Instruction, Module
from ember.hlo.shape import Shape
from ember.records import FrozenRecord, Record

# (an opt-barrier passes its operand tuple through: it only orders the schedule)
NO_KERNEL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "opt-barrier"})


class Slot(FrozenRecord):
    """One buffer seen with one shape: kind "param" | "out" | "temp" | "const"; index: param
    number, output position, byte offset in scratch (a logical number until placed),
    constant number. (A record, not a dataclass, for import time: ember/records.py.)"""

    FIELDS = ("kind", "index", "shape")
    __match_args__ = FIELDS

    kind: str
    index: int
    shape: Shape

    def __init__(self, kind: str, index: int, shape: Shape) -> None:
        d = self.__dict__  # (_freeze's effect, written out: slots are made by the thousand)
        d["kind"] = kind
        d["index"] = index
        d["shape"] = shape

    @property
    def buffer(self) -> tuple[str, int]:
        """Which memory this is: views of one buffer (`view_of`) differ only in shape."""
        return self.kind, self.index


BufferTree = Slot | tuple  # nested tuples of Slots

class Schedule(Record):
    """What the entry point runs and where every value lives (module docstring). A mutable
    record (equality and repr over its fields, unhashable: ember/records.py).

    kernels: the steps in order; buffers: instruction -> its BufferTree; params, outputs
    (flattened root leaves): shapes; constants: the table's arrays; copy_outs: (output pos,
    source Slot) copied after the native call; work: kernel -> scratch it needs while it
    runs (a sort's merge buffers, one per operand); control: while/conditional -> its plan
    (loops_native.py: nested kernels run inside the entry); scheduled_computations: called
    ones, scheduled once; temp_labels: logical temporary -> what it holds; inlined:
    broadcasts of one element that their (lone, elementwise) users generate themselves (no
    kernel, no buffer: their entry in `buffers` is the element's slot); aliases: (output,
    donated param); assignment: the buffer_assignment.BufferAssignment, once placed."""

    FIELDS = ("kernels", "buffers", "params", "outputs", "constants", "scratch_bytes",
              "copy_outs", "work", "control", "scheduled_computations", "temp_labels",
              "inlined", "aliases", "assignment")

    def __init__(self, kernels: list[Instruction] | None = None,
                 buffers: dict[Instruction, BufferTree] | None = None,
                 params: list[Shape] | None = None, outputs: list[Shape] | None = None,
                 constants: list[np.ndarray] | None = None, scratch_bytes: int = 0,
                 copy_outs: list[tuple[int, Slot]] | None = None,
                 work: dict[Instruction, list[Slot]] | None = None,
                 control: dict[Instruction, object] | None = None,
                 scheduled_computations: set | None = None,
                 temp_labels: list[str] | None = None, inlined: set | None = None,
                 aliases: list[tuple[int, int]] | None = None,
                 assignment: object = None) -> None:
        self.kernels = [] if kernels is None else kernels
        self.buffers = {} if buffers is None else buffers
        self.params = [] if params is None else params
        self.outputs = [] if outputs is None else outputs
        self.constants = [] if constants is None else constants
        self.scratch_bytes = scratch_bytes
        self.copy_outs = [] if copy_outs is None else copy_outs
        self.work = {} if work is None else work
        self.control = {} if control is None else control
        self.scheduled_computations = (set() if scheduled_computations is None
                                       else scheduled_computations)
        self.temp_labels = [] if temp_labels is None else temp_labels
        self.inlined = set() if inlined is None else inlined
        self.aliases = [] if aliases is None else aliases
        self.assignment = assignment

    def slot_count(self) -> int:
        return len(self.params) + len(self.outputs) + 1 + len(self.constants)

    def table_index(self, slot: Slot) -> int:
        """Position of a (non-temp) slot in the pointer table."""
        if slot.kind == "param":
            return slot.index
        if slot.kind == "out":
            return len(self.params) + slot.index
        if slot.kind == "const":
            return len(self.params) + len(self.outputs) + 1 + slot.index
        raise ValueError("temporaries live in the scratch block")

    @property
    def scratch_index(self) -> int:
        return len(self.params) + len(self.outputs)

    def add_constant(self, value: np.ndarray, shape: Shape) -> Slot:
        self.constants.append(np.ascontiguousarray(value))
        return Slot("const", len(self.constants) - 1, shape)


def _leaf_shapes(shape: Shape) -> list[Shape]:
    if shape.is_tuple:
        return [s for t in shape.tuple_shapes for s in _leaf_shapes(t)]
    return [shape]


def flatten_slots(tree: BufferTree) -> list[Slot]:
    if isinstance(tree, Slot):
        return [tree]
    return [s for t in tree for s in flatten_slots(t)]


def _root_leaf_owners(root: Instruction) -> dict[int, tuple[Instruction, tuple[int, ...]]]:
    """Output position -> (kernel instruction, index path in its tuple result) for root
    leaves that are kernel results reachable through tuple instructions, or one
    get-tuple-element of a flat tuple-shaped kernel (a while loop's result)."""
    owners: dict[int, tuple[Instruction, tuple[int, ...]]] = {}
    pos = 0

    def walk(inst: Instruction) -> None:
        nonlocal pos
        if is_view(inst):  # the reshaped kernel result is the output, seen another way
            walk(inst.operands[0])
            return
        if inst.opcode == "tuple":
            for o in inst.operands:
                walk(o)
            return
        src = inst.operands[0] if inst.opcode == "get-tuple-element" else None
        if (src is not None and src.opcode not in NO_KERNEL and not inst.shape.is_tuple
                and not any(t.is_tuple for t in src.shape.tuple_shapes)):
            # a leaf of a loop's (or multi-output kernel's) flat tuple result: that
            # kernel writes the output itself, no copy afterwards
            owners[pos] = (src, (inst.attrs["index"],))
            pos += 1
            return
        n = len(_leaf_shapes(inst.shape))
        if inst.opcode not in NO_KERNEL:
            if inst.shape.is_tuple:
                for k in range(n):
                    owners[pos + k] = (inst, (k,))
            else:
                owners[pos] = (inst, ())
        pos += n

    walk(root)
    return owners


def is_view(inst: Instruction) -> bool:
    """A reshape that keeps every element at its place in memory (row-major in and out,
    same element type) is a view of its operand's buffer, as XLA's bitcast: no kernel."""
    if inst.opcode != "reshape":
        return False
    src = inst.operands[0]
    return (not src.shape.is_tuple and src.shape.element_type == inst.shape.element_type
            and src.shape.is_row_major and inst.shape.is_row_major)


def view_of(tree: BufferTree, shape: Shape) -> Slot:
    """The same memory as `tree` (one array Slot) seen with `shape`. Liveness keys on
    (kind, index), so a view keeps its base alive; buffer assignment never writes one
    buffer through two differently shaped Slots in one kernel (scratch_plan.py)."""
    assert isinstance(tree, Slot)
    return Slot(tree.kind, tree.index, shape)


def _root_leaf_ids(root: Instruction) -> set[int]:
    if root.opcode == "tuple":
        return {i for o in root.operands for i in _root_leaf_ids(o)}
    return {id(root)}


def alloc_temp(sched: Schedule, shape: Shape, label: str) -> Slot:
    """A new temporary (logical number until scratch_plan.py places it)."""
    sched.temp_labels.append(label)
    return Slot("temp", len(sched.temp_labels) - 1, shape)


def _leaf_label(inst: Instruction, k: int) -> str:
    return f"{inst.name}{{{k}}}" if inst.shape.is_tuple else inst.name


def _is_inline_broadcast(inst: Instruction, root_leaves: set[int]) -> bool:
    """A broadcast of a single element needs no memory when every user is an unfused
    elementwise op (they read the element instead): with fusion disabled, `y * 1.5`
    then costs no temporary array for the 1.5."""
    return (inst.opcode == "broadcast" and inst.operands[0].shape.size == 1
            and not inst.operands[0].shape.is_tuple and id(inst) not in root_leaves
            and bool(inst.users)
            and all(u.opcode not in ("fusion", "custom-call") and u.is_elementwise()
                    and not u.shape.is_tuple for u in inst.users))


def build_schedule(module: Module, donated: tuple[int, ...] = ()) -> Schedule:
    """`donated`: parameter numbers whose memory outputs may take (scratch_plan.py)."""
    entry = module.entry
    sched = Schedule()
    for p in entry.parameters:
        if p.shape.is_tuple:
            raise UnsupportedOnCpu(["parameter"], "tuple-shaped parameters")
        sched.params.append(p.shape)
    sched.outputs = _leaf_shapes(entry.root.shape)
    owners = _root_leaf_owners(entry.root)
    claimed: dict[tuple[int, tuple[int, ...]], int] = {}
    for pos, (inst, path) in owners.items():
        claimed.setdefault((id(inst), path), pos)
    root_leaves = _root_leaf_ids(entry.root)
    for inst in entry.post_order():
        op = inst.opcode
        if op == "parameter":
            sched.buffers[inst] = Slot("param", inst.parameter_number, inst.shape)
        elif op == "constant":
            sched.buffers[inst] = sched.add_constant(inst.value, inst.shape)
        elif op == "tuple":
            sched.buffers[inst] = tuple(sched.buffers[o] for o in inst.operands)
        elif op == "get-tuple-element":
            sched.buffers[inst] = sched.buffers[inst.operand][inst.attrs["index"]]
        elif op == "opt-barrier":
            sched.buffers[inst] = sched.buffers[inst.operand]
        elif is_view(inst) and inst.operands[0] not in sched.inlined:
            sched.buffers[inst] = view_of(sched.buffers[inst.operands[0]], inst.shape)
        elif _is_inline_broadcast(inst, root_leaves):
            sched.inlined.add(inst)
            sched.buffers[inst] = sched.buffers[inst.operands[0]]
        else:
            leaves = _leaf_shapes(inst.shape)
            slots = []
            for k, s in enumerate(leaves):
                path = (k,) if inst.shape.is_tuple else ()
                pos = claimed.get((id(inst), path))
                slots.append(Slot("out", pos, s) if pos is not None
                             else alloc_temp(sched, s, _leaf_label(inst, k)))
            sched.buffers[inst] = tuple(slots) if inst.shape.is_tuple else slots[0]
            if op in ("while", "conditional"):  # native loops and branches: loops_native.py
                from ember.backends.cpu.plan.loops_native import nest, plan_control
                sched.buffers[inst] = nest(inst.shape, iter(slots))
                plan_control(sched, module, inst)
                sched.kernels.append(inst)
            elif inst.shape.size > 0 or inst.shape.is_tuple:
                sched.kernels.append(inst)
            if op == "sort" or has_lapack(inst):
                add_work(sched, inst)
            elif has_dot(inst):  # packed operands, the dot under an epilogue
                add_work(sched, inst)
    for pos, slot in enumerate(flatten_slots(sched.buffers[entry.root])):
        if not (slot.kind == "out" and slot.index == pos):
            sched.copy_outs.append((pos, slot))
    from ember.backends.cpu.plan.scratch_plan import place_temporaries
    place_temporaries(sched, donated)
    return sched


def has_dot(inst: Instruction) -> bool:
    """`inst` is a dot or a kOutput fusion holding one (dot_plan.find_dot). The opcode test
    comes first so that a program without products never imports dot_plan.py (issue 4:
    fewer modules on a first compile)."""
    if inst.opcode != "dot" and not (inst.opcode == "fusion"
                                     and inst.attrs.get("kind") == "kOutput"):
        return False
    from ember.backends.cpu.dot.plan import find_dot
    return find_dot(inst) is not None


def has_lapack(inst: Instruction) -> bool:
    """`inst` runs through LAPACK (backends/cpu/lapack/): cholesky, triangular-solve, or a
    custom call named lapack_*."""
    return inst.opcode in ("cholesky", "triangular-solve") or (
        inst.opcode == "custom-call"
        and str(inst.attrs.get("custom_call_target", "")).startswith("lapack_"))


def add_work(sched: Schedule, inst: Instruction) -> None:
    """Scratch `inst` needs while it runs: a sort's merge buffers (one per operand); a dot's
    packed operands and the product under an epilogue (dot_plan.py); a LAPACK routine's
    column-major copy and workspace (lapack/plan.py)."""
    if inst.opcode == "sort":
        shapes = [o.shape for o in inst.operands]
    elif has_lapack(inst):
        from ember.backends.cpu.lapack.plan import work_shapes
        shapes = work_shapes(inst)
    else:
        from ember.backends.cpu.dot.plan import plan as plan_dot
        shapes = [s for _, s in plan_dot(inst).work_shapes()]
    if shapes:
        sched.work[inst] = [alloc_temp(sched, s, f"{inst.name} work {k}")
                            for k, s in enumerate(shapes)]
