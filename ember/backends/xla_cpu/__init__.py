"""The xla-cpu backend: Ember's optimized HLO compiled by XLA's CPU compiler (through jaxlib).

Input: an HLO Module. Output: `compile(module)` gives an `XlaExecutable` (callable on NumPy
arrays, NumPy results). It implements the backend interface of ember/backends/__init__.py
under the public name "xla-cpu" (`EMBER_BACKEND=xla-cpu`; the package is `xla_cpu`).

Why: the TPU backend hands the same HLO text to the TPU's compiler (issue 20, route 1);
this backend runs that route on any machine with jaxlib, so the tests keep it working
without a chip, and it lets a user compare Ember's CPU code with XLA's on the same
optimized module.

Its pipeline is the hardware-independent passes only: XLA fuses by itself, and its HLO
parser rejects `fusion` instructions. What XLA's HLO lacks is rewritten by
ember/backends/xla/legalize.py or raises `Unsupported` (erfc, erf-inv, custom calls), and
the driver then runs the module on the interpreter. jaxlib is imported on the first
compile, never on import: without it, `compile` raises `MissingJaxlib` (an ImportError
naming `pip install 'ember[xla]'`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.hlo.ir import Module

NAME = "xla-cpu"
PLATFORM = "cpu"  # (the PJRT platform: the TPU backend will name "tpu")

__all__ = ["NAME", "compile", "optimize", "pipeline", "to_device", "to_host"]


def pipeline(unsafe_math: bool = False):
    """The hardware-independent simplifications (no Ember fusion: XLA fuses itself)."""
    from ember.passes import hardware_independent_pipeline

    return hardware_independent_pipeline(unsafe_math=unsafe_math)


def optimize(module: Module, *, unsafe_math: bool = False, run_passes: bool = True) -> Module:
    """A clone of `module` through `pipeline(unsafe_math)` (unless run_passes=False)."""
    from ember.backends import optimized_clone

    return optimized_clone(module, lambda: pipeline(unsafe_math), run_passes)


def compile(module: Module, *, run_passes: bool = True, unsafe_math: bool = False,
            use_cache: bool = True, donated: tuple[int, ...] = ()) -> Any:
    """Optimize a copy of `module` and compile it with XLA's CPU compiler (or read it from
    the disk cache of ember/backends/xla/disk_cache.py; `use_cache=False`: compile);
    `donated` is ignored (the executable copies its arguments to XLA's buffers)."""
    from ember.backends.xla import compile_module

    return compile_module(optimize(module, unsafe_math=unsafe_math, run_passes=run_passes),
                          PLATFORM, NAME, use_cache)


def to_device(array: Any) -> Any:
    """`array` as an XLA buffer on the host CPU device."""
    from ember.backends.xla import platform

    return platform(PLATFORM, NAME).put(array)


def to_host(buffer: Any) -> np.ndarray:
    """A NumPy array of `buffer` (an XLA buffer or already NumPy)."""
    return np.asarray(buffer)
