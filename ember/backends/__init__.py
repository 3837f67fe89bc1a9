"""Backends: where an optimized HLO module becomes code that runs.

The interface, what the compile driver (ember/compiler.py) asks of a backend. A backend is
a package `ember/backends/<name>/` whose module-level names are these (`get(name)` imports
it; nothing else of a backend is imported by the layers above):

  NAME                                  "cpu", "interpreter", "xla-cpu" (package
                                        `xla_cpu`: a public name's "-" is a "_"),
                                        "tpu" (backends/tpu/: the TPU compiler
                                        and Ember's Mosaic kernels, through jaxlib)
  pipeline(unsafe_math=False)           its pass pipeline: the hardware-independent
                                        passes, then its own (fusion with its FusionPolicy)
  optimize(module, *, unsafe_math=False, run_passes=True) -> Module
                                        a clone through that pipeline (what
                                        `Compiled.as_text()` shows; `module` unchanged)
  compile(module, *, unsafe_math=False, use_cache=True, donated=()) -> Executable
                                        optimize and build; raises `Unsupported` for a
                                        module it cannot run (the driver then runs it on
                                        the interpreter, which runs every module)
  to_device(array) -> buffer            hand an argument over (the CPU and the
  to_host(buffer) -> np.ndarray         interpreter use host memory: NumPy arrays as they
                                        are; a device backend copies)

An `Executable` runs and reports:
  exe(*buffers, owned=()) -> buffer | tuple   run: one buffer per parameter (hidden
                                        constants last), a tuple for a tuple root; `owned`
                                        names donated parameters it may write over
  exe.module                            the optimized module it runs
  exe.takes_donations                   optional, default True: False where `owned` is
                                        ignored (the driver then donates nothing)
  exe.kernels(module=None) -> [KernelInfo]  its kernels in the order they run: name, kind,
                                        HLO, cost, source lines, code (LLVM IR, assembly)
  exe.fast_runner(hidden, ready_only=False)   optional: the cached-call path

Target-specific choices reach the shared passes as data the backend gives (a
`passes.fusion.FusionPolicy`), never as tests of which backend runs. Shared LLVM code
generation is in ember/codegen/, the HLO semantics every backend meets in
ember/hlo/evaluator/.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

NAMES: tuple[str, ...] = ("cpu", "interpreter", "xla-cpu", "tpu")


class Unsupported(NotImplementedError):
    """This backend does not compile this module (an opcode, an element type): run it on
    another. Not an error of the program: the driver falls back to the interpreter."""


def optimized_clone(module: Any, pipeline: Callable[[], Any], run_passes: bool = True) -> Any:
    """A clone of `module` through `pipeline()` (unless `run_passes` is False): the
    `optimize` of a backend whose pipeline is all it does before running a module."""
    m = module.clone()
    if run_passes:
        pipeline().run(m)
    return m


def get(name: str) -> ModuleType:
    """The backend package `name` (imported now)."""
    if name not in NAMES:
        raise ValueError(f"unknown backend {name!r}; the backends are {', '.join(NAMES)}")
    return importlib.import_module(f"ember.backends.{name.replace('-', '_')}")


__all__ = ["NAMES", "Unsupported", "get", "optimized_clone"]
