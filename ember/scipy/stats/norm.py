"""The normal distribution N(loc, scale^2) (as jax.scipy.stats.norm): pdf, logpdf, cdf,
logcdf, sf, logsf, ppf, isf.

Input: array-likes `x` (or a probability `q`), `loc` (default 0) and `scale` (default 1),
broadcast together and promoted to one inexact dtype. Output: an elementwise array.
Invariants: JAX's compositions: logpdf = (log(2 pi scale^2) + (x - loc)^2 / scale^2) / -2;
cdf and logcdf go through ndtr and log_ndtr of the
standardized value; sf(x) = cdf(-x; -loc); ppf = ndtri(q) * scale + loc.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.numpy._promote import promote_args_inexact as _promote
from ember.scipy.special._ndtr import log_ndtr as _log_ndtr
from ember.scipy.special._ndtr import ndtr as _ndtr
from ember.scipy.special._ndtr import ndtri as _ndtri

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the normal density (as jax.scipy.stats.norm.logpdf)."""
    x, loc, scale = _promote("norm.logpdf", x, loc, scale)
    var = lax.square(scale)
    log_normalizer = lax.log(lax.mul(jnp.asarray(2 * np.pi, x.dtype), var))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), var)
    return lax.div(lax.add(log_normalizer, quadratic), jnp.asarray(-2, x.dtype))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density (as jax.scipy.stats.norm.pdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (as jax.scipy.stats.norm.cdf)."""
    x, loc, scale = _promote("norm.cdf", x, loc, scale)
    return _ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (as jax.scipy.stats.norm.logcdf)."""
    x, loc, scale = _promote("norm.logcdf", x, loc, scale)
    return _log_ndtr(lax.div(lax.sub(x, loc), scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (as jax.scipy.stats.norm.sf)."""
    x, loc, scale = _promote("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (as jax.scipy.stats.norm.logsf)."""
    x, loc, scale = _promote("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, the inverse of cdf (as jax.scipy.stats.norm.ppf)."""
    return jnp.asarray(_ndtri(q) * scale + loc, float)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of sf: ppf(1 - q) (as jax.scipy.stats.norm.isf)."""
    q = jnp.asarray(q)
    return ppf(lax.sub(jnp.asarray(1, q.dtype), q), loc, scale)


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
