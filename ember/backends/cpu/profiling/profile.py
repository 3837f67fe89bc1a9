"""Per-step timing: an instrumented build of a module that timestamps every top-level step.

Input: an HLO Module (not modified). Output: `compile_profiled(module)` -> a
`ProfiledExecutable`: called like an Executable, it returns the outputs and the seconds
each top-level step of the entry took, in schedule order (`step_names`): a step is a
kernel, or a whole native while loop or conditional (loops_native.py) with every kernel it
runs, all iterations included.
How: the module is optimized, scheduled and emitted exactly as `compiler.py` does it (the
same kernels, the same `ember_entry`), and the emitter here adds
- `ember_profile.step.<k>(ptr table)`, one function per top-level step (the ordinary entry's
  code restricted to step k: a kernel's calls, thread-pool regions included, or a loop's or
  conditional's basic blocks), marked noinline; and
- `ember_profile(ptr table)`, which reads CLOCK_MONOTONIC through libc's `clock_gettime`
  (vDSO: ~20 ns, ns resolution) before the first step and after each one into the global
  `i64 ember_profile_stamps[n + 1]`, calling the per-step functions in between.
Inside loops and conditionals nothing is timed (a clock read per nested call would cost
more than a loop's scalar kernels), but each nested step list (a loop's condition, its body,
each branch) that holds a kernel called serially gets a counter: that call goes through a
wrapper `<kernel>.counted` that adds one to `ember_profile_counts[j]`, so after a call the
counts say how many times each list ran, i.e. a loop's iteration count and which branch was
taken. `control_runs` turns the counts into how many times every nested kernel and copy ran.
`ember_profile` is the executable's entry point, so the Executable class (pointer table,
outputs, caching allocator) is reused unchanged, and step k took
`stamps[k + 1] - stamps[k]` nanoseconds. The clock calls are opaque to LLVM and the steps
write memory reachable from the table, so no work moves across a timestamp.
Invariants: never cached (profiling is rare and its code differs from the production
build); Linux only (CLOCK_MONOTONIC = 1); the stamps and counts globals belong to one
executable, so profile one call at a time per ProfiledExecutable; counts are reset before
every call.
"""

from __future__ import annotations

import copy
import ctypes
from dataclasses import dataclass, field
from typing import Any

import llvmlite.ir as ir
import numpy as np

from ember.backends.cpu.compiler import optimize
from ember.backends.cpu.emit.emitter import ModuleEmitter
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.backends.cpu.plan.loops_native import WhilePlan
from ember.backends.cpu.plan.runtime_spec import RuntimeSpec
from ember.backends.cpu.plan.schedule import Schedule, build_schedule
from ember.backends.cpu.runtime.executable import Executable
from ember.backends.cpu.support import check_supported
from ember.codegen.irtypes import I32, I64, PTR, VOID, i64
from ember.hlo.ir import Instruction, Module

PROFILE_ENTRY = "ember_profile"
STAMPS = "ember_profile_stamps"
COUNTS = "ember_profile_counts"
CLOCK_MONOTONIC = 1

Counter = tuple[str, str]  # (while/conditional name, "cond" | "body" | "branch<k>")


def nested_lists(sched: Schedule, steps: list[Instruction] | None = None
                 ) -> list[tuple[Counter, list[Instruction]]]:
    """Every step list run by a loop or conditional under `steps` (default: the entry's),
    outermost first, each with the key its counter has."""
    out: list[tuple[Counter, list[Instruction]]] = []
    for inst in sched.kernels if steps is None else steps:
        plan = sched.control.get(inst)
        if plan is None:
            continue
        if isinstance(plan, WhilePlan):
            parts = [("cond", plan.cond), ("body", plan.body)]
        else:
            parts = [(f"branch{k}", s) for k, (s, _) in enumerate(plan.branches)]
        for part, lst in parts:
            out.append(((inst.name, part), lst))
            out += nested_lists(sched, lst)
    return out


