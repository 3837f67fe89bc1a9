"""The incomplete gamma and beta integrals, Bessel, zeta and polygamma functions of
jax.scipy.special: gammainc, gammaincc, betainc, i0e, i0, i1e, i1, zeta, polygamma.

Input: array-likes, promoted to one inexact dtype and broadcast (polygamma's order must
be an integer array, as JAX requires). Output: an elementwise array.
Invariants: each is its lax primitive (lax.igamma, igammac, betainc, bessel_i0e/i1e, zeta,
polygamma: native code, JAX's derivative rules); i0 = e^|x| i0e and i1 = e^|x| i1e.
zeta's derivative (in both arguments, as JAX's) is that of its Euler-Maclaurin sum
written in ember.numpy: N = 10 direct terms and 12 Bernoulli terms (w = q + N),

    zeta(s, q) = sum_(k<N) (q+k)^-s + w^(1-s)/(s-1)
                 + w^-s (1/2 + sum_j B_2j/(2j)! (s)_(2j-1) w^(1-2j)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.ad_api import jvp
from ember.core import dtypes
from ember.custom_derivatives import custom_jvp
from ember.numpy._promote import promote_args_inexact
from ember.prims.special_zeta import _EM

__all__ = ["gammainc", "gammaincc", "betainc", "i0e", "i0", "i1e", "i1", "zeta",
           "polygamma"]


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    return lax.betainc(a, b, x)


def i0e(x: Any) -> Any:
    """``exp(-abs(x)) * i0(x)``, the exponentially scaled modified Bessel function of order 0."""
    x, = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Any:
    """I0(x), the modified Bessel function of order 0."""
    x, = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x: Any) -> Any:
    """``exp(-abs(x)) * i1(x)``, the exponentially scaled modified Bessel function of order 1."""
    x, = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Any:
    """I1(x), the modified Bessel function of order 1."""
    x, = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def _zeta_sum(s: Any, q: Any) -> Any:
    """zeta(s, q) as the Euler-Maclaurin sum (module doc), differentiable in s and q."""
    dtype = jnp.result_type(s)
    one = np.array(1.0, dtype)
    n = 10
    total = sum(((q + np.array(k, dtype)) ** -s for k in range(n)), jnp.zeros_like(s))
    w = q + np.array(n, dtype)
    w_s = w ** -s
    inner = jnp.full_like(s, 0.5)
    rising = s / w
    for j, coefficient in enumerate(_EM, start=1):
        inner = inner + rising * np.array(coefficient, dtype)
        rising = rising * (s + np.array(2 * j - 1, dtype)) * (s + np.array(2 * j, dtype)) / (w * w)
    return total + w_s * w / (s - one) + w_s * inner


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x, q = primals
    _, t = jvp(_zeta_sum, (x, q), tangents)
    return _zeta(x, q), t


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function zeta(x, q) = sum_n (n + q)^-x (q is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
            "Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return _zeta(x, q)


def polygamma(n: Any, x: Any) -> Any:
    """psi^(n)(x), the n-th derivative of digamma (n an integer array)."""
    if not dtypes.issubdtype(jnp.result_type(n), np.integer):
        raise ValueError("Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{jnp.result_type(n)}.")
    n, x = promote_args_inexact("polygamma", n, x)
    if dtypes.issubdtype(jnp.result_type(x), np.complexfloating):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(n, x)
