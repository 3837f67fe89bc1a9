"""Samplers derived from the basic ones by a closed-form transform: `cauchy`, `pareto`,
`lognormal`, `rayleigh`, `weibull_min`, `maxwell`, `double_sided_maxwell`, `geometric`,
`triangular`, `wald`, `t`, `chisquare`, `f`.

Input: a key, the distribution's parameters (broadcast to `shape`, which defaults to
their broadcast shape where JAX's does), a dtype. Output: samples of that shape.
Invariants: JAX 0.10.2's formulas on the same draws (same key splits, same uniform /
normal / gamma calls), so values match JAX's up to the transcendental functions' last
bits:
  cauchy      tan(pi (u - 1/2)),  u ~ U[eps, 1)
  pareto      exp(E / b),  E ~ Exp(1)
  lognormal   exp(sigma N)
  rayleigh    scale sqrt(-2 log u)
  weibull_min (-log1p(-u))^(1/concentration) scale
  maxwell     |N3| (norm of 3 normals)
  double_sided_maxwell  sign * maxwell * scale + loc
  geometric   floor(log u / log1p(-p)) + 1   (u = 0 read as 1)
  triangular  inverse CDF of the triangle (left, mode, right)
  wald        Michael-Schucany-Haas from one normal and one uniform
  t           N sqrt((df/2) / G),  G ~ Gamma(df/2)
  chisquare   2 exp(loggamma(df/2))
  f           (chi2(dfnum)/dfnum) / (chi2(dfden)/dfden)
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp
from ember.api import jit
from ember.core import dtypes
from ember.random._common import broadcast_shape, float_dtype, int_dtype
from ember.random.gamma import _gamma, _rademacher
from ember.random.keys import check_prng_key
from ember.random.normal import normal_real_data
from ember.random.prng import canonical_shape, split_data
from ember.random.uniform import uniform_data


def _prep(name: str, key: Any, dtype: Any) -> tuple[Any, np.dtype]:
    typed, _ = check_prng_key(name, key)
    return typed._data, float_dtype(name, dtype)


def _exponential_data(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.neg(lax.log1p(lax.neg(uniform_data(data, 0.0, 1.0, shape, dtype))))


@partial(jit, static_argnums=(1, 2))
def _cauchy(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_data(data, np.array(dtypes.finfo(dtype).eps, dtype), np.array(1.0, dtype),
                     shape, dtype)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


def cauchy(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard Cauchy values."""
    data, dtype = _prep("cauchy", key, dtype)
    return _cauchy(data, canonical_shape(shape), dtype)


