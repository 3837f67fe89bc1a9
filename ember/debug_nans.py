"""`jax_debug_nans`: find the first operation that produced a NaN, and its source line.

Input: with `ember.config.update("jax_debug_nans", True)`, every jitted call's outputs and,
in eager mode, every primitive's outputs. Output: FloatingPointError
`invalid value (nan) encountered in <primitive> (at <file>:<line> (<function>))`.
How: a compiled function whose float outputs hold a NaN is run again op by op with the
NumPy rules (de-optimized, as JAX re-runs it), equation by equation, entering nested jit
calls; the first equation with a NaN in a float output is the culprit (its source line is
recorded on the equation by the staging trace). Loops and branches count as one operation.
If the op-by-op run finds none (the NaN came from an optimization), the error says so.
Invariants: only NaN is checked (not inf), as JAX's debug_nans; with the flag off nothing
here runs (the flag is part of the trace context, so turning it on retraces and recompiles
with the check).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ember.core.source_info import SourceInfo


def has_nan(values: Any) -> bool:
    for v in values:
        a = np.asarray(v)
        if dtypes.kind(a.dtype) in "fc" and a.size and np.isnan(a).any():
            return True
    return False


def nan_error(prim_name: str, where: SourceInfo | None) -> FloatingPointError:
    at = f" (at {where})" if where is not None and where.line else ""
    return FloatingPointError(f"invalid value (nan) encountered in {prim_name}{at}")


def _first_nan(jaxpr: Jaxpr, consts: list[Any], args: list[np.ndarray]) -> None:
    """Run `jaxpr` op by op; raise at the first equation whose outputs hold a NaN."""
    env: dict[int, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v.id]

    for v, c in zip(jaxpr.constvars, consts):
        env[v.id] = _np(c)
    for v, a in zip(jaxpr.invars, args):
        env[v.id] = a
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        prim = eqn.primitive
        if prim.is_call:
            inner: ClosedJaxpr = eqn.params["jaxpr"]
            _first_nan(inner.jaxpr, inner.consts, ins)
            from ember.core.eval import eval_jaxpr_numpy
            outs = eval_jaxpr_numpy(inner.jaxpr, [_np(c) for c in inner.consts], ins)
        else:
            with np.errstate(all="ignore"):
                out = prim.impl(*ins, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
        outs = [np.asarray(o).astype(v.aval.dtype, copy=False)
                for o, v in zip(outs, eqn.outvars)]
        if has_nan(outs):
            raise nan_error(prim.name, eqn.source_info)
        for v, o in zip(eqn.outvars, outs):
            env[v.id] = o


def _np(x: Any) -> np.ndarray:
    value = getattr(x, "_ember_value", None)
    return value() if value is not None else np.asarray(x)


class NanCheckExecutable:
    """Wraps a jitted function's executable: after each call, a NaN in a float output
    re-runs the jaxpr op by op to name the operation that made it."""

    fast_runner = None  # the fast path would skip the check

    def __init__(self, exe: Any, closed: ClosedJaxpr) -> None:
        self._exe = exe
        self._closed = closed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def __call__(self, *args: Any, **options: Any) -> Any:
        # `owned` (donation) is not passed on: the arguments must survive the call, since
        # a NaN is chased by re-running them op by op
        out = self._exe(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if has_nan(outs):
            print("Invalid nan value encountered in the output of an ember.jit function. "
                  "Calling the de-optimized version.", file=sys.stderr)
            n = len(self._closed.jaxpr.invars)
            _first_nan(self._closed.jaxpr, self._closed.consts,
                       [np.asarray(a) for a in args[:n]])
            raise FloatingPointError("invalid value (nan) encountered in the output of a "
                                     "jitted function, but not when it runs op by op (an "
                                     "optimization changed the values)")
        return out


def check_eager(prim: Any, out: Any) -> None:
    """Eager mode: raise if a primitive's result holds a NaN (at the user's line)."""
    from ember.core.source_info import user_frame

    outs = list(out) if prim.multiple_results else [out]
    if has_nan(outs):
        raise nan_error(prim.name, user_frame())
