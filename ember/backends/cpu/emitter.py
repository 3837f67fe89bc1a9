"""LLVM module emission for a whole executable: one function per kernel plus the entry.

Input: a fused HLO Module and its Schedule, a unique symbol prefix. Output: LLVM IR text
with `void @<prefix>entry(ptr %table)`, which loads every buffer pointer from the table
(temporaries: scratch base + offset) and calls the kernels in schedule order, so a call of
the executable is one foreign call. Kernels are `noinline` functions `<prefix><kernel name>`
whose buffer arguments are all `noalias` (outputs never alias inputs), which lets the
vectorizer skip runtime alias checks.
"""

from __future__ import annotations

import re

import llvmlite.ir as ir

from ember.backends.cpu import kernels
from ember.backends.cpu.elemental import Buf
from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.irtypes import I8, PTR, VOID, i64
from ember.backends.cpu.schedule import Schedule, Slot, _flatten
from ember.hlo.ir import Computation, Instruction, Module


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


class ModuleEmitter:
    def __init__(self, module: Module, sched: Schedule, prefix: str) -> None:
        self.hlo = module
        self.sched = sched
        self.prefix = prefix
        self.ir = ir.Module(name=prefix + module.name)
        self.kernel_names: list[str] = []
        self._calls: list[tuple[ir.Function, list[Slot]]] = []

    def emit(self) -> str:
        for inst in self.sched.kernels:
            self._emit_kernel(inst)
        self._emit_entry()
        return str(self.ir)

    @property
    def entry_name(self) -> str:
        return f"{self.prefix}entry"

    # -- kernels ---------------------------------------------------------------------------

    def _kernel_graph(self, inst: Instruction) -> tuple[Instruction, dict[Instruction, Slot]]:
        """(graph root, boundary instruction -> slot) for a scheduled instruction."""
        bufs = self.sched.buffers
        if inst.opcode == "fusion":
            comp: Computation = inst.fused_computation
            bound = {p: bufs[inst.operands[p.parameter_number]] for p in comp.parameters}
            root = comp.root
            graph = comp.instructions
        else:
            bound = {o: bufs[o] for o in inst.operands
                     if not (o.opcode == "constant" and o.shape.size == 1)}
            root = inst
            graph = [inst]
        # array constants inside fused computations get constant slots
        for g in graph:
            for o in [g, *g.operands]:
                if o.opcode == "constant" and o.shape.size > 1 and o not in bound:
                    bound[o] = self.sched.add_constant(o.value, o.shape)
        for k, s in bound.items():
            if isinstance(s, tuple):
                raise CpuCompileError(f"tuple-valued operand {k.name} of {inst.name}")
        return root, bound  # type: ignore[return-value]

    def _emit_kernel(self, inst: Instruction) -> None:
        root, bound = self._kernel_graph(inst)
        outs = _flatten(self.sched.buffers[inst])
        in_items = list(bound.items())
        # one argument per distinct slot
        arg_slots: list[Slot] = list(outs)
        for _, s in in_items:
            if s not in arg_slots:
                arg_slots.append(s)
        name = _symbol(inst.name)
        fn = ir.Function(self.ir, ir.FunctionType(VOID, [PTR] * len(arg_slots)),
                         name=f"{self.prefix}{name}")
        fn.attributes.add("noinline")
        fn.attributes.add("nounwind")
        for a in fn.args:
            a.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        ptr = {s: fn.args[k] for k, s in enumerate(arg_slots)}
        inputs = {i: Buf(ptr[s], i.shape) for i, s in in_items}
        out_bufs = [Buf(ptr[s], s.shape) for s in outs]
        try:
            if root.opcode == "reduce":
                kernels.emit_reduce_kernel(b, root, inputs, out_bufs)
            elif root.opcode == "dot":
                kernels.emit_dot_kernel(b, root, inputs, out_bufs[0])
            else:
                kernels.emit_loop_kernel(b, root, inputs, out_bufs[0])
        except NotImplementedError as e:
            raise CpuCompileError(f"cannot emit {inst.name}: {e}") from e
        b.ret_void()
        self.kernel_names.append(inst.name)
        self._calls.append((fn, arg_slots))

    # -- entry -------------------------------------------------------------------------------

    def _emit_entry(self) -> None:
        fn = ir.Function(self.ir, ir.FunctionType(VOID, [PTR]), name=self.entry_name)
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        table = fn.args[0]
        cache: dict[int, ir.Value] = {}

        def table_ptr(k: int) -> ir.Value:
            if k not in cache:
                p = b.gep(table, [i64(k)], inbounds=True, source_etype=PTR)
                cache[k] = b.load(p, typ=PTR)
            return cache[k]

        def slot_ptr(s: Slot) -> ir.Value:
            if s.kind == "temp":
                base = table_ptr(self.sched.scratch_index)
                return b.gep(base, [i64(s.index)], inbounds=True, source_etype=I8)
            return table_ptr(self.sched.table_index(s))

        for kfn, slots in self._calls:
            b.call(kfn, [slot_ptr(s) for s in slots])
        b.ret_void()
