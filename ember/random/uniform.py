"""Uniform samplers: `uniform` (floats in [minval, maxval)), `randint`, `bernoulli`.

Input: a key, a shape, bounds / probabilities, a dtype. Output: arrays of that shape.
Invariants (JAX 0.10.2's algorithms, hence its bits): a float of `nmant` mantissa bits is
1.m - 1 with m the top `nmant` random bits (8 bits drawn for bfloat16's 7), scaled to the
bounds and floored at minval; randint combines two draws of `nbits` (high and low) as
(hi mod span) * (2^(nbits/2) mod span)^2 + lo mod span, mod span.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.core import dtypes as core_dtypes
from ember.random._common import broadcast_shape, check_shape, float_dtype, int_dtype
from ember.random._fma import fma
from ember.random.keys import check_prng_key
from ember.random.prng import UINT_DTYPES, bits_data, canonical_shape, split_data


def uniform_data(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
                 dtype: np.dtype) -> Any:
    """Uniform floats from key data (batched keys give a leading batch shape)."""
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = UINT_DTYPES[nbits]
    raw = bits_data(data, rng_bits, shape)
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint)
    mant = lax.shift_right_logical(raw, uint.type(rng_bits - nmant))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = lax.sub(lax.bitcast_convert_type(lax.bitwise_or(mant, one_bits), dtype),
                     np.array(1.0, dtype))
    if _is_static(minval) and _is_static(maxval) and float(minval) == 0 and (
            float(maxval) == 1):
        return floats  # (floats * 1 + 0 is floats, and floats >= 0)
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    span = jnp.broadcast_to(maxval - minval, floats.shape)
    return jnp.maximum(minval, fma(floats, span, jnp.broadcast_to(minval, floats.shape)))


def _is_static(x: Any) -> bool:
    return isinstance(x, (int, float, np.generic)) or (
        isinstance(x, np.ndarray) and x.ndim == 0)


@partial(jit, static_argnums=(3, 4))
def _uniform(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
             dtype: np.dtype) -> Any:
    return uniform_data(data, minval, maxval, shape, dtype)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _uniform_static(data: Any, minval: float, maxval: float, shape: tuple[int, ...],
                    dtype: np.dtype) -> Any:
    return uniform_data(data, minval, maxval, shape, dtype)


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval) of the given shape and float dtype."""
    typed, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonical_shape(shape)
    if _is_static(minval) and _is_static(maxval):  # bounds known: folded into the kernel
        return _uniform_static(typed._data, float(minval), float(maxval), shape, dtype)
    return _uniform(typed._data, minval, maxval, shape, dtype)


def _convert_and_clip(val: Any, dtype: np.dtype) -> Any:
    """Integer `val` as `dtype`, clipped to the range both types share (no wraparound)."""
    lo = max(int(np.iinfo(dtype).min), int(np.iinfo(val.dtype).min))
    hi = min(int(np.iinfo(dtype).max), int(np.iinfo(val.dtype).max))
    clipped = jnp.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype))
    return lax.convert_element_type(clipped, dtype)


@partial(jit, static_argnums=(3, 4))
def _randint(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
             dtype: np.dtype) -> Any:
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    # A maxval above the dtype's range means "up to and including the dtype's max".
    top = _convert_and_clip(jnp.array(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = lax.gt(maxval, top)
    minval = _convert_and_clip(minval, dtype)
    maxval = _convert_and_clip(maxval, dtype)
    nbits = np.iinfo(dtype).bits
    keys = split_data(data, (2,))
    higher = bits_data(keys[0], nbits, shape)
    lower = bits_data(keys[1], nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned)
    span = jnp.where(maxval <= minval, unsigned.type(1), span)
    span = jnp.where(maxval_out_of_range & (maxval > minval), span + unsigned.type(1), span)
    span = jnp.broadcast_to(span, shape)
    # 2^nbits mod span, as (2^(nbits/2) mod span)^2 mod span, to stay within nbits.
    mult = lax.rem(jnp.full(shape, 2 ** (nbits // 2), unsigned), span)
    mult = lax.rem(lax.mul(mult, mult), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), mult), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return minval + lax.convert_element_type(offset, dtype)


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in [minval, maxval) of the given shape and integer dtype."""
    typed, _ = check_prng_key("randint", key)
    dtype = int_dtype(dtype, "randint")
    shape = canonical_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = np.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:  # narrow types sample at 32 bits (less modulo bias), then narrow
        sampling = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    out = _randint(typed._data, minval, maxval, shape, sampling)
    return out.astype(dtype)


@partial(jit, static_argnums=(2, 3))
def _bernoulli(data: Any, p: Any, shape: tuple[int, ...] | None, mode: str) -> Any:
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        check_shape("bernoulli", shape, np.shape(p))
    dtype = jnp.asarray(p).dtype
    if mode == "high":
        u = uniform_data(data, 0.0, 1.0, (2, *shape), dtype)
        u1, u2 = u[0], u[1] * np.array(2.0 ** -dtypes.finfo(dtype).nmant, dtype)
        return u2 < p - u1
    return uniform_data(data, 0.0, 1.0, shape, dtype) < p


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, mode: str = "low") -> Any:
    """Booleans that are True with probability p (shape defaults to p's shape)."""
    if shape is not None:
        shape = canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    typed, _ = check_prng_key("bernoulli", key)
    p_arr = jnp.asarray(p)
    if not dtypes.issubdtype(p_arr.dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{p_arr.dtype}.")
    if core_dtypes.is_python_scalar(p):
        p_arr = jnp.asarray(p, core_dtypes.default_float())
    return _bernoulli(typed._data, p_arr, shape, mode)


__all__ = ["uniform", "randint", "bernoulli", "broadcast_shape"]
