"""The `jit` call primitive: a nested jitted function as one equation.

Params: `jaxpr` (ClosedJaxpr of the callee), `name` (the function's name), and
`donated_invars` (hidden when printed, as JAX 0.10.2 prints `jit[name=g jaxpr={...}]`).
At the eval trace it runs the callee's executable; staging traces record one equation;
other traces inline the body.
"""

from __future__ import annotations

from ember.core.primitive import CallPrimitive

jit_p = CallPrimitive("jit")


@jit_p.def_pp_params
def _pp_jit(params: dict) -> list:
    return [("name", params["name"]), ("jaxpr", params["jaxpr"])]
