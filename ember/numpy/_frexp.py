"""jnp.frexp and jnp.ldexp: a float split into mantissa and exponent, and put back together,
staged as JAX 0.10.2 stages them (`jit[name=frexp]` around a custom-JVP `_frexp`,
`jit[name=ldexp]` on top of it).

Input: real arrays (integers promote to the default float; ldexp's exponent is an integer
array). Output: frexp gives (m, e) with x == m * 2**e exactly, 0.5 <= |m| < 1 and an int32
e (m = x and e = 0 for 0, inf and NaN); ldexp gives x * 2**e rounded once.
Invariants: frexp reads the exponent field of the float's bits, subnormals scaled into the
normal range first; ldexp splits x's own exponent off before adding e, so a tiny x with a
large e (or the reverse) neither overflows nor flushes to zero on the way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.custom_derivatives import custom_jvp
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, ensure_array, promote_args_inexact

# The signed integer type of each float width, for the bits of the float.
_INT = {2: np.int16, 4: np.int32, 8: np.int64}


@jit_like_jax("frexp")
def frexp(x: Any, /) -> tuple[Any, Any]:
    """Split a float into mantissa and exponent, element-wise.

    Args:
        x: a real array or scalar; integers and bools promote to the default float type.

    Returns:
        ``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``,
        ``0.5 <= abs(mantissa) < 1`` and an int32 ``exponent``; for 0, inf and NaN the
        mantissa is ``x`` and the exponent 0, as in NumPy (whose exponent is a C int).

    Example:
        >>> m, e = jnp.frexp(jnp.array([8.0, -0.375, 0.0]))
        >>> m
        Array([ 0.5 , -0.75,  0.  ], dtype=float32)
        >>> e
        Array([ 4, -1,  0], dtype=int32)
    """
    check_arraylike("frexp", x)
    (x,) = promote_args_inexact("frexp", x)
    if dtypes.kind(get_aval(x).dtype) == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


def _normalize(x: Any) -> tuple[Any, Any]:
    """(the bits of x, a subnormal scaled by 2**nmant; -nmant there, else 0)."""
    from ember.numpy._manipulation import where
    info = np.finfo(get_aval(x).dtype)
    int_type = _INT[info.bits // 8]
    tiny = lax.lt(lax.abs(x), _const(x, info.tiny))
    scaled = where(tiny, lax.mul(x, _const(x, 1 << info.nmant)), x)
    shift = where(tiny, int_type(-info.nmant), int_type(0))
    return lax.bitcast_convert_type(scaled, int_type), shift


def _const(x: Any, value: Any) -> Any:
    return lax.convert_element_type(value, get_aval(x).dtype)


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    import ember.numpy as jnp
    dtype = get_aval(x).dtype
    info = np.finfo(dtype)
    field = (1 << info.nexp) - 1
    bias = 1 - info.minexp  # the exponent field of 1.0
    bits, exp = _normalize(x)
    # The unbiased exponent of 2 * x (so that the mantissa lands in [0.5, 1)) ...
    exp = jnp.add(exp, jnp.add(jnp.subtract(jnp.bitwise_and(
        jnp.right_shift(bits, info.nmant), field), bias), 1))
    # ... and the mantissa: x's sign and fraction with the exponent field of 0.5.
    bits = jnp.bitwise_and(bits, ~(field << info.nmant))
    bits = jnp.bitwise_or(bits, (bias - 1) << info.nmant)
    mant = lax.bitcast_convert_type(bits, dtype)
    special = jnp.logical_or(jnp.logical_or(jnp.isinf(x), jnp.isnan(x)), jnp.equal(x, 0))
    exp = jnp.where(special, lax.full_like(exp, 0), exp)
    return jnp.where(special, x, mant), lax.convert_element_type(exp, np.int32)


@_frexp.defjvp
def _frexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    # d(mantissa) = dx / 2**e (e is piecewise constant); the exponent has no tangent.
    import ember.numpy as jnp
    from ember.ad_api import float0
    (x,), (t,) = primals, tangents
    m, e = frexp(x)
    dm = jnp.multiply(t, jnp.exp2(jnp.negative(lax.convert_element_type(
        e, get_aval(t).dtype))))
    return (m, e), (dm, np.zeros(get_aval(e).shape, float0))


@jit_like_jax("ldexp")
def ldexp(x1: Any, x2: Any, /) -> Any:
    """Return ``x1 * 2**x2``, element-wise.

    Args:
        x1: a real array or scalar (the mantissa); integers promote to the default float.
        x2: an integer array or scalar (the exponent), broadcast against ``x1``.

    Returns:
        ``x1 * 2**x2`` rounded once in ``x1``'s float type: inf where it overflows, 0 or a
        subnormal where it underflows; ``x1`` itself where it is 0 or infinite (NaN stays
        NaN). x1's own exponent is split off first, so ``ldexp(2.0**-100, 200)`` is
        ``2.0**100`` rather than ``0 * inf``.

    Example:
        >>> jnp.ldexp(jnp.array([1.0, 0.75, -3.0]), jnp.array([3, -2, 1]))
        Array([ 8.    ,  0.1875, -6.    ], dtype=float32)
    """
    import ember.numpy as jnp
    check_arraylike("ldexp", x1, x2)
    x1, x2 = ensure_array(x1), ensure_array(x2)
    d1, d2 = get_aval(x1).dtype, get_aval(x2).dtype
    if dtypes.kind(d1) == "c" or dtypes.kind(d2) in "fc":
        raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, get_aval(x1).dtype)
    m, e = frexp(x1)
    e = lax.convert_element_type(jnp.add(lax.convert_element_type(e, get_aval(x2).dtype), x2),
                                 get_aval(x1).dtype)
    # The exponent may exceed the largest by one with a finite result (m < 1): move one
    # factor 2 into m.
    m = jnp.where(jnp.greater(e, 0), jnp.multiply(m, 2), m)
    e = jnp.where(jnp.greater(e, 0), jnp.subtract(e, 1), e)
    x = jnp.multiply(m, jnp.power(2, lax.convert_element_type(e, get_aval(m).dtype)))
    return jnp.where(jnp.logical_or(jnp.isinf(x1), jnp.equal(x1, 0)), x1, x)
