"""jnp.cross, sort_complex, einsum_path, frompyfunc and object_ (ember/numpy/_vector_extras.py)
against NumPy and JAX 0.10.2, eager and under jit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.numpy as jnp

jax_numpy = pytest.importorskip("jax.numpy")

CROSS_CASES = [((3,), (3,), {}), ((2,), (2,), {}), ((4, 3), (3,), {}), ((5, 2), (5, 3), {}),
               ((3, 5), (3, 5), {"axis": 0}), ((7, 1, 3), (4, 3), {}),
               ((2, 3, 5), (3, 5), {"axisa": 1, "axisb": 0, "axisc": 0}),
               ((1, 2), (4, 2), {})]


def _numpy_cross(a: np.ndarray, b: np.ndarray, **kw: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (NumPy 2: 2-vectors)
        return np.cross(a, b, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
@pytest.mark.parametrize("sa,sb,kw", CROSS_CASES)
def test_cross(sa, sb, kw, dtype) -> None:
    rng = np.random.default_rng(len(sa) + len(sb))
    a = (rng.standard_normal(sa) * 4).astype(dtype)
    b = (rng.standard_normal(sb) * 4).astype(dtype)
    want = _numpy_cross(a, b, **kw)
    for got in (jnp.cross(a, b, **kw), ember.jit(lambda x, y: jnp.cross(x, y, **kw))(a, b)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_cross_rejects_other_lengths() -> None:
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        jnp.cross(np.ones(4), np.ones(3))


@pytest.mark.parametrize("x", [np.array([3 + 1j, 1 + 2j, 1 + 1j, 2, np.nan + 0j]),
                               np.array([3.0, -1.0, 2.5], np.float32),
                               np.array([[5, 1, 3], [0, -2, 9]], np.int32)])
def test_sort_complex(x) -> None:
    want = jax_numpy.sort_complex(x)
    got = jnp.sort_complex(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(ember.jit(jnp.sort_complex)(x)), np.asarray(want))


@pytest.mark.parametrize("sub,shapes", [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,jk,kl->il", [(20, 3), (3, 40), (40, 5)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]), ("i,i->", [(3,), (3,)]),
    ("ij,jk,kl,lm->im", [(8, 2), (2, 30), (30, 3), (3, 9)])])
def test_einsum_path_is_einsums_order(sub, shapes) -> None:
    ops = [np.ones(s, np.float32) for s in shapes]
    path, report = jnp.einsum_path(sub, *ops)
    assert path == list(jax_numpy.einsum_path(sub, *ops)[0])
    assert report.count("step") == len(path)
    np.testing.assert_allclose(np.asarray(jnp.einsum(sub, *ops)), np.einsum(sub, *ops))


def test_frompyfunc() -> None:
    h = jnp.frompyfunc(lambda x, y: x * x + y * y, nin=2, nout=1, identity=0.0)
    hj = jax_numpy.frompyfunc(lambda x, y: x * x + y * y, nin=2, nout=1, identity=0.0)
    x, y = np.array([1.0, 2.0, 3.0], np.float32), np.float32(2.0)
    np.testing.assert_allclose(np.asarray(h(x, y)), np.asarray(hj(x, y)))
    np.testing.assert_allclose(np.asarray(h.outer(x, x)), np.asarray(hj.outer(x, x)))
    np.testing.assert_allclose(np.asarray(h.reduce(x)), np.asarray(hj.reduce(x)))
    np.testing.assert_allclose(np.asarray(ember.jit(h)(x, y)), np.asarray(hj(x, y)))
    assert h.nin == 2 and h.nout == 1 and h.identity == 0.0
    two = jnp.frompyfunc(lambda x: (x + 1, x * 2), nin=1, nout=2)
    a, b = two(x)
    np.testing.assert_allclose(np.asarray(a), x + 1)
    np.testing.assert_allclose(np.asarray(b), x * 2)
    with pytest.raises(ValueError, match="positive"):
        jnp.frompyfunc(abs, nin=0, nout=1)


def test_object_is_numpys() -> None:
    assert jnp.object_ is np.object_ is jax_numpy.object_
