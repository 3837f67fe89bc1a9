"""Per-kernel timing: an instrumented build of a module that timestamps every kernel.

Input: an HLO Module (not modified). Output: `compile_profiled(module)` -> a
`ProfiledExecutable`: called like an Executable, it returns the outputs and the seconds
each kernel took, in schedule order (`kernel_names`).
How: the module is optimized, scheduled and emitted exactly as `compiler.py` does it (the
same kernels, the same `ember_entry`), and the emitter here adds
- `ember_kernel.<k>(ptr table)`, one entry per kernel (the ordinary entry's code restricted
  to kernel k, GOMP threading included), marked noinline; and
- `ember_profile(ptr table)`, which reads CLOCK_MONOTONIC through libc's `clock_gettime`
  (vDSO: ~20 ns, ns resolution) before the first kernel and after each one into the global
  `i64 ember_profile_stamps[n + 1]`, calling the per-kernel entries in between.
`ember_profile` is the executable's entry point, so the Executable class (pointer table,
outputs, caching allocator) is reused unchanged, and kernel k took
`stamps[k + 1] - stamps[k]` nanoseconds. The clock calls are opaque to LLVM and the kernels
write memory reachable from the table, so no kernel work moves across a timestamp.
Invariants: never cached (profiling is rare and its code differs from the production
build); Linux only (CLOCK_MONOTONIC = 1); the stamps global belongs to one executable, so
profile one call at a time per ProfiledExecutable.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir
import numpy as np

from ember.backends.cpu import llvm_target
from ember.backends.cpu.compiler import _optimized
from ember.backends.cpu.emitter import ModuleEmitter
from ember.backends.cpu.executable import Executable
from ember.backends.cpu.irtypes import I32, I64, PTR, VOID, i64
from ember.backends.cpu.runtime_spec import RuntimeSpec
from ember.backends.cpu.schedule import build_schedule
from ember.backends.cpu.support import check_supported
from ember.hlo.ir import Module

PROFILE_ENTRY = "ember_profile"
STAMPS = "ember_profile_stamps"
CLOCK_MONOTONIC = 1
_CLOCK_REGISTERED = False


class _ProfilingEmitter(ModuleEmitter):
    """ModuleEmitter plus one entry per kernel and the timed entry (see module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._entry_override: str | None = None

    @property
    def entry_name(self) -> str:
        return self._entry_override or f"{self.prefix}entry"

    def emit(self) -> str:
        super().emit()  # the kernels and the ordinary entry
        calls = self._calls
        steps = []
        try:
            for k, call in enumerate(calls):
                self._calls = [call]
                self._entry_override = f"{self.prefix}kernel.{k}"
                self._emit_entry()
                fn = self.ir.globals[self._entry_override]
                fn.attributes.add("noinline")
                steps.append(fn)
        finally:
            self._calls = calls
            self._entry_override = None
        self._emit_timed_entry(steps)
        return str(self.ir)

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


def _register_clock(llvm: Any) -> None:
    """Tell the JIT linker where libc's clock_gettime is (once per process)."""
    global _CLOCK_REGISTERED
    if not _CLOCK_REGISTERED:
        libc = ctypes.CDLL(None)
        llvm.add_symbol("clock_gettime",
                        ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value)
        _CLOCK_REGISTERED = True


@dataclass
class ProfiledExecutable:
    """`run(*arrays) -> (outputs, [seconds per kernel])`; `kernel_names` in that order."""

    executable: Executable
    stamps: Any  # ctypes array over the module's stamps global

    @property
    def kernel_names(self) -> list[str]:
        return self.executable.kernel_names

    @property
    def module(self) -> Module:
        return self.executable.module

    def run(self, *args: Any) -> tuple[Any, list[float]]:
        out = self.executable(*args)
        ns = np.frombuffer(self.stamps, dtype=np.int64).copy()
        return out, [float(d) * 1e-9 for d in np.diff(ns)]


def compile_profiled(module: Module, *, unsafe_math: bool = False) -> ProfiledExecutable:
    """The instrumented build of `module` (see the module docstring)."""
    check_supported(module)
    t = llvm_target.target()
    _register_clock(t.llvm)
    m = _optimized(module, unsafe_math, True)
    sched = build_schedule(m)
    if sched.control:  # one timed call per kernel would run a loop's body once
        raise llvm_target.CpuCompileError("per-kernel profiling of native while/conditional "
                                          "(loops_native.py) is not supported yet")
    emitter = _ProfilingEmitter(m, sched, "ember_", parallel=t.gomp)
    text = emitter.emit()
    llmod = llvm_target.parse_and_verify(text)
    llvm_target.optimize(llmod)
    optimized = str(llmod)
    obj = llvm_target.emit_object(llmod)
    engine, address = llvm_target.load_object(obj, PROFILE_ENTRY)
    stamps_at = engine.get_global_value_address(STAMPS)
    if not stamps_at:
        raise llvm_target.CpuCompileError(f"{STAMPS} not found in the profiled object code")
    stamps = (ctypes.c_int64 * (len(emitter.kernel_names) + 1)).from_address(stamps_at)
    spec = RuntimeSpec.from_schedule(sched, m.entry.root.shape)
    exe = Executable(spec, engine, address, emitter.kernel_names, optimized, text, module=m,
                     parallel_kernels=emitter.parallel_kernels)
    return ProfiledExecutable(exe, stamps)
