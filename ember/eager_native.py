"""Which eager equations run jit's compiled code (installed in prims/_eager_native.py's
hook by `import ember`), so eager results have jit's bits (issue 26, item 5).

Input: an order-dependent float primitive, its NumPy operands and params. Output: the
result of the lone equation's CPU executable (eager_compiled.py's caches), or None for
NumPy's rule. The policies, by primitive:
- dot_general: eager_dot.py (float products of at least jit's BLAS threshold);
- reduce_sum, reduce_prod, cumsum, cumprod, cumlogsumexp: eager_reduce.py (float
  operands combining two or more elements per result);
- conv_general_dilated, cholesky, triangular_solve: any nonempty float operands (their
  NumPy rules and jit's kernels sum in different orders; these are never tiny work).
Everything else (elementwise math runs jit's math kernels already: numpy/_eager_steps.py;
max, min and integer arithmetic are exact in any order) is not sent here.
Known difference left: float products under 32^3 multiply-adds keep NumPy's order (their
loop nests compile in tens of milliseconds for microseconds of work; eager_dot.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import eager_dot, eager_reduce
from ember.eager_compiled import LoneCache, takes_dtype

_OTHERS = LoneCache()
OTHER_STATS = _OTHERS.STATS  # the conv and linalg equations' counts
ALWAYS = frozenset({"conv_general_dilated", "cholesky", "triangular_solve"})


def run(prim: Any, operands: list[np.ndarray], params: dict) -> np.ndarray | None:
    name = prim.name
    if name == "dot_general":
        return eager_dot.run(operands[0], operands[1], params)
    if name in eager_reduce.ORDER_DEPENDENT:
        return eager_reduce.run(prim, operands[0], params)
    if name in ALWAYS and all(takes_dtype(a.dtype) and a.size for a in operands):
        return _OTHERS.run(prim, operands, params)
    return None


def clear() -> None:
    """Forget every compiled equation of every policy (tests)."""
    eager_dot.clear()
    eager_reduce.clear()
    _OTHERS.clear()


__all__ = ["ALWAYS", "OTHER_STATS", "clear", "run"]
