"""compile(module) -> Executable: passes, schedule, LLVM emission, object code, caches.

Input: an HLO Module (not modified: a clone is optimized). Output: an `Executable`.
Caches, in order: in memory (an LRU of `CACHE_SIZE` executables keyed by the canonical HLO
text, the options and the target; an evicted executable's code is freed once nothing else
references it, because each executable owns its MCJIT engine), then on disk
(`disk_cache.py`: object code, so a fresh process runs no LLVM optimization or code
generation on a hit; the IR texts are decoded only when someone reads them). `STATS`
counts compiles, hits and evictions. How hard LLVM works on loops follows the module's
size (`compile_effort.py`). A disk-cache hit imports neither the code generator nor any
pass (nor ember.passes.base: `disabled_passes` comes from the lazy package).
Kernels' precise copies (fast sin/cos/tan beyond their range) are not in the compiled
module: the first call that needs one compiles the executable's full module, copies
included (`lazy_precise.py`; meta["precise"] names them, for disk-cache hits too).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember.backends.cpu.collectives import as_host_callbacks
from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.backends.cpu.jit import disk_cache, llvm_target
from ember.backends.cpu.plan.runtime_spec import RuntimeSpec
from ember.backends.cpu.runtime.executable import Executable
from ember.backends.cpu.support import check_supported
from ember.config import config
from ember.hlo.ir import Module
from ember.hlo.printer import canonical_text
from ember.passes import disabled_passes  # (lazy package: imports no pass)

if TYPE_CHECKING:  # (a disk-cache hit runs no pass: only a compile imports them)
    from ember.passes.base import PassPipeline

CACHE_SIZE = 256
STATS: dict[str, int] = {"compiles": 0, "cache_hits": 0, "evictions": 0}
_CACHE: OrderedDict[str, Executable] = OrderedDict()
_LOCK = threading.Lock()
ENTRY = "ember_entry"  # one engine per executable: fixed symbol names never collide
# Opcodes the CPU compiles only as the window-expansion pass rewrites them.
_WINDOWED = frozenset({"convolution", "reduce-window"})


def pipeline(unsafe_math: bool = False) -> PassPipeline:
    """Inlining of calls, window expansion, complex dots as real ones,
    hardware-independent simplification, the optimization barriers' removal, transpose
    folding (into dots), float normalization (float16/bfloat16 sums and dots accumulate in
    float32), bfloat16 expansion (bf16 arithmetic in float32, rounded after each op),
    argmax splitting (argmax/argmin as two plain reductions), reduction splitting (large
    few-output reductions in two, for threads), layout assignment (before fusion, as in
    XLA's CPU pipeline), then fusion."""
    from ember.passes import hardware_independent_pipeline
    from ember.passes.base import OnOpcodes, PassPipeline
    from ember.passes.bf16_expansion import Bf16Expansion
    from ember.passes.fusion import Fusion, FusionPolicy
    from ember.passes.layout_assignment import LayoutAssignment

    # (the passes only dots and reductions need load with the first such module)
    return PassPipeline("cpu", [
        # (the CPU backend has no call kernels; the pass loads with the first call)
        OnOpcodes("call-inlining", "ember.passes.call_inlining:CallInlining",
                  frozenset({"call"})),
        # convolutions as im2col + dot, reduce-windows as slices (no kernels of their own)
        OnOpcodes("window-expansion", "ember.passes.window_expansion:WindowExpansion",
                  _WINDOWED),
        # complex products as four real ones, but those BLAS's cgemm/zgemm run
        OnOpcodes("complex-dot-expansion",
                  "ember.backends.cpu.dot.complex_expansion:CpuComplexDotExpansion",
                  frozenset({"dot"})),
        hardware_independent_pipeline(unsafe_math),
        # (after the simplification whose CSE the barriers fence: prevent_cse)
        OnOpcodes("barrier-removal", "ember.passes.barrier_removal:OptimizationBarrierRemoval",
                  frozenset({"opt-barrier"})),
        OnOpcodes("transpose-folding", "ember.passes.transpose_folding:TransposeFolding",
                  frozenset({"dot"})),
        # float16/bfloat16 sums and dots accumulate in float32 (before fusion: the converts
        # fuse; before splitting: the partial sums are float32 too)
        OnOpcodes("float-normalization", "ember.passes.float_normalization:FloatNormalization",
                  frozenset({"reduce", "dot"})),
        # bfloat16 arithmetic in float32, rounded back after each op, as XLA's CPU backend
        # (after float normalization, whose widened sums and dots it leaves alone)
        Bf16Expansion(),
        # argmax/argmin as a max and a first-hit min: two reductions that vectorize
        OnOpcodes("argmax-splitting", "ember.passes.argmax_splitting:ArgmaxSplitting",
                  frozenset({"reduce"})),
        OnOpcodes("reduction-splitting", "ember.passes.reduction_splitting:ReductionSplitting",
                  frozenset({"reduce"})),
        LayoutAssignment(),
        # the CPU code generator runs every kind: dot epilogues on cache-sized blocks of
        # the product, row kernels, multi-output reductions and loop kernels (a loop
        # body's carry and the values read from it in one pass; loop kernels sharing
        # values or inputs as one multi-output kernel)
        Fusion(FusionPolicy(output_fusion=True, row_fusion=True, sibling_fusion=True,
                            carry_fusion=True, multi_output_fusion=True))])


def clear_cache() -> None:
    """Forget every in-memory executable (their code is freed when unreferenced)."""
    with _LOCK:
        _CACHE.clear()


def compile(module: Module, *, unsafe_math: bool = False, run_passes: bool = True,
            use_cache: bool = True, donated: tuple[int, ...] = ()) -> Executable:
    """Compile `module` for the host CPU (raises UnsupportedOnCpu for modules the
    interpreter must run). `use_cache=False` skips both caches. `donated`: parameter
    numbers whose memory outputs of the same shape may take (Executable `owned`).
    Collectives become host callbacks first (collectives.py)."""
    module = as_host_callbacks(module)
    check_supported(module)
    target = llvm_target.target()
    off = ",".join(sorted(disabled_passes())) if run_passes else ""
    donated = tuple(sorted(set(donated)))
    options = (f"unsafe={unsafe_math}|passes={run_passes}|disabled={off}|donated={donated}"
               f"|matmul={config.ember_matmul_backend}")
    text = canonical_text(module)
    key = f"{target.key}|{options}\n{text}"
    if use_cache:
        with _LOCK:
            hit = _CACHE.get(key)
            if hit is not None:
                _CACHE.move_to_end(key)
                STATS["cache_hits"] += 1
                return hit
    exe = None
    # (with the disk cache off nothing is hashed: no key, no lookup, no store)
    use_disk = use_cache and disk_cache.enabled()
    disk_key = disk_cache.make_key(text, options, target.key) if use_disk else ""
    if use_disk:
        exe = _from_disk(disk_key, module, unsafe_math, run_passes, donated)
    if exe is None:
        exe, meta, consts, obj, texts = _compile_uncached(module, unsafe_math, run_passes,
                                                          donated)
        if use_disk:  # (the IR texts in a section a warm process decodes only on use)
            disk_cache.store(disk_key, meta, consts, obj, texts=texts)
    if use_cache:
        with _LOCK:
            _CACHE[key] = exe
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
                STATS["evictions"] += 1
    return exe


def optimize(module: Module, *, unsafe_math: bool = False, run_passes: bool = True) -> Module:
    """The optimized module the code generator compiles: a clone of `module` through
    `pipeline(unsafe_math)` (calls inlined first), or through call inlining and bf16
    expansion alone when `run_passes` is False (`module` is not modified). Deterministic:
    the same module gives the same names and schedule."""
    from ember.passes import bf16_expansion

    m = as_host_callbacks(module).clone()
    if run_passes:
        pipeline(unsafe_math).run(m)
    else:
        if any(i.opcode == "call" for i in m.entry.instructions):
            # (the one rewrite the code generator cannot do without)
            from ember.passes.call_inlining import CallInlining

            CallInlining().run(m)
        bf16_expansion.Bf16Expansion().run(m)  # (the code generator has no bf16 arithmetic)
    if any(i.opcode == "call" for i in m.entry.instructions):  # call-inlining disabled
        raise UnsupportedOnCpu({"call"}, "the CPU backend needs the call-inlining pass")
    if bf16_expansion.has_bf16_arithmetic(m):  # bf16-expansion disabled
        raise UnsupportedOnCpu({"(bf16 arithmetic)"},
                               "the CPU backend needs the bf16-expansion pass")
    opcodes = {i.opcode for c in m.computations for i in c.instructions}
    windowed = opcodes & _WINDOWED
    if windowed and not run_passes:  # (the other rewrite the code generator needs)
        from ember.passes.window_expansion import WindowExpansion

        WindowExpansion().run(m)
        opcodes = {i.opcode for c in m.computations for i in c.instructions}  # (dots now)
    elif windowed:  # window-expansion disabled
        raise UnsupportedOnCpu(windowed, "the CPU backend needs the window-expansion pass")
    complex_dots = [i for c in m.computations for i in c.instructions
                    if i.opcode == "dot" and i.shape.element_type in ("c64", "c128")
                    ] if "dot" in opcodes else []
    if complex_dots:  # (dot/plan.py loads only for modules that have them)
        from ember.backends.cpu.dot.plan import complex_gemm_runs
        complex_dots = [i for i in complex_dots if not complex_gemm_runs(i)]
    if complex_dots:
        if run_passes:  # complex-dot-expansion disabled
            raise UnsupportedOnCpu({"dot on complex values"},
                                   "the CPU backend needs the complex-dot-expansion pass")
        from ember.backends.cpu.dot.complex_expansion import CpuComplexDotExpansion

        CpuComplexDotExpansion().run(m)
    return m


def _emit_and_load(m: Module, donated: tuple[int, ...], precise: str | None
                   ) -> tuple[Any, Any, Any, int, bytes, str, str]:
    """Schedule, emit (`precise`: ModuleEmitter's mode), optimize, compile and load the
    optimized module `m`: (emitter, schedule, engine, entry address, object code,
    optimized IR, unoptimized IR)."""
    t = llvm_target.target()
    # (imported here: a disk-cache hit needs neither, and a fresh process's first call
    # should not pay for importing the code generator)
    from ember.backends.cpu.emit.emitter import ModuleEmitter
    from ember.backends.cpu.jit.compile_effort import optimize_options
    from ember.backends.cpu.plan.schedule import build_schedule

    sched = build_schedule(m, donated)
    emitter = ModuleEmitter(m, sched, "ember_", parallel=t.gomp, precise=precise)
    text = emitter.emit()
    llmod = llvm_target.parse_and_verify(text)
    llvm_target.optimize(llmod, **optimize_options(m))  # small work: cheaper passes
    optimized = str(llmod)
    obj = llvm_target.emit_object(llmod)
    engine, address = llvm_target.load_object(obj, emitter.entry_name)
    return emitter, sched, engine, address, obj, optimized, text


def _compile_uncached(module: Module, unsafe_math: bool, run_passes: bool,
                      donated: tuple[int, ...] = ()
                      ) -> tuple[Executable, dict, bytes, bytes, dict[str, str]]:
    m = optimize(module, unsafe_math=unsafe_math, run_passes=run_passes)
    # kernels' precise copies compile on first use (lazy_precise.py)
    emitter, sched, engine, address, obj, optimized, text = _emit_and_load(m, donated, "lazy")
    spec = RuntimeSpec.from_schedule(sched, m.entry.root.shape)
    spec.code_bytes = len(obj)
    STATS["compiles"] += 1
    names = emitter.precise_names
    precise = _lazy_precise(engine, names, lambda: m, donated) if names else None
    exe = Executable(spec, engine, address, emitter.kernel_names,
                     *_texts(optimized, text, precise), module=m,
                     parallel_kernels=emitter.parallel_kernels, precise=precise,
                     shared_kernels=emitter.shared_kernels)
    meta, consts = spec.to_bytes()
    meta.update(entry=emitter.entry_name, kernel_names=emitter.kernel_names,
                parallel_kernels=emitter.parallel_kernels, precise=names,
                shared_kernels=emitter.shared_kernels)
    return exe, meta, consts, obj, {"llvm_ir": optimized, "unoptimized_ir": text}


def _lazy_precise(engine: Any, names: list[str], optimized_module: Callable[[], Module],
                  donated: tuple[int, ...]) -> Any:
    """The LazyPrecise of an executable whose main module calls `names` through slots:
    its build emits the executable's optimized HLO module again (scheduling and emission
    leave it unchanged; a disk-cache hit recomputes it from the HLO, once, for this and
    for `Executable.module`) with the copies in, compiles it, and looks them up."""
    def build() -> tuple[Any, dict[str, int], dict[str, str]]:
        em, _, full, _, _, optimized, text = _emit_and_load(optimized_module(), donated,
                                                            "full")
        if em.precise_names != names:  # (the same HLO emits the same kernels)
            raise RuntimeError(f"full module has copies {em.precise_names}, not {names}")
        addrs = {n: full.get_function_address(n) for n in names}
        return full, addrs, {"llvm_ir": optimized, "unoptimized_ir": text}

    return llvm_target.LazyPrecise(engine, names, build)


def _texts(optimized: Any, text: Any, precise: Any) -> tuple[Any, Any]:
    """An executable's IR texts: with lazy precise copies, the full module's (compiled on
    first look), where each kernel's copy sits beside it."""
    if precise is None:
        return optimized, text
    return lambda: precise.texts()["llvm_ir"], lambda: precise.texts()["unoptimized_ir"]


def _from_disk(key: str, module: Module, unsafe_math: bool, run_passes: bool,
               donated: tuple[int, ...] = ()) -> Executable | None:
    found = disk_cache.load_lazy(key)
    if found is None:
        return None
    meta, texts = found.meta, found.texts
    try:
        spec = RuntimeSpec.from_bytes(meta, found.consts)
        kernel_names, parallel = list(meta["kernel_names"]), list(meta["parallel_kernels"])
        names = [str(n) for n in meta.get("precise", [])]
        shared = {str(k): str(v) for k, v in meta.get("shared_kernels", {}).items()}
        engine, address = llvm_target.load_object(found.obj, meta["entry"])
    except (ValueError, KeyError, TypeError, RuntimeError, llvm_target.CpuCompileError):
        disk_cache.STATS["disk_rejected"] += 1
        return None
    original = module.clone()
    optimized = functools.cache(
        lambda: optimize(original, unsafe_math=unsafe_math, run_passes=run_passes))
    precise = _lazy_precise(engine, names, optimized, donated) if names else None
    ir_texts = _texts(lambda: texts()["llvm_ir"], lambda: texts()["unoptimized_ir"], precise)
    return Executable(spec, engine, address, kernel_names, *ir_texts,
                      parallel_kernels=parallel,
                      module=optimized,
                      from_disk=True, precise=precise, shared_kernels=shared)
