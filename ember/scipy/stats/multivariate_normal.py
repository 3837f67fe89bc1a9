"""The multivariate normal distribution N(mean, cov) (as jax.scipy.stats.multivariate_normal):
logpdf, pdf.

Input: array-likes `x` (..., n), `mean` (..., n) and `cov` (..., n, n), promoted to one
inexact dtype; a scalar `mean` makes the distribution one-dimensional (x, mean and cov
elementwise), a scalar `cov` is cov * I. Output: the log density over the broadcast of
x's and mean's leading dimensions with cov's batch dimensions.
How: with cov = L L^T (Cholesky) and d = x - mean, the quadratic form d^T cov^-1 d is
|z|^2 for z = L^-1 d (one triangular solve: d's rows against L^T, batched when cov is,
all vectors as one right-hand-side matrix when it is not), and log det cov =
2 sum log diag L, so

    logpdf = -|z|^2 / 2 - n/2 log(2 pi) - sum log diag L.

Invariants: a cov that is not positive definite gives nan (its Cholesky factor is nan), as
JAX's; cov of another trailing shape than (n, n) is a ValueError; allow_singular is
not supported (NotImplementedError, as JAX).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember._missing import module_getattr as _module_getattr
from ember.lax import linalg as _linalg
from ember.numpy._promote import check_arraylike as _check_arraylike
from ember.numpy._promote import promote_dtypes_inexact as _promote

__all__ = ["logpdf", "pdf"]


def _quadratic_and_log_det(d: Any, cov: Any, n: int) -> tuple[Any, Any]:
    """(d^T cov^-1 d, sum log diag L) for d (..., n) and cov (..., n, n)."""
    chol = _linalg.cholesky(cov)
    half_log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)), axis=-1)
    if cov.ndim == 2:  # one factor: every vector is a row of one right-hand side
        rows = jnp.reshape(d, (-1, n))
        z = _linalg.triangular_solve(chol, rows, left_side=False, lower=True,
                                     transpose_a=True)
        return jnp.reshape(jnp.sum(z * z, axis=-1), d.shape[:-1]), half_log_det
    batch = np.broadcast_shapes(d.shape[:-1], cov.shape[:-2])
    chol = jnp.broadcast_to(chol, batch + (n, n))
    rows = jnp.broadcast_to(d, batch + (n,))[..., None, :]
    z = _linalg.triangular_solve(chol, rows, left_side=False, lower=True, transpose_a=True)
    return jnp.sum(z[..., 0, :] * z[..., 0, :], axis=-1), half_log_det


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """log of the multivariate normal density (as jax.scipy.stats.multivariate_normal.logpdf).

    Examples:
        >>> from ember.scipy.stats import multivariate_normal
        >>> multivariate_normal.logpdf(jnp.array([1., 0.]), jnp.zeros(2), jnp.eye(2))
        Array(-2.337877, dtype=float32)
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    _check_arraylike("multivariate_normal.logpdf", x, mean, cov)
    x, mean, cov = _promote(x, mean, cov)  # dtypes only: the shapes keep their meaning
    log_2pi = jnp.asarray(np.log(2 * np.pi), x.dtype)
    half = jnp.asarray(0.5, x.dtype)
    if mean.ndim == 0:  # one dimension, cov the variance
        d = lax.sub(x, mean)
        return -half * (lax.div(lax.square(d), cov) + log_2pi + lax.log(cov))
    n = mean.shape[-1]
    d = x - mean
    if cov.ndim == 0:  # cov * I
        quadratic = lax.div(jnp.sum(d * d, axis=-1), cov)
        return -half * quadratic - jnp.asarray(n / 2, x.dtype) * (log_2pi + lax.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    quadratic, half_log_det = _quadratic_and_log_det(d, cov, n)
    return -half * quadratic - jnp.asarray(n / 2, x.dtype) * log_2pi - half_log_det


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The multivariate normal density (as jax.scipy.stats.multivariate_normal.pdf).

    Examples:
        >>> from ember.scipy.stats import multivariate_normal
        >>> multivariate_normal.pdf(jnp.array([1., 0.]), jnp.zeros(2), jnp.eye(2))
        Array(0.09653236, dtype=float32)
    """
    return lax.exp(logpdf(x, mean, cov))


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
