"""`ember.nn.initializers`: parameter initializers, as `jax.nn.initializers`.

Input: each factory (`normal(stddev)`, `glorot_uniform()`, ...) takes its settings and
returns an initializer `init(key, shape, dtype=None) -> array`; `zeros`, `ones` are
initializers themselves. Output: arrays drawn with `ember.random` from `key`, so the same
key gives JAX's values (the draws are JAX's bit for bit where ember.random's are, and the
scale factors are applied in the same order and dtype).
Variance scaling, the family behind glorot/lecun/he: with fan_in = in_size * receptive
field and fan_out = out_size * receptive field (the receptive field is every axis that is
not an input, output or batch axis), variance = scale / n where n is fan_in, fan_out,
their mean or their geometric mean (`mode`); then
  truncated_normal: truncated_normal(-2, 2) * sqrt(variance) / 0.8796...
    (0.8796 is the standard deviation of a standard normal truncated to (-2, 2)),
  normal:           normal * sqrt(variance),
  uniform:          uniform(-1, 1) * sqrt(3 variance)  (a uniform's variance is width^2/12).
Invariants: `dtype=None` means the default float type (float32, float64 under x64); only
real float dtypes (Ember has no complex numbers in compiled code yet).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as jnp
from ember import random
from ember.core import dtypes

__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal", "Initializer"]

Initializer = Callable[..., Any]

# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = .87962566103423978


def _dtype(dtype: Any) -> np.dtype:
    return np.dtype(dtypes.default_float() if dtype is None else dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer returning zeros of `shape` (the key is not used)."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer returning ones of `shape` (the key is not used)."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling its arrays with `value`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * jnp.array(scale, dt)
    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution of standard deviation `stddev`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * jnp.array(stddev, dt)
    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """An initializer drawing from a standard normal truncated to (lower, upper), times
    `stddev` (so the result's standard deviation is below `stddev`)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * jnp.array(stddev, dt)
    return init


def _size(shape: Sequence[int], axes: int | Sequence[int]) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _fans(shape: Sequence[int], in_axis: int | Sequence[int],
          out_axis: int | Sequence[int], batch_axis: int | Sequence[int]
          ) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight of `shape`: the input and output sizes, each times
    the receptive field (the product of every other non-batch axis)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional"
                         " weights tensor with default in_axis. Must be at least 2D or "
                         "specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


def variance_scaling(scale: float, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """An initializer whose draws have variance `scale / n`, n from the weight's fans
    (`mode`: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg"), drawn from `distribution`
    ("truncated_normal", "normal" or "uniform"); see the module docstring."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = tuple(int(d) for d in shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            n = fan_in
        elif mode == "fan_out":
            n = fan_out
        elif mode == "fan_avg":
            n = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            n = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / n, dtype=dt)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dt)
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * jnp.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dt, -1) * jnp.sqrt(3 * variance)
        raise ValueError("invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def _family(scale: float, mode: str, distribution: str, what: str) -> Callable[..., Initializer]:
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    factory.__doc__ = (f"{what}: `variance_scaling({scale}, \"{mode}\", "
                       f"\"{distribution}\")`.")
    return factory


glorot_uniform = _family(1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform")
glorot_normal = _family(1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) normal")
lecun_uniform = _family(1.0, "fan_in", "uniform", "LeCun uniform")
lecun_normal = _family(1.0, "fan_in", "truncated_normal", "LeCun normal")
he_uniform = _family(2.0, "fan_in", "uniform", "He (Kaiming) uniform")
he_normal = _family(2.0, "fan_in", "truncated_normal", "He (Kaiming) normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer drawing `scale` times a uniformly random orthogonal matrix (rows or
    columns orthonormal, whichever fit), reshaped so `column_axis` holds the columns."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = tuple(int(d) for d in shape)
        dt = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dt)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dt, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dt) * q
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """An initializer for 3-D to 5-D convolution kernels: zeros except an orthogonal
    matrix (`orthogonal`) at the kernel's spatial centre."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = tuple(int(d) for d in shape)
        dt = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dt).at[centre].set(matrix)
    return init


from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