@partial(jit, static_argnums=(2, 3))
def _pareto(data: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    b = lax.convert_element_type(b, dtype)
    return lax.exp(_exponential_data(data, shape, dtype) / b)


def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto(b) values (support x >= 1)."""
    data, dtype = _prep("pareto", key, dtype)
    return _pareto(data, b, broadcast_shape("pareto", shape, b), dtype)


@partial(jit, static_argnums=(2, 3))
def _lognormal(data: Any, sigma: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(normal_real_data(data, shape, dtype) * sigma)


_ONE = np.float32(1)


def lognormal(key: Any, sigma: Any = _ONE, shape: Any = None,
              dtype: Any = None) -> Any:
    """exp(sigma * N(0, 1)) values."""
    data, dtype = _prep("lognormal", key, dtype)
    return _lognormal(data, sigma, broadcast_shape("lognormal", shape, sigma), dtype)


@partial(jit, static_argnums=(2, 3))
def _rayleigh(data: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_data(data, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype))))


def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh(scale) values."""
    data, dtype = _prep("rayleigh", key, dtype)
    return _rayleigh(data, scale, broadcast_shape("rayleigh", shape, scale), dtype)


@partial(jit, static_argnums=(3, 4))
def _weibull_min(data: Any, scale: Any, concentration: Any, shape: tuple[int, ...],
                 dtype: np.dtype) -> Any:
    u = uniform_data(data, 0.0, 1.0, shape, dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (),
                dtype: Any = None) -> Any:
    """Weibull(scale, concentration) values."""
    data, dtype = _prep("weibull_min", key, dtype)
    return _weibull_min(data, scale, concentration, canonical_shape(shape), dtype)


def _maxwell_data(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return jnp.linalg.norm(normal_real_data(data, (*shape, 3), dtype), axis=-1)


@partial(jit, static_argnums=(1, 2))
def _maxwell(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return _maxwell_data(data, shape, dtype)


def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Maxwell values (the norm of 3 standard normals)."""
    data, dtype = _prep("maxwell", key, dtype)
    return _maxwell(data, canonical_shape(shape), dtype)


@partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(data: Any, loc: Any, scale: Any, shape: tuple[int, ...],
                          dtype: np.dtype) -> Any:
    params = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (*(shape or params), *params)
    keys = split_data(data, (2,))
    rvs = _maxwell_data(keys[0], shape, dtype)
    sign = _rademacher(keys[1], shape, dtype)
    return sign * rvs * scale + loc


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell(loc, scale) values."""
    data, dtype = _prep("double_sided_maxwell", key, dtype)
    return _double_sided_maxwell(data, loc, scale, canonical_shape(shape), dtype)


@partial(jit, static_argnums=(2, 3))
def _geometric(data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(jnp.asarray(1.0).dtype)
    u = uniform_data(data, 0.0, 1.0, shape, p.dtype)
    u = jnp.where(u == 0, np.array(1, p.dtype), u)
    log_q = jnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.div(lax.log(u), log_q)) + 1).astype(dtype)


def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Trials until the first success, success probability p (integers >= 1)."""
    typed, _ = check_prng_key("geometric", key)
    dtype = int_dtype(dtype, "geometric")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    return _geometric(typed._data, p, broadcast_shape("geometric", shape, p), dtype)


@partial(jit, static_argnums=(4, 5))
def _triangular(data: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...],
                dtype: np.dtype) -> Any:
    left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform_data(data, 0.0, 1.0, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Any:
    """Triangular(left, mode, right) values."""
    data, dtype = _prep("triangular", key, dtype)
    shape = broadcast_shape("triangular", shape, left, mode, right)
    return _triangular(data, left, mode, right, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _wald(data: Any, mean: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    keys = split_data(data, (2,))
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal_real_data(keys[0], shape, dtype)
    z = uniform_data(keys[1], 0.0, 1.0, shape, dtype)
    y = v * v
    y_sq = y * y
    mean_sq = mean * mean
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) values with the given mean and unit shape."""
    data, dtype = _prep("wald", key, dtype)
    return _wald(data, mean, broadcast_shape("wald", shape, mean), dtype)


@partial(jit, static_argnums=(2, 3))
def _t(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    keys = split_data(data, (2,))
    n = normal_real_data(keys[0], shape, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    g = _gamma(keys[1], half_df, shape, dtype, False)
    return n * jnp.sqrt(half_df / g)


def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t(df) values."""
    data, dtype = _prep("t", key, dtype)
    return _t(data, df, broadcast_shape("t", shape, df), dtype)


def _chisquare_data(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    return lax.mul(jnp.exp(_gamma(data, half_df, shape, dtype, True)), np.array(2, dtype))


@partial(jit, static_argnums=(2, 3))
def _chisquare(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return _chisquare_data(data, df, shape, dtype)


def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-square(df) values."""
    data, dtype = _prep("chisquare", key, dtype)
    return _chisquare(data, df, broadcast_shape("chisquare", shape, df), dtype)


@partial(jit, static_argnums=(3, 4))
def _f(data: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    keys = split_data(data, (2,))
    chi2_num = _chisquare_data(keys[1], dfnum, shape, dtype)
    chi2_den = _chisquare_data(keys[0], dfden, shape, dtype)
    return lax.div(lax.div(chi2_num, dfnum), lax.div(chi2_den, dfden))


def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F(dfnum, dfden) values."""
    data, dtype = _prep("f", key, dtype)
    return _f(data, dfnum, dfden, broadcast_shape("f", shape, dfnum, dfden), dtype)
