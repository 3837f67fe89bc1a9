"""LLVM for the host: lazy initialization, the target machine, O3 optimization (loop
interleaving, unrolling and epilogue vectorization optional, and O1 with both vectorizers,
for small work: see compile_effort.py), object code, and loading it.

Input: LLVM IR text. Output: an optimized `llvm.ModuleRef`, its object code (bytes, what the
disk cache stores), and, once loaded, an MCJIT engine of its own plus the entry address.
One engine per executable because MCJIT never frees a module's code while its engine lives:
dropping the executable (LRU eviction, garbage collection) disposes its engine and frees
the code. Nothing here runs at `import ember`: the first `target()` call imports llvmlite
and initializes LLVM (counted in `STATS`, with every optimization and code generation run,
so a test can tell that a warm disk cache ran neither).
Also the runtime of kernels' precise copies compiled on first use (`LazyPrecise`, the
`ember_precise_resolve` callback: lazy_precise.py has the why and the emission side).
Invariants: IR is parsed and verified before any pass (a bad module raises
`CpuCompileError`, never reaches LLVM's asserting passes); the target machine is built from
the host CPU name and features so the vectorizer uses the widest vectors the host has.
"""

from __future__ import annotations

import ctypes
import importlib
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.host_symbol import HostSymbol

STATS: dict[str, float] = {"llvm_init_s": 0.0, "optimize_s": 0.0, "codegen_s": 0.0,
                           "modules_compiled": 0, "optimize_runs": 0, "codegen_runs": 0,
                           "objects_loaded": 0, "light_runs": 0}
_LOCK = threading.RLock()


@dataclass
class Target:
    llvm: Any  # the llvmlite.binding module
    machine: Any  # TargetMachine for optimization and object code
    cpu_name: str
    features: str
    triple: str
    gomp: bool  # the thread pool's ember_parallel_for is visible to the JIT linker (pool.py)

    @property
    def key(self) -> str:
        """What the generated code depends on, for cache keys."""
        v = ".".join(map(str, self.llvm.llvm_version_info))
        return f"{self.triple}|{self.cpu_name}|{self.features}|llvm{v}|gomp={self.gomp}"

    def new_machine(self) -> Any:
        return self.llvm.Target.from_triple(self.triple).create_target_machine(
            cpu=self.cpu_name, features=self.features, opt=3, reloc="default",
            codemodel="jitdefault")


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
            features = host_features(triple, llvm.get_host_cpu_features().flatten())
            from ember.backends.cpu.runtime.threads import register_symbols

            tm = llvm.Target.from_triple(triple).create_target_machine(
                cpu=cpu, features=features, opt=3, reloc="default", codemodel="jitdefault")
            _TARGET = Target(llvm, tm, cpu, features, triple, register_symbols(llvm))
            STATS["llvm_init_s"] = time.perf_counter() - t0
        return _TARGET


def parse_and_verify(ir_text: str) -> Any:
    t = target()
    try:
        # a context per module: types and constants interned in a context live as long as
        # it does, so the global context would grow by tens of KB per compiled module
        mod = t.llvm.parse_assembly(ir_text, context=t.llvm.create_context())
        mod.verify()
    except RuntimeError as e:
        raise CpuCompileError(f"invalid LLVM IR: {e}") from None
    mod.triple = t.triple
    mod.data_layout = str(t.machine.target_data)
    return mod


# Loop passes tuned by the work a module does (compile_effort.py chooses). The full pipeline
# interleaves vector loops (two vectors per iteration), unrolls loops and vectorizes
# remainders with a narrower "epilogue" loop: worth it when loops run long, but a quarter
# of the LLVM time of a small kernel (the fusion example at 1000 elements) that runs for a
# microsecond. Every variant keeps O3 and loop/SLP vectorization at the full vector width.
_EPILOGUE_OPTION = "-enable-epilogue-vectorization"  # an LLVM cl::opt of the LoopVectorizer
_epilogue_on = True


