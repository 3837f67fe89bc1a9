"""The hook through which eager rules of order-dependent float primitives run a backend's
compiled equation first (this layer imports no backend; `import ember` installs
ember/eager_native.py's dispatcher in `HOOK`).

Input: the primitive, its NumPy operands and params, from its eager rule. Output: the
result the backend's executable for that lone equation gives (jit's bits), or None: the
rule then computes it with NumPy (no backend installed, or the installed policy declines).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

HOOK: list[Callable[[Any, list[np.ndarray], dict], np.ndarray | None] | None] = [None]


def compiled(prim: Any, operands: list[Any], params: dict) -> np.ndarray | None:
    """The hook's answer for this equation, or None."""
    hook = HOOK[0]
    if hook is None:
        return None
    return hook(prim, [np.asarray(a) for a in operands], params)
