"""The interpreter backend: runs HLO modules with the NumPy evaluator (ember/hlo/evaluator/).

Input: an HLO Module. Output: `compile(module)` gives an `Executable` (callable on NumPy
arrays); `pipeline()` gives the pass pipeline this backend runs before evaluation.
The evaluator is the reference every other backend is compared against.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.evaluator.core import Value, evaluate, register_custom_call
from ember.hlo.ir import Module

__all__ = ["Executable", "compile", "evaluate", "pipeline", "register_custom_call"]


def pipeline(unsafe_math: bool = False):
    """The interpreter's pass pipeline: the hardware-independent simplifications."""
    from ember.passes import hardware_independent_pipeline  # passes import the evaluator

    return hardware_independent_pipeline(unsafe_math=unsafe_math)


class Executable:
    """A compiled (optimized) module; calling it evaluates the module."""

    def __init__(self, module: Module) -> None:
        self.module = module

    def __call__(self, *args: Any) -> Value:
        return evaluate(self.module, *args)

    def as_text(self) -> str:
        from ember.hlo.printer import print_module

        return print_module(self.module, mode="display")


def compile(module: Module, *, run_passes: bool = True, unsafe_math: bool = False) -> Executable:
    """Optimize a copy of `module` (unless run_passes=False) and wrap it for execution."""
    m = module.clone()
    if run_passes:
        pipeline(unsafe_math).run(m)
    return Executable(m)
