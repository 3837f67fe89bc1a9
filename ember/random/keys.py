"""Typed PRNG key arrays (`key<fry>`) and the checks every sampler runs on its key.

Input: a typed key array (from `key`, `split`, `fold_in`, `wrap_key_data`) or a raw key
(an array whose trailing axis is the 2 uint32 words of a Threefry key, from `PRNGKey`).
Output: `KeyArray`, a pytree node holding the raw uint32[..., 2] data, whose `shape`
excludes the key words and whose `dtype` prints as JAX's `key<fry>`.
Invariants: a KeyArray flattens to its data (one leaf) and unflattens from it, so it
passes through `jit`, `vmap` and pytree functions; samplers receive a KeyArray of shape ()
and return raw keys when they were given raw keys (JAX's legacy convention).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as jnp
from ember import tree_util
from ember.array import Array
from ember.core.trace import Tracer

KEY_SHAPE = (2,)


class KeyTy:
    """The dtype of Threefry key arrays: prints as `key<fry>`, as JAX's."""

    name = "key<fry>"
    itemsize = 8
    kind = "V"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyTy) or other == "key<fry>"

    def __hash__(self) -> int:
        return hash(KeyTy)


KEY_DTYPE = KeyTy()


class KeyArray:
    """An array of Threefry keys: `shape` is the data's shape less its trailing 2."""

    __slots__ = ("_data",)
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def shape(self) -> tuple[int, ...]:
        """The key array's shape (the data's, without the key words' axis)."""
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self) -> int:
        """The key array's rank."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of keys."""
        return int(np.prod(self.shape))

    @property
    def dtype(self) -> KeyTy:
        """`key<fry>`."""
        return KEY_DTYPE

    def __getitem__(self, idx: Any) -> KeyArray:
        idx = idx if isinstance(idx, tuple) else (idx,)
        # The key words' axis is always kept whole: index the leading axes only.
        return KeyArray(self._data[(*idx, slice(None))])

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return jnp.all(self._data == other._data, axis=-1)

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return jnp.any(self._data != other._data, axis=-1)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array."
                        " Use jax.random.key_data(arr) if you wish to extract the underlying"
                        " integer array.")

    def __repr__(self) -> str:
        data = self._data
        body = data if isinstance(data, Tracer) else np.asarray(data)
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{body}"

    def reshape(self, *shape: Any) -> KeyArray:
        """The same keys in a new shape (as Array.reshape)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        new = np.empty(self.shape, dtype=np.bool_).reshape(shape).shape  # resolves a -1
        return KeyArray(jnp.reshape(self._data, (*new, 2)))

    def ravel(self) -> KeyArray:
        """The keys as a 1-D key array."""
        return self.reshape(-1)

    def block_until_ready(self) -> KeyArray:
        """Wait for the key data (as Array.block_until_ready)."""
        if hasattr(self._data, "block_until_ready"):
            self._data.block_until_ready()
        return self


tree_util.register_pytree_node(KeyArray, lambda k: ((k._data,), None),
                               lambda _, children: KeyArray(*children))


def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Array, Tracer)) or np.isscalar(x)


def check_key_data(data: Any) -> None:
    """Raise JAX's TypeError unless `data` is uint32 with a trailing axis of 2."""
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != KEY_SHAPE:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {KEY_SHAPE}; got shape={tuple(data.shape)} for "
                        "impl=threefry2x32")
    if data.dtype != np.uint32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


def wrap(data: Any) -> KeyArray:
    """A KeyArray over raw key data, checked (JAX's errors for a float array etc.)."""
    if isinstance(data, (np.ndarray, np.generic)):
        data = jnp.asarray(data)
    check_key_data(data)
    return KeyArray(data)


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False
                   ) -> tuple[KeyArray, bool]:
    """(typed key, whether it came raw) for the sampler `name`; a batched key is an error
    unless allowed (JAX's text names the key's shape)."""
    if isinstance(key, KeyArray):
        typed, wrapped = key, False
    elif _arraylike(key):
        typed, wrapped = wrap(key), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        shape = typed._data.shape if wrapped else typed.shape
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(shape)} != (). Use jax.vmap for batching.")
    return typed, wrapped


def returned(wrapped: bool, key: KeyArray) -> Any:
    """Raw data for a caller who passed a raw key, else the typed key."""
    return key._data if wrapped else key
