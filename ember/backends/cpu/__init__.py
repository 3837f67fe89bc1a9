"""The CPU backend: fused HLO -> LLVM IR (llvmlite) -> native code for the host.

It implements the backend interface of ember/backends/__init__.py (NAME, pipeline,
optimize, compile, to_device, to_host; Executable: call, module, kernels, fast_runner).
Public API:
  compile(module, *, unsafe_math=False, run_passes=True, use_cache=True) -> Executable
  optimize(module, *, unsafe_math=False, run_passes=True) -> Module: the optimized clone
      `compile` generates code for (calls inlined, `pipeline` run), no code generated
  pipeline(unsafe_math=False) -> PassPipeline (hardware-independent passes + fusion)
  Executable: exe(*arrays), .kernel_names, .module, .as_text(), .llvm_ir, .assembly(),
              .kernels() (per-kernel records: kernel_records.py),
              .math_functions, .libm_calls
  UnsupportedOnCpu (raised for modules the interpreter must run), UNSUPPORTED_OPCODES,
  CpuCompileError, clear_cache(), cache_stats()
  set_num_threads(n), get_num_threads()  (env EMBER_NUM_THREADS)
  disk cache: env EMBER_CACHE_DIR (default ~/.cache/ember; "off" disables), counted in
  cache_stats() as disk_hits / disk_misses / disk_writes / disk_rejected; LLVM work as
  optimize_runs / codegen_runs (light_runs: those with the light loop passes)
  allocator_stats() -> {hits, misses, recycled, trimmed, bytes_held, bytes_outstanding,
                        limit_bytes}; trim_allocator() releases idle pooled buffers
Importing this package does not import llvmlite; LLVM initializes on the first compile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember.backends.cpu.errors import CpuCompileError, UnsupportedOnCpu
from ember.backends.cpu.support import UNSUPPORTED_OPCODES, check_supported

if TYPE_CHECKING:
    from ember.backends.cpu.runtime.executable import Executable
    from ember.hlo.ir import Module
    from ember.passes.base import PassPipeline

NAME = "cpu"

__all__ = ["NAME", "UNSUPPORTED_OPCODES", "CpuCompileError", "Executable", "UnsupportedOnCpu",
           "allocator_stats", "cache_stats", "check_supported", "clear_cache", "compile",
           "get_num_threads", "optimize", "pipeline", "set_num_threads", "to_device", "to_host",
           "trim_allocator"]


def compile(module: Module, **options: Any) -> Executable:
    from ember.backends.cpu.compiler import compile as _compile

    return _compile(module, **options)


def optimize(module: Module, *, unsafe_math: bool = False, run_passes: bool = True) -> Module:
    from ember.backends.cpu.compiler import optimize as _optimize

    return _optimize(module, unsafe_math=unsafe_math, run_passes=run_passes)


def to_device(array: Any) -> Any:
    """Arguments stay in host memory: kernels read NumPy arrays where they are."""
    return array


def to_host(buffer: Any) -> Any:
    """Results are NumPy arrays in host memory already."""
    return buffer


def pipeline(unsafe_math: bool = False) -> PassPipeline:
    from ember.backends.cpu.compiler import pipeline as _pipeline

    return _pipeline(unsafe_math)


def clear_cache() -> None:
    from ember.backends.cpu.compiler import clear_cache as _clear

    _clear()


def cache_stats() -> dict[str, Any]:
    """In-memory and disk cache counters plus LLVM work done in this process
    (`optimize_runs`, `codegen_runs`: zero after warm disk-cache hits only)."""
    from ember.backends.cpu.compiler import STATS
    from ember.backends.cpu.jit.disk_cache import STATS as DISK_STATS
    from ember.backends.cpu.jit.llvm_target import STATS as LLVM_STATS

    return {**STATS, **DISK_STATS, **LLVM_STATS}


def set_num_threads(n: int) -> None:
    """Threads large kernels use (env EMBER_NUM_THREADS sets the default)."""
    from ember.backends.cpu.runtime.threads import set_num_threads as _set

    _set(n)


def get_num_threads() -> int:
    from ember.backends.cpu.runtime.threads import get_num_threads as _get

    return _get()


def allocator_stats() -> dict[str, int]:
    """Counters of the caching allocator of outputs and temporaries."""
    from ember.backends.cpu.runtime.allocator import ALLOCATOR

    return ALLOCATOR.snapshot()


def trim_allocator() -> int:
    """Release every pooled buffer nobody uses; returns the bytes released."""
    from ember.backends.cpu.runtime.allocator import ALLOCATOR

    return ALLOCATOR.trim(0.0)


def __getattr__(name: str) -> Any:
    if name == "Executable":
        from ember.backends.cpu.runtime.executable import Executable

        return Executable
    raise AttributeError(name)
