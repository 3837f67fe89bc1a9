"""Kernel kinds: one table from a scheduled instruction to the object that emits its kernel.

Input: a scheduled instruction (a fusion or a lone entry instruction), its graph root and
the schedule. Output: the `KernelKind` that emits it, and the `KernelContext` every kind's
`emit` receives: the instruction, its buffers (slots) and, on request, the kernel's LLVM
function `void <prefix><name>(ptr outputs..., ptr inputs..., ptr work..., [i64 begin,
i64 end])` with its builder and its buffers as `Buf`s.

Every kind has the same two methods:
  `split_extent(ctx) -> int`  the trip count of the loop the kernel's span ranges over when
                              the kernel is worth splitting among threads, else 1 (asked only
                              when the module is emitted for the thread pool);
  `emit(ctx) -> None`         the kernel's code: the body of `ctx.builder`'s function (left
                              without a terminator; the emitter adds `ret void`, the chunk
                              worker and the entry's call), and any extra functions that run
                              before it, each registered with `ctx.add_call` (a dot's packing
                              kernels); a kind that never opens `ctx.builder` makes its one
                              function itself and registers its call (host callbacks).
`KINDS` lists the kinds in order of precedence, each with a cheap test and the module that
implements it; that module is imported by the first kernel of its kind, so a process's
first compile pays only for the emitters its kernels use (importing all of them cost
~15 ms). Invariants: the first kind whose test holds emits the kernel; "loop" holds for
every instruction.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

import llvmlite.ir as ir

from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.compile_effort import instruction_work
from ember.backends.cpu.plan.schedule import Schedule, Slot, flatten_slots
from ember.backends.cpu.runtime.threads import PARALLEL_MIN_ELEMENTS
from ember.codegen.elemental import Buf
from ember.codegen.irtypes import I64, PTR, VOID
from ember.hlo.ir import Computation, Instruction
from ember.records import FrozenRecord

if TYPE_CHECKING:
    from ember.backends.cpu.emit.emitter import ModuleEmitter

Span = tuple[ir.Value, ir.Value] | None  # [begin, end) of the split loop, for threads


def symbol(name: str) -> str:
    """An HLO name as an LLVM symbol: characters other than [A-Za-z0-9_.] become `_`."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


