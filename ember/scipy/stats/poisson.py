"""The Poisson distribution with mean `mu` (as jax.scipy.stats.poisson): logpmf, pmf, cdf.

Input: array-likes `k`, `mu`, `loc` (default 0), promoted to one inexact dtype. Output: an
elementwise array. Invariants: logpmf = xlogy(k - loc, mu) - gammaln(k - loc + 1) - mu,
-inf for k - loc < 0 or a non-integral k (so mu = 0 gives log 1 = 0 at k = 0, with
xlogy's gradient). cdf = gammaincc(floor(k - loc) + 1, mu), 0 below loc.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.numpy._promote import promote_args_inexact as _promote
from ember.scipy.special._basic import xlogy as _xlogy
from ember.scipy.special._gamma import gammaln as _gammaln
from ember.scipy.special._incomplete import gammaincc as _gammaincc

__all__ = ["logpmf", "pmf", "cdf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """log P(K = k) (as jax.scipy.stats.poisson.logpmf)."""
    k, mu, loc = _promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = _xlogy(x, mu) - _gammaln(x + 1) - mu
    bad = jnp.logical_or(lax.lt(x, jnp.asarray(0, x.dtype)), lax.ne(jnp.round(k), k))
    return jnp.where(bad, -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K = k) (as jax.scipy.stats.poisson.pmf)."""
    return jnp.exp(logpmf(k, mu, loc))



def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K <= k) = Q(floor(k - loc) + 1, mu) (as jax.scipy.stats.poisson.cdf)."""
    k, mu, loc = _promote("poisson.cdf", k, mu, loc)
    x = lax.sub(k, loc)
    zero = jnp.asarray(0, x.dtype)
    p = _gammaincc(lax.add(lax.floor(x), jnp.asarray(1, x.dtype)), mu)
    return jnp.where(lax.lt(x, zero), zero, p)


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
