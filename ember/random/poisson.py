"""`poisson`: Knuth's product-of-uniforms method for rates below 10, Hormann's transformed
rejection (PTRS) above, as JAX 0.10.2 computes them.

Input: a key, rates `lam` (broadcast to `shape`), an integer dtype. Output: counts.
Invariants: both methods run as whole-array loops on one key stream (a new split each
round, every element drawing from the round's array of uniforms), each element keeping its
first accepted value; the result picks Knuth's count where lam < 10 (or NaN), else the
rejection's, and 0 where lam == 0. The rejection test needs log k! = lgamma(k + 1), which
`_log_factorial` computes here (Stirling's series, the argument shifted to >= 8); it may
differ from XLA's lgamma in the last bits, which can flip an accept decision on the
boundary: rare (none in 2000 draws at each of lam 10, 12, 20, 50, 100; 3 in 2000 at
lam 5000, where log k! ~ 4e4 has an ulp of 1/256). JAX's rejection loop overwrites an
element's count at every accept until all elements are done, so a flip can also change
the counts of other elements of the same draw with rates >= 10.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.random._common import int_dtype
from ember.random._fma import fma
from ember.random.keys import check_prng_key
from ember.random.prng import canonical_shape, split_data
from ember.random.uniform import uniform_data

_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


def _log_factorial(k: Any) -> Any:
    """lgamma(k + 1) for k >= 0 (float32): Stirling's series at z = k + 1, or for
    k + 1 < 8 at z = k + 9 minus log((k + 1)(k + 2)...(k + 8)); arguments below 0 give
    lgamma(1) = 0 (their lanes are rejected before the value is used)."""
    f32 = np.float32
    x = jnp.maximum(k, f32(0.0)) + f32(1.0)
    small = x < f32(8.0)
    shift = x
    for i in range(1, 8):
        shift = shift * (x + f32(i))
    z = jnp.where(small, x + f32(8.0), x)
    inv = f32(1.0) / z
    inv2 = inv * inv
    series = inv * (f32(1 / 12) - inv2 * (f32(1 / 360) - inv2 * f32(1 / 1260)))
    stirling = (z - f32(0.5)) * jnp.log(z) - z + f32(_HALF_LOG_2PI) + series
    return jnp.where(small, stirling - jnp.log(jnp.where(small, shift, f32(1.0))), stirling)


def _knuth(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: Any
           ) -> Any:
    def body(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        keys = split_data(rng, (2,))
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = uniform_data(keys[1], 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, keys[0], log_prod + jnp.log(u)

    def cond(carry: tuple) -> Any:
        i, _, _, log_prod = carry
        return jnp.any(log_prod > -lam) & (i < max_iters)

    init = (jnp.zeros((), dtype), jnp.zeros(shape, dtype), data, jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _rejection(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype, max_iters: Any
               ) -> Any:
    f32 = np.float32
    log_lam = jnp.log(lam)
    b = fma(jnp.full(shape, f32(2.53)), jnp.sqrt(lam), jnp.full(shape, f32(0.931)))
    a = fma(jnp.full(shape, f32(0.02483)), b, jnp.full(shape, f32(-0.059)))
    inv_alpha = f32(1.1239) + f32(1.1328) / (b - f32(3.4))
    v_r = f32(0.9277) - f32(3.6224) / (b - f32(2))

    def body(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        keys = split_data(key, (3,))
        u = uniform_data(keys[1], 0.0, 1.0, shape, lam.dtype) - f32(0.5)
        v = uniform_data(keys[2], 0.0, 1.0, shape, lam.dtype)
        u_shifted = f32(0.5) - jnp.abs(u)
        k = jnp.floor(fma(f32(2) * a / u_shifted + b, u, lam) + f32(0.43))
        s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = fma(k, log_lam, -lam) - _log_factorial(k)
        accept1 = (u_shifted >= f32(0.07)) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < f32(0.013)) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, keys[0]

    def cond(carry: tuple) -> Any:
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.zeros((), dtype), jnp.full(shape, -1.0, lam.dtype), jnp.zeros(shape, bool),
            data)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


@partial(jit, static_argnums=(2, 3))
def _poisson(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, np.float32(0.0))
    # (the rejection method's acceptance rate only grows with lam: a large stand-in rate
    # ends its loop quickly on the Knuth elements)
    lam_rejection = jnp.where(use_knuth, np.float32(1e5), lam)
    max_iters = np.array(np.iinfo(dtype).max, dtype)
    result = jnp.where(use_knuth, _knuth(data, lam_knuth, shape, dtype, max_iters),
                       _rejection(data, lam_rejection, shape, dtype, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) counts (shape defaults to lam's shape)."""
    typed, _ = check_prng_key("poisson", key)
    dtype = int_dtype(dtype, "poisson")
    shape = tuple(np.shape(lam)) if shape is None else canonical_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    return _poisson(typed._data, lam, shape, dtype)
