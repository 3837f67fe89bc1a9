"""The two matrix factorizations `multivariate_normal` and `orthogonal` need, written with
`ember.numpy` ops while `ember.numpy.linalg` has neither (a column loop unrolled over the
static size n, batched over leading axes).

Input: float arrays (..., n, n) (cholesky) or (..., m, k), m >= k (orthonormal columns).
Output: the lower Cholesky factor L (L L^T = a; NaN where a is not positive definite, as
LAPACK's failure gives in JAX), and Q of the reduced QR factorization whose R has a
positive diagonal.
Invariants: Q with a positive R diagonal is unique for a full-rank input, so it equals
JAX's sign-normalized `qr` result up to rounding, whatever the algorithm; here modified
Gram-Schmidt run twice per column (re-orthogonalization keeps Q orthonormal to rounding).
"""

from __future__ import annotations

from typing import Any

from ember import numpy as jnp


def cholesky(a: Any) -> Any:
    """Lower L with L @ L^T = a (Cholesky-Crout, one column per step)."""
    n = a.shape[-1]
    rows = jnp.arange(n)
    cols = []
    for j in range(n):
        # v_i = a_ij - sum_{k<j} L_ik L_jk for i >= j; L_jj = sqrt(v_j); L_ij = v_i / L_jj
        v = a[..., :, j]
        for col in cols:
            v = v - col * col[..., j:j + 1]
        d = jnp.sqrt(v[..., j:j + 1])
        cols.append(jnp.where(rows >= j, v / d, jnp.zeros_like(v)))
    return jnp.stack(cols, axis=-1)


def orthonormal_columns(z: Any) -> Any:
    """Q of z = Q R with R's diagonal positive (z: (..., m, k), m >= k)."""
    qs: list[Any] = []
    for j in range(z.shape[-1]):
        v = z[..., :, j]
        for _ in range(2):  # (the second pass removes what rounding left of earlier q's)
            for q in qs:
                v = v - jnp.sum(q * v, axis=-1, keepdims=True) * q
        qs.append(v / jnp.sqrt(jnp.sum(v * v, axis=-1, keepdims=True)))
    return jnp.stack(qs, axis=-1)
