"""jnp.frexp and jnp.ldexp against NumPy, bit for bit, eager and jit: normal, subnormal and
special values in float32, float16 and (with x64) float64; ldexp with exponents that
overflow, underflow, and that only a split-off exponent keeps finite; their derivatives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.numpy as jnp


def _values(dtype: type, n: int = 150) -> np.ndarray:
    info = np.finfo(dtype)
    rng = np.random.default_rng(info.bits)
    scale = np.exp2(rng.integers(info.minexp - info.nmant, info.maxexp, n).astype(np.float64))
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny,
               info.smallest_subnormal, -3 * info.smallest_subnormal, info.max, -info.max]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.concatenate([rng.standard_normal(n) * scale, special]).astype(dtype)


class _x64:
    def __enter__(self) -> None:
        self.old = ember.config.jax_enable_x64
        ember.config.update("jax_enable_x64", True)

    def __exit__(self, *exc: object) -> None:
        ember.config.update("jax_enable_x64", self.old)


def _check(dtype: type) -> None:
    x = _values(dtype)
    want_m, want_e = np.frexp(x)
    for f in (jnp.frexp, ember.jit(jnp.frexp)):
        m, e = (np.asarray(v) for v in f(x))
        assert m.dtype == dtype and e.dtype == np.int32
        np.testing.assert_array_equal(m, want_m)
        np.testing.assert_array_equal(e, want_e)
    info = np.finfo(dtype)
    rng = np.random.default_rng(1)
    n = rng.integers(-2 * info.maxexp - info.nmant, 2 * info.maxexp, x.shape).astype(np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.ldexp(x, n)
    for f in (jnp.ldexp, ember.jit(jnp.ldexp)):
        got = np.asarray(f(x, n))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_frexp_ldexp_match_numpy(dtype: type) -> None:
    _check(dtype)


def test_frexp_ldexp_match_numpy_float64() -> None:
    with _x64():
        _check(np.float64)


@pytest.mark.parametrize("shape", [(), (1,), (7,), (33,), (3, 5), (0,)])
def test_frexp_ldexp_shapes_and_integer_input(shape: tuple[int, ...]) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) - 3
    m, e = jnp.frexp(x)
    wm, we = np.frexp(x.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(m), wm)
    np.testing.assert_array_equal(np.asarray(e), we)
    got = ember.jit(jnp.ldexp)(x, np.int32(2))
    np.testing.assert_array_equal(np.asarray(got), np.ldexp(x.astype(np.float32), 2))


def test_ldexp_splits_the_exponent_first() -> None:
    # 2**-100 * 2**200 is finite even though 2**200 is not a float32.
    assert float(jnp.ldexp(np.float32(2.0 ** -100), 200)) == 2.0 ** 100
    assert float(ember.jit(jnp.ldexp)(np.float32(2.0 ** 100), np.int32(-240))) == 2.0 ** -140


def test_frexp_ldexp_bad_input() -> None:
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(np.float32(1), np.float32(2))
    with pytest.raises(TypeError, match="complex"):
        jnp.frexp(np.complex64(1))


def test_frexp_ldexp_derivatives() -> None:
    # d mantissa / dx = 2**-e; d ldexp(x, n) / dx = 2**n.
    x = np.array([8.0, 3.0, -0.375], np.float32)
    got = ember.vmap(ember.grad(lambda v: jnp.frexp(v)[0]))(x)
    np.testing.assert_array_equal(np.asarray(got), np.exp2(-np.frexp(x)[1]).astype(np.float32))
    got = ember.vmap(ember.grad(lambda v: jnp.ldexp(v, 3)))(x)
    np.testing.assert_array_equal(np.asarray(got), [8.0, 8.0, 8.0])
