"""The CPU backend: fused HLO -> LLVM IR (llvmlite) -> native code for the host.

Public API:
  compile(module, *, unsafe_math=False, run_passes=True, use_cache=True) -> Executable
  pipeline(unsafe_math=False) -> PassPipeline (hardware-independent passes + fusion)
  Executable: exe(*arrays), .kernel_names, .module, .as_text(), .llvm_ir, .assembly(),
              .math_functions, .libm_calls
  UnsupportedOnCpu (raised for modules the interpreter must run), UNSUPPORTED_OPCODES,
  CpuCompileError, clear_cache(), cache_stats()
Importing this package does not import llvmlite; LLVM initializes on the first compile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember.backends.cpu.errors import CpuCompileError, UnsupportedOnCpu
from ember.backends.cpu.support import UNSUPPORTED_OPCODES, check_supported

if TYPE_CHECKING:
    from ember.backends.cpu.executable import Executable
    from ember.hlo.ir import Module
    from ember.passes.base import PassPipeline

__all__ = ["UNSUPPORTED_OPCODES", "CpuCompileError", "Executable", "UnsupportedOnCpu",
           "cache_stats", "check_supported", "clear_cache", "compile", "pipeline"]


def compile(module: Module, **options: Any) -> Executable:
    from ember.backends.cpu.compiler import compile as _compile

    return _compile(module, **options)


def pipeline(unsafe_math: bool = False) -> PassPipeline:
    from ember.backends.cpu.compiler import pipeline as _pipeline

    return _pipeline(unsafe_math)


def clear_cache() -> None:
    from ember.backends.cpu.compiler import clear_cache as _clear

    _clear()


def cache_stats() -> dict[str, Any]:
    from ember.backends.cpu.compiler import STATS
    from ember.backends.cpu.llvm_target import STATS as LLVM_STATS

    return {**STATS, **LLVM_STATS}


def __getattr__(name: str) -> Any:
    if name == "Executable":
        from ember.backends.cpu.executable import Executable

        return Executable
    raise AttributeError(name)
