"""The beta distribution (as jax.scipy.stats.beta): logpdf, pdf, cdf, logcdf, sf, logsf.

Input: array-likes `x`, `a`, `b`, `loc` (default 0), `scale` (default 1), promoted to one
inexact dtype. Output: an elementwise array. Invariants: logpdf = -betaln(a, b) +
xlogy(a - 1, y) + xlog1py(b - 1, -y) - log(scale), y = (x - loc) / scale; -inf outside
[loc, loc + scale]; nan for a, b or scale <= 0. cdf = betainc(a, b, clip(y, 0, 1)), sf =
betainc(b, a, 1 - clip(y, 0, 1)) (no cancellation in the upper tail), logcdf/logsf their
logs.
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
from ember.scipy.special._gamma import betaln as _betaln
from ember.scipy.special._incomplete import betainc as _betainc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the beta density (as jax.scipy.stats.beta.logpdf)."""
    x, a, b, loc, scale = _promote("beta.logpdf", x, a, b, loc, scale)
    one, zero = jnp.asarray(1, x.dtype), jnp.asarray(0, x.dtype)
    y = lax.div(lax.sub(x, loc), scale)
    log_linear = lax.add(_xlogy(lax.sub(a, one), y), _xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(lax.neg(_betaln(a, b)), log_linear), lax.log(scale))
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    result = jnp.where(outside, -np.inf, log_probs)
    bad = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)),
                         lax.le(scale, zero))
    return jnp.where(bad, np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density (as jax.scipy.stats.beta.pdf)."""
    return lax.exp(logpdf(x, a, b, loc, scale))



def _unit(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple:
    x, a, b, loc, scale = _promote(name, x, a, b, loc, scale)
    return jnp.clip(lax.div(lax.sub(x, loc), scale), 0, 1), a, b


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (as jax.scipy.stats.beta.cdf)."""
    y, a, b = _unit("beta.cdf", x, a, b, loc, scale)
    return _betainc(a, b, y)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (as jax.scipy.stats.beta.logcdf)."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (as jax.scipy.stats.beta.sf)."""
    y, a, b = _unit("beta.sf", x, a, b, loc, scale)
    return _betainc(b, a, lax.sub(jnp.asarray(1, y.dtype), y))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (as jax.scipy.stats.beta.logsf)."""
    return lax.log(sf(x, a, b, loc, scale))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
