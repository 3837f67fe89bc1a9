"""LLVM for the host: lazy initialization, the target machine, O3 optimization, the JIT.

Input: LLVM IR text. Output: an optimized `llvm.ModuleRef` added to the shared MCJIT engine
and the address of its entry function. Nothing here runs at `import ember`: the first
`target()` call imports llvmlite and initializes LLVM (counted in `STATS`).
Invariants: IR is parsed and verified before any pass (a bad module raises
`CpuCompileError`, never reaches LLVM's asserting passes); the target machine is built from
the host CPU name and features so the vectorizer uses the widest vectors the host has.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from ember.backends.cpu.errors import CpuCompileError

STATS: dict[str, float] = {"llvm_init_s": 0.0, "optimize_s": 0.0, "codegen_s": 0.0,
                           "modules_compiled": 0}
_LOCK = threading.RLock()


@dataclass
class Target:
    llvm: Any  # the llvmlite.binding module
    machine: Any  # TargetMachine
    engine: Any  # ExecutionEngine (MCJIT), shared by every executable
    cpu_name: str
    features: str
    triple: str

    @property
    def key(self) -> str:
        """What the generated code depends on, for cache keys."""
        return f"{self.triple}|{self.cpu_name}|{self.features}"


_TARGET: Target | None = None


def target() -> Target:
    """The host target, initializing LLVM on the first call."""
    global _TARGET
    with _LOCK:
        if _TARGET is None:
            t0 = time.perf_counter()
            import llvmlite.binding as llvm

            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            triple = llvm.get_process_triple()
            cpu = llvm.get_host_cpu_name()
            features = llvm.get_host_cpu_features().flatten()
            tm = llvm.Target.from_triple(triple).create_target_machine(
                cpu=cpu, features=features, opt=3, reloc="default", codemodel="jitdefault")
            backing = llvm.parse_assembly("")
            engine = llvm.create_mcjit_compiler(backing, tm)
            _TARGET = Target(llvm, tm, engine, cpu, features, triple)
            STATS["llvm_init_s"] = time.perf_counter() - t0
        return _TARGET


def parse_and_verify(ir_text: str) -> Any:
    t = target()
    try:
        mod = t.llvm.parse_assembly(ir_text)
        mod.verify()
    except RuntimeError as e:
        raise CpuCompileError(f"invalid LLVM IR: {e}") from None
    mod.triple = t.triple
    mod.data_layout = str(t.machine.target_data)
    return mod


def optimize(mod: Any) -> None:
    """The new pass manager's O3 pipeline with loop and SLP vectorization on."""
    t = target()
    t0 = time.perf_counter()
    with _LOCK:
        pto = t.llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pb = t.llvm.create_pass_builder(t.machine, pto)
        pm = pb.getModulePassManager()
        pm.run(mod, pb)
    STATS["optimize_s"] += time.perf_counter() - t0


def add_to_engine(mod: Any, entry_name: str) -> int:
    """JIT `mod` into the shared engine; returns the entry function's address."""
    t = target()
    t0 = time.perf_counter()
    with _LOCK:
        t.engine.add_module(mod)
        t.engine.finalize_object()
        addr = t.engine.get_function_address(entry_name)
    STATS["codegen_s"] += time.perf_counter() - t0
    STATS["modules_compiled"] += 1
    if not addr:
        raise CpuCompileError(f"entry point {entry_name} not found after JIT")
    return addr


def remove_from_engine(mod: Any) -> None:
    t = target()
    with _LOCK:
        try:
            t.engine.remove_module(mod)
        except RuntimeError:
            pass


def assembly(ir_text: str) -> str:
    """Native assembly of optimized IR text (parsed afresh: the JIT owns its module)."""
    t = target()
    mod = t.llvm.parse_assembly(ir_text)
    return t.machine.emit_assembly(mod)
