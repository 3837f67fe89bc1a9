"""Samplers over indices: `categorical`, `permutation`, `choice`.

Input: a key and logits / an array or a count (choice: a sample shape, `replace`, `p`).
Output: indices or elements of the input.
Invariants (JAX 0.10.2's algorithms, so the same draws): categorical is the argmax of
logits + Gumbel noise (without replacement: the top k of one noisy copy); a permutation
sorts by random 32-bit keys, in ceil(3 ln n / ln(2^32 - 1)) rounds (each round a new
subkey) so ties are negligible; choice draws randint indices (with replacement), a
permutation's prefix (without), inverse-CDF of uniform draws (with `p`), or Gumbel top-k
(with `p`, without replacement).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.random._common import check_shape
from ember.random.keys import KeyArray, check_prng_key
from ember.random.prng import bits_data, canonical_shape, split_data
from ember.random.uniform import randint, uniform
from ember.random.univariate import gumbel, gumbel_mode


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Category indices drawn with probabilities softmax(logits) along `axis`."""
    typed, _ = check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= logits.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        noise = gumbel(typed, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(prefix)))),
                          axis=axis)
    noisy = logits + gumbel(typed, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(noisy, axis, -1), k)
    # (batch..., k) -> (k, batch...) -> shape
    indices = jnp.moveaxis(indices, -1, 0)
    return jnp.reshape(indices, shape)


def _rounds(size: int) -> int:
    return int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))


@partial(jit, static_argnums=(2,))
def _shuffle(data: Any, x: Any, axis: int) -> Any:
    for _ in range(_rounds(x.size)):
        keys = split_data(data, (2,))
        data, sub = keys[0], keys[1]
        sort_keys = bits_data(sub, 32, tuple(x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of range(x) (int x) or of x along `axis`."""
    typed, _ = check_prng_key("permutation", key)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"permutation requires ndarray or scalar arguments, got {type(x)} "
                        "at position 0.")
    axis = _canonical_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.issubdtype(jnp.asarray(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = operator.index(x) if isinstance(x, (int, np.integer)) else int(x)
        return _shuffle(typed._data, jnp.arange(n), axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(typed._data, x, axis)
    ind = _shuffle(typed._data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True,
           p: Any = None, axis: int = 0, mode: str | None = None) -> Any:
    """A random sample of `a`'s elements (or of range(a) for an int a) along `axis`."""
    typed, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, "
                        f"got {shape}")
    if isinstance(a, (list, tuple)):
        raise TypeError(f"choice requires ndarray or scalar arguments, got {type(a)} "
                        "at position 0.")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = canonical_shape(tuple(shape))
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = p_arr.astype(jnp.result_type(float))
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] "
                             f"is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(typed, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=gumbel_mode(mode))
            ind = lax.top_k(g + jnp.log(p_arr), n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


__all__ = ["categorical", "permutation", "choice", "KeyArray"]
