"""LLVM module emission for a whole executable: one function per kernel plus the entry.

Input: a fused HLO Module and its Schedule, a unique symbol prefix. Output: LLVM IR text
with `void @<prefix>entry(ptr %table)`, which loads every buffer pointer from the table
(temporaries: scratch base + offset) and calls the kernels in schedule order, so a call of
the executable is one foreign call. A straight-line program of more than ENTRY_PART_CALLS
calls has them in `<prefix>entry.part<k>` functions (unoptimized, `optnone`: each call is
a few loads of pointers, and LLVM's time on one huge block grows faster than the block)
that the entry calls in order. Kernels are `noinline` functions `<prefix><kernel name>`
whose buffer arguments are all `noalias` (outputs never alias inputs), which lets the
vectorizer skip runtime alias checks. Kernels with the same body (plan/kernel_key.py: the same
canonical graph, shapes, layouts and argument pattern; an unrolled loop's steps) are
emitted once: the entry calls the first one's function with each one's own buffers, so
LLVM optimizes and compiles each distinct body once (`shared_kernels` maps a kernel to
the kernel whose function it runs).
Each kernel is emitted by its kind (kinds.py: one table from the instruction to a
`KernelKind` with one signature, `split_extent(ctx)` and `emit(ctx)`; loop and reduce
kernels in kernels.py, row fusions rows.py, scatter.py, sort.py, update_slice.py for a
dynamic-update-slice into its own operand, host callbacks callbacks.py, dots and kOutput
fusions ../dot/emit.py). A kind that splits (flat loops, rows of a row fusion, outputs of
row-scheme reductions, rows of a sort, BLAS work units) and finds the kernel worth it gets
`(i64 begin, i64 end)` after the buffers; `<kernel>.chunk(ptr data, i64 begin, i64 end)`
loads the buffer pointers from `data` and runs the kernel on [begin, end), and the entry
calls `ember_parallel_for(chunk, data, extent, T)` (Ember's pool, pool.py: the calling
thread runs chunks too and never waits for a worker to wake up) when the thread count in the
table's last slot is > 1, else the kernel itself on [0, extent). Each element is computed by
the same code whatever the chunk, so results do not depend on the thread count. Scatter,
in-place update and host-callback kernels are never split. Kinds add the calls of extra
functions (a dot's packing kernels) and of functions they make themselves (callbacks)
through the public `add_call` and `chunk_function`.
While loops and conditionals become basic blocks of the entry around their computations'
kernel calls (planned by loops_native.py, emitted by loops_emit.py); a loop's scalar
kernels (a counter, its compare) may be inlined there, so LLVM keeps them in registers.
The members of a loop body's sweep (plan/sweeps.py) take (begin, end) rows of their
window; the entry calls the sweep's driver (loops_emit.emit_driver) in their place.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.emit import control_steps, kinds
from ember.backends.cpu.emit.kinds import KernelContext, graph_root
from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.compile_effort import instruction_work
from ember.backends.cpu.plan.kernel_key import kernel_key
from ember.backends.cpu.plan.schedule import Schedule, Slot
from ember.backends.cpu.runtime.pool import SYMBOL as POOL_SYMBOL
from ember.codegen.irtypes import I8, I32, I64, PTR, VOID, i64
from ember.hlo.ir import Instruction, Module

# Kernel calls per function of the entry of a straight-line program (see _emit_entry).
ENTRY_PART_CALLS = 256


class ModuleEmitter:
    """Emits one executable's LLVM module (`emit`). Public to the kernel kinds: `ir` (the
    module), `sched`, `prefix`, `parallel`, `add_call` and `chunk_function`; to the
    compiler: `kernel_names`, `parallel_kernels`, `shared_kernels`, `entry_name`,
    `precise_names`."""

    def __init__(self, module: Module, sched: Schedule, prefix: str,
                 parallel: bool = False, precise: str | None = None,
                 share: bool = True) -> None:
        """`share`: kernels with the same body (plan/kernel_key.py) call one function.
        `precise`: None keeps kernels' unoptimized precise copies in the module, called
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
        # kernels with one body share one function (plan/kernel_key.py): key -> (the first
        # kernel's name, the function the entry calls)
        self.share = share
        self._bodies: dict[tuple, tuple[str, ir.Function]] = {}
        self.shared_kernels: dict[str, str] = {}  # kernel -> the kernel whose function it runs
        # members of sweeps (plan/sweeps.py): kernel -> its sweep; their functions, until
        # the last member's, when the sweep's driver is emitted and called instead
        self._sweep_of: dict[Instruction, object] = {}
        self._swept: list[tuple[ir.Function, list[Slot]]] = []
        self._swept_ctx: list[KernelContext] = []  # (their contexts: an element fusion's)

    def emit(self) -> str:
        # nested kernels of loops and branches (loops_native.py) are kernels like any other
        self._in_loops = set(control_steps.kernels_in_order(self.sched)) - set(self.sched.kernels)
        for plan in self.sched.control.values():
            for sweep in getattr(plan, "sweeps", ()):
                self._sweep_of.update((k, sweep) for k in sweep.members)
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

    def _emit_kernel(self, inst: Instruction) -> None:
        """Emit `inst`'s kernel with the kernel kind that claims it (kinds.KINDS)."""
        root = graph_root(inst)
        entry = kinds.kind_of(inst, root, self.sched)
        kind = kinds.load(entry)
        in_loop = inst in self._in_loops
        ctx = KernelContext(self, inst, root, inlinable=in_loop and instruction_work(inst) <= 1,
                            in_loop=in_loop)
        sweep = self._sweep_of.get(inst)
        if sweep is not None:
            ctx.swept = True
        elif self.parallel:
            ctx.extent = kind.split_extent(ctx)
        key = kernel_key(ctx, entry.name) if self.share and sweep is None else None
        twin = self._bodies.get(key) if key is not None else None
        self.kernel_names.append(inst.name)
        if twin is not None:  # the same body: call its function with this kernel's buffers
            first, fn = twin
            self.shared_kernels[inst.name] = first
            if ctx.split:
                self.parallel_kernels.append(inst.name)
            self.add_call(fn, ctx.arg_slots, ctx.split)
            return
        calls = len(self._calls)
        try:
            kind.emit(ctx)
        except NotImplementedError as e:
            raise CpuCompileError(f"cannot emit {inst.name}: {e}") from e
        if not ctx.opened:  # (a kind that made its function itself added its call)
            return
        ctx.builder.ret_void()
        fn = ctx.function
        if sweep is not None:
            self._swept.append((fn, ctx.arg_slots))
            self._swept_ctx.append(ctx)
            if inst is sweep.members[-1]:
                from ember.backends.cpu.emit.loops_emit import emit_driver

                name = f"{self.prefix}sweep.{ctx.name}"
                fused = None
                if sweep.fusion is not None:
                    from ember.backends.cpu.emit.update_slice import emit_fused_sweep

                    fused = emit_fused_sweep(self.ir, f"{name}.fused", sweep,
                                             self._swept_ctx)
                driver, slots = emit_driver(self.ir, name, sweep, self._swept, fused)
                self._swept, self._swept_ctx = [], []
                self.add_call(driver, slots)
            return
        if ctx.split:
            fn = self.chunk_function(fn, len(ctx.arg_slots), ctx.extent)
            self.parallel_kernels.append(inst.name)
        if key is not None and len(self._calls) == calls:  # (one function, no extra calls)
            self._bodies[key] = (inst.name, fn)
        self.add_call(fn, ctx.arg_slots, ctx.split)

    def add_call(self, fn: ir.Function, slots: list[Slot], split: bool = False) -> None:
        """Have the entry call `fn` with the addresses of `slots`, after the calls added
        before; `split`: `fn` is a chunk worker (`chunk_function`), which the entry hands to
        the thread pool, or calls serially over the whole extent."""
        self._calls.append((fn, slots, split))

    def chunk_function(self, kernel: ir.Function, nptr: int, extent: int) -> ir.Function:
        """`void <kernel>.chunk(ptr data, i64 begin, i64 end)`: the kernel on [begin, end)
        of its split loop, its buffers read from `data` (what the pool calls per chunk).
        `kernel` takes `nptr` pointers, then (begin, end) over [0, `extent`)."""
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
        if self.sched.control and self._calls is self._own_calls:
            b = self._entry_calls(fn, [], loops=True)
        elif len(self._calls) <= ENTRY_PART_CALLS:
            b = self._entry_calls(fn, self._calls)
        else:
            # a long straight-line program (an unrolled loop's thousands of kernels) as
            # parts of ENTRY_PART_CALLS calls each: LLVM's code generation of one basic
            # block grows faster than its length (an entry of 3,200 calls took 1.2 s of
            # machine code, 80% of the whole module's), of bounded parts linearly
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            for k in range(0, len(self._calls), ENTRY_PART_CALLS):
                part = ir.Function(self.ir, ir.FunctionType(VOID, [PTR]),
                                   name=f"{self.entry_name}.part{k // ENTRY_PART_CALLS}")
                part.attributes.add("nounwind")
                part.attributes.add("noinline")
                part.attributes.add("optnone")
                part.linkage = "internal"
                self._entry_calls(part, self._calls[k:k + ENTRY_PART_CALLS]).ret_void()
                b.call(part, [fn.args[0]])
        b.ret_void()

    def _entry_calls(self, fn: ir.Function, calls: list[tuple[ir.Function, list[Slot], bool]],
                     loops: bool = False) -> ir.IRBuilder:
        """A builder at the end of `fn(ptr table)`'s body, which loads the buffer pointers
        it needs from the table and makes `calls` (`loops`: all of the schedule's, around
        its loops and branches)."""
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

        if loops:
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
            for call in calls:
                emit_call(*call)
        return b

