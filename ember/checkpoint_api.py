"""`ember.checkpoint` / `ember.remat`: JAX's rematerialization decorator.

Input: a function over pytrees of arrays, `prevent_cse`, `policy` (from
`ember.checkpoint_policies`, or any `policy(prim, *avals, **params) -> bool`) and
`static_argnums` (arguments passed as Python values, not traced). Output: a function with
the same values as `fun`, staged as one `checkpoint` equation (prims/checkpoint.py) whose
body is `fun`'s jaxpr: under differentiation only what the policy allows is saved for the
backward pass, the rest is recomputed there.
Invariants: values `fun` closes over that are arrays or tracers become leading operands of
the equation (its body has no consts); outside of differentiation the checkpoint costs
nothing (eagerly its body runs op by op; under jit it is inlined).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ember.core.jaxpr import ClosedJaxpr, Jaxpr
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval
from ember.prims.checkpoint import checkpoint_p
from ember.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat"]


def _static_nums(static_argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    out = []
    for n in nums:
        k = n + nargs if n < 0 else n
        if not 0 <= k < nargs:
            raise ValueError(f"jax.checkpoint static_argnums={nums} out of range for a "
                             f"function called with {nargs} positional arguments")
        out.append(k)
    return tuple(sorted(set(out)))


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, made to recompute its intermediate values in the backward pass instead of
    saving them (except those `policy` allows)."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")

    @functools.wraps(fun)
    def remat_fun(*args: Any, **kwargs: Any) -> Any:
        static = _static_nums(static_argnums, len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree_flatten((dyn, kwargs))
        out_tree: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            d, kw = tree_unflatten(in_tree, list(xs))
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out = fun(*full, **kw)
            out_leaves, tree = tree_flatten(out)
            out_tree.append(tree)
            return out_leaves

        closed, _ = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
        j = closed.jaxpr
        body = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])
        outs = checkpoint_p.bind(*closed.consts, *leaves, jaxpr=body,
                                 prevent_cse=prevent_cse, differentiated=False, policy=policy)
        return tree_unflatten(out_tree[0], list(outs))

    return remat_fun


remat = checkpoint
