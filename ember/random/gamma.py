"""Gamma-based samplers: `gamma`, `loggamma`, `beta`, `dirichlet`, `rademacher`,
`generalized_normal`, `ball`.

Input: a key, shape parameters (alpha, a/b, the dimension d and norm p), a shape, a dtype.
Output: floats (rademacher: integers) of the requested shape.
Invariants (JAX 0.10.2's algorithms, so the same draws): element i of a gamma draw uses
key i of split(key, size) and Marsaglia-Tsang's rejection loop (d = alpha - 1/3,
c = 1/(3 sqrt d); propose v = (1 + c x)^3 for x ~ N(0,1) until v > 0, accept when
U < 1 - 0.0331 x^4 or log U < x^2/2 + d(1 - v + log v)); alpha < 1 samples alpha + 1 and
multiplies by u^(1/alpha) (in log space adds log(u)/alpha). The per-element loops run as one
loop over all elements in which finished elements keep their values (what vmap of JAX's
per-element while_loop computes), so the values are JAX's up to the transcendental
functions' last bits (and, rarely, an accept decision those bits flip).
Derivatives (JAX's): a sample x is differentiable in its shape parameter a by implicit
differentiation at fixed quantile, dx/da = lax.random_gamma_grad(a, x) (a custom JVP on the
per-lane sampler, so beta and dirichlet, built on it, differentiate too).
"""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.custom_derivatives import custom_jvp
from ember.random._common import broadcast_shape, check_shape, float_dtype, int_dtype
from ember.random._fma import fma
from ember.random.keys import check_prng_key
from ember.random.normal import normal_real_data
from ember.random.prng import canonical_shape, split_data
from ember.random.uniform import uniform_data


def _split_lanes(keys: Any, num: int) -> list[Any]:
    """split(key, num) of every key of keys (N, 2): num arrays of keys (N, 2)."""
    new = split_data(keys, (num,))
    return [new[:, i] for i in range(num)]


def _gamma_lanes_sample(keys: Any, alpha: Any, log_space: bool) -> Any:
    """One gamma (or log-gamma) sample per lane: keys (N, 2), alpha (N,)."""
    dtype = alpha.dtype
    one = np.array(1.0, dtype)
    third = np.array(1.0 / 3.0, dtype)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + one)
    d = alpha - third
    c = third / jnp.sqrt(d)
    key, subkey = _split_lanes(keys, 2)

    def rejects(x2: Any, v3: Any, u: Any) -> Any:
        squeeze = u >= one - np.array(0.0331, dtype) * (x2 * x2)
        return squeeze & (jnp.log(u) >= x2 * np.array(0.5, dtype)
                          + d * ((one - v3) + jnp.log(v3)))

    def propose_cond(state: tuple) -> Any:
        return jnp.any(state[2] <= 0)

    def propose(state: tuple) -> tuple:
        k, x, v = state
        active = v <= 0
        k, sub = _split_lanes(k, 2)
        x_new = normal_real_data(sub, (), dtype)
        v_new = fma(x_new, c, jnp.broadcast_to(one, x_new.shape))
        return (jnp.where(active[:, None], k, state[0]), jnp.where(active, x_new, x),
                jnp.where(active, v_new, v))

    def accept_cond(state: tuple) -> Any:
        _, x2, v3, u = state
        return jnp.any(rejects(x2, v3, u))

    def draw(state: tuple) -> tuple:
        k, x2, v3, u = state
        active = rejects(x2, v3, u)
        k_next, x_key, u_key = _split_lanes(k, 3)
        zeros = jnp.zeros_like(alpha)
        _, x, v = lax.while_loop(propose_cond, propose, (x_key, zeros, zeros - one))
        u_new = uniform_data(u_key, 0.0, 1.0, (), dtype)
        return (jnp.where(active[:, None], k_next, k), jnp.where(active, x * x, x2),
                jnp.where(active, v * v * v, v3), jnp.where(active, u_new, u))

    init = (key, jnp.zeros_like(alpha), jnp.ones_like(alpha), jnp.full_like(alpha, 2.0))
    _, _, v3, _ = lax.while_loop(accept_cond, draw, init)
    if log_space:
        log_u = jnp.log1p(-uniform_data(subkey, 0.0, 1.0, (), dtype))  # -exponential
        log_boost = jnp.where(boost_mask | (log_u == 0), np.array(0.0, dtype),
                              log_u * (one / alpha_orig))
        return (jnp.log(d) + jnp.log(v3)) + log_boost
    samples = one - uniform_data(subkey, 0.0, 1.0, (), dtype)
    boost = jnp.where(boost_mask, one, jnp.power(samples, one / alpha_orig))
    return (d * v3) * boost


def _gamma_lanes(keys: Any, alpha: Any, log_space: bool) -> Any:
    """One gamma (or log-gamma) sample per lane, differentiable in alpha (below)."""
    return _gamma_lanes_diff(log_space, keys, alpha)


@partial(custom_jvp, nondiff_argnums=(0,))
def _gamma_lanes_diff(log_space: bool, keys: Any, alpha: Any) -> Any:
    return _gamma_lanes_sample(keys, alpha, log_space)


