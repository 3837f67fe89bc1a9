"""jnp.sinc, staged as JAX 0.10.2 stages it, with exact derivatives of every order at 0.

Input: an array (integers promote to the default float). Output: sin(pi x) / (pi x), and
1 where x == 0. Invariants: away from 0 the value is the quotient itself; at 0 the value
and its derivatives come from the Maclaurin series of sin(y) / y, through a custom JVP, so
grad(grad(sinc))(0.) is -pi^2 / 3 rather than the 0 that differentiating a `where` gives.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval
from ember.custom_derivatives import custom_jvp
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import promote_args_inexact


def _const(x: Any, value: Any) -> Any:
    return lax.convert_element_type(value, get_aval(x).dtype)


@jit_like_jax("sinc")
def sinc(x: Any, /) -> Any:
    """Return the normalized sinc function, ``sin(pi x) / (pi x)``, element-wise.

    Args:
        x: an array or scalar; integers and bools promote to the default float type.

    Returns:
        ``sin(pi x) / (pi x)``, with the limit 1 where ``x`` is 0. As in JAX (unlike
        NumPy, which differentiates nothing), derivatives of every order are exact at 0.

    Example:
        >>> jnp.sinc(jnp.array([0.0, 0.5, -1.5]))
        Array([ 1.        ,  0.63661975, -0.21220659], dtype=float32)
    """
    from ember.numpy._manipulation import where
    (x,) = promote_args_inexact("sinc", x)
    is_zero = lax.eq(x, _const(x, 0))
    pi_x = lax.mul(_const(x, np.pi), x)
    # The quotient at a safe argument (1 where x == 0), so no 0/0 is ever formed.
    safe = where(is_zero, _const(x, 1), pi_x)
    return where(is_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe), safe))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, y: Any) -> Any:
    # The k-th derivative of sin(y) / y at y = 0, as an array shaped like y: the series
    # sum_n (-1)^n y^(2n) / (2n + 1)! has k-th derivative (-1)^(k/2) / (k + 1) for even k
    # and 0 for odd k. (`y * 0` keeps y's shape and dtype, and its tangent's path.)
    if k % 2:
        return y * 0
    return y * 0 + (-1) ** (k // 2) / (k + 1)


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k: int, primals: Any, tangents: Any) -> tuple[Any, Any]:
    (y,), (t,) = primals, tangents
    return _sinc_maclaurin(k, y), _sinc_maclaurin(k + 1, y) * t
