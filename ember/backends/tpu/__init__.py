"""The tpu backend: Ember's optimized HLO on a Google TPU, through the TPU's own compiler (the
PJRT client jaxlib ships, with the libtpu it finds), with Ember's own Mosaic kernels.

Input: an HLO Module. Output: `compile(module)` gives an `XlaExecutable` of
ember/backends/xla/ (callable on NumPy arrays, NumPy results) that runs on the chip. It
implements the backend interface of ember/backends/__init__.py under the name "tpu"
(`jit(f, backend="tpu")`, `EMBER_BACKEND=tpu`).

Two routes (issue 20), in one module:
  route 1  the module's HLO to the TPU compiler, as the xla-cpu backend hands it to XLA's
           CPU compiler (ember/backends/xla/: legalize, parse, StableHLO, compile_and_load)
  route 2  Ember's kernels: after the hardware-independent passes the TPU's own fusion
           decisions (elementwise chains and row fusions; products stay unfused for XLA),
           then each fusion `ember_tpu_kernels` puts on Ember's kernels becomes a Mosaic
           kernel (kernels.py, mosaic_text.py, blocks.py) in a `tpu_custom_call`
           (custom_calls.py); the rest goes to the TPU compiler as HLO in the same module.
`tpu_module(module)` is everything up to the TPU compiler, chip-free (the tests verify its
kernels with the Mosaic dialects of jaxlib's MLIR: verify.py).

Invariants: jaxlib is imported on the first compile or transfer, never on import. Without
a TPU, `compile` raises `NoTpu` (a RuntimeError naming what was asked for and the platforms
found) before any work; it is not `Unsupported`, so the driver never runs a `backend="tpu"`
function elsewhere silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ember.hlo.ir import Module

NAME = "tpu"
PLATFORM = "tpu"

__all__ = ["NAME", "NoTpu", "TpuModule", "compile", "local_devices", "optimize", "pipeline",
           "to_device", "to_host", "tpu_module"]


class NoTpu(RuntimeError):
    """The TPU backend was asked for and jaxlib found no TPU."""


def pipeline(unsafe_math: bool = False):
    """The hardware-independent simplifications, then the TPU's fusion decisions:
    elementwise chains and row fusions (Ember's kernels), no dot epilogues (XLA's product
    emitter fuses its own) and no sibling reductions (one kernel, one result); a row
    fusion's iotas then become its inputs (iota_inputs.py)."""
    from ember.backends.tpu.iota_inputs import IotaInputs
    from ember.passes import hardware_independent_pipeline
    from ember.passes.base import PassPipeline
    from ember.passes.fusion import Fusion, FusionPolicy

    return PassPipeline("tpu", [
        hardware_independent_pipeline(unsafe_math),
        Fusion(FusionPolicy(output_fusion=False, row_fusion=True, sibling_fusion=False)),
        # (Mosaic kernels have no iota: a row fusion's iotas are made by XLA)
        IotaInputs()])


def optimize(module: Module, *, unsafe_math: bool = False, run_passes: bool = True) -> Module:
    """A clone of `module` through `pipeline(unsafe_math)` (unless run_passes=False)."""
    from ember.backends import optimized_clone

    return optimized_clone(module, lambda: pipeline(unsafe_math), run_passes)


@dataclass
class TpuModule:
    """What the TPU compiler is given: the module with Ember's kernels as custom calls,
    its kernels, and the HLO text (legalized, XLA's spellings, flat tuple root)."""

    module: Module
    kernels: list[Any]
    text: str
    structure: Any


def tpu_module(module: Module, kernels: str | None = None) -> TpuModule:
    """`module` (optimized, unchanged) as the TPU compiler gets it; `kernels`: the
    ember_tpu_kernels choice (None: the flag's value). Needs no chip and no jaxlib."""
    from ember import config
    from ember.backends.tpu.custom_calls import TARGET, pin_layouts, replace_fusions
    from ember.backends.xla import flatten_root
    from ember.backends.xla.legalize import legalize, xla_text

    choice = kernels if kernels is not None else config.ember_tpu_kernels
    m = module.clone()
    found = replace_fusions(m, choice)
    legalize(m, custom_call_targets=frozenset({TARGET}))
    structure = flatten_root(m)
    return TpuModule(m, found, pin_layouts(xla_text(m), found), structure)


def _platform() -> Any:
    from ember.backends.xla import platform

    try:
        return platform(PLATFORM, NAME)
    except ImportError:
        raise
    except Exception as e:  # (jaxlib's RuntimeError: no libtpu, no chip, chip busy)
        raise NoTpu(f"the tpu backend (jit(backend='tpu') or EMBER_BACKEND=tpu) asked "
                    f"jaxlib for a TPU and found none: {e}") from e


def compile(module: Module, *, run_passes: bool = True, unsafe_math: bool = False,
            use_cache: bool = True, donated: tuple[int, ...] = ()) -> Any:
    """Optimize a copy of `module`, put Ember's kernels in, compile it with the TPU
    compiler, or read the executable from the disk cache (ember/backends/xla/disk_cache.py;
    `use_cache=False`: compile). Raises NoTpu first where there is no TPU. `donated`:
    parameters whose device buffers outputs of their type are written into
    (`input_output_alias`; the runtime consumes those arguments' buffers)."""
    from ember.backends.xla import XlaExecutable, out_types, with_donations

    plat = _platform()
    optimized = optimize(module, unsafe_math=unsafe_math, run_passes=run_passes)
    tm = tpu_module(optimized)
    text = with_donations(tm.text, tm.module, tuple(donated))
    exe = XlaExecutable(optimized, text, plat, plat.compile(text, use_cache),
                        tm.structure, out_types(tm.module))
    exe.mosaic_kernels = tm.kernels  # type: ignore[attr-defined]
    exe.device_resident = True  # (ember/dispatch.py keeps its results on the chip)
    return exe


def local_devices() -> list[Any]:
    """The runtime's TPU devices of this process (NoTpu where there are none)."""
    return list(_platform().client.local_devices())


def to_device(array: Any, device: Any = None) -> Any:
    """`array` as a buffer on the TPU (`device`: a runtime device of `local_devices()`,
    default the first)."""
    return _platform().put(array, device)


def to_host(buffer: Any) -> np.ndarray:
    """A NumPy array of `buffer` (a device buffer or already NumPy)."""
    return np.asarray(buffer)
