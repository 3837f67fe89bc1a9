"""Eager float reductions and scans through jit's compiled code: `reduce_sum`,
`reduce_prod`, `cumsum`, `cumprod` and `cumlogsumexp` outside `jit` run the executable the
CPU backend compiles for that one equation, so eager and jitted results have the same bits
(issue 26, item 5: NumPy adds pairwise, jit's kernels add in vector lanes and per thread:
a 100-element f32 sum differed in its last bit).

Input: the operand and params of an eager reduction or scan (prims/reductions.py's and
prims/cumulative.py's rules ask `run(prim, x, params)` first). Output: the result as a
fresh ndarray, or None when this path does not take the call (then the rule computes it
with NumPy): integer and bool operands, whose sums and products wrap the same in any
order; max and min (not sent here: exact in any order); empty operands; reductions over
fewer than two elements per result (one rounding at most: the order cannot matter);
another default backend than the CPU one (eager_compiled.py).
How: eager_compiled.py's cache (one compile per shape, dtype, params and flags).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.eager_compiled import LoneCache, takes_dtype

# The equations whose float result depends on the order of its operations.
ORDER_DEPENDENT = frozenset({"reduce_sum", "reduce_prod", "cumsum", "cumprod",
                             "cumlogsumexp"})
_CACHE = LoneCache()
STATS = _CACHE.STATS
clear = _CACHE.clear


def _extent(x: np.ndarray, params: dict) -> int:
    """Elements combined into each result: the reduced axes' sizes, or the scanned axis's."""
    if "axes" in params:
        return math.prod(x.shape[a] for a in params["axes"])
    return x.shape[params["axis"]]


def run(prim: Any, x: np.ndarray, params: dict) -> np.ndarray | None:
    """`prim` over `x` as jit computes it, or None (see the module doc)."""
    if prim.name not in ORDER_DEPENDENT or not takes_dtype(x.dtype) or x.size == 0 \
            or _extent(x, params) < 2:
        return None
    return _CACHE.run(prim, [x], params)


__all__ = ["ORDER_DEPENDENT", "STATS", "clear", "run"]
