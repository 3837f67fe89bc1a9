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
from ember.prims.name import name_p
from ember.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_name"]


def _static_nums(static_argnums: Any, nargs: int) -> tuple[int, ...]:
    """The static positions (in [0, nargs)), with JAX's error texts."""
    nums = (static_argnums,) if type(static_argnums) is int else static_argnums
    if not (type(nums) is tuple and all(type(d) is int for d in nums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` "
                        "must be an int, tuple of ints or, bool, but got value "
                        f"{static_argnums}")
    if not all(-nargs <= d < nargs for d in nums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` "
                         "can only take integer values greater than or equal to "
                         "`-len(args)` and less than `len(args)`, but got "
                         f"{nums}, while `len(args)` = {nargs}")
    return tuple(sorted({d % nargs for d in nums}))


def checkpoint(fun: Callable, *, prevent_cse: bool | tuple[bool, ...] = True,
               policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """Make ``fun`` recompute its intermediate values in the backward pass (rematerialize).

    Reverse-mode differentiation normally saves ``fun``'s intermediate values for the
    backward pass; a checkpointed ``fun`` saves only its inputs (and what ``policy``
    allows) and recomputes the rest, trading compute for memory.

    Args:
        fun: the function to checkpoint, of arrays or pytrees of arrays.
        prevent_cse: accepted as in JAX (a bool, or a tuple of them).
        policy: ``policy(prim, *avals, **params) -> bool`` says which intermediate values
            to save (see ``ember.checkpoint_policies``); None saves none.
        static_argnums: positions of arguments that are Python values, not traced.

    Returns:
        A function with ``fun``'s signature and values.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if isinstance(prevent_cse, Sequence):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError("prevent_cse must be a bool or tuple of bools, got "
                        f"type(prevent_cse)={type(prevent_cse)}")

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


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag every array of the pytree `x` with `name`, so that a checkpoint policy such as
    `checkpoint_policies.save_only_these_names(name)` can choose to save it; the values
    are unchanged."""
    return tree_map(lambda leaf: name_p.bind(leaf, name=name), x)
