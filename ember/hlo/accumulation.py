"""Accumulation types: float16 and bfloat16 sums, products and dots accumulate in float32.

Input: an element type (`"f16"`) or a NumPy dtype. Output: the type a reduction's or a
product's running value is kept in: float32 for the low-precision floats, the type itself
otherwise. As XLA's CPU backend does (its float normalization widens them), a low-precision
add/multiply reduction or dot accumulates in float32 and rounds once at the end.

The one definition: the HLO evaluator's reduce and dot (and so eager mode, which runs
their rules, and the interpreter backend), eager cumsum/cumprod and their lowering, and the
CPU backend's `FloatNormalization` pass (ember/passes/float_normalization.py), which writes
the widening out as converts for the code generator, all read it.
"""

from __future__ import annotations

import numpy as np

WIDENED: dict[str, str] = {"f16": "f32", "bf16": "f32"}
WIDENED_OPS = frozenset({"add", "multiply"})  # (max/min/and/or are exact in any type)
_WIDENED_NAMES = frozenset({"float16", "bfloat16"})
_F32 = np.dtype(np.float32)
_ACCUMULATION: dict[object, np.dtype] = {}


def accumulation_type(element_type: str) -> str:
    """The element type that accumulates sums and products of `element_type`."""
    return WIDENED.get(element_type, element_type)


def accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """The NumPy dtype that accumulates sums and products of `dtype` (float32 for float16
    and bfloat16)."""
    acc = _ACCUMULATION.get(dtype)
    if acc is None:  # (memoized: `dtype.name` costs a microsecond of every eager sum)
        d = np.dtype(dtype)
        acc = _ACCUMULATION[dtype] = _F32 if d.name in _WIDENED_NAMES else d
    return acc


__all__ = ["WIDENED", "WIDENED_OPS", "accumulation_dtype", "accumulation_type"]