@_gamma_lanes_diff.defjvp
def _gamma_lanes_jvp(log_space: bool, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # Implicit differentiation at the sample's fixed quantile u = P(alpha, x) (as JAX):
    # dx/dalpha = -(dP/dalpha) / (dP/dx) = lax.random_gamma_grad(alpha, x); in log space
    # d log x = dx / x, with x = exp(log x) kept at least the smallest normal float.
    keys, alpha = primals
    # (the rule may see the primal as the caller's NumPy array: canonicalize its dtype)
    alpha = jnp.asarray(alpha)
    out = _gamma_lanes_sample(keys, alpha, log_space)
    if log_space:
        x = jnp.exp(out)
        x = jnp.where(x == 0, np.array(np.finfo(x.dtype).tiny, x.dtype), x)
        slope = lax.random_gamma_grad(alpha, x) / x
    else:
        slope = lax.random_gamma_grad(alpha, out)
    return out, tangents[1] * slope


@partial(jit, static_argnums=(2, 3, 4))
def _gamma(data: Any, a: Any, shape: tuple[int, ...] | None, dtype: np.dtype,
           log_space: bool) -> Any:
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        check_shape("gamma", shape, np.shape(a))
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    n = math.prod(shape)
    keys = jnp.reshape(split_data(data, (n,)), (n, 2))
    return jnp.reshape(_gamma_lanes(keys, jnp.reshape(a, (n,)), log_space), shape)


def _gamma_args(name: str, key: Any, shape: Any, dtype: Any) -> tuple:
    typed, _ = check_prng_key(name, key)
    dtype = float_dtype("gamma", dtype)
    return typed._data, (None if shape is None else canonical_shape(shape)), dtype


def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) values (shape defaults to a's shape)."""
    data, shape, dtype = _gamma_args("gamma", key, shape, dtype)
    return _gamma(data, a, shape, dtype, False)


def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) values, accurate for small a (where the values underflow)."""
    data, shape, dtype = _gamma_args("loggamma", key, shape, dtype)
    return _gamma(data, a, shape, dtype, True)


@partial(jit, static_argnums=(3, 4))
def _beta(data: Any, a: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    keys = split_data(data, (2,))
    n = math.prod(shape)
    # loggamma(key_a, a) and loggamma(key_b, b) as the lanes of one rejection loop
    lanes = jnp.concatenate([jnp.reshape(split_data(keys[0], (n,)), (n, 2)),
                             jnp.reshape(split_data(keys[1], (n,)), (n, 2))])
    logs = _gamma_lanes(lanes, jnp.concatenate([jnp.reshape(a, (n,)), jnp.reshape(b, (n,))]),
                        True)
    log_a, log_b = jnp.reshape(logs[:n], shape), jnp.reshape(logs[n:], shape)
    # Ga / (Ga + Gb), both scaled by exp(-max log) so neither overflows nor underflows.
    log_max = jnp.maximum(log_a, log_b)
    ga, gb = jnp.exp(log_a - log_max), jnp.exp(log_b - log_max)
    return ga / (ga + gb)


def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) values (shape defaults to the broadcast of a's and b's shapes)."""
    typed, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = broadcast_shape("beta", shape, a, b)
    return _beta(typed._data, a, b, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _dirichlet(data: Any, alpha: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    alpha = lax.convert_element_type(alpha, dtype)
    full = (*shape, alpha.shape[-1])
    log_g = _gamma(data, jnp.broadcast_to(alpha, full), full, dtype, True)
    # softmax over the last axis
    e = jnp.exp(log_g - lax.stop_gradient(jnp.max(log_g, axis=-1, keepdims=True)))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) vectors along the last axis (shape: the batch shape)."""
    typed, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        shape = canonical_shape(shape)
        check_shape("dirichlet", shape, tuple(np.shape(alpha)[:-1]))
    return _dirichlet(typed._data, jnp.asarray(alpha), shape, dtype)


def _bernoulli_half(data: Any, shape: tuple[int, ...]) -> Any:
    # bernoulli(key, 0.5, shape): u < 0.5 with u of the default float type
    dtype = jnp.asarray(0.5).dtype
    return uniform_data(data, 0.0, 1.0, shape, dtype) < np.array(0.5, dtype)


@partial(jit, static_argnums=(1, 2))
def _rademacher(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    b = _bernoulli_half(data, shape)
    return (2 * b.astype(jnp.asarray(1).dtype) - 1).astype(dtype)


def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or +1 with equal probability."""
    typed, _ = check_prng_key("rademacher", key)
    return _rademacher(typed._data, canonical_shape(shape), int_dtype(dtype, "rademacher"))


@partial(jit, static_argnums=(1, 2, 3))
def _generalized_normal(data: Any, p: float, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    keys = split_data(data, (2,))
    g = _gamma(keys[0], 1 / p, shape, dtype, False)
    r = _rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


def generalized_normal(key: Any, p: float, shape: Any = (), dtype: Any = None) -> Any:
    """Sample generalized normal random values: density proportional to ``exp(-abs(x)**p)``.

    Args:
        key: a PRNG key.
        p: the shape parameter (2 gives a normal of variance 1/2, 1 a Laplace).
        shape: the output's shape.
        dtype: a float dtype (the default float type when None).

    Returns:
        An array of ``shape`` and ``dtype``.
    """
    shape = canonical_shape(shape)
    typed, _ = check_prng_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return _generalized_normal(typed._data, p, shape, dtype)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _ball(data: Any, p: float, d: int, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    keys = split_data(data, (2,))
    g = _generalized_normal(keys[0], p, (*shape, d), dtype)
    e = -lax.log1p(-uniform_data(keys[1], 0.0, 1.0, shape, dtype))  # exponential
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def ball(key: Any, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Points uniform in the unit p-norm ball of dimension d."""
    shape = canonical_shape(shape)
    typed, _ = check_prng_key("ball", key)
    dtype = float_dtype("ball", dtype)
    d = operator.index(d)
    return _ball(typed._data, p, d, shape, dtype)
