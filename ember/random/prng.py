"""Key construction and key derivation: `PRNGKey`, `key`, `key_data`, `wrap_key_data`,
`split`, `fold_in`, and the raw-bits source every sampler draws from.

Input: integer seeds, keys (typed or raw), split counts, fold-in data.
Output: keys (raw uint32[2] for raw inputs, typed `key<fry>` otherwise) and uint arrays.
Invariants: values equal JAX 0.10.2's with `jax_threefry_partitionable=True`: element i of
a `shape`-shaped draw hashes the 64-bit counter i (row-major index) as (hi, lo) words under
the key; `split` keeps both cipher words as the new key, bits of 32 bits xor them, of 64
bits concatenate them (hi << 32 | lo), of 8/16 bits truncate the xor. The internal
functions take key data of any batch shape (..., 2): keys broadcast against the draw.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.core import dtypes as core_dtypes
from ember.random.keys import KeyArray, check_key_data, check_prng_key, returned
from ember.random.threefry import iota_2x32, threefry2x32

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}


def key_words(data: Any) -> tuple[Any, Any]:
    """The two uint32 words of key data (..., 2), each of shape (...)."""
    k1 = lax.index_in_dim(data, 0, axis=data.ndim - 1, keepdims=False)
    k2 = lax.index_in_dim(data, 1, axis=data.ndim - 1, keepdims=False)
    return k1, k2


def canonical_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as a tuple of ints (JAX's TypeError for anything else)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None
    if any(d < 0 for d in out):
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {out}.")
    return out


def _hash_counters(data: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The cipher words for every counter of `shape` under every key of data (..., 2):
    two uint32 arrays of shape (*batch, *shape)."""
    k1, k2 = key_words(data)
    hi, lo = iota_2x32(shape)
    if k1.ndim:  # keys broadcast over the draw's axes, counters over the keys'
        pad = (1,) * len(shape)
        k1 = jnp.reshape(k1, k1.shape + pad)
        k2 = jnp.reshape(k2, k2.shape + pad)
    return threefry2x32(k1, k2, hi, lo)


def split_data(data: Any, shape: tuple[int, ...]) -> Any:
    """New key data (*batch, *shape, 2): the cipher words of each counter."""
    b1, b2 = _hash_counters(data, shape)
    return jnp.stack([b1, b2], axis=-1)


def fold_in_data(data: Any, msg: Any) -> Any:
    """Key data (..., 2) hashed with the 32-bit message: threefry(key, (0, msg))."""
    k1, k2 = key_words(data)
    msg = lax.convert_element_type(msg, np.uint32)
    b1, b2 = threefry2x32(k1, k2, jnp.zeros_like(msg), msg)
    return jnp.stack([b1, b2], axis=-1)


