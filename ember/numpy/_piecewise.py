"""jnp.piecewise: a function defined piecewise over the domain, as `jax.numpy.piecewise`.

Input: x, a list of boolean conditions (arrays broadcastable against x, or scalars), and
a list of functions or constants, one per condition plus an optional default (the value
where no condition holds; 0 when omitted); extra `*args, **kw` are passed to every
function. Output: an array of x's dtype and of the broadcast shape of x and the conditions.
Semantics (JAX's, which for elementwise functions are NumPy's): where several conditions
hold, the last one wins; the branch index is argmax(cumsum([False, *conditions])), 0 (the
default) where no condition holds, else 1 + the index of the last condition that holds;
each function's result is cast to x's dtype.
Jaxpr: as JAX 0.10.2 prints it. The work is a jitted `_piecewise(x, condlist, consts,
funcs, *args, **kw)` (funcs static; constant entries, args and kw are traced inputs), whose
body computes the index with a jitted `cumsum` and `argmax`, then applies `lax.switch`
elementwise: JAX vmaps the switch (`jnp.vectorize`); Ember has no vmap and builds the same
equations directly (_vectorized_switch.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.numpy._jit_wrap import jit_like_jax

__all__ = ["piecewise"]


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any | Callable[..., Any]],
              *args: Any, **kw: Any) -> Any:
    """Evaluate a different function on each region of an array that a condition selects.

    The counterpart of :func:`numpy.piecewise`. Every function is traced and evaluated on
    the whole of ``x`` (Ember selects among the results), so each must be defined for all
    values, and the functions must be hashable (they are static).

    Args:
        x: the input array.
        condlist: a list of bool arrays (or one bool array) shaped like ``x``.
        funclist: one entry per condition, plus optionally one more used where no condition
            holds (default 0 there). Each entry is a constant or a function, called
            as ``f(x, *args, **kw)``.
        *args: passed on to the functions after ``x``.
        **kw: passed on to the functions as keywords.

    Returns:
        An array shaped like ``x`` with ``x``'s dtype: where several conditions hold, the
        last one wins.

    Example:
        >>> x = jnp.array([-2.0, -0.5, 0.5, 2.0])
        >>> jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v])
        Array([2.  , 0.5 , 0.25, 4.  ], dtype=float32)
        >>> jnp.piecewise(x, [x < -1, x > 1], [-1.0, 1.0, lambda v: v])
        Array([-1. , -0.5,  0.5,  1. ], dtype=float32)
    """
    import ember.numpy as jnp

    x = jnp.asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funclist = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    consts = {i: c for i, c in enumerate(funclist) if not callable(c)}
    funcs = {i: f for i, f in enumerate(funclist) if callable(f)}
    # A dict is not hashable: the static functions travel as a frozenset of pairs.
    return _piecewise(x, jnp.asarray(condlist, dtype=bool), consts,
                      frozenset(funcs.items()), *args, **kw)


@jit_like_jax("_piecewise", static_argnames=("funcs",))
def _piecewise(x: Any, condlist: Any, consts: dict[int, Any],
               funcs: frozenset[tuple[int, Callable[..., Any]]], *args: Any,
               **kw: Any) -> Any:
    import ember.numpy as jnp
    from ember.numpy._vectorized_switch import vectorized_switch
    from ember.prims.copy import copy_p

    funcdict = dict(funcs)
    funclist = [consts.get(i, funcdict.get(i)) for i in range(len(condlist) + 1)]
    # index = argmax over the stacked conditions of their running count: the first row
    # where the count reaches its maximum is the last condition that holds (0 if none).
    counts = jnp.cumsum(jnp.concatenate([jnp.zeros_like(condlist[:1]), condlist], 0), 0)
    indices = jnp.argmax(counts, 0)
    dtype = x.dtype

    def _call(f: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda v: jnp.asarray(f(v, *args, **kw)).astype(dtype)

    def _const(c: Any) -> Callable[[Any], Any]:
        # jnp.array(c, dtype) as JAX stages it for a traced c: copy, then convert.
        return lambda v: jnp.asarray(copy_p.bind(c)).astype(dtype)

    branches = [_call(f) if callable(f) else _const(f) for f in funclist]
    return vectorized_switch(indices, branches, x)
