"""The uniform distribution on [loc, loc + scale] (as jax.scipy.stats.uniform): logpdf,
pdf, cdf, ppf.

Input: array-likes `x` (or `q`), `loc` (default 0), `scale` (default 1), promoted to one
inexact dtype. Output: an elementwise array. Invariants: the density is 1/scale on the
closed interval and 0 outside it (logpdf -inf); ppf is nan for q outside [0, 1] or nan.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.numpy._promote import promote_args_inexact as _promote

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the uniform density (as jax.scipy.stats.uniform.logpdf)."""
    x, loc, scale = _promote("uniform.logpdf", x, loc, scale)
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return jnp.where(outside, -np.inf, lax.neg(lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density (as jax.scipy.stats.uniform.pdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (as jax.scipy.stats.uniform.cdf)."""
    x, loc, scale = _promote("uniform.cdf", x, loc, scale)
    zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
    hi = lax.add(loc, scale)
    conds = [lax.lt(x, loc), lax.gt(x, hi), lax.ge(x, loc) & lax.le(x, hi)]
    return jnp.select(conds, [zero, one, lax.div(lax.sub(x, loc), scale)])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function loc + scale * q (as jax.scipy.stats.uniform.ppf)."""
    q, loc, scale = _promote("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.add(loc, lax.mul(scale, q)))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
