"""`multivariate_normal` and `orthogonal` (samplers built on a matrix factorization).

Input: a key; mean (..., n) and covariance (..., n, n); or the sizes n (and m) of a
random orthogonal matrix. Output: samples mean + L z (L the Cholesky factor, z standard
normals of JAX's shape), or Haar-distributed orthogonal matrices (the Q factor of a
normal matrix with R's diagonal made positive).
Invariants: the normal draws are JAX's (same key use and shape), so the values equal
JAX's up to the factorization's rounding: the factor is LAPACK's, as in JAX (cholesky's L,
or U sqrt(S) from the SVD, or V sqrt(W) from eigh; orthogonal's Q from the QR of the normal
matrix with its columns' signs set by R's diagonal).
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import numpy as np

from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.core import dtypes as core_dtypes
from ember.random._common import broadcast_shapes, check_shape, float_dtype
from ember.random.keys import check_prng_key
from ember.random.normal import normal_real_data
from ember.random.prng import canonical_shape


@partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(data: Any, mean: Any, cov: Any, shape: tuple[int, ...] | None,
                         dtype: np.dtype, method: str) -> Any:
    if np.ndim(mean) < 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{np.ndim(mean)}")
    if np.ndim(cov) < 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{np.ndim(cov)}")
    n = mean.shape[-1]
    if tuple(np.shape(cov)[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(np.shape(cov))}.")
    if shape is None:
        shape = broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        check_shape("normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, sv, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(sv[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = normal_real_data(data, (*shape, n), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Normal vectors with the given mean (..., n) and covariance (..., n, n)."""
    typed, _ = check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    common = jnp.result_type(mean, cov)
    if not dtypes.issubdtype(common, np.inexact):
        common = core_dtypes.default_float()
    mean, cov = mean.astype(common), cov.astype(common)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if shape is not None:
        shape = canonical_shape(shape)
    return _multivariate_normal(typed._data, mean, cov, shape, np.dtype(dtype), method)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(data: Any, n: int, m: int, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    z = normal_real_data(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    q = q * jnp.expand_dims(jnp.sign(jnp.linalg.diagonal(r)), -2)
    return jnp.swapaxes(q, -1, -2) if n < m else q


def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Haar-random (n, m) matrices with orthonormal columns (rows if n < m); m = n."""
    shape = canonical_shape(shape)
    typed, _ = check_prng_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    return _orthogonal(typed._data, n, m, shape, dtype)
