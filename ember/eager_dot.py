"""Eager float products through jit's compiled code: `dot_general` outside `jit` runs the
executable the CPU backend compiles for that one product, so eager and jitted products (all
but the smallest) give the same bits at the same speed (issue 26, item 5).

Input: the NumPy operands and params of an eager `dot_general` (prims/dot.py's rule asks
`run(lhs, rhs, params)` first). Output: the product as a fresh read-only ndarray, or None
when this path does not take the call (then the rule computes it with NumPy: integers and
bools, whose sums are exact in any order; empty products; products of fewer than
`MIN_MACS` multiply-adds, jit's generated-loop products, which cost microseconds but a
compile of tens of milliseconds, and whose last bits may then differ from jit's; another
default backend than the CPU one; a product the CPU backend leaves to the interpreter).

How: eager_compiled.py's cache of lone equations (one compiled module per shape, dtypes,
params and flags; a call is one dict lookup and the executable's fast runner); this module
is the policy: which products go there. `STATS` counts compilations (and their seconds),
calls and declines.
"""

from __future__ import annotations

import numpy as np

from ember.eager_compiled import LoneCache, takes_dtype
from ember.prims.dot import dot_general_p

# Products of fewer multiply-adds keep NumPy's rule: jit's own threshold between its
# generated loops and BLAS (dot/plan.py's BLAS_MIN_MACS, which a test keeps equal), below
# which a product is microseconds of work but its loop nest takes LLVM 20-300 ms to compile
MIN_MACS = 32 ** 3
_CACHE = LoneCache()
STATS = _CACHE.STATS
clear = _CACHE.clear


def run(lhs: np.ndarray, rhs: np.ndarray, params: dict) -> np.ndarray | None:
    """The product as jit computes it, or None (see the module doc)."""
    if not (takes_dtype(lhs.dtype) or takes_dtype(rhs.dtype)) or lhs.size == 0 \
            or rhs.size == 0:
        return None
    (_, rc), (_, rb) = params["dimension_numbers"]
    shared = 1  # (rhs's contracting and batch extents: lhs has them too)
    for d in (*rc, *rb):
        shared *= rhs.shape[d]
    if lhs.size * (rhs.size // shared) < MIN_MACS:
        return None
    return _CACHE.run(dot_general_p, [lhs, rhs], params)


__all__ = ["MIN_MACS", "STATS", "clear", "run"]
