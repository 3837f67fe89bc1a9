"""The Bernoulli distribution with success probability p (as jax.scipy.stats.bernoulli):
logpmf, pmf, cdf, ppf.

Input: array-likes `k` (or `q`), `p`, and for the pmf an offset `loc` (default 0),
promoted to one inexact dtype. Output: an elementwise array. Invariants: logpmf is
xlogy(k, p) + xlog1py(1 - k, -p) (so k = 1, p = 0 gives -inf and k = 0, p = 0 gives 0,
with xlogy's gradients), -inf for k - loc outside [0, 1]; cdf and ppf are nan for a p
outside [0, 1] or a nan argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.numpy._promote import promote_args_inexact as _promote
from ember.scipy.special._basic import xlog1py as _xlog1py
from ember.scipy.special._basic import xlogy as _xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """log P(K = k) (as jax.scipy.stats.bernoulli.logpmf)."""
    k, p, loc = _promote("bernoulli.logpmf", k, p, loc)
    zero, one = jnp.asarray(0, k.dtype), jnp.asarray(1, k.dtype)
    x = lax.sub(k, loc)
    log_probs = _xlogy(x, p) + _xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """P(K = k) (as jax.scipy.stats.bernoulli.pmf)."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """P(K <= k) (as jax.scipy.stats.bernoulli.cdf)."""
    k, p = _promote("bernoulli.cdf", k, p)
    zero, one = jnp.asarray(0, k.dtype), jnp.asarray(1, k.dtype)
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), lax.lt(k, zero),
             jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
    return jnp.select(conds, [jnp.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Any:
    """The smallest k with cdf(k) >= q (as jax.scipy.stats.bernoulli.ppf)."""
    q, p = _promote("bernoulli.ppf", q, p)
    zero, one = jnp.asarray(0, q.dtype), jnp.asarray(1, q.dtype)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(bad, jnp.nan, jnp.where(lax.le(q, one - p), zero, one))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
