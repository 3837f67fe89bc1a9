"""jnp.piecewise: a function defined piecewise over the domain, as `jax.numpy.piecewise`.

Input: x, a list of boolean conditions (arrays broadcastable against x, or scalars), and
a list of functions or constants, one per condition plus an optional default (the value
where no condition holds; 0 when omitted). Output: an array of x's dtype and of the
broadcast shape of x and the conditions.
Semantics (JAX's, which for elementwise functions are NumPy's): where several conditions
hold, the last one wins; each function is applied to the whole of x (as JAX's vectorized
switch does) and its result cast to x's dtype; the chosen values are picked with
lax.select_n by the index argmax(cumsum([False, *conditions])), which is 0 (the default)
where no condition holds, else 1 + the index of the last condition that holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["piecewise"]


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any | Callable[..., Any]],
              *args: Any, **kw: Any) -> Any:
    import ember.numpy as jnp
    from ember import lax

    x = jnp.asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funclist = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    cond = jnp.asarray(condlist, dtype=bool)
    counts = jnp.cumsum(jnp.concatenate([jnp.zeros_like(cond[:1]), cond], 0), 0)
    index = jnp.argmax(counts, 0).astype(np.int32)
    shape = jnp.broadcast_shapes(np.shape(index), x.shape)
    xb = jnp.broadcast_to(x, shape)
    cases = [jnp.broadcast_to(jnp.asarray(f(xb, *args, **kw)).astype(x.dtype) if callable(f)
                              else jnp.asarray(f, dtype=x.dtype), shape)
             for f in funclist]
    return lax.select_n(jnp.broadcast_to(index, shape), *cases)
