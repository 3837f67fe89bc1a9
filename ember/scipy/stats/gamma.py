"""The gamma distribution with shape `a` (as jax.scipy.stats.gamma): logpdf, pdf, cdf,
logcdf, sf, logsf.

Input: array-likes `x`, `a`, `loc` (default 0), `scale` (default 1), promoted to one
inexact dtype. Output: an elementwise array. Invariants: logpdf = xlogy(a - 1, y) - y -
gammaln(a) - log(scale) with y = (x - loc) / scale, -inf below loc (y is replaced by 1
there, so no nan reaches the gradient). cdf = gammainc(a, max(y, 0)) (1 at y = inf), sf =
gammaincc(a, y) (1 below loc), logcdf/logsf their logs.
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
from ember.scipy.special._incomplete import gammainc as _gammainc
from ember.scipy.special._incomplete import gammaincc as _gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the gamma density (as jax.scipy.stats.gamma.logpdf)."""
    x, a, loc, scale = _promote("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = jnp.asarray(1, x.dtype)
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear = lax.sub(_xlogy(lax.sub(a, one), y), y)
    log_probs = lax.sub(log_linear, lax.add(_gammaln(a), lax.log(scale)))
    return jnp.where(ok, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density (as jax.scipy.stats.gamma.pdf)."""
    return lax.exp(logpdf(x, a, loc, scale))



def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (as jax.scipy.stats.gamma.cdf)."""
    x, a, loc, scale = _promote("gamma.cdf", x, a, loc, scale)
    y = jnp.clip(lax.div(lax.sub(x, loc), scale), 0, np.inf)
    return _gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (as jax.scipy.stats.gamma.logcdf)."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (as jax.scipy.stats.gamma.sf)."""
    x, a, loc, scale = _promote("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, jnp.asarray(0, y.dtype)), jnp.asarray(1, y.dtype),
                     _gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (as jax.scipy.stats.gamma.logsf)."""
    return lax.log(sf(x, a, loc, scale))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
