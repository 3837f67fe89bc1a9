"""jnp.sinc: values against NumPy over shapes and dtypes (eager and jit), and its
derivatives at 0 (from the Maclaurin series: 0, -pi^2/3, 0, pi^4/5) and away from 0
against the quotient's."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp


@pytest.mark.parametrize("shape", [(), (1,), (7,), (33,), (3, 5), (0,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
def test_sinc_values(shape: tuple[int, ...], dtype: type) -> None:
    rng = np.random.default_rng(sum(shape) + 3)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if x.size and dtype != np.bool_:
        x.flat[0] = 0
    want = np.sinc(x.astype(np.float32) if dtype != np.float16 else x)
    for got in (jnp.sinc(x), ember.jit(jnp.sinc)(x)):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 2e-6,
                                   atol=1e-7)


def test_sinc_edge_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30], np.float32)
    with np.errstate(invalid="ignore"):
        want = np.sinc(x)
    np.testing.assert_array_equal(np.asarray(ember.jit(jnp.sinc)(x)), want)


def test_sinc_derivatives_at_zero_follow_the_series() -> None:
    d1 = ember.grad(jnp.sinc)
    d2 = ember.grad(d1)
    d3 = ember.grad(d2)
    d4 = ember.grad(d3)
    pi = np.pi
    np.testing.assert_allclose([float(d(0.0)) for d in (d1, d2, d3, d4)],
                               [0.0, -pi ** 2 / 3, 0.0, pi ** 4 / 5], rtol=1e-6, atol=1e-6)


def test_sinc_derivative_away_from_zero() -> None:
    x = np.array([0.5, -1.25, 3.0], np.float32)
    y = np.pi * x.astype(np.float64)
    want = (np.cos(y) * y - np.sin(y)) / (y * y) * np.pi
    got = ember.vmap(ember.grad(jnp.sinc))(x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
