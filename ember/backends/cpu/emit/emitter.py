"""LLVM module emission for a whole executable: one function per kernel plus the entry.

Input: a fused HLO Module and its Schedule, a unique symbol prefix. Output: LLVM IR text
with `void @<prefix>entry(ptr %table)`, which loads every buffer pointer from the table
(temporaries: scratch base + offset) and calls the kernels in schedule order, so a call of
the executable is one foreign call. Kernels are `noinline` functions `<prefix><kernel name>`
whose buffer arguments are all `noalias` (outputs never alias inputs), which lets the
vectorizer skip runtime alias checks.
Kernels with at least `threads.PARALLEL_MIN_ELEMENTS` elements of work whose outer loop can
be split (flat loops, rows of a row fusion, outputs of row-scheme reductions) take
`(i64 begin, i64 end)` after their buffers; `<kernel>.chunk(ptr data, i64 begin, i64 end)`
loads the buffer pointers from `data` and runs the kernel on [begin, end), and the entry
calls `ember_parallel_for(chunk, data, extent, T)` (Ember's pool, pool.py: the calling
thread runs chunks too and never waits for a worker to wake up) when the thread count in the
table's last slot is > 1, else the kernel itself on [0, extent). Each element is computed by
the same code whatever the chunk, so results do not depend on the thread count. Dots and
kOutput fusions are emitted by dot_emit.py (BLAS work units split the same way). Scatter
kernels (scatter.py) run serially, as does a dynamic-update-slice writing into its own
operand (update_slice.py);
sort kernels (sort.py) take their work buffers after the inputs and split by rows.
Host-callback custom-calls (callbacks.py) call a ctypes trampoline and are never split.
While loops and conditionals become basic blocks of the entry around their computations'
kernel calls (planned by loops_native.py, emitted by loops_emit.py); a loop's scalar
kernels (a counter, its compare) may be inlined there, so LLVM keeps them in registers.
"""

from __future__ import annotations

import re

import llvmlite.ir as ir

from ember.backends.cpu.emit import control_steps, kernels
from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.compile_effort import instruction_work
from ember.backends.cpu.plan.schedule import Schedule, Slot, flatten_slots
from ember.backends.cpu.runtime.pool import SYMBOL as POOL_SYMBOL
from ember.backends.cpu.runtime.threads import PARALLEL_MIN_ELEMENTS
from ember.codegen.elemental import Buf
from ember.codegen.irtypes import I8, I32, I64, PTR, VOID, i64
from ember.hlo.ir import Computation, Instruction, Module

# The emitters of rarer kernel kinds (row fusions, dot_emit with BLAS, scatter, sort,
# in-place update, host callbacks) are imported by the first kernel of their kind: a
# process's first compile pays only for the modules its kernels use (importing them all
# cost ~15 ms).


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


