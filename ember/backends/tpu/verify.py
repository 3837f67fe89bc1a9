"""Mosaic kernels checked without a chip: parsed and verified in jaxlib's MLIR context with
the TPU dialect registered (the check the TPU compiler's first step makes).

Input: a kernel's Mosaic text. Output: None, or `MosaicError` with MLIR's diagnostics.
Also `serialize(text)`: the kernel through Mosaic's versioned serialization pass (the
`mosaic-serde` pass of jaxlib, what Pallas runs before handing a kernel over), which
checks every op is one Mosaic's serialization knows.

What is not possible here (jaxlib 0.10.2): Mosaic's own lowering passes
(infer-memref-layout, infer/apply-vector-layout, canonicalize-mosaic) live in libtpu, not
in jaxlib's MLIR bindings; they run on the TPU machine only (`needs_layout_passes`).
jaxlib is imported on first use.
"""

from __future__ import annotations

import functools
from typing import Any


class MosaicError(ValueError):
    """A kernel's text does not parse or verify with the Mosaic dialects."""


@functools.cache
def _mlir() -> Any:
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import tpu
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager

    return jax_mlir, tpu, ir, PassManager


def _context() -> Any:
    jax_mlir, tpu, ir, _ = _mlir()
    ctx = jax_mlir.make_ir_context()
    tpu.register_dialect(ctx)
    return ctx


def parse(text: str) -> Any:
    """The verified MLIR module of `text` (in a fresh context); MosaicError if not."""
    _, _, ir, _ = _mlir()
    ctx = _context()
    with ctx, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # (MLIR's diagnostics, as one exception)
            raise MosaicError(f"Mosaic text does not parse: {e}") from e
        if not module.operation.verify():
            raise MosaicError("Mosaic text does not verify")
        return module


def verify(text: str) -> None:
    """Raise MosaicError unless `text` parses and verifies with the Mosaic dialects."""
    parse(text)


def serialize(text: str) -> bytes:
    """`text` through Mosaic's serialization pass, as MLIR bytecode."""
    import io

    _, _, ir, PassManager = _mlir()
    ctx = _context()
    with ctx, ir.Location.unknown():
        # (the pass demands it: a serialized kernel may name ops of a newer Mosaic)
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        try:
            PassManager.parse("builtin.module(mosaic-serde{serialize=true})").run(
                module.operation)
        except Exception as e:
            raise MosaicError(f"Mosaic serialization rejects the kernel: {e}") from e
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()
