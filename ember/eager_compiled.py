"""Lone primitives run eagerly through jit's compiled code: the cache that eager products
(eager_dot.py) and eager float reductions and scans (eager_reduce.py) share.

Input: a primitive, its operands as NumPy arrays and its params, from an eager rule that
asks first. Output: the primitive's result computed by the executable the CPU backend
compiles for that one equation (so eager and jitted results have the same bits), or None
when this path does not take the call (another default backend than the CPU one; a
module the CPU backend leaves to the interpreter or fails to compile; an unhashable
param). The policy, which calls come here at all, is the caller's.

How: one compiled module per key (the primitive's name, operand shapes and dtypes, the
params, the flags that change tracing or compilation: `config.trace_context()` and the
backend's name), made by tracing the lone primitive and compiling it as `jit` does
(lowering, passes, the CPU backend), without the compile watchers: an eager operation is
no user compilation to log or count. A call is one dict lookup and the executable's fast
runner (runtime/fastcall.py). Like JAX's eager dispatch, each new shape compiles once
(milliseconds; the disk cache answers later processes); a cache keeps at most
`MAX_ENTRIES` keys and is cleared when full. A key whose compilation fails or lands on the
interpreter is remembered as declined, so it never retries. Each `LoneCache` counts its
compilations (and their seconds), calls and declines in `STATS`.
Invariants: thread-safe (a lock around compilation; a racing duplicate compile is only
wasted work); operands are converted to C-contiguous native arrays of the key's dtypes,
never written; the result is a fresh array.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from ember.compiler import backend_name
from ember.config import config

MAX_ENTRIES = 512
_DECLINED = object()


def takes_dtype(dtype: np.dtype) -> bool:
    """Float and complex types (bfloat16 is kind "V"): those whose sums and products depend
    on the order of the operations, where NumPy's order is not jit's."""
    return dtype.kind in "fc" or (dtype.kind == "V" and dtype.name == "bfloat16")


class LoneCache:
    """Compiled lone equations of one family, keyed as the module docstring says."""

    def __init__(self) -> None:
        self.STATS: dict[str, float] = {"compiled": 0, "calls": 0, "declined": 0,
                                        "compile_s": 0.0}
        self._runners: dict[tuple, Any] = {}
        self._lock = threading.RLock()  # (a compile that runs an eager equation nests)

    def run(self, prim: Any, operands: list[np.ndarray], params: dict) -> np.ndarray | None:
        """`prim.bind(*operands, **params)` as jit computes it, or None."""
        key = (prim.name, tuple((a.shape, a.dtype) for a in operands),
               tuple(params.items()), config.trace_context(), backend_name())
        try:
            runner = self._runners.get(key)
        except TypeError:  # (an unhashable param value: not worth a key)
            return None
        if runner is None:
            runner = self._compile(key, prim, operands, params)
        if runner is _DECLINED:
            return None
        self.STATS["calls"] += 1
        return runner([_c_native(a) for a in operands])[0]

    def clear(self) -> None:
        """Forget every compiled equation (tests)."""
        self._runners.clear()

    def _compile(self, key: tuple, prim: Any, operands: list[np.ndarray],
                 params: dict) -> Any:
        with self._lock:
            runner = self._runners.get(key)
            if runner is None:
                t0 = time.perf_counter()
                runner = self._build(prim, operands, params, key[-1])
                self.STATS["compile_s"] += time.perf_counter() - t0
                if len(self._runners) >= MAX_ENTRIES:
                    self._runners.clear()
                self._runners[key] = runner
        return runner

    def _build(self, prim: Any, operands: list[np.ndarray], params: dict,
               backend: str) -> Any:
        """The fast runner of the lone equation's CPU executable, or _DECLINED."""
        if backend != "cpu":
            self.STATS["declined"] += 1
            return _DECLINED
        from ember.compiler import _lower_and_compile
        from ember.core.aval import ShapedArray
        from ember.core.staging import trace_to_jaxpr

        avals = [ShapedArray(a.shape, a.dtype.newbyteorder("="), False) for a in operands]
        closed, _ = trace_to_jaxpr(lambda *xs: [prim.bind(*xs, **params)], avals)
        try:
            _, compiled = _lower_and_compile(closed, prim.name, (), None, "cpu")
        except Exception:  # (whatever stops the backend, NumPy's rule answers, as before)
            compiled = None
        runner = None
        if compiled is not None and compiled.backend == "cpu":
            runner = compiled.fast_runner()
        if runner is None:
            self.STATS["declined"] += 1
            return _DECLINED
        self.STATS["compiled"] += 1
        return runner


def _c_native(a: np.ndarray) -> np.ndarray:
    """`a` as the fast runner takes it: C-contiguous, native byte order."""
    if a.flags.c_contiguous and a.dtype.isnative:
        return a
    return np.ascontiguousarray(a, a.dtype.newbyteorder("="))


__all__ = ["MAX_ENTRIES", "LoneCache", "takes_dtype"]
