"""Elementwise number functions for ember.numpy: gcd, lcm, spacing, i0, bitwise_count,
packbits, unpackbits (and frexp, from _frexp.py).

Input: array-likes (broadcast together where there are two). Output: ember arrays.
Invariants: gcd runs Euclid's algorithm in a while loop until every remainder is 0; spacing is
nextafter(x, +-inf) - x (the smallest subnormal at 0, NaN at inf, as JAX); i0 is the power
series sum ((x/2)^k / k!)^2 for |x| <= 20 and the asymptotic expansion
e^x / sqrt(2 pi x) sum_k ((2k-1)!!)^2 / (k! (8x)^k) above, each evaluated only on its own
range (so gradients stay finite); packbits/unpackbits pack 8 flags per uint8, 'big' bit
order by default.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.numpy._frexp import frexp  # noqa: F401  (exported from here)
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_args_numeric, promote_dtypes_inexact

__all__ = ["frexp", "gcd", "lcm", "spacing", "i0", "bitwise_count", "packbits",
           "unpackbits"]

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@jit_like_jax("gcd")
def gcd(x1: Any, x2: Any, /) -> Any:
    """Return the greatest common divisor of ``abs(x1)`` and ``abs(x2)``, element-wise.

    Args:
        x1, x2: integer arrays or scalars, broadcast together.

    Returns:
        The greatest common divisor (0 where both are 0), in the promoted integer type.
        Under a trace one ``jit[name=gcd]`` equation holding a ``while`` loop, as in JAX.

    Example:
        >>> jnp.gcd(jnp.array([12, -18, 0, 7]), 8)
        Array([4, 2, 8, 1], dtype=int32)
    """
    check_arraylike("gcd", x1, x2)
    a, b = promote_args_numeric("gcd", x1, x2)
    if not jnp.issubdtype(a.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    a, b = jnp.broadcast_arrays(a, b)
    return lax.while_loop(_gcd_cond, _gcd_body, (jnp.abs(a), jnp.abs(b)))[0]


def _gcd_cond(ab: tuple[Any, Any]) -> Any:
    return jnp.any(ab[1] != 0)


def _gcd_body(ab: tuple[Any, Any]) -> tuple[Any, Any]:
    # One Euclid step on each pair (a, b) -> (b, a rem b) where b != 0 (lax.rem by 0 is
    # defined, a, and masked out), then the larger first, as JAX's loop orders them.
    a, b = ab
    a, b = (jnp.where(b != 0, b, a),
            jnp.where(b != 0, lax.rem(a, b), np.array(0, b.dtype)))
    return jnp.where(a < b, b, a), jnp.where(a < b, a, b)


@jit_like_jax("lcm")
def lcm(x1: Any, x2: Any, /) -> Any:
    """Return the least common multiple of ``abs(x1)`` and ``abs(x2)``, element-wise.

    Args:
        x1, x2: integer arrays or scalars, broadcast together.

    Returns:
        The least common multiple (0 where either is 0), in the promoted integer type;
        like NumPy's it wraps around where it overflows the type.

    Example:
        >>> jnp.lcm(jnp.array([4, -6, 0, 7]), 6)
        Array([12,  6,  0, 42], dtype=int32)
    """
    check_arraylike("lcm", x1, x2)
    a, b = promote_args_numeric("lcm", x1, x2)
    a, b = jnp.abs(a), jnp.abs(b)
    if not jnp.issubdtype(a.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(a, b)
    return jnp.where(d == 0, np.array(0, d.dtype), jnp.multiply(a, jnp.floor_divide(b, d)))


def spacing(x: Any, /) -> Any:
    """Return the distance from each value to the next float away from zero.

    The counterpart of :func:`numpy.spacing`: the size of one unit in the last place at
    ``x``, signed like ``x``.

    Args:
        x: an array; integers promote to the default float type.

    Returns:
        ``nextafter(x, copysign(inf, x)) - x``: the smallest subnormal at 0, NaN at
        infinities and NaN.

    Example:
        >>> jnp.spacing(jnp.array([1.0, -1.0, 1024.0]))
        Array([ 1.1920929e-07, -1.1920929e-07,  1.2207031e-04], dtype=float32)
        >>> jnp.spacing(jnp.float32(0.0))
        Array(1.e-45, dtype=float32)
    """
    check_arraylike("spacing", x)
    (x,) = promote_dtypes_inexact(jnp.asarray(x))
    inf = jnp.asarray(np.inf, x.dtype)
    if x.dtype == np.float16:
        return jnp.nextafter(x, inf) - x
    out = jnp.nextafter(x, jnp.copysign(inf, x)) - x
    tiny = jnp.asarray(jnp.finfo(x.dtype).smallest_subnormal, x.dtype)
    return jnp.where(out == 0, jnp.copysign(tiny, x), out)


_SERIES_TERMS = 40  # (x/2)^(2k) / (k!)^2 at x = 20, k = 40: < 1e-19 of the sum
_ASYMP_TERMS = 26   # k! (2x)^-k ... shrinks to ~1e-16 by k = 26 at x = 20
_SWITCH = 20.0


def i0(x: Any) -> Any:
    """Compute the modified Bessel function of the first kind of order 0.

    The counterpart of :func:`numpy.i0`. Ember evaluates its power series for
    ``|x| <= 20`` and its asymptotic expansion above, both in ``x``'s own precision.

    Args:
        x: a real array; integers promote to the default float type (complex input raises).

    Returns:
        ``I0(x)``, even in ``x`` and at least 1; it overflows to inf near ``|x| = 90`` in
        float32.

    Example:
        >>> jnp.i0(jnp.array([0.0, 1.0, -2.0]))
        Array([1.       , 1.266066 , 2.2795851], dtype=float32)
    """
    check_arraylike("i0", x)
    (x,) = promote_dtypes_inexact(jnp.asarray(x))
    if not jnp.issubdtype(x.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    ax = jnp.abs(x)
    small = ax <= _SWITCH
    # Power series on [0, 20]: term_k = term_{k-1} * (x/2)^2 / k^2.
    xs = jnp.where(small, ax, 0)
    q = (xs * 0.5) ** 2
    term = jnp.ones_like(xs)
    total = term
    for k in builtins.range(1, _SERIES_TERMS):
        term = term * q / (k * k)
        total = total + term
    # Asymptotic expansion above 20: term_k = term_{k-1} * (2k - 1)^2 / (8 k x).
    xl = jnp.where(small, _SWITCH + 1, ax)
    term_l = jnp.ones_like(xl)
    total_l = term_l
    for k in builtins.range(1, _ASYMP_TERMS):
        term_l = term_l * ((2 * k - 1) ** 2) / (8.0 * k * xl)
        total_l = total_l + term_l
    # e^x split as e^(x/2) twice, so that the product overflows only where i0 does.
    half = jnp.exp(xl * 0.5)
    large = half * (total_l / jnp.sqrt(2 * math.pi * xl)) * half
    return jnp.where(small, total, large)


def bitwise_count(x: Any, /) -> Any:
    """Return the number of 1 bits in ``abs(x)``, element-wise.

    The counterpart of :func:`numpy.bitwise_count` (NumPy 2).

    Args:
        x: an integer or bool array or scalar.

    Returns:
        The population count of ``x``'s absolute value, as uint8.

    Example:
        >>> jnp.bitwise_count(jnp.array([0, 7, 8, -3, 255]))
        Array([0, 3, 1, 2, 8], dtype=uint8)
    """
    check_arraylike("bitwise_count", x)
    (x,) = promote_args_numeric("bitwise_count", x)
    if not (jnp.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_):
        raise TypeError(f"bitwise_count requires integer or bool input; got {x.dtype}")
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    width = np.dtype(x.dtype).itemsize * 8
    u = lax.bitcast_convert_type(jnp.abs(x), _UINT.get(width // 8, np.uint8))
    one = np.array(1, u.dtype)
    count = jnp.zeros(u.shape, np.uint8)
    for i in builtins.range(width):
        count = count + ((u >> np.array(i, u.dtype)) & one).astype(np.uint8)
    return count


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack an array of truth values into the bits of uint8 bytes.

    The counterpart of :func:`numpy.packbits`.

    Args:
        a: an integer or bool array; each nonzero entry is a 1 bit.
        axis: the axis packed eight entries to a byte; None (default) flattens first.
        bitorder: ``"big"`` (default: the first entry is the most significant bit) or
            ``"little"``.

    Returns:
        A uint8 array whose ``axis`` is ``ceil(n / 8)`` long; a last partial byte is padded
        with zero bits.

    Example:
        >>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1]))
        Array([177, 128], dtype=uint8)
        >>> jnp.packbits(jnp.array([1, 0, 1]), bitorder="little")
        Array([5], dtype=uint8)
    """
    check_arraylike("packbits", a)
    arr = jnp.asarray(a)
    if not (jnp.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = (arr != 0).astype(np.uint8)
    shifts = jnp.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    arr = jnp.swapaxes(arr, axis, -1)
    rem = arr.shape[-1] % 8
    if rem:
        arr = jnp.pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, 8 - rem)])
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    packed = jnp.sum(arr << shifts, axis=-1, dtype=np.uint8)
    return jnp.swapaxes(packed, axis, -1)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """Unpack the bits of uint8 bytes into an array of 0s and 1s.

    The counterpart of :func:`numpy.unpackbits`; the inverse of :func:`packbits`.

    Args:
        a: a uint8 array.
        axis: the axis each byte expands along, eight entries per byte; None (default)
            flattens first.
        count: keep only this many bits along ``axis`` (a larger count pads with zeros; a
            negative one drops that many from the end).
        bitorder: ``"big"`` (default: the most significant bit first) or ``"little"``.

    Returns:
        A uint8 array of 0s and 1s.

    Example:
        >>> jnp.unpackbits(jnp.array([5, 128], dtype=jnp.uint8))
        Array([0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0], dtype=uint8)
        >>> jnp.unpackbits(jnp.array([5], dtype=jnp.uint8), count=4, bitorder="little")
        Array([1, 0, 1, 0], dtype=uint8)
    """
    check_arraylike("unpackbits", a)
    arr = jnp.asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    masks = jnp.left_shift(jnp.ones((), np.uint8), jnp.arange(8, dtype=np.uint8))
    if bitorder == "big":
        masks = masks[::-1]
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    arr = jnp.swapaxes(arr, axis, -1)
    bits = ((arr[..., None] & masks) > 0).astype(np.uint8)
    bits = bits.reshape(bits.shape[:-2] + (-1,))
    if count is not None:
        if count > bits.shape[-1]:
            bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - bits.shape[-1])])
        else:
            bits = bits[..., :count]
    return jnp.swapaxes(bits, axis, -1)