class _ProfilingEmitter(ModuleEmitter):
    """ModuleEmitter plus one function per top-level step, counters for the step lists of
    loops and branches, and the timed entry (see module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._entry_override: str | None = None
        self.counters: list[Counter] = []

    @property
    def entry_name(self) -> str:
        return self._entry_override or f"{self.prefix}entry"

    def emit(self) -> str:
        super().emit()  # the kernels and the ordinary entry
        self._add_counters()
        calls, sched = self._calls, self.sched
        steps = []
        try:
            for k, inst in enumerate(sched.kernels):
                self._entry_override = f"{self.prefix}profile.step.{k}"
                if inst in sched.control:
                    # the entry's code for this one loop or conditional (every kernel it
                    # runs is in `_calls`, which stays the module's own list)
                    self.sched = copy.copy(sched)
                    self.sched.kernels = [inst]
                else:
                    start, end = self._call_range[inst]  # a dot's packing calls included
                    self._calls = calls[start:end]
                self._emit_entry()
                self._calls, self.sched = calls, sched
                fn = self.ir.globals[self._entry_override]
                fn.attributes.add("noinline")
                steps.append(fn)
        finally:
            self._calls, self.sched = calls, sched
            self._entry_override = None
        self._emit_timed_entry(steps)
        return str(self.ir)

    def _add_counters(self) -> None:
        """Route one serial call of each nested step list through a counting wrapper."""
        chosen: list[tuple[Counter, int]] = []
        for key, lst in nested_lists(self.sched):
            for inst in lst:
                if inst in self.sched.control:
                    continue
                start, end = self._call_range[inst]
                serial = [j for j in range(start, end) if not self._calls[j][2]]
                if serial:
                    chosen.append((key, serial[0]))
                    break
        if not chosen:
            return
        counts_ty = ir.ArrayType(I64, len(chosen))
        counts = ir.GlobalVariable(self.ir, counts_ty, name=COUNTS)
        counts.initializer = ir.Constant(counts_ty, None)
        for j, (key, call) in enumerate(chosen):
            kfn, slots, split = self._calls[call]
            # (unique: kernels with one body share `kfn`, plan/kernel_key.py)
            w = ir.Function(self.ir, kfn.function_type,
                            name=self.ir.get_unique_name(f"{kfn.name}.counted"))
            w.attributes.add("nounwind")
            b = ir.IRBuilder(w.append_basic_block("entry"))
            slot = b.bitcast(b.gep(counts, [i64(0), i64(j)], inbounds=True,
                                   source_etype=counts_ty), I64.as_pointer())
            b.store(b.add(b.load(slot, typ=I64), i64(1)), slot)
            b.call(kfn, list(w.args))
            b.ret_void()
            self._calls[call] = (w, slots, split)  # in place: `_calls` stays `_own_calls`
            self.counters.append(key)

    def _emit_timed_entry(self, steps: list[ir.Function]) -> None:
        stamps_ty = ir.ArrayType(I64, len(steps) + 1)
        stamps = ir.GlobalVariable(self.ir, stamps_ty, name=STAMPS)
        stamps.initializer = ir.Constant(stamps_ty, None)
        timespec = ir.LiteralStructType([I64, I64])  # struct timespec {tv_sec; tv_nsec}
        clock = ir.Function(self.ir, ir.FunctionType(I32, [I32, PTR]), name="clock_gettime")
        fn = ir.Function(self.ir, ir.FunctionType(VOID, [PTR]), name=PROFILE_ENTRY)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        ts = b.alloca(timespec)
        zero = ir.Constant(I32, 0)

        def stamp(k: int) -> None:
            b.call(clock, [ir.Constant(I32, CLOCK_MONOTONIC), ts])
            sec = b.load(b.gep(ts, [zero, zero], inbounds=True, source_etype=timespec), typ=I64)
            nsec = b.load(b.gep(ts, [zero, ir.Constant(I32, 1)], inbounds=True,
                                source_etype=timespec), typ=I64)
            ns = b.add(b.mul(sec, i64(1_000_000_000)), nsec)
            slot = b.gep(stamps, [i64(0), i64(k)], inbounds=True, source_etype=stamps_ty)
            b.store(ns, b.bitcast(slot, I64.as_pointer()))  # llvmlite types global pointers

        stamp(0)
        for k, step in enumerate(steps):
            b.call(step, [fn.args[0]])
            stamp(k + 1)
        b.ret_void()


def _clock_address() -> dict[str, int]:
    libc = ctypes.CDLL(None)
    return {"clock_gettime": ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value or 0}


# tells the JIT linker where libc's clock_gettime is (once per process)
_register_clock = HostSymbol.addresses(_clock_address).register


@dataclass
class ControlRuns:
    """What one top-level loop or conditional did in the last call (None: not known,
    because a step list had no serially called kernel to count)."""

    kernels: dict[Instruction, int | None] = field(default_factory=dict)  # nested kernel -> runs
    copy_bytes: float | None = 0.0  # bytes read + written by the state/result copies
    counts: dict[Counter, int | None] = field(default_factory=dict)  # step list -> runs

    @property
    def unknown(self) -> bool:
        return self.copy_bytes is None or None in self.kernels.values()


@dataclass
class ProfiledExecutable:
    """`run(*arrays) -> (outputs, [seconds per step])`; `step_names` in that order."""

    executable: Executable
    stamps: Any  # ctypes array over the module's stamps global
    counts: Any  # ctypes array over the counts global (None: no loops or branches)
    counters: list[Counter]  # what counts[j] counts
    schedule: Schedule

    @property
    def kernel_names(self) -> list[str]:
        """Every kernel, nested ones included, in emission order."""
        return self.executable.kernel_names

    @property
    def step_names(self) -> list[str]:
        """The top-level steps the timings are for: kernels, whiles and conditionals."""
        return [i.name for i in self.schedule.kernels]

    @property
    def module(self) -> Module:
        return self.executable.module

    def run(self, *args: Any) -> tuple[Any, list[float]]:
        if self.counts is not None:
            ctypes.memset(self.counts, 0, ctypes.sizeof(self.counts))
        out = self.executable(*args)
        ns = np.frombuffer(self.stamps, dtype=np.int64).copy()
        return out, [float(d) * 1e-9 for d in np.diff(ns)]

    def last_counts(self) -> dict[Counter, int]:
        """How many times each counted step list ran in the last `run`."""
        if self.counts is None:
            return {}
        return dict(zip(self.counters, (int(c) for c in self.counts)))

    def control_runs(self, step: str) -> ControlRuns:
        """Runs of every kernel and copy inside top-level loop/conditional `step`, from
        the last `run`'s counts."""
        inst = next(i for i in self.schedule.kernels if i.name == step)
        if inst not in self.schedule.control:
            raise ValueError(f"{step} is a kernel, not a loop or conditional")
        out = ControlRuns()
        _walk(self.schedule, [inst], 1, self.last_counts(), out)
        return out


