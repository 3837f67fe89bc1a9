"""Array creation against NumPy: array/asarray, filled arrays and _like forms, arange,
linspace/logspace/geomspace, eye/identity/tri/tril/triu, meshgrid/mgrid/ogrid/indices,
diag/diagflat; eager and under jit (eager == jit bit for bit)."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from test_numpy_support import DTYPES, SHAPES, assert_bitwise_equal, check, rand

import ember
import ember.numpy as jnp


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_filled(shape, dtype):
    for jf, nf in ((jnp.zeros, np.zeros), (jnp.ones, np.ones), (jnp.empty, np.zeros)):
        check(lambda: jf(shape, dtype), lambda: nf(shape, dtype), check_dtype=dtype)
    check(lambda: jnp.full(shape, 3, dtype), lambda: np.full(shape, 3, dtype),
          check_dtype=dtype)
    x = rand(shape, dtype)
    for jf, nf in ((jnp.zeros_like, np.zeros_like), (jnp.ones_like, np.ones_like)):
        check(lambda a: jf(a), nf, x, check_dtype=dtype)
    check(lambda a: jnp.full_like(a, 2), lambda a: np.full_like(a, 2), x, check_dtype=dtype)
    check(lambda a: jnp.zeros_like(a, dtype=jnp.float32, shape=(2, 2)),
          lambda a: np.zeros((2, 2), np.float32), x)


def test_filled_weak_types():
    assert jnp.full((2,), 1.0).weak_type and jnp.full((2,), 1.0).dtype == np.float32
    assert not jnp.full((2,), 1.0, jnp.float32).weak_type
    assert jnp.zeros_like(3.0).weak_type
    assert not jnp.zeros(3).weak_type and jnp.zeros(3).dtype == np.float32
    check(lambda: jnp.full((2, 3), np.array([1, 2, 3], np.int8)),
          lambda: np.full((2, 3), np.array([1, 2, 3], np.int8)), check_dtype=np.int8)


def test_array_asarray():
    assert jnp.array(1).weak_type and jnp.array(1).dtype == np.int32
    assert not jnp.array([1, 2]).weak_type and jnp.array([1, 2]).dtype == np.int32
    assert jnp.array([1.0, 2]).dtype == np.float32
    assert jnp.array([True, False]).dtype == np.bool_
    assert jnp.array(np.arange(3, dtype=np.float64)).dtype == np.float32
    assert jnp.array(np.uint8(3)).dtype == np.uint8
    assert jnp.array([np.int8(1), 2]).dtype == np.int8
    assert jnp.array(2, dtype=jnp.float32).dtype == np.float32
    assert jnp.array(3, ndmin=2).shape == (1, 1)
    x = jnp.arange(3)
    assert jnp.asarray(x) is x
    out = ember.jit(lambda a: jnp.array([a, a + 1, 2.0]))(np.float32(1))
    assert out.dtype == np.float32 and out.shape == (3,)
    np.testing.assert_array_equal(out, [1, 2, 2])
    with pytest.raises(TypeError):
        jnp.array("abc")


def test_array_x64(x64):
    assert jnp.array([1, 2]).dtype == np.int64
    assert jnp.array(np.arange(3.0)).dtype == np.float64
    assert jnp.zeros(2).dtype == np.float64


@pytest.mark.parametrize("args", [(5,), (0,), (2, 10), (2, 10, 3), (10, 2, -3), (0.5, 4.0),
                                  (1, 2, 0.25), (-3,), (3.5,)])
def test_arange(args):
    expected = np.arange(*args)
    got = check(lambda: jnp.arange(*args), lambda: expected)
    want = np.float32 if expected.dtype.kind == "f" else np.int32
    assert got.dtype == want and not got.weak_type


def test_arange_dtype_and_iota_jaxpr():
    check(lambda: jnp.arange(7, dtype=jnp.uint8), lambda: np.arange(7, dtype=np.uint8),
          check_dtype=np.uint8)
    text = str(ember.make_jaxpr(lambda x: x + jnp.arange(3, dtype=jnp.float32))(
        np.zeros(3, np.float32)))
    assert "iota[dimension=0 dtype=float32 shape=(3,) sharding=None]" in text
    with pytest.raises(ember.ConcretizationTypeError):
        ember.jit(lambda n: jnp.arange(n))(3)


@pytest.mark.parametrize("num", [0, 1, 2, 7, 50])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace(num, endpoint):
    check(lambda: jnp.linspace(-1.5, 4.0, num, endpoint=endpoint),
          lambda: np.linspace(-1.5, 4.0, num, endpoint=endpoint), atol=1e-6)
    check(lambda: jnp.linspace(0, 10, num, endpoint=endpoint, dtype=jnp.int32),
          lambda: np.linspace(0, 10, num, endpoint=endpoint, dtype=np.int32))
    out, step = jnp.linspace(0.0, 1.0, num, endpoint=endpoint, retstep=True)
    _, nstep = np.linspace(0.0, 1.0, num, endpoint=endpoint, retstep=True)
    np.testing.assert_allclose(np.asarray(step), nstep, rtol=1e-6, equal_nan=True)


def test_linspace_array_bounds_and_axis():
    lo = np.array([0.0, 1.0, 2.0], np.float32)
    hi = np.array([1.0, 3.0, 7.0], np.float32)
    for axis in (0, 1, -1):
        check(lambda a, b: jnp.linspace(a, b, 5, axis=axis),
              lambda a, b: np.linspace(a, b, 5, axis=axis), lo, hi, atol=1e-6)
    assert jnp.linspace(0, 1, 3).dtype == np.float32


def test_logspace_geomspace():
    check(lambda: jnp.logspace(0, 3, 7), lambda: np.logspace(0, 3, 7), rtol=1e-5)
    check(lambda: jnp.logspace(0, 3, 4, base=2.0, endpoint=False),
          lambda: np.logspace(0, 3, 4, base=2.0, endpoint=False), rtol=1e-5)
    check(lambda: jnp.geomspace(1, 1000, 4), lambda: np.geomspace(1, 1000, 4), rtol=1e-5)
    check(lambda: jnp.geomspace(-1, -1000, 4), lambda: np.geomspace(-1, -1000, 4), rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eye_identity_tri(dtype):
    for n, m, k in [(3, None, 0), (4, 6, 1), (5, 3, -2), (0, 2, 0), (3, 3, 5)]:
        check(lambda: jnp.eye(n, m, k, dtype), lambda: np.eye(n, m, k, dtype),
              check_dtype=dtype)
        check(lambda: jnp.tri(n, m, k, dtype), lambda: np.tri(n, m, k, dtype),
              check_dtype=dtype)
    check(lambda: jnp.identity(4, dtype), lambda: np.identity(4, dtype), check_dtype=dtype)
    assert jnp.eye(2).dtype == np.float32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (2, 4, 4), (0, 3), (6, 2)])
def test_tril_triu(shape, dtype):
    x = rand(shape, dtype)
    for k in (-1, 0, 2):
        check(lambda a: jnp.tril(a, k), lambda a: np.tril(a, k), x, check_dtype=dtype)
        check(lambda a: jnp.triu(a, k), lambda a: np.triu(a, k), x, check_dtype=dtype)
    with pytest.raises(ValueError):
        jnp.tril(np.ones(3))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    a, b, c = rand((3,), np.float32), rand((4,), np.int32), rand((2,), np.uint8)
    for args in ((a,), (a, b), (a, b, c)):
        check(lambda *xs: jnp.meshgrid(*xs, indexing=indexing, sparse=sparse),
              lambda *xs: np.meshgrid(*xs, indexing=indexing, sparse=sparse), *args)
    with pytest.raises(ValueError):
        jnp.meshgrid(np.ones((2, 2)))


def test_mgrid_ogrid_indices():
    check(lambda: jnp.mgrid[0:3, 1:5], lambda: np.mgrid[0:3, 1:5])
    check(lambda: jnp.mgrid[0:5], lambda: np.mgrid[0:5])
    check(lambda: jnp.mgrid[-1:1:5j], lambda: np.mgrid[-1:1:5j], atol=1e-7)
    check(lambda: jnp.mgrid[0:1:0.25, 0:2], lambda: np.mgrid[0:1:0.25, 0:2])
    check(lambda: jnp.ogrid[0:3, 0:4], lambda: np.ogrid[0:3, 0:4])
    check(lambda: jnp.indices((2, 3)), lambda: np.indices((2, 3)))
    check(lambda: jnp.indices((2, 3, 4), sparse=True), lambda: np.indices((2, 3, 4),
                                                                          sparse=True))
    check(lambda: jnp.indices((3,), dtype=jnp.uint8), lambda: np.indices((3,), np.uint8),
          check_dtype=np.uint8)


@pytest.mark.parametrize("k", [-2, 0, 1, 3])
def test_diag(k):
    v = rand((4,), np.float32)
    m = rand((4, 6), np.int16)
    check(lambda a: jnp.diag(a, k), lambda a: np.diag(a, k), v)
    check(lambda a: jnp.diag(a, k), lambda a: np.diag(a, k), m)
    check(lambda a: jnp.diagflat(a, k), lambda a: np.diagflat(a, k), rand((2, 2), np.int32))


def test_dtype_scalar_constructors():
    x = jnp.float32(2)
    assert isinstance(x, ember.Array) and x.shape == () and x.dtype == np.float32
    assert not x.weak_type
    assert jnp.uint8(300 % 256).dtype == np.uint8
    assert jnp.zeros(2, jnp.int16).dtype == np.int16
    assert np.dtype(jnp.float32) == np.float32 and jnp.dtype("int8") == np.int8
    assert jnp.int_(1).dtype == np.int32 and jnp.float_(1).dtype == np.float32
    assert jnp.bool_(1).dtype == np.bool_
    assert_bitwise_equal(jnp.float32(3), ember.jit(lambda: jnp.float32(3))())


def test_dtype_aliases_follow_x64(x64):
    assert jnp.int_(1).dtype == np.int64 and jnp.float_(1).dtype == np.float64
