"""a * b + c rounded once (a fused multiply-add), from plain float operations.

Input: three arrays of one float dtype (float16, float32 or float64), of one shape.
Output: fl(a * b + c) in that dtype (float16: fl(fl(a * b) + c), as XLA's CPU computes it).
Invariants: JAX's samplers scale their unit draws as `u * span + lo`, and XLA's CPU compiler
contracts that into an FMA, so matching JAX's bits needs the fused rounding. The product is
split error-free (Veltkamp's split into half-width parts, Dekker's product: a * b = p + e
exactly) and the sum too (Knuth's TwoSum: p + c = s + t exactly), so
fl(s + (e + t)) is the fused result except when e + t's own rounding moves a near-tie, a
case of probability about 2^-p. Every step is an ordinary multiply/add/subtract, so it
fuses and needs no wider type (float64 exists only with x64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# 2^ceil(p/2) + 1 for a p-bit significand: splits a into hi + lo of at most p/2 bits each.
_SPLITTER = {np.dtype(np.float32): 4097.0,
             np.dtype(np.float64): 134217729.0}


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: Any, splitter: Any) -> tuple[Any, Any]:
    t = a * splitter
    hi = t - (t - a)
    return hi, a - hi


def fma(a: Any, b: Any, c: Any) -> Any:
    """fl(a * b + c) in the operands' (common) float dtype."""
    dtype = np.dtype(a.dtype)
    if dtype.itemsize == 2:  # (XLA's CPU does not fuse float16 or bfloat16: each op rounds)
        return a * b + c
    splitter = np.array(_SPLITTER[dtype], dtype)
    p = a * b
    ah, al = _split(a, splitter)
    bh, bl = _split(b, splitter)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, t = _two_sum(p, c)
    return s + (e + t)