def optimize(mod: Any, *, interleave: bool = True, unroll: bool = True,
             epilogue: bool = True, level: int = 3) -> None:
    """The new pass manager's O`level` pipeline (O3 unless told) with loop and SLP
    vectorization on; the flags turn off loop interleaving, unrolling and epilogue
    vectorization (for small work, which also takes O1: compile_effort.py)."""
    t = target()
    t0 = time.perf_counter()
    variants = _has_vector_variants(mod)  # (before the pipeline drops the marker)
    with _LOCK:
        _set_epilogue_vectorization(t, epilogue)
        pto = t.llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = unroll
        pto.loop_interleaving = interleave
        pb = t.llvm.create_pass_builder(t.machine, pto)
        pm = pb.getModulePassManager()
        try:
            pm.run(mod, pb)
        finally:
            _dispose_pass_manager(pm)
        # Vector math variants (mathlib/vec.py) are called by the loops the vectorizer made,
        # after the pipeline's inliner ran: inline them now (they are alwaysinline), so a
        # loop keeps their constants in registers instead of reloading ~30 per call (pow
        # f32 1.43 -> 1.1-1.2 ns per element on one thread). Only modules that have such
        # variants: the extra pass manager costs ~0.2 ms of every other compile.
        # A pass builder runs once: llvmlite 0.50's run registers the callbacks of an
        # instrumentation object on its own stack into the builder and never removes
        # them, so a second run through the same builder calls into a dead frame (a
        # builder kept for the process crashed in threads). Each builder leaks ~1.5 KB
        # (its callbacks are never freed: tests/codegen/test_live_code.py bounds it).
        if variants:
            late = t.llvm.create_new_module_pass_manager()
            late.add_always_inliner_pass()
            try:
                late.run(mod, t.llvm.create_pass_builder(t.machine, pto))
            finally:
                _dispose_pass_manager(late)
    STATS["optimize_s"] += time.perf_counter() - t0
    STATS["optimize_runs"] += 1
    if not (interleave and unroll and epilogue):
        STATS["light_runs"] += 1


def _has_vector_variants(mod: Any) -> bool:
    """Whether `mod` defines vector math variants: vec.py keeps each alive through
    `llvm.compiler.used`, which nothing else in Ember's modules uses."""
    try:
        mod.get_global_variable("llvm.compiler.used")
    except NameError:
        return False
    return True


def _set_epilogue_vectorization(t: Target, on: bool) -> None:
    """Toggle LLVM's process-wide option (called under _LOCK, so no pipeline runs while
    it changes). Only on the LLVM this llvmlite pins (major 22, checked): an option LLVM
    does not know makes its command-line parser exit the process."""
    global _epilogue_on
    if on == _epilogue_on or t.llvm.llvm_version_info[0] != 22:
        return
    t.llvm.set_option("ember", f"{_EPILOGUE_OPTION}={'true' if on else 'false'}")
    _epilogue_on = on


def _dispose_pass_manager(pm: Any) -> None:
    """llvmlite 0.50's ModulePassManager never frees itself (its `_dispose` is the base
    class's no-op), leaking ~35 KB per compiled module: free it through the C API."""
    from llvmlite.binding import ffi

    dispose = getattr(ffi.lib, "LLVMPY_DisposeNewModulePassManger", None)
    if dispose is not None and not pm.closed:
        dispose(pm)
        pm.detach()


def emit_object(mod: Any) -> bytes:
    """Native object code of an optimized module."""
    t = target()
    t0 = time.perf_counter()
    with _LOCK:
        obj = t.machine.emit_object(mod)
    STATS["codegen_s"] += time.perf_counter() - t0
    STATS["codegen_runs"] += 1
    return bytes(obj)


# Symbols the JIT linker must know before it links code naming them: a prefix an object's
# symbol table may hold -> "module:function(llvm)" that publishes them. An object names them
# in its symbol table, so a substring test says whether to import their modules at all
# (blas + callbacks cost ~2 ms of a warm process's first call otherwise). A new library of
# native helpers adds one row.
SYMBOL_PROVIDERS: dict[bytes, str] = {
    b"ember_blas_": "ember.backends.cpu.dot.blas:register_symbols",
    b"ember_lapack_": "ember.backends.cpu.lapack.find:register_symbols",
    b"ember_python_callback": "ember.backends.cpu.emit.callbacks:register_symbols",
    b"ember_fft": "ember.backends.cpu.emit.fft:register_symbols",
    b"ember_gemm_": "ember.backends.cpu.dot.gemm:register_symbols",
    b"ember_precise_resolve": "ember.backends.cpu.jit.llvm_target:register_precise_symbol",
}


