"""The chi-square distribution with `df` degrees of freedom (as jax.scipy.stats.chi2):
logpdf, pdf, cdf, logcdf, sf, logsf.

Input: array-likes `x`, `df`, `loc` (default 0), `scale` (default 1), promoted to one
inexact dtype. Output: an elementwise array. Invariants: chi2(df) is Gamma(df/2, scale 2):
with y = (x - loc) / scale, logpdf = (df/2 - 1) log y - y/2 - lgamma(df/2) - df/2 log 2 -
log(scale), -inf below loc; cdf = gammainc(df/2, max(y, 0)/2), sf = gammaincc(df/2, y/2)
(1 below loc), logcdf/logsf their logs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.numpy._promote import promote_args_inexact as _promote
from ember.scipy.special._incomplete import gammainc as _gammainc
from ember.scipy.special._incomplete import gammaincc as _gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the chi-square density (as jax.scipy.stats.chi2.logpdf)."""
    x, df, loc, scale = _promote("chi2.logpdf", x, df, loc, scale)
    one, two = jnp.asarray(1, x.dtype), jnp.asarray(2, x.dtype)
    y = lax.div(lax.sub(x, loc), scale)
    half = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half, one), lax.log(y)), lax.div(y, two))
    norm = lax.neg(lax.add(lax.lgamma(half), lax.mul(half, lax.log(two))))
    log_probs = lax.add(lax.sub(norm, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-square density (as jax.scipy.stats.chi2.pdf)."""
    return lax.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (as jax.scipy.stats.chi2.cdf)."""
    x, df, loc, scale = _promote("chi2.cdf", x, df, loc, scale)
    two = jnp.asarray(2, x.dtype)
    y = jnp.clip(lax.div(lax.sub(x, loc), lax.mul(scale, two)), 0, np.inf)
    return _gammainc(lax.div(df, two), y)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (as jax.scipy.stats.chi2.logcdf)."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (as jax.scipy.stats.chi2.sf)."""
    x, df, loc, scale = _promote("chi2.sf", x, df, loc, scale)
    two = jnp.asarray(2, x.dtype)
    y = lax.div(lax.sub(x, loc), lax.mul(scale, two))
    return jnp.where(lax.lt(y, jnp.asarray(0, y.dtype)), jnp.asarray(1, y.dtype),
                     _gammaincc(lax.div(df, two), y))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (as jax.scipy.stats.chi2.logsf)."""
    return lax.log(sf(x, df, loc, scale))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
