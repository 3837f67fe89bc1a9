"""Normal samplers: `normal` (real and complex) and `truncated_normal`.

Input: a key, a shape, a dtype (and bounds). Output: floats of that shape.
Invariants (JAX 0.10.2's algorithms): a standard normal is sqrt(2) * erfinv(u) with u
uniform in (-1, 1) (the open lower end is nextafter(-1, 0), so erfinv stays finite); a
complex normal is (re + i im) / sqrt(2) from two split keys; a truncated normal inverts
the normal CDF between the bounds with erf and erfinv, clamped into the open interval.
Values match JAX's to within the erfinv/erf implementations' few ulp.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.random._common import broadcast_shape, float_dtype
from ember.random.keys import check_prng_key
from ember.random.prng import canonical_shape
from ember.random.uniform import uniform_data


def _nextafter(x: float, toward: float, dtype: np.dtype) -> Any:
    return np.nextafter(np.array(x, dtype), np.array(toward, dtype), dtype=dtype)


def normal_real_data(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Standard normals from key data: sqrt(2) * erfinv(u), u ~ U(nextafter(-1, 0), 1)."""
    u = uniform_data(data, _nextafter(-1.0, 0.0, dtype), np.array(1.0, dtype), shape, dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


@partial(jit, static_argnums=(1, 2))
def _normal(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return normal_real_data(data, shape, dtype)


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal values of the given shape and float (or complex) dtype."""
    typed, _ = check_prng_key("normal", key)
    shape = canonical_shape(shape)
    dtype = float_dtype("normal", dtype, allow_complex=True)
    if dtypes.issubdtype(dtype, np.complexfloating):
        # (JAX's complex normal is (re + i im) / sqrt(2) from two split keys; Ember's
        # compiled code has no complex element type yet)
        raise TypeError(f"Ember does not support the dtype {dtype} in random.normal")
    return _normal(typed._data, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _truncated_normal(data: Any, lower: Any, upper: Any, shape: tuple[int, ...] | None,
                      dtype: np.dtype) -> Any:
    shape = broadcast_shape("truncated_normal", shape, lower, upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    # u ~ U(a, b) in erf space, mapped back through erfinv; the clamp keeps the result
    # strictly inside (lower, upper) where rounding lands on a bound.
    u = uniform_data(data, a, b, shape, dtype)
    out = sqrt2 * lax.erf_inv(u)
    return jnp.clip(out, jnp.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype)),
                    jnp.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype)))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Any:
    """Standard normals conditioned on lower < x < upper."""
    typed, _ = check_prng_key("truncated_normal", key)
    if shape is not None:
        shape = canonical_shape(shape)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(typed._data, lower, upper, shape, dtype)