class ModuleEmitter:
    def __init__(self, module: Module, sched: Schedule, prefix: str,
                 parallel: bool = False, precise: str | None = None) -> None:
        """`precise`: None keeps kernels' unoptimized precise copies in the module, called
        directly; "lazy" leaves them out and calls them through slots filled on first use,
        "full" keeps them too, for that first use (lazy_precise.py)."""
        self.hlo = module
        self.sched = sched
        self.prefix = prefix
        self.parallel = parallel
        self.ir = ir.Module(name=prefix + module.name)
        self._precise = None
        if precise is not None:
            from ember.backends.cpu.emit.lazy_precise import attach

            self._precise = attach(self.ir, precise)
        self.kernel_names: list[str] = []
        self.parallel_kernels: list[str] = []
        self._chunk_of: dict[str, tuple[ir.Function, int]] = {}  # chunk fn -> kernel, extent
        self._calls: list[tuple[ir.Function, list[Slot], bool]] = []
        self._own_calls = self._calls  # profiling.py swaps `_calls` to emit one call alone
        self._call_range: dict[Instruction, tuple[int, int]] = {}  # kernel -> its calls
        self._in_loops: set[Instruction] = set()  # kernels of loop bodies and branches

    def emit(self) -> str:
        # nested kernels of loops and branches (loops_native.py) are kernels like any other
        self._in_loops = set(control_steps.kernels_in_order(self.sched)) - set(self.sched.kernels)
        for inst in control_steps.kernels_in_order(self.sched):
            start = len(self._calls)
            self._emit_kernel(inst)
            self._call_range[inst] = (start, len(self._calls))
        self._emit_entry()
        return str(self.ir)

    @property
    def precise_names(self) -> list[str]:
        """The precise copies reached through slots (`precise` "lazy" or "full")."""
        return list(self._precise.names) if self._precise is not None else []

    @property
    def entry_name(self) -> str:
        return f"{self.prefix}entry"  # the prefix ends in "_"

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
            # an inlined scalar broadcast (schedule.py) is generated here from its element
            direct = [o.operands[0] if o in self.sched.inlined else o for o in inst.operands]
            bound = {o: bufs[o] for o in direct
                     if not (o.opcode == "constant" and o.shape.size == 1)}
            root = inst
            graph = [inst, *(o for o in inst.operands if o in self.sched.inlined)]
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
        if _is_python_callback(inst):
            self._emit_callback(inst)
            return
        root, bound = self._kernel_graph(inst)
        outs = flatten_slots(self.sched.buffers[inst])
        in_items = list(bound.items())
        # one argument per distinct slot
        arg_slots: list[Slot] = list(outs)
        for _, s in in_items:
            if s not in arg_slots:
                arg_slots.append(s)
        work = self.sched.work.get(inst, [])
        arg_slots += work
        name = _symbol(inst.name)
        kind = _kind(inst, root)
        if kind == "dot":  # BLAS calls or loops, packed operands, epilogue: dot_emit.py
            from ember.backends.cpu.dot import emit as dot_emit

            dot_emit.emit(self, inst, bound, outs, arg_slots, name)
            return
        if (kind == "loop" and inst.opcode == "dynamic-update-slice"
                and self.sched.buffers[inst.operands[0]] == outs[0]):
            kind = "update_slice"  # in place (in_place.py): store the window only
        extent = self._split_extent(kind, root, {i: None for i, _ in in_items})
        split = extent > 1 and instruction_work(inst) >= PARALLEL_MIN_ELEMENTS
        types = [PTR] * len(arg_slots) + ([I64, I64] if split else [])
        fn = ir.Function(self.ir, ir.FunctionType(VOID, types), name=f"{self.prefix}{name}")
        if not (inst in self._in_loops and instruction_work(inst) <= 1):
            fn.attributes.add("noinline")  # (a loop's scalar kernel may inline: its counter)
        fn.attributes.add("nounwind")
        for a in fn.args[:len(arg_slots)]:
            a.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        ptr = {s: fn.args[k] for k, s in enumerate(arg_slots)}
        inputs = {i: Buf(ptr[s], i.shape) for i, s in in_items}
        out_bufs = [Buf(ptr[s], s.shape) for s in outs]
        span = (fn.args[-2], fn.args[-1]) if split else None
        try:
            if kind == "reduce":
                reds = [root] if root.opcode == "reduce" else list(root.operands)
                kernels.emit_reduce_kernel(b, reds, inputs, out_bufs, span)
            elif kind == "row":
                from ember.backends.cpu.emit import rows

                rows.emit_row_kernel(b, root, inputs, out_bufs[0], span)
            elif kind == "scatter":
                from ember.backends.cpu.emit.scatter import emit_scatter_kernel

                emit_scatter_kernel(b, root, inputs, out_bufs[0])
            elif kind == "update_slice":
                from ember.backends.cpu.emit.update_slice import emit_update_slice_in_place

                emit_update_slice_in_place(b, root, inputs, out_bufs[0])
            elif kind == "sort":
                from ember.backends.cpu.emit.sort import emit_sort_kernel

                work_bufs = [Buf(ptr[s], s.shape) for s in work]
                emit_sort_kernel(b, root, inputs, out_bufs, work_bufs, span)
            else:
                kernels.emit_loop_kernel(b, root, inputs, out_bufs[0], span)
        except NotImplementedError as e:
            raise CpuCompileError(f"cannot emit {inst.name}: {e}") from e
        b.ret_void()
        self.kernel_names.append(inst.name)
        if split:
            fn = self.emit_worker(fn, len(arg_slots), extent)
            self.parallel_kernels.append(inst.name)
        self._calls.append((fn, arg_slots, split))

    def _emit_callback(self, inst: Instruction) -> None:
        """A host callback (callbacks.py): every operand by pointer, never split."""
        from ember.backends.cpu.emit.callbacks import callback_arg_count, emit_callback_kernel

        outs = flatten_slots(self.sched.buffers[inst])
        ins = [self.sched.buffers[o] for o in inst.operands[:callback_arg_count(inst)]]
        if any(isinstance(s, tuple) for s in ins):
            raise CpuCompileError(f"tuple-valued operand of host callback {inst.name}")
        fn = emit_callback_kernel(self.ir, f"{self.prefix}{_symbol(inst.name)}", inst,
                                  len(outs), len(ins))
        self.kernel_names.append(inst.name)
        self._calls.append((fn, outs + ins, False))

    def _split_extent(self, kind: str, root: Instruction, inputs: dict) -> int:
        if not self.parallel:
            return 1
        if kind == "reduce":
            reds = [root] if root.opcode == "reduce" else list(root.operands)
            return kernels.reduce_split_extent(reds)
        if kind == "row":
            from ember.backends.cpu.emit import rows

            return rows.row_count(root)
        if kind == "loop":
            return kernels.loop_split_extent(root, inputs)
        if kind == "sort":
            from ember.backends.cpu.emit.sort import sort_row_count

            return sort_row_count(root)
        return 1

    def emit_worker(self, kernel: ir.Function, nptr: int, extent: int) -> ir.Function:
        """`void <kernel>.chunk(ptr data, i64 begin, i64 end)`: the kernel on [begin, end)
        of its split loop, its buffers read from `data` (what the pool calls per chunk)."""
        w = ir.Function(self.ir, ir.FunctionType(VOID, [PTR, I64, I64]),
                        name=f"{kernel.name}.chunk")
        w.attributes.add("nounwind")
        b = ir.IRBuilder(w.append_basic_block("entry"))
        ptrs = [b.load(b.gep(w.args[0], [i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
                for k in range(nptr)]
        b.call(kernel, [*ptrs, w.args[1], w.args[2]])
        b.ret_void()
        self._chunk_of[w.name] = (kernel, extent)
        return w

    def _omp(self, name: str) -> ir.Function:
        """`ember_parallel_for` (pool.py), declared once per module."""
        g = self.ir.globals.get(name)
        if g is None:
            chunk_ty = ir.FunctionType(VOID, [PTR, I64, I64]).as_pointer()
            g = ir.Function(self.ir, ir.FunctionType(VOID, [chunk_ty, PTR, I64, I32]), name=name)
        return g

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

        # buffers (Slot.buffer: every view of one) reached through a pointer variable
        redirect: dict[tuple[str, int], ir.Value] = {}

        def slot_ptr(s: Slot) -> ir.Value:
            var = redirect.get(s.buffer)
            if var is not None:  # (a swapped loop leaf: loops_emit.py)
                return b.load(var, typ=PTR)
            if s.kind == "temp":
                base = table_ptr(self.sched.scratch_index)
                return b.gep(base, [i64(s.index)], inbounds=True, source_etype=I8)
            return table_ptr(self.sched.table_index(s))

        def emit_call(kfn: ir.Function, slots: list[Slot], split: bool) -> None:
            if not split:
                b.call(kfn, [slot_ptr(s) for s in slots])
                return
            kernel, extent = self._chunk_of[kfn.name]
            with b.goto_block(fn.entry_basic_block):
                b.position_at_start(fn.entry_basic_block)
                data = b.alloca(PTR, size=i64(len(slots)))
            ptrs = [slot_ptr(s) for s in slots]
            nth_ptr = table_ptr(self.sched.slot_count())  # the int the runtime sets
            nth = b.load(nth_ptr, typ=I32)
            with b.if_else(b.icmp_signed(">", nth, ir.Constant(I32, 1))) as (par, seq):
                with par:  # the pool: this thread runs chunks too (pool.py)
                    for k, p in enumerate(ptrs):
                        b.store(p, b.gep(data, [i64(k)], inbounds=True, source_etype=PTR))
                    b.call(self._omp(POOL_SYMBOL), [kfn, data, i64(extent), nth])
                with seq:
                    b.call(kernel, [*ptrs, i64(0), i64(extent)])

        if self.sched.control and self._calls is self._own_calls:
            # loops and branches: every table pointer is loaded here, in the entry block,
            # so the loads dominate every block that uses them
            for k in range(self.sched.slot_count() + 1):
                table_ptr(k)

            def emit_kernel(inst: Instruction) -> None:
                start, end = self._call_range[inst]
                for call in self._calls[start:end]:
                    emit_call(*call)

            slot_ptr.redirect = redirect  # type: ignore[attr-defined]
            control_steps.emit_steps(b, self.sched, self.sched.kernels, emit_kernel, slot_ptr)
        else:
            for call in self._calls:
                emit_call(*call)
        b.ret_void()


def _is_python_callback(inst: Instruction) -> bool:
    if inst.opcode != "custom-call":
        return False
    from ember.backends.cpu.emit.callbacks import is_python_callback

    return is_python_callback(inst)


def _kind(inst: Instruction, root: Instruction) -> str:
    if inst.opcode == "fusion" and _is_row_fusion(inst.fused_computation):
        return "row"  # (before "reduce": a row variance's root is a reduce)
    if root.opcode == "reduce" or (root.opcode == "tuple" and root.operands
                                   and all(o.opcode == "reduce" for o in root.operands)):
        return "reduce"
    if inst.opcode == "fusion" and inst.attrs.get("kind") == "kOutput":
        return "dot"  # a dot and its epilogue
    if root.opcode in ("dot", "scatter", "sort"):
        return root.opcode
    return "loop"


def _is_row_fusion(comp: Computation) -> bool:
    """rows.is_row_fusion, importing rows.py only for a fusion that holds a reduce (which
    every row fusion does)."""
    if not any(i.opcode == "reduce" for i in comp.instructions):
        return False
    from ember.backends.cpu.emit import rows

    return rows.is_row_fusion(comp)