def _times(a: float | int | None, b: float | int | None) -> Any:
    return None if a is None or b is None else a * b


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _copy_bytes(copies: list) -> int:
    # a memcpy of n bytes reads n and writes n
    return sum(2 * s.shape.size * s.shape.dtype.itemsize for s, _ in copies)


def _walk(sched: Schedule, steps: list[Instruction], runs: int | None,
          counts: dict[Counter, int], out: ControlRuns) -> None:
    """Record into `out` how often each kernel under `steps` ran, `steps` having run
    `runs` times. A list without a counter is inferred where the arithmetic allows:
    a loop's condition runs once more per start than its body; a conditional's branches
    add up to its runs."""
    for inst in steps:
        plan = sched.control.get(inst)
        if plan is None:
            out.kernels[inst] = runs
            continue
        if isinstance(plan, WhilePlan):
            cond = counts.get((inst.name, "cond"))
            body = counts.get((inst.name, "body"))
            if body is None and cond is not None and runs is not None:
                body = cond - runs
            if cond is None and body is not None and runs is not None:
                cond = body + runs
            out.counts[(inst.name, "cond")] = cond
            out.counts[(inst.name, "body")] = body
            moved = _plus(_times(_copy_bytes(plan.init), runs),
                          _times(_copy_bytes(plan.stage + plan.update), body))
            out.copy_bytes = _plus(out.copy_bytes, moved)
            _walk(sched, plan.cond, cond, counts, out)
            _walk(sched, plan.body, body, counts, out)
            continue
        branch = [counts.get((inst.name, f"branch{k}")) for k in range(len(plan.branches))]
        missing = [k for k, c in enumerate(branch) if c is None]
        if len(missing) == 1 and runs is not None:
            branch[missing[0]] = runs - sum(c for c in branch if c is not None)
        for k, ((lst, copies), c) in enumerate(zip(plan.branches, branch)):
            out.counts[(inst.name, f"branch{k}")] = c
            out.copy_bytes = _plus(out.copy_bytes, _times(_copy_bytes(copies), c))
            _walk(sched, lst, c, counts, out)


def compile_profiled(module: Module, *, unsafe_math: bool = False) -> ProfiledExecutable:
    """The instrumented build of `module` (see the module docstring)."""
    check_supported(module)
    t = llvm_target.target()
    _register_clock(t.llvm)
    m = optimize(module, unsafe_math=unsafe_math)
    sched = build_schedule(m)
    emitter = _ProfilingEmitter(m, sched, "ember_", parallel=t.gomp)
    text = emitter.emit()
    llmod = llvm_target.parse_and_verify(text)
    llvm_target.optimize(llmod)
    optimized = str(llmod)
    obj = llvm_target.emit_object(llmod)
    engine, address = llvm_target.load_object(obj, PROFILE_ENTRY)
    stamps = _global_array(engine, STAMPS, len(sched.kernels) + 1)
    counts = _global_array(engine, COUNTS, len(emitter.counters)) if emitter.counters else None
    spec = RuntimeSpec.from_schedule(sched, m.entry.root.shape)
    exe = Executable(spec, engine, address, emitter.kernel_names, optimized, text, module=m,
                     parallel_kernels=emitter.parallel_kernels,
                     shared_kernels=emitter.shared_kernels)
    return ProfiledExecutable(exe, stamps, counts, list(emitter.counters), sched)


def _global_array(engine: Any, name: str, n: int) -> Any:
    at = engine.get_global_value_address(name)
    if not at:
        raise llvm_target.CpuCompileError(f"{name} not found in the profiled object code")
    return (ctypes.c_int64 * n).from_address(at)


__all__ = ["ControlRuns", "ProfiledExecutable", "compile_profiled", "nested_lists"]