def provider(spec: str) -> Callable[[Any], None]:
    """The function a SYMBOL_PROVIDERS row names (its module imported now)."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def load_object(obj: bytes, entry_name: str) -> tuple[Any, int]:
    """Link `obj` into a fresh engine; returns (engine, entry address). The engine owns
    the code: keep it alive as long as the address is used."""
    t = target()
    for prefix, spec in SYMBOL_PROVIDERS.items():
        if prefix in obj:
            provider(spec)(t.llvm)
    _check_host_object(obj)
    ref = t.llvm.ObjectFileRef.from_data(obj)
    if not ref:  # LLVM could not parse it: llvmlite hands back a null reference, which
        # the engine would dereference (a segfault, not an error)
        raise CpuCompileError("not an object file LLVM can read for this host")
    with _LOCK:
        # The engine links `obj` (machine code already) and generates no code, so its
        # target machine only supplies the data layout, which does not depend on the CPU:
        # a generic one costs a third of the host's to build (its long feature list).
        machine = t.llvm.Target.from_triple(t.triple).create_target_machine(
            reloc="default", codemodel="jitdefault")
        engine = t.llvm.create_mcjit_compiler(t.llvm.parse_assembly(""), machine)
        engine.add_object_file(ref)
        # no finalize_object(): it would generate code for the empty placeholder module
        # (~0.7 ms, 1.5 ms the first time); looking the entry up resolves the object's
        # relocations and makes its memory executable all the same (MCJIT's
        # getFunctionAddress finalizes every loaded object once it finds the symbol)
        addr = engine.get_function_address(entry_name)
    STATS["objects_loaded"] += 1
    if not addr:
        raise CpuCompileError(f"entry point {entry_name} not found in the object code")
    return engine, addr


def _check_host_object(obj: bytes) -> None:
    """CpuCompileError unless `obj`'s header names this host's architecture: LLVM's JIT
    links another architecture's object without complaint, and calling into it crashes."""
    from ember.backends.cpu.jit.object_format import foreign_reason

    reason = foreign_reason(obj)
    if reason is not None:
        raise CpuCompileError(f"object code for another machine: {reason}")


def cached_entry(key: str, entry_name: str, meta: dict[str, Any],
                 build: Callable[[], bytes]) -> tuple[Any, int, bool]:
    """(engine, entry address, from_disk) of object code kept in the disk cache under
    `key`: the cached entry when one is there and links, else `build()`'s object code,
    linked and then stored with `meta`. A cached entry that fails to link counts as
    rejected and is rebuilt (what the eager math kernels and the fast-call trampoline
    share)."""
    from ember.backends.cpu.jit import disk_cache

    found = disk_cache.load(key)
    if found is not None:
        try:
            engine, addr = load_object(found[2], entry_name)
            return engine, addr, True
        except (ValueError, RuntimeError, CpuCompileError):
            disk_cache.STATS["disk_rejected"] += 1
    obj = build()
    engine, addr = load_object(obj, entry_name)
    disk_cache.store(key, meta, b"", obj)
    return engine, addr, False


def host_features(triple: str, features: str) -> str:
    """The feature string every module is built with: the host's, plus "-prefer-256-bit"
    on x86 hosts with AVX-512. LLVM's tuning for Intel server cores (skylake-avx512,
    icelake-server, ...) prefers 256-bit vectors, so its vectorizer splits every loop,
    and legalization splits Ember's explicit 512-bit math, into ymm halves. Ember's
    kernels are vector math and streaming loops, where the full width pays: measured on
    an icelake-server host (one thread, 64K elements): exp f32 0.77 -> 0.60 ns per
    element, atanh f64 5.4 -> 2.9, pow f32 3.4 -> 1.2; a 4096x1024 logsumexp over rows
    2.6 -> 1.7 ms on two threads."""
    if triple.startswith(("x86_64", "i686", "i386")) and "+avx512f" in features.split(","):
        return features + ",-prefer-256-bit"
    return features


def host_has(*features: str) -> bool:
    """Whether the host target (what every module is built for) has all these LLVM
    features, spelled as LLVM lists them ("+avx512f")."""
    have = target().features.split(",")
    return all(f in have for f in features)


def vector_bytes(features: str) -> int:
    """Bytes of the widest vector register of a host with these LLVM features: 64 with
    AVX-512, 32 with AVX, else 16 (SSE)."""
    return 64 if "+avx512f" in features else 32 if "+avx" in features else 16


def link_library(obj: bytes, symbols: tuple[str, ...]) -> Any:
    """Link a library's object code into an engine of its own and publish `symbols` to
    the JIT linker, for object code loaded later that names them. Returns the engine:
    keep it alive as long as the symbols may be called."""
    t = target()
    llvm = t.llvm
    _check_host_object(obj)
    ref = llvm.ObjectFileRef.from_data(obj)
    if not ref:  # (a null reference: the engine would dereference it)
        raise CpuCompileError("not an object file LLVM can read for this host")
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), t.new_machine())
    engine.add_object_file(ref)
    engine.finalize_object()
    for sym in symbols:
        llvm.add_symbol(sym, engine.get_function_address(sym))
    return engine


