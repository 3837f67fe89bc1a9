"""Evaluate a jaxpr: by re-binding its equations, or directly with the NumPy rules.

`eval_jaxpr` binds each equation's primitive, so the equations run at whatever trace is
on top (used to inline a call into a custom trace). `eval_jaxpr_numpy` runs the NumPy
rules directly on NumPy arrays: the reference executor of jitted functions until the HLO
backends take over, and what control-flow primitives run eagerly (`eval_closed_numpy`:
a cond branch, a loop body, one iteration at a time, op by op as JAX does).
Invariant: both give the values the jaxpr's avals promise (dtypes included: results are
cast to each outvar's dtype).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal


def eval_jaxpr(jaxpr: Jaxpr, consts: list[Any], *args: Any,
               literal: Callable[[Literal], Any] | None = None) -> list[Any]:
    """Bind `jaxpr`'s equations on `args` at the trace on top. `literal` turns a Literal
    into the value an equation reads (default: its NumPy value)."""
    env: dict[int, Any] = {}

    def read(v: Any) -> Any:
        if isinstance(v, Literal):
            return v.val if literal is None else literal(v)
        return env[v.id]

    for v, c in zip(jaxpr.constvars, consts):
        env[v.id] = c
    for v, a in zip(jaxpr.invars, args):
        env[v.id] = a
    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            out = [out]
        for v, o in zip(eqn.outvars, out):
            env[v.id] = o
    return [read(v) for v in jaxpr.outvars]


def eval_jaxpr_numpy(jaxpr: Jaxpr, consts: list[np.ndarray], args: list[np.ndarray]
                     ) -> list[np.ndarray]:
    env: dict[int, np.ndarray] = {}

    def read(v: Any) -> np.ndarray:
        return v.val if isinstance(v, Literal) else env[v.id]

    for v, c in zip(jaxpr.constvars, consts):
        env[v.id] = c
    for v, a in zip(jaxpr.invars, args):
        env[v.id] = a
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        prim = eqn.primitive
        if prim.is_call:
            closed = eqn.params["jaxpr"]
            out = eval_jaxpr_numpy(closed.jaxpr, [_np(c) for c in closed.consts], invals)
        else:
            out = prim.impl(*invals, **eqn.params)
            if not prim.multiple_results:
                out = [out]
        for v, o in zip(eqn.outvars, out):
            o = np.asarray(o)
            if o.dtype != v.aval.dtype:
                o = o.astype(v.aval.dtype)
            env[v.id] = o
    return [read(v) for v in jaxpr.outvars]


def eval_closed_numpy(closed: ClosedJaxpr, args: list[np.ndarray]) -> list[np.ndarray]:
    """Run a closed jaxpr (a branch or loop body) on NumPy arguments with the NumPy rules."""
    return eval_jaxpr_numpy(closed.jaxpr, [_np(c) for c in closed.consts], args)


def _np(x: Any) -> np.ndarray:
    value = getattr(x, "_ember_value", None)
    return value() if value is not None else np.asarray(x)