class KernelContext:
    """What a kernel kind emits one kernel from; built by the module emitter.

    `root` is the fused computation's root or the instruction itself; `extent` the split
    loop's trip count the kind's `split_extent` chose (1: the kernel runs serially);
    `inlinable`: the kernel may be inlined where it is called (a loop's scalar kernel, so
    LLVM keeps a counter in a register); `in_loop`: it runs once per iteration of a loop
    (or in a branch), where its run time outweighs its compile time. A plain class, not a
    dataclass: the decorator costs about half a millisecond of every process's first
    compile (records.py)."""

    def __init__(self, emitter: ModuleEmitter, inst: Instruction, root: Instruction,
                 extent: int = 1, inlinable: bool = False, in_loop: bool = False) -> None:
        self.emitter = emitter
        self.inst = inst
        self.root = root
        self.extent = extent
        self.inlinable = inlinable
        self.in_loop = in_loop
        # a member of a sweep (plan/sweeps.py): its function takes (begin, end) rows of its
        # window, which the sweep's driver passes, block by block
        self.swept = False
        self._opened = False

    # -- the instruction's buffers ---------------------------------------------------------

    @property
    def sched(self) -> Schedule:
        return self.emitter.sched

    @property
    def name(self) -> str:
        """The kernel's symbol without the module prefix."""
        return symbol(self.inst.name)

    @property
    def split(self) -> bool:
        """The function takes (begin, end) after its buffers: split for threads, or swept."""
        return self.extent > 1 or self.swept

    @cached_property
    def bound(self) -> dict[Instruction, Slot]:
        """Boundary instruction -> slot: what the kernel reads (`kernel_graph`)."""
        return kernel_graph(self.sched, self.inst)

    @cached_property
    def outs(self) -> list[Slot]:
        return flatten_slots(self.sched.buffers[self.inst])

    @property
    def work(self) -> list[Slot]:
        """Scratch the schedule reserved for this kernel (a sort's, a dot's packed operands)."""
        return self.sched.work.get(self.inst, [])

    @cached_property
    def arg_slots(self) -> list[Slot]:
        """The kernel function's buffer arguments: outputs, each distinct input slot once
        (distinct slots never overlap: every argument is `noalias`), then the work."""
        slots: list[Slot] = list(self.outs)
        seen = set(slots)  # (a set: comparing records pairwise cost ms per kernel)
        for s in self.bound.values():
            if s not in seen:
                seen.add(s)
                slots.append(s)
        return slots + self.work

    # -- the kernel's function (made on first use) -----------------------------------------

    @cached_property
    def builder(self) -> ir.IRBuilder:
        """Builder at the entry of the kernel's function, made on first use (after any
        functions the kind registered before it, which the module lists first)."""
        em = self.emitter
        types = [PTR] * len(self.arg_slots) + ([I64, I64] if self.split else [])
        fn = ir.Function(em.ir, ir.FunctionType(VOID, types), name=f"{em.prefix}{self.name}")
        if not self.inlinable:
            fn.attributes.add("noinline")
        fn.attributes.add("nounwind")
        for a in fn.args[:len(self.arg_slots)]:
            a.add_attribute("noalias")
        self._opened = True
        return ir.IRBuilder(fn.append_basic_block("entry"))

    @property
    def opened(self) -> bool:
        """Whether the kind asked for the kernel's function (`builder`)."""
        return self._opened

    @property
    def function(self) -> ir.Function:
        return self.builder.function

    @cached_property
    def pointers(self) -> dict[Slot, ir.Value]:
        """Slot -> the kernel function's argument holding its address."""
        return {s: self.function.args[k] for k, s in enumerate(self.arg_slots)}

    @cached_property
    def inputs(self) -> dict[Instruction, Buf]:
        """Boundary instruction -> its buffer, with the instruction's shape."""
        return {i: Buf(self.pointers[s], i.shape) for i, s in self.bound.items()}

    @cached_property
    def outputs(self) -> list[Buf]:
        return [Buf(self.pointers[s], s.shape) for s in self.outs]

    @cached_property
    def work_buffers(self) -> list[Buf]:
        return [Buf(self.pointers[s], s.shape) for s in self.work]

    @property
    def span(self) -> Span:
        """The function's (begin, end) arguments when the kernel is split, else None."""
        return (self.function.args[-2], self.function.args[-1]) if self.split else None

    # -- helpers for the kinds -------------------------------------------------------------

    def if_worth_splitting(self, extent: int) -> int:
        """`extent`, or 1 when the kernel's work is too small for threads to pay off."""
        return extent if instruction_work(self.inst) >= PARALLEL_MIN_ELEMENTS else 1

    def add_call(self, fn: ir.Function, slots: list[Slot], split: bool = False) -> None:
        """Have the entry call `fn` (before this kernel's own function): see
        ModuleEmitter.add_call."""
        self.emitter.add_call(fn, slots, split)


class KernelKind(Protocol):
    """How the kernels of one kind are emitted (see the module doc)."""

    def split_extent(self, ctx: KernelContext) -> int: ...

    def emit(self, ctx: KernelContext) -> None: ...


def kernel_graph(sched: Schedule, inst: Instruction) -> dict[Instruction, Slot]:
    """Boundary instruction -> slot for a scheduled instruction: a fusion's parameters, or
    a lone instruction's operands; array constants get constant slots. A scalar constant
    has no buffer (it is generated from its value), and an inlined scalar broadcast
    (schedule.py) is generated here from its element."""
    bufs = sched.buffers
    if inst.opcode == "fusion":
        comp: Computation = inst.fused_computation
        bound = {p: bufs[inst.operands[p.parameter_number]] for p in comp.parameters}
        graph = comp.instructions
    else:
        direct = [o.operands[0] if o in sched.inlined else o for o in inst.operands]
        bound = {o: bufs[o] for o in direct
                 if not (o.opcode == "constant" and o.shape.size == 1)}
        graph = [inst, *(o for o in inst.operands if o in sched.inlined)]
    # array constants inside fused computations get constant slots
    for g in graph:
        for o in [g, *g.operands]:
            if o.opcode == "constant" and o.shape.size > 1 and o not in bound:
                bound[o] = sched.add_constant(o.value, o.shape)
    for k, s in bound.items():
        if isinstance(s, tuple):
            raise CpuCompileError(f"tuple-valued operand {k.name} of {inst.name}")
    return bound  # type: ignore[return-value]


def graph_root(inst: Instruction) -> Instruction:
    """The root of the graph a kernel computes: the fused computation's, or `inst`."""
    return inst.fused_computation.root if inst.opcode == "fusion" else inst


# -- the table ---------------------------------------------------------------------------------


Test = Callable[[Instruction, Instruction, Schedule], bool]  # (inst, root, schedule)


