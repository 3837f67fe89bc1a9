"""`logsumexp`: log(sum(b * exp(a))) over axes, without overflow (as
jax.scipy.special.logsumexp and jax.nn.logsumexp).

Input: `a`, optional `axis` (None, an int or a tuple), scale factors `b` broadcastable to
`a`, `keepdims`, `return_sign`, and a boolean `where` selecting the elements summed.
Output: the reduced array (inexact dtype of `a` and `b`), or `(result, sign)` with
`return_sign=True`, where `result` is log|sum| and `sign` the sum's sign.
Invariants: the largest element is subtracted before `exp` (and re-added after the log)
under `stop_gradient`, as JAX does, so gradients equal JAX's: softmax weights, and no nan
from an all -inf row (its maximum is replaced by 0); a negative sum gives nan unless
`return_sign`; elements where `b == 0` count as -inf.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.numpy._promote import promote_args_inexact
from ember.numpy._reductions import normalize_axes

__all__ = ["logsumexp"]


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum_i b_i * exp(a_i)) over `axis` (as jax.scipy.special.logsumexp)."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        a, = promote_args_inexact("logsumexp", a)
    dims = normalize_axes(axis, a.ndim)
    amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    # A row whose maximum is +-inf (or nan) is shifted by 0: exp then gives the right limit
    # (0 for all -inf, inf for an inf) instead of the nan of inf - inf.
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_kept = amax if keepdims else lax.expand_dims(amax, dims)
    terms = lax.exp(lax.sub(a, amax_kept.astype(a.dtype)))
    if b is not None:
        terms = lax.mul(terms, b)
    total = jnp.sum(terms, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(total)
    is_complex = dtypes.issubdtype(a.dtype, np.complexfloating)
    if return_sign or not is_complex:
        total = jnp.abs(total)
    out = lax.add(lax.log(total), amax.astype(total.dtype))
    if return_sign:
        return out, sign
    if b is not None and not is_complex:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out
