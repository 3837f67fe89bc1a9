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

How: one compiled module per key (operand shapes and dtypes, the params, the flags that
change tracing or compilation: `config.trace_context()` and the backend's name), made by
tracing the lone primitive and compiling it as `jit` does (lowering, passes, the CPU
backend: BLAS or Ember's GEMM, the same partition into work units), without the compile
watchers: an eager product is no user compilation to log or count. A call is one dict
lookup and the executable's fast runner (runtime/fastcall.py). Like JAX's eager dispatch,
each new shape compiles once (milliseconds); the cache keeps at most `MAX_ENTRIES` keys
and is cleared when full. A key whose compilation fails or lands on the interpreter is
remembered as `_DECLINED`, so it never retries. `STATS` counts compilations (and their
seconds) and calls.
Invariants: thread-safe (a lock around compilation; a racing duplicate compile is only
wasted work); operands are converted to C-contiguous native arrays of the key's dtypes,
never written.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from ember.compiler import backend_name
from ember.config import config

MAX_ENTRIES = 512
# Products of fewer multiply-adds keep NumPy's rule: jit's own threshold between its
# generated loops and BLAS (dot/plan.py's BLAS_MIN_MACS, which a test keeps equal), below
# which a product is microseconds of work but its loop nest takes LLVM 20-300 ms to compile
MIN_MACS = 32 ** 3
STATS: dict[str, float] = {"compiled": 0, "calls": 0, "declined": 0, "compile_s": 0.0}
# float and complex kinds (bfloat16 is kind "V"): the types whose sums depend on the order
_FLOAT_KINDS = frozenset("fc")
_DECLINED = object()
_RUNNERS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def _takes(dtype: np.dtype) -> bool:
    return dtype.kind in _FLOAT_KINDS or (dtype.kind == "V" and dtype.name == "bfloat16")


def run(lhs: np.ndarray, rhs: np.ndarray, params: dict) -> np.ndarray | None:
    """The product as jit computes it, or None (see the module doc)."""
    ld, rd = lhs.dtype, rhs.dtype
    if not (_takes(ld) or _takes(rd)) or lhs.size == 0 or rhs.size == 0:
        return None
    (_, rc), (_, rb) = params["dimension_numbers"]
    shared = 1  # (rhs's contracting and batch extents: lhs has them too)
    for d in (*rc, *rb):
        shared *= rhs.shape[d]
    if lhs.size * (rhs.size // shared) < MIN_MACS:
        return None
    key = (lhs.shape, ld, rhs.shape, rd, tuple(params.items()), config.trace_context(),
           backend_name())
    try:
        runner = _RUNNERS.get(key)
    except TypeError:  # (an unhashable param value: not worth a key)
        return None
    if runner is None:
        runner = _compile(key, lhs, rhs, params)
    if runner is _DECLINED:
        return None
    STATS["calls"] += 1
    return runner([_c_native(lhs), _c_native(rhs)])[0]


def _c_native(a: np.ndarray) -> np.ndarray:
    """`a` as the fast runner takes it: C-contiguous, native byte order."""
    if a.flags.c_contiguous and a.dtype.isnative:
        return a
    return np.ascontiguousarray(a, a.dtype.newbyteorder("="))


def _compile(key: tuple, lhs: np.ndarray, rhs: np.ndarray, params: dict) -> Any:
    with _LOCK:
        runner = _RUNNERS.get(key)
        if runner is None:
            t0 = time.perf_counter()
            runner = _build(lhs, rhs, params, key[-1])
            STATS["compile_s"] += time.perf_counter() - t0
            if len(_RUNNERS) >= MAX_ENTRIES:
                _RUNNERS.clear()
            _RUNNERS[key] = runner
    return runner


def _build(lhs: np.ndarray, rhs: np.ndarray, params: dict, backend: str) -> Any:
    """The fast runner of the lone product's CPU executable, or _DECLINED."""
    if backend != "cpu":
        STATS["declined"] += 1
        return _DECLINED
    from ember.compiler import _lower_and_compile
    from ember.core.aval import ShapedArray
    from ember.core.staging import trace_to_jaxpr
    from ember.prims.dot import dot_general_p

    avals = [ShapedArray(a.shape, a.dtype.newbyteorder("="), False) for a in (lhs, rhs)]
    closed, _ = trace_to_jaxpr(lambda a, b: [dot_general_p.bind(a, b, **params)], avals)
    try:
        _, compiled = _lower_and_compile(closed, "dot_general", (), None, "cpu")
    except Exception:  # (whatever stops the backend, NumPy's rule answers, as before)
        compiled = None
    runner = None
    if compiled is not None and compiled.backend == "cpu":
        runner = compiled.fast_runner()
    if runner is None:
        STATS["declined"] += 1
        return _DECLINED
    STATS["compiled"] += 1
    return runner


def clear() -> None:
    """Forget every compiled product (tests)."""
    _RUNNERS.clear()


__all__ = ["STATS", "clear", "run"]
