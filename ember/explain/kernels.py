"""The kernels of a compiled program, as ember.explain shows them.

The records come from the CPU backend (ember/backends/cpu/kernel_records.py: per kernel its
HLO, source lines, cost, LLVM IR and assembly; `Executable.kernels()`), which owns the
naming of kernels' LLVM functions; `ember.api.Compiled.kernels()`, `.llvm_ir()` and
`.asm()` ask the compiled program for them (ember/compiler.py, `CompiledModule`). This
module re-exports the record type and the helpers the reports (compile_log, report,
roofline, diagram, refusals) and tests use.
"""

from __future__ import annotations

from ember.backends.cpu.kernel_records import (
    KERNEL_FUNCTION_SUFFIXES,
    KERNEL_PREFIX,
    KernelInfo,
    SourceLine,
    kernel_functions,
    kernel_hlo,
    kernel_instructions,
    kernel_kind,
    kernel_symbol,
    kernels,
    source_lines,
    split_asm_functions,
    split_llvm_functions,
)

__all__ = ["KERNEL_FUNCTION_SUFFIXES", "KERNEL_PREFIX", "KernelInfo", "SourceLine",
           "kernel_functions", "kernel_hlo", "kernel_instructions", "kernel_kind",
           "kernel_symbol", "kernels", "source_lines", "split_asm_functions",
           "split_llvm_functions"]
