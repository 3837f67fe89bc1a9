"""Samplers that transform one uniform draw per element: `exponential`, `gumbel`,
`laplace`, `logistic`.

Input: a key, a shape, a float dtype (gumbel: a mode). Output: floats of that shape.
Invariants (JAX 0.10.2's algorithms, so the uniform draws are bit-identical and only the
log/log1p implementations can differ by an ulp or two):
  exponential  -log1p(-u),                      u ~ U[0, 1)
  gumbel       -log(-log(u)),                   u ~ U[tiny, 1)            (mode "low")
               -log(-log1p(-x)), x = hi or hi + 2^-nmant lo + tiny  (mode "high": 2 draws)
               float32 "highest": u from 64 bits, log1p(-u) below 1/2, log(u) above
  laplace      sign(u) * log1p(-|u|),           u ~ U[-1 + epsneg, 1)
  logistic     log(u) - log1p(-u),              u ~ U[tiny, 1)
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.random._common import float_dtype
from ember.random.keys import check_prng_key
from ember.random.prng import bits_data, canonical_shape
from ember.random.uniform import uniform_data


@partial(jit, static_argnums=(1, 2))
def _exponential(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_data(data, 0.0, 1.0, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))  # 1 - u is in (0, 1]: log stays finite


def exponential(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Exponential(1) values of the given shape and float dtype."""
    typed, _ = check_prng_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    return _exponential(typed._data, canonical_shape(shape), dtype)


def gumbel_data(data: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    """Standard Gumbel values from key data (mode "low" or "high")."""
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest_f32(data, shape)
    if mode in ("high", "highest"):
        u = uniform_data(data, 0.0, 1.0, (2, *shape), dtype)
        high, low = u[0], u[1]
        # (below 1/2 the second draw refines the first's low bits; above, adding could
        # round up to 1)
        x = jnp.where(high >= 0.5, high,
                      high + np.array(2.0 ** -info.nmant, dtype) * low + np.array(info.tiny,
                                                                                    dtype))
        return -jnp.log(-jnp.log1p(-x))
    u = uniform_data(data, np.array(info.tiny, dtype), np.array(1.0, dtype), shape, dtype)
    return -jnp.log(-jnp.log(u))


def _bits64_to_unit_f32(hi: Any, lo: Any) -> Any:
    """The 64-bit fixed-point fraction 0.hi lo as a float32 in (0, 1), keeping the 24
    significant bits after the leading zeros (so tiny values keep full precision)."""
    u32 = np.uint32
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    # The top 32 significant bits: hi shifted up by its leading zeros, filled from lo.
    top = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(hiclz == 32, lax.shift_left(lo, loclz),
                  lax.shift_right_logical(lo, u32(32) - hiclz)))
    mantissa = lax.bitwise_and(lax.shift_right_logical(top, u32(8)), u32((1 << 23) - 1))
    zeros = jnp.where(hiclz == 32, u32(32) + loclz, hiclz)
    exponent = lax.shift_left(u32(126) - zeros, u32(23))
    exponent = lax.bitwise_and(exponent, u32((1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def _gumbel_highest_f32(data: Any, shape: tuple[int, ...]) -> Any:
    """mode "highest": u from 64 random bits; log1p below 1/2, log above."""
    raw = bits_data(data, 32, (2, *shape))
    neg = lax.bitwise_not(raw)
    # 1 - u in 64-bit fixed point: the complement plus one, carrying into the high word.
    carry = lax.convert_element_type(neg[1] == np.uint32(0xFFFFFFFF), np.uint32)
    neg_hi, neg_lo = neg[0] + carry, neg[1] + np.uint32(1)
    flip = raw[0] < np.uint32(1 << 31)
    x = _bits64_to_unit_f32(jnp.where(flip, raw[0], neg_hi), jnp.where(flip, raw[1], neg_lo))
    return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


@partial(jit, static_argnums=(1, 2, 3))
def _gumbel(data: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    return gumbel_data(data, shape, dtype, mode)


def gumbel_mode(mode: str | None) -> str:
    """The mode argument checked, None meaning the config's default ("low")."""
    if mode is None:
        mode = "low"  # (JAX's default: jax_high_dynamic_range_gumbel is off)
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return mode


def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel values of the given shape and float dtype."""
    typed, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonical_shape(shape)
    return _gumbel(typed._data, shape, dtype, gumbel_mode(mode))


@partial(jit, static_argnums=(1, 2))
def _laplace(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    lo = np.array(-1.0 + float(dtypes.finfo(dtype).epsneg), dtype)
    u = uniform_data(data, lo, np.array(1.0, dtype), shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def laplace(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Laplace values of the given shape and float dtype."""
    typed, _ = check_prng_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    return _laplace(typed._data, canonical_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _logistic(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_data(data, np.array(dtypes.finfo(dtype).tiny, dtype), np.array(1.0, dtype),
                     shape, dtype)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def logistic(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard logistic values of the given shape and float dtype."""
    typed, _ = check_prng_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    return _logistic(typed._data, canonical_shape(shape), dtype)
