"""The interpreter backend: runs HLO modules with the NumPy evaluator (ember/hlo/evaluator/).

Input: an HLO Module. Output: `compile(module)` gives an `Executable` (callable on NumPy
arrays); `pipeline()` gives the pass pipeline this backend runs before evaluation (no
fusion: the evaluator runs op by op). It implements the backend interface of
ember/backends/__init__.py and compiles every module (it never raises `Unsupported`).
The evaluator is the reference every other backend is compared against.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.evaluator.core import Value, evaluate, register_custom_call
from ember.hlo.ir import Module

NAME = "interpreter"

__all__ = ["NAME", "Executable", "compile", "evaluate", "optimize", "pipeline",
           "register_custom_call", "to_device", "to_host"]


def pipeline(unsafe_math: bool = False):
    """The interpreter's pass pipeline: the hardware-independent simplifications."""
    from ember.passes import hardware_independent_pipeline  # passes import the evaluator

    return hardware_independent_pipeline(unsafe_math=unsafe_math)


class Executable:
    """A compiled (optimized) module; calling it evaluates the module."""

    takes_donations = False  # (results are fresh arrays; arguments are never written)

    def __init__(self, module: Module) -> None:
        self.module = module

    def __call__(self, *args: Any, owned: Any = ()) -> Value:
        """Evaluate on `args` (it never writes over an argument: `owned` is ignored)."""
        return evaluate(self.module, *args)

    def kernels(self, module: Module | None = None) -> list[Any]:
        """No kernels: the evaluator runs the module op by op, generating no code."""
        return []

    def as_text(self) -> str:
        from ember.hlo.printer import print_module

        return print_module(self.module, mode="display")


def optimize(module: Module, *, unsafe_math: bool = False, run_passes: bool = True) -> Module:
    """A clone of `module` through `pipeline(unsafe_math)` (unless run_passes=False)."""
    from ember.backends import optimized_clone

    return optimized_clone(module, lambda: pipeline(unsafe_math), run_passes)


def compile(module: Module, *, run_passes: bool = True, unsafe_math: bool = False,
            use_cache: bool = True, donated: tuple[int, ...] = ()) -> Executable:
    """Optimize a copy of `module` (unless run_passes=False) and wrap it for execution
    (nothing is cached: there is no code to keep; `donated` is ignored)."""
    return Executable(optimize(module, unsafe_math=unsafe_math, run_passes=run_passes))


def to_device(array: Any) -> Any:
    return array


def to_host(buffer: Any) -> Any:
    return buffer
