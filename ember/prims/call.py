"""The `jit` call primitive: a nested jitted function as one equation.

Params: `jaxpr` (ClosedJaxpr of the callee), `name` (the function's name), and
`donated_invars` (hidden when printed, as JAX 0.10.2 prints `jit[name=g jaxpr={...}]`).
At the eval trace it runs the callee's executable; staging traces record one equation;
other traces inline the body, except JVP traces while a jaxpr is staged (core/call_ad.py
keeps the call, as JAX keeps a pjit). A `jit` equation on tangents is transposed by
running the callee's body backwards: staged as one call of the transposed body while a
jaxpr is staged, inlined eagerly.
"""

from __future__ import annotations

from typing import Any

from ember.core.ad import UndefinedPrimal
from ember.core.jaxpr import ClosedJaxpr, Jaxpr
from ember.core.primitive import CallPrimitive

jit_p = CallPrimitive("jit")


@jit_p.def_pp_params
def _pp_jit(params: dict) -> list:
    return [("name", params["name"]), ("jaxpr", params["jaxpr"])]


@jit_p.def_transpose
def _jit_transpose(cts: list, *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list:
    """Cotangents of the linear inputs (the `UndefinedPrimal`s) from those of the outputs:
    the callee's body transposed with its known inputs bound as constants (they get
    None: no cotangent flows to them)."""
    from ember.core import call_ad
    from ember.core.transpose import backward_pass  # (transpose.py imports the prims)
    if call_ad.staging():
        # staged: one call of the transposed body, as JAX transposes a pjit
        got = call_ad.transpose_call(jit_p, list(cts), args, {"jaxpr": jaxpr, **params})
        if got is not None:
            return got
    inner = jaxpr.jaxpr
    linear = [isinstance(a, UndefinedPrimal) for a in args]
    known_vars = [v for v, lin in zip(inner.invars, linear) if not lin]
    known_vals = [a for a, lin in zip(args, linear) if not lin]
    body = Jaxpr(list(inner.constvars) + known_vars,
                 [v for v, lin in zip(inner.invars, linear) if lin], inner.outvars, inner.eqns)
    cts_linear = iter(backward_pass(body, list(jaxpr.consts) + known_vals, list(cts)))
    return [next(cts_linear) if lin else None for lin in linear]
