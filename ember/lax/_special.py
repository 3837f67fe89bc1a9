"""lax's special functions on their own primitives (as jax.lax): `lgamma`, `digamma`,
`igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`, `betainc`, `zeta`,
`polygamma`, `bessel_i0e`, `bessel_i1e`.

Input: float arrays of one dtype (integers are refused with JAX's dtype error; operands
broadcast as lax's elementwise operations do; `random_gamma_grad` broadcasts like NumPy, as
JAX's). Output: an array of the operands' broadcast shape and dtype. The primitives
(prims/special_*.py) lower to inlined elementwise code (series and continued fractions
whose convergence loops are native loops), so they compile natively with no callback;
their derivative rules are JAX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.prims.special_bessel import bessel_i0e_p, bessel_i1e_p
from ember.prims.special_beta import regularized_incomplete_beta_p
from ember.prims.special_gamma import digamma_p, lgamma_p
from ember.prims.special_igamma import (
    igamma_grad_a_p,
    igamma_p,
    igammac_p,
    random_gamma_grad_p,
)
from ember.prims.special_zeta import polygamma_p, zeta_p

__all__ = ["lgamma", "digamma", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad",
           "betainc", "zeta", "polygamma", "bessel_i0e", "bessel_i1e"]


def lgamma(x: Any) -> Any:
    """Elementwise log|Gamma(x)| (as jax.lax.lgamma)."""
    return lgamma_p.bind(x)


def digamma(x: Any) -> Any:
    """Elementwise digamma psi(x) = d/dx log Gamma(x) (as jax.lax.digamma)."""
    return digamma_p.bind(x)


def igamma(a: Any, x: Any) -> Any:
    """Elementwise regularized lower incomplete gamma P(a, x) (as jax.lax.igamma)."""
    return igamma_p.bind(a, x)


def igammac(a: Any, x: Any) -> Any:
    """Elementwise regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """Elementwise dP(a, x)/da (as jax.lax.igamma_grad_a)."""
    return igamma_grad_a_p.bind(a, x)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """Elementwise derivative in a of a Gamma(a, 1) sample x at fixed quantile,
    -(dP/da) / (dP/dx) (as jax.lax.random_gamma_grad: operands broadcast like NumPy)."""
    from ember import numpy as jnp
    a, x = jnp.asarray(a), jnp.asarray(x)
    shape = np.broadcast_shapes(np.shape(a), np.shape(x))
    return random_gamma_grad_p.bind(jnp.broadcast_to(a, shape), jnp.broadcast_to(x, shape))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Elementwise regularized incomplete beta integral I_x(a, b) (as jax.lax.betainc)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def zeta(x: Any, q: Any) -> Any:
    """Elementwise Hurwitz zeta function zeta(x, q) = sum_k (q + k)^-x."""
    return zeta_p.bind(x, q)


def polygamma(m: Any, x: Any) -> Any:
    """Elementwise polygamma psi^(m)(x), the m-th derivative of digamma."""
    return polygamma_p.bind(m, x)


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0, ``exp(-abs(x)) * i0(x)``."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1, ``exp(-abs(x)) * i1(x)``."""
    return bessel_i1e_p.bind(x)