def assembly(ir_text: str) -> str:
    """Native assembly of optimized IR text (parsed afresh: the JIT owns its module)."""
    t = target()
    mod = t.llvm.parse_assembly(ir_text)
    return t.machine.emit_assembly(mod)


# -- kernels' precise copies, linked on first use (lazy_precise.py) --------------------------
# Here rather than in lazy_precise.py: a disk-cache hit links objects that name
# PRECISE_SYMBOL, and this module is imported then anyway (an import costs ~0.2 ms here).

PRECISE_SYMBOL = "ember_precise_resolve"  # void (ptr slot): fills that slot's executable's
PRECISE_SLOT_SUFFIX = ".slot"  # `@"<kernel>.precise.slot"`, one pointer per copy
PRECISE_STATS: dict[str, int] = {"resolved": 0, "failed": 0}
_PRECISE: dict[int, weakref.ref] = {}  # slot address -> its executable's LazyPrecise
_PRECISE_LOCK = threading.Lock()
_TRAMPOLINE: Any = None  # the ctypes callback, made (and kept alive) on first use


class LazyPrecise:
    """An executable's precise copies, compiled on first use: `build()` compiles its full
    module and returns (engine, copy name -> address, {"llvm_ir", "unoptimized_ir"}
    texts); `engine` is the main module's, whose slots (`<name>.slot`) it fills."""

    def __init__(self, engine: Any, names: list[str],
                 build: Callable[[], tuple[Any, dict[str, int], dict[str, str]]]) -> None:
        self.names = list(names)
        self._build = build
        self._lock = threading.Lock()
        self._engine: Any = None  # the full module's engine: owns the copies' code
        self._texts: dict[str, str] | None = None
        # why the build failed (None: it did not): the calling code raises it after the
        # native call (`raise_if_failed`), since a callback cannot raise through LLVM code
        self.failure: str | None = None
        self.slots = {n: engine.get_global_value_address(n + PRECISE_SLOT_SUFFIX)
                      for n in names}
        ref = weakref.ref(self)
        with _PRECISE_LOCK:
            for addr in self.slots.values():
                _PRECISE[addr] = ref
        weakref.finalize(self, _unregister_precise, list(self.slots.values()), ref)

    def resolve(self) -> None:
        """Compile the copies (once) and fill every slot; on failure record why in
        `failure` (the slots stay null: the kernel keeps its fast results, which the
        caller then discards by raising)."""
        with self._lock:
            if self._engine is not None or self.failure is not None:
                return
            try:
                engine, addrs, texts = self._build()
                missing = [n for n in self.names if not addrs.get(n)]
                if missing:
                    raise RuntimeError(f"precise copies not found: {missing}")
            except Exception as e:  # (inside a native call: nothing may propagate)
                self.failure = f"{type(e).__name__}: {e}"
                PRECISE_STATS["failed"] += 1
                return
            self._engine, self._texts = engine, texts
            for n, addr in self.slots.items():  # (aligned pointer stores, code linked)
                ctypes.c_void_p.from_address(addr).value = addrs[n]
            PRECISE_STATS["resolved"] += 1

    def raise_if_failed(self) -> None:
        """After a call: CpuCompileError if the copies could not be compiled. Once they
        fail, every call of the executable raises (results for arguments beyond the fast
        range would be wrong), whether or not it needed them."""
        if self.failure is not None:
            raise CpuCompileError(
                f"compiling the precise copies of {', '.join(self.names)} failed "
                f"({self.failure}); without them arguments beyond the fast range of "
                "sin/cos/tan cannot be computed, so this executable's calls raise")

    def texts(self) -> dict[str, str]:
        """The full module's IR texts (compiling it, and filling the slots, if not yet)."""
        self.resolve()
        if self._texts is None:
            raise RuntimeError("the precise copies could not be compiled")
        return self._texts


def _unregister_precise(addrs: list[int], ref: weakref.ref) -> None:
    with _PRECISE_LOCK:
        for a in addrs:
            if _PRECISE.get(a) is ref:
                del _PRECISE[a]


def resolve_precise(slot: int) -> None:
    """What native code calls through PRECISE_SYMBOL (GIL taken by ctypes): compile and
    fill the copies of the executable owning `slot`; an unknown slot is left alone (null:
    the kernel's stub then skips the rerun)."""
    ref = _PRECISE.get(slot or 0)
    owner = ref() if ref is not None else None
    if owner is not None:
        owner.resolve()


# binds PRECISE_SYMBOL for the JIT linker (before linking an object that names it)
register_precise_symbol = HostSymbol.trampoline(PRECISE_SYMBOL, resolve_precise,
                                                [ctypes.c_void_p]).register
