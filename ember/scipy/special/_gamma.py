"""The gamma family of jax.scipy.special: gammaln, digamma, betaln, gammasgn, gamma, beta,
factorial, poch, multigammaln.

Input: array-likes, promoted to one inexact dtype. Output: an elementwise array.
Invariants: gammaln and digamma are lax.lgamma / lax.digamma (primitives with derivative
and batching rules, compiled natively); betaln(a, b) = log|B(a, b)| takes a = min, b = max
and for b < 8 is lgamma(a) + (lgamma(b) - lgamma(a + b)), for b >= 8 lgamma(a) plus
log(Gamma(b) / Gamma(a + b)) from Stirling's series, which keeps the digits the plain
difference of two huge lgammas loses (as JAX's, after cdflib's algdiv):

    log(Gamma(b) / Gamma(a + b)) = D(b) - D(a + b) - (a + b - 1/2) log1p(a / b) - a (log b - 1),
    D(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ sum_k B_2k / (2k (2k-1) x^(2k-1)).

gamma = gammasgn * exp(lgamma) (real arguments only: complex gamma is not here yet), with
gammasgn -1 on the negative intervals (-2k-1, -2k) and at -0, nan at the poles; beta =
signs * exp(betaln); factorial(n) = exp(lgamma(n + 1)), 0 for n < 0; poch(z, m) =
gamma(z + m) / gamma(z), 1 at m = 0; multigammaln(a, d) = d(d-1)/4 log pi +
sum_j lgamma(a - j/2), j < d.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.numpy._promote import promote_args_inexact

__all__ = ["gammaln", "digamma", "betaln", "gammasgn", "gamma", "beta", "factorial", "poch",
           "multigammaln"]


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


def _real_only(name: str, x: Any) -> None:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError(f"{name} of complex arguments is not implemented in Ember "
                                  "yet")


def gammasgn(x: Any) -> Any:
    """The sign of Gamma(x) (as jax.scipy.special.gammasgn)."""
    x, = promote_args_inexact("gammasgn", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    dt = x.dtype.type
    floor_x = lax.floor(x)
    negative = x < 0
    pole = (negative & (x == floor_x)) | jnp.isnan(x)
    # Gamma < 0 on (-1, 0), (-3, -2), ...: where floor(x) is odd; and Gamma(-0) = -inf
    minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.select([pole, minus], [dt(np.nan), dt(-1.0)], dt(1.0))


def gamma(x: Any) -> Any:
    """The gamma function (as jax.scipy.special.gamma, real arguments)."""
    x, = promote_args_inexact("gamma", x)
    _real_only("gamma", x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def beta(a: Any, b: Any) -> Any:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) (as jax.scipy.special.beta)."""
    a, b = promote_args_inexact("beta", a, b)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Any:
    """n! = Gamma(n + 1) as a float, 0 for n < 0 (as jax.scipy.special.factorial)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def poch(z: Any, m: Any) -> Any:
    """The rising factorial Gamma(z + m) / Gamma(z) (as jax.scipy.special.poch)."""
    z, m = promote_args_inexact("poch", z, m)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return jnp.where(m == 0., jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


def multigammaln(a: Any, d: int) -> Any:
    """log of the multivariate gamma function of dimension d (as
    jax.scipy.special.multigammaln)."""
    d = operator.index(d)
    a, d_arr = promote_args_inexact("multigammaln", a, d)
    constant = 0.25 * d_arr * (d_arr - 1) * jnp.log(jnp.asarray(np.pi, a.dtype))
    halves = jnp.arange(d, dtype=d_arr.dtype) / 2
    terms = lax.lgamma(jnp.expand_dims(a, -1) - halves)
    return jnp.sum(terms, axis=-1) + constant