def _is_lapack(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    """cholesky, triangular-solve or a LAPACK custom call (backends/cpu/lapack/)."""
    if inst.opcode not in ("cholesky", "triangular-solve", "custom-call"):
        return False
    from ember.backends.cpu.lapack.plan import routine

    return routine(inst) is not None


def _is_callback(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    if inst.opcode != "custom-call":
        return False
    from ember.backends.cpu.emit.callbacks import is_python_callback

    return is_python_callback(inst)


def _is_row(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    """rows.is_row_fusion, importing rows.py only for a fusion that holds a reduce (which
    every row fusion does). (Before "reduce": a row variance's root is a reduce.)"""
    if inst.opcode != "fusion":
        return False
    comp = inst.fused_computation
    if not any(i.opcode == "reduce" for i in comp.instructions):
        return False
    from ember.backends.cpu.emit import rows

    return rows.is_row_fusion(comp)


def _is_reduce(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    return root.opcode == "reduce" or (root.opcode == "tuple" and bool(root.operands)
                                       and all(o.opcode == "reduce" for o in root.operands))


def _is_dot(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    """A dot, or a kOutput fusion: a dot and its epilogue."""
    return root.opcode == "dot" or (inst.opcode == "fusion"
                                    and inst.attrs.get("kind") == "kOutput")


def _is_in_place_update(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    """A dynamic-update-slice, alone or as a fusion's root, whose result shares the buffer
    of the array it updates (in_place.py)."""
    if root.opcode != "dynamic-update-slice":
        return False
    target = root.operands[0]
    if inst.opcode == "fusion":
        if target.opcode != "parameter":
            return False
        target = inst.operands[target.parameter_number]
    elif inst is not root:
        return False
    return sched.buffers[target] == flatten_slots(sched.buffers[inst])[0]


def _is_in_place_outputs(inst: Instruction, root: Instruction, sched: Schedule) -> bool:
    """A multi-output fusion some of whose outputs share the buffer of the array they
    update (in_place.py `in_place_outputs`: a loop body's carried arrays)."""
    if root.opcode != "tuple" or inst.opcode != "fusion":
        return False
    from ember.backends.cpu.plan.in_place import in_place_outputs

    outs = flatten_slots(sched.buffers[inst])
    return any(sched.buffers[inst.operands[p]] == outs[j]
               for j, p in in_place_outputs(inst).items())


def _opcode(name: str) -> Test:
    return lambda inst, root, sched: root.opcode == name


class KindEntry(FrozenRecord):
    """A row of `KINDS`: the kind's name, whether it emits a kernel, and where its
    `KernelKind` lives ("module:attribute", imported by the first kernel of the kind)."""

    FIELDS = ("name", "test", "where")
    name: str
    test: Test
    where: str

    def __init__(self, name: str, test: Test, where: str) -> None:
        self._freeze(name, test, where)


_EMIT = "ember.backends.cpu.emit"
KINDS: tuple[KindEntry, ...] = (
    KindEntry("lapack", _is_lapack, "ember.backends.cpu.lapack.emit:KIND"),
    KindEntry("callback", _is_callback, f"{_EMIT}.callbacks:KIND"),
    KindEntry("fft", _opcode("fft"), f"{_EMIT}.fft:KIND"),
    KindEntry("row", _is_row, f"{_EMIT}.rows:KIND"),
    KindEntry("reduce", _is_reduce, f"{_EMIT}.kernels:REDUCE"),
    KindEntry("dot", _is_dot, "ember.backends.cpu.dot.emit:KIND"),
    KindEntry("scatter", _opcode("scatter"), f"{_EMIT}.scatter:KIND"),
    KindEntry("sort", _opcode("sort"), f"{_EMIT}.sort:KIND"),
    KindEntry("update_slice", _is_in_place_update, f"{_EMIT}.update_slice:KIND"),
    KindEntry("update_slices", _is_in_place_outputs, f"{_EMIT}.update_slice:OUTPUTS"),
    KindEntry("loop", lambda inst, root, sched: True, f"{_EMIT}.kernels:LOOP"),
)

_loaded: dict[str, KernelKind] = {}


def kind_of(inst: Instruction, root: Instruction, sched: Schedule) -> KindEntry:
    """The first entry of `KINDS` whose test holds for `inst`."""
    return next(k for k in KINDS if k.test(inst, root, sched))


def load(entry: KindEntry) -> KernelKind:
    """The entry's KernelKind, importing its module on first use."""
    kind = _loaded.get(entry.where)
    if kind is None:
        module, attr = entry.where.split(":")
        kind = _loaded[entry.where] = getattr(importlib.import_module(module), attr)
    return kind


__all__ = ["KINDS", "KernelContext", "KernelKind", "KindEntry", "Span", "graph_root",
           "kernel_graph", "kind_of", "load", "symbol"]
