"""The log-gamma family of jax.scipy.special: gammaln, digamma, betaln.

Input: array-likes, promoted to one inexact dtype. Output: an elementwise array.
Invariants: gammaln and digamma are lax.lgamma / lax.digamma (primitives with derivative
and batching rules, compiled natively); betaln(a, b) = log|B(a, b)| takes a = min, b = max
and for b < 8 is lgamma(a) + (lgamma(b) - lgamma(a + b)), for b >= 8 lgamma(a) plus
log(Gamma(b) / Gamma(a + b)) from Stirling's series, which keeps the digits the plain
difference of two huge lgammas loses (as JAX's, after cdflib's algdiv):

    log(Gamma(b) / Gamma(a + b)) = D(b) - D(a + b) - (a + b - 1/2) log1p(a / b) - a (log b - 1),
    D(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ sum_k B_2k / (2k (2k-1) x^(2k-1)).
"""

from __future__ import annotations

from typing import Any

import ember.numpy as jnp
from ember import lax
from ember.numpy._promote import promote_args_inexact

__all__ = ["gammaln", "digamma", "betaln"]


def gammaln(x: Any) -> Any:
    """log|Gamma(x)| (as jax.scipy.special.gammaln)."""
    x, = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """psi(x) = d/dx log Gamma(x) (as jax.scipy.special.digamma)."""
    x, = promote_args_inexact("digamma", x)
    return lax.digamma(x)


# Stirling's correction D(x) = sum_k c_k / x^(2k-1), c_k = B_2k / (2k (2k - 1)): 1/12,
# -1/360, 1/1260, -1/1680, 1/1188, -691/360360 (for x >= 8 the next term is < 1e-13 x^-1).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360)


def _stirling_correction(x: Any) -> Any:
    u = 1 / (x * x)
    acc = jnp.full_like(x, _STIRLING[-1])
    for c in reversed(_STIRLING[:-1]):
        acc = c + u * acc
    return acc / x


def _log_gamma_ratio(a: Any, b: Any) -> Any:
    """log(Gamma(b) / Gamma(a + b)) for b >= 8 (and a <= b)."""
    w = _stirling_correction(b) - _stirling_correction(a + b)
    u = (b + (a - 0.5)) * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    # subtract the larger of u, v last (the result is small next to them)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Any:
    """log|B(a, b)| = log|Gamma(a) Gamma(b) / Gamma(a + b)| (as jax.scipy.special.betaln)."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    # (b is clamped where unused so the unused branch stays finite for the gradient)
    big = jnp.maximum(b, 8.0)
    large_b = lax.lgamma(a) + _log_gamma_ratio(a, big)
    return jnp.where(b < 8, small_b, large_b)