def bits_data(data: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Uniform unsigned bits of `bit_width` and shape (*batch, *shape)."""
    b1, b2 = _hash_counters(data, shape)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = lax.convert_element_type(b1, dtype)
        lo = lax.convert_element_type(b2, dtype)
        return lax.bitwise_or(lax.shift_left(hi, np.uint64(32)), lo)
    x = lax.bitwise_xor(b1, b2)
    return x if bit_width == 32 else lax.convert_element_type(x, dtype)


# Eager calls of the key functions run as one compiled kernel each (cached per shape), not
# as a hundred eager ops; under an outer trace they inline as nested jit calls.
_split_jit = jit(split_data, static_argnums=(1,))
_fold_in_jit = jit(fold_in_data)
_bits_jit = jit(bits_data, static_argnums=(1, 2))


def random_bits(key: KeyArray, bit_width: int, shape: Sequence[int]) -> Any:
    """Bits of a typed key (for the samplers)."""
    if bit_width == 64 and not core_dtypes.x64_enabled():
        # (uint64 does not exist without x64: a sampler never asks for it then)
        raise TypeError("64-bit random bits need jax_enable_x64")
    return _bits_jit(key._data, bit_width, tuple(shape))


def split_key(key: KeyArray, num: int | Sequence[int] = 2) -> KeyArray:
    """`split` for a typed key of shape () (for the samplers)."""
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return KeyArray(_split_jit(key._data, canonical_shape(shape)))


def _seed_data(ctor: str, seed: Any) -> Any:
    if isinstance(seed, KeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    # A Python int goes through int64 first (JAX's rule): without x64 its low 32 bits are
    # the seed, so Python hashes work as seeds.
    arr = jnp.asarray(np.int64(seed)) if isinstance(seed, int) and not isinstance(
        seed, bool) else jnp.asarray(seed)
    if not dtypes.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {arr!r}")
    return _seed_jit(arr)


def _seed_words(arr: Any) -> Any:
    # key = (seed >> 32, seed & 0xFFFFFFFF) of the seed's bits; seeds of 32 bits or fewer
    # have a zero high word (their sign extension is in the low word's conversion).
    lo = lax.convert_element_type(arr, np.uint32)
    if arr.dtype.itemsize > 4:
        as_u64 = lax.bitcast_convert_type(arr, np.uint64) if arr.dtype == np.int64 else arr
        hi = lax.convert_element_type(lax.shift_right_logical(as_u64, np.uint64(32)),
                                      np.uint32)
    else:
        hi = jnp.zeros((), np.uint32)
    return jnp.stack([hi, lo])


_seed_jit = jit(_seed_words)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A raw (legacy) key: uint32[2] = (high, low) words of the integer seed."""
    _check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """Create a typed PRNG key from an integer seed.

    Args:
        seed: a Python int or integer scalar.
        impl: the PRNG implementation: None or "threefry2x32" (the only one Ember has).
        dtype: a key dtype, instead of ``impl``.

    Returns:
        A key array of shape ``()`` and dtype ``key<fry>``, giving JAX's random values for
        the same seed.

    Example:
        >>> k = ember.random.key(0)
        >>> ember.random.normal(k, (2,)).shape
        (2,)
    """
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _check_impl(impl if dtype is None else dtype)
    return KeyArray(_seed_data("key", seed))


def _check_impl(impl: Any) -> None:
    if impl is None or impl == "threefry2x32" or impl == "key<fry>":
        return
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". '
                         'Did you mean one of: "threefry2x32"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def key_data(keys: Any) -> Any:
    """The uint32[..., 2] data under a key array (a raw key is returned as it is)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return typed._data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed key array over uint32[..., 2] data."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to"
                         " jax.random.wrap_key_data")
    _check_impl(impl if dtype is None else dtype)
    data = key_bits_array
    if isinstance(data, (np.ndarray, np.generic, list, tuple)):
        data = jnp.asarray(data)
    check_key_data(data)
    return KeyArray(data)


def key_impl(keys: Any) -> str:
    """The name of the keys' implementation: "threefry2x32"."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """Split a PRNG key into new, independent keys.

    Args:
        key: a typed key (from ``key``) or a raw uint32[2] key (from ``PRNGKey``), of
            shape ``()``.
        num: the number of keys, or a shape for an array of keys.

    Returns:
        ``num`` new keys (an array of shape ``(num,)`` or ``num``), of ``key``'s kind;
        ``key`` itself should not be used again.
    """
    typed, wrapped = check_prng_key("split", key)
    return returned(wrapped, split_key(typed, num))


def fold_in(key: Any, data: Any) -> Any:
    """Derive a new PRNG key from ``key`` and an integer.

    Args:
        key: a typed or raw key of shape ``()``.
        data: a 32-bit integer scalar (a step number, a device index...).

    Returns:
        A key of ``key``'s kind: ``key`` hashed with ``data``, so different ``data`` give
        independent keys.
    """
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    msg = jnp.asarray(data, dtype=np.uint32)
    return returned(wrapped, KeyArray(_fold_in_jit(typed._data, msg)))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (uint32 by default, uint64 with x64)."""
    typed, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = core_dtypes.default_uint()
    else:
        dtype = core_dtypes.canonicalize_requested(dtype, "bits")
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError("dtype argument to `bits` must be an unsigned int dtype, "
                         f"got {dtype}")
    return random_bits(typed, dtype.itemsize * 8, canonical_shape(shape))
