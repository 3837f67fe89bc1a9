"""Window functions for ember.numpy: hanning, hamming, blackman, bartlett, kaiser.

Input: the window length M, a static int (kaiser also takes `beta`, which may be traced).
Output: a length-M array of the default float dtype (ones for M <= 1, as NumPy).
Invariants: with n = 0 .. M-1 and N = M - 1: hanning 0.5 - 0.5 cos(2 pi n / N); hamming
0.54 - 0.46 cos(2 pi n / N); blackman 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N);
bartlett 1 - |2n - N| / N; kaiser i0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / i0(beta).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer

__all__ = ["hanning", "hamming", "blackman", "bartlett", "kaiser"]


def _positions(M: Any, name: str) -> tuple[int, Any]:
    """(M, n = 0..M-1 as floats), or (M, None) when M <= 1."""
    if isinstance(M, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            f"The problem arose with the M argument of jnp.{name}")
    M = operator.index(M)
    if M <= 1:
        return M, None
    return M, jnp.arange(M, dtype=dtypes.default_float())


def _ones(M: int) -> Any:
    return jnp.ones((max(M, 0),), dtypes.default_float())


def hanning(M: int) -> Any:
    """Return the Hann window: a raised cosine ``0.5 - 0.5 cos(2 pi n / (M - 1))``.

    Args:
        M: the number of points (a static int); 0 or less gives an empty array, 1 gives
            ``[1.]``.

    Returns:
        A float array of ``M`` points, 0 at the ends and 1 in the middle, in the default float type
        (float32 unless x64 is on; NumPy's is float64).

    Example:
        >>> jnp.hanning(5)
        Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    M, n = _positions(M, "hanning")
    if n is None:
        return _ones(M)
    return 0.5 - 0.5 * jnp.cos(2 * np.pi * n / (M - 1))


def hamming(M: int) -> Any:
    """Return the Hamming window, ``0.54 - 0.46 cos(2 pi n / (M - 1))``.

    Args:
        M: the number of points (a static int); 0 or less gives an empty array, 1 gives
            ``[1.]``.

    Returns:
        A float array of ``M`` points, 0.08 at the ends, in the default float type
        (float32 unless x64 is on; NumPy's is float64).

    Example:
        >>> jnp.round(jnp.hamming(5), 3)
        Array([0.08, 0.54, 1.  , 0.54, 0.08], dtype=float32)
    """
    M, n = _positions(M, "hamming")
    if n is None:
        return _ones(M)
    return 0.54 - 0.46 * jnp.cos(2 * np.pi * n / (M - 1))


def blackman(M: int) -> Any:
    """Return the Blackman window.

    Its points are ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``.

    Args:
        M: the number of points (a static int); 0 or less gives an empty array, 1 gives
            ``[1.]``.

    Returns:
        A float array of ``M`` points, close to 0 at the ends, in the default float type
        (float32 unless x64 is on; NumPy's is float64).

    Example:
        >>> jnp.abs(jnp.round(jnp.blackman(5), 3))
        Array([0.  , 0.34, 1.  , 0.34, 0.  ], dtype=float32)
    """
    M, n = _positions(M, "blackman")
    if n is None:
        return _ones(M)
    t = 2 * np.pi * n / (M - 1)
    return 0.42 - 0.5 * jnp.cos(t) + 0.08 * jnp.cos(2 * t)


def bartlett(M: int) -> Any:
    """Return the Bartlett (triangular) window.

    Args:
        M: the number of points (a static int); 0 or less gives an empty array, 1 gives
            ``[1.]``.

    Returns:
        A float array of ``M`` points, rising linearly from 0 to 1 and back, in the
        default float type (float32 unless x64 is on; NumPy's is float64).

    Example:
        >>> jnp.bartlett(5)
        Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    M, n = _positions(M, "bartlett")
    if n is None:
        return _ones(M)
    return 1 - jnp.abs(2 * n - (M - 1)) / (M - 1)


def kaiser(M: int, beta: Any) -> Any:
    """Return the Kaiser window.

    Its points are ``i0(beta sqrt(1 - (2 n / (M - 1) - 1)**2)) / i0(beta)``.

    Args:
        M: the number of points (a static int); 0 or less gives an empty array, 1 gives
            ``[1.]``.
        beta: the shape parameter: 0 gives a rectangular window, larger values a narrower
            one (about 8.6 resembles a Blackman window).

    Returns:
        A float array of ``M`` points, in the default float type
        (float32 unless x64 is on; NumPy's is float64).

    Example:
        >>> jnp.kaiser(5, 0.0)
        Array([1., 1., 1., 1., 1.], dtype=float32)
    """
    M, n = _positions(M, "kaiser")
    if n is None:
        return _ones(M)
    half = 0.5 * (M - 1)
    r = (n - half) / half
    return jnp.i0(beta * jnp.sqrt(jnp.maximum(1 - r * r, 0))) / jnp.i0(beta)
