"""General eigendecomposition (prims/eig.py: lax.linalg.eig, jnp.linalg.eig/eigvals) and
jnp.roots against NumPy and JAX: a v = v w and u^H a = w u^H over f32, f64, c64, c128,
batched and odd shapes, eager and under jit (compiled geev and the evaluator agree); real
matrices' conjugate pairs unpacked exactly (real eigenvalues have a zero imaginary part);
eigenvalue derivatives against finite differences and JAX; eigenvector derivatives refused
as in JAX; vmap; the custom-call name; roots with and without strip_zeros."""

from __future__ import annotations

import numpy as np
import pytest
from linalg_checks import jax_x64

import ember
import ember.numpy as jnp
from ember import lax
from ember.core.errors import ConcretizationTypeError

RNG = np.random.default_rng(5)
SHAPES = [(1, 1), (5, 5), (3, 4, 4), (2, 1, 7, 7), (0, 0)]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}


def _rand(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_eig_reconstructs_and_matches_numpy(shape, dtype, x64):
    a = _rand(shape, dtype)
    cdtype = np.result_type(dtype, np.complex64)
    tol = TOL[dtype] * max(shape[-1], 1)

    def f(x):
        return lax.linalg.eig(x)  # [w, vl, vr]
    eager = [np.asarray(v) for v in f(a)]
    jitted = [np.asarray(v) for v in ember.jit(f)(a)]
    for x, y in zip(eager, jitted):  # the same geev on the same column-major matrix
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)
    w, vl, vr = jitted
    assert w.dtype == vl.dtype == vr.dtype == cdtype
    assert w.shape == shape[:-1] and vr.shape == shape
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(_H(vl) @ a, w[..., :, None] * _H(vl), rtol=tol, atol=tol)
    if shape[-1]:
        np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, rtol=tol)
        np.testing.assert_allclose(np.sort_complex(w.reshape(-1, shape[-1])),
                                   np.sort_complex(np.linalg.eigvals(a).reshape(-1, shape[-1])
                                                   .astype(cdtype)), rtol=tol, atol=tol)
    for got in (jnp.linalg.eigvals(a), ember.jit(jnp.linalg.eigvals)(a)):
        np.testing.assert_allclose(np.asarray(got), w, rtol=tol, atol=tol)
    res = jnp.linalg.eig(a)
    np.testing.assert_allclose(np.asarray(res.eigenvalues), w, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(res.eigenvectors), vr, rtol=tol, atol=tol)


def test_real_matrices_pairs_and_real_eigenvalues(x64):
    rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    for f in (jnp.linalg.eig, ember.jit(jnp.linalg.eig)):
        w, v = (np.asarray(x) for x in f(rot))
        np.testing.assert_allclose(np.sort_complex(w), [-2j, 2j, 3], atol=1e-14)
        # a conjugate pair gives conjugate vectors; a real eigenvalue a real vector
        i, j = np.argsort(w.imag)[[0, 2]]
        np.testing.assert_allclose(v[:, i], np.conj(v[:, j]), atol=1e-14)
        np.testing.assert_allclose(rot @ v, v * w, atol=1e-14)
        sym = _rand((6, 6), np.float64)
        w = np.asarray(f(sym + sym.T)[0])
        np.testing.assert_array_equal(w.imag, 0)  # exactly: the real routine's wi


def test_eig_matches_jax(x64):
    jax = pytest.importorskip("jax")
    a = _rand((5, 5), np.float32)
    w, v = (np.asarray(x) for x in ember.jit(jnp.linalg.eig)(a))
    jw, jv = (np.asarray(x) for x in jax.numpy.linalg.eig(a))
    # the same LAPACK routine: the same order and normalization (vectors up to rounding)
    np.testing.assert_allclose(w, jw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.abs(v), np.abs(jv), rtol=1e-4, atol=1e-5)


def test_eigvals_derivatives(x64):
    jax = pytest.importorskip("jax")
    for dtype in (np.float64, np.complex128):
        a = _rand((4, 4), dtype)
        t = _rand((4, 4), dtype)
        eps = 1e-6
        want = (np.asarray(jnp.linalg.eigvals(a + eps * t))
                - np.asarray(jnp.linalg.eigvals(a - eps * t))) / (2 * eps)
        for jvp in (ember.jvp, ember.jit(ember.jvp, static_argnums=0)):
            _, got = jvp(jnp.linalg.eigvals, (a,), (t,))
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)

        def loss(x, m):
            w = m.linalg.eigvals(x)
            return m.sum(m.real(w) ** 2 + 0.5 * m.imag(w))
        with jax_x64():
            want_g = np.asarray(jax.jit(jax.grad(lambda x: loss(x, jax.numpy)))(a))
        if dtype == np.float64:
            want_g = want_g.real
        got_g = np.asarray(ember.grad(lambda x: loss(x, jnp))(a))
        np.testing.assert_allclose(got_g, want_g, rtol=1e-6, atol=1e-8)
    with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
        ember.jvp(lambda x: jnp.linalg.eig(x)[1], (a,), (t,))


def test_vmap_and_hlo(x64):
    a = _rand((3, 4, 4), np.float64)
    np.testing.assert_allclose(np.asarray(ember.vmap(jnp.linalg.eigvals)(a)),
                               np.asarray(jnp.linalg.eigvals(a)), rtol=1e-12)
    got = ember.vmap(jnp.linalg.eig, in_axes=1)(np.swapaxes(a, 0, 1))
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(jnp.linalg.eig(a)[1]),
                               rtol=1e-12)
    text = ember.jit(jnp.linalg.eig).lower(a.astype(np.float32)).as_text()
    assert 'custom_call_target="lapack_sgeev_ffi"' in text and "jobvr=V" in text
    text = ember.jit(jnp.linalg.eigvals).lower(a.astype(np.complex128)).as_text()
    assert 'custom_call_target="lapack_zgeev_ffi"' in text and "jobvr=N" in text
    with pytest.raises(ValueError, match="must have shape"):
        jnp.linalg.eigvals(np.ones((2, 3)))


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0.0, 1.0, 2.0], [0.0, 0.0, 1.0, -1.0],
                               [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0], [],
                               [3.0, 1.0, 4.0, 1.0, 5.0, 9.0], [1.0, 0.0, 1.0]], ids=str)
def test_roots(p):
    jax = pytest.importorskip("jax")
    p = np.array(p, np.float32)
    got = np.asarray(jnp.roots(p))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(np.roots(p)), rtol=1e-4,
                               atol=1e-5)
    keep = np.asarray(jnp.roots(p, strip_zeros=False))
    jitted = np.asarray(ember.jit(lambda q: jnp.roots(q, strip_zeros=False))(p))
    want = np.asarray(jax.numpy.roots(p, strip_zeros=False))
    for x in (keep, jitted):
        np.testing.assert_array_equal(np.isnan(x), np.isnan(want))
        np.testing.assert_allclose(np.sort_complex(x[~np.isnan(x)]),
                                   np.sort_complex(want[~np.isnan(want)]), rtol=1e-4,
                                   atol=1e-5)
    if p.size >= 2:  # (shorter inputs have no roots to find, traced or not, as in JAX)
        with pytest.raises(ConcretizationTypeError, match="strip_zeros=False"):
            ember.jit(jnp.roots)(p)
    with pytest.raises(ValueError, match="rank-1"):
        jnp.roots(np.ones((2, 2)))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=["f32", "c128"])
def test_non_finite_matrices_give_nan_quietly(dtype, x64, capfd):
    bad = np.array([[np.nan, 1, 0], [1, 2, 0], [0, 0, 1]], dtype)
    batch = np.stack([bad, np.eye(3, dtype=dtype), np.where(np.isnan(bad), np.inf, bad)])
    for f in (lax.linalg.eig, ember.jit(lax.linalg.eig)):
        for k, out in enumerate(f(batch)):
            out = np.asarray(out)
            assert np.isnan(out[0]).all() and np.isnan(out[2]).all(), k
            assert np.isfinite(out[1]).all(), k  # the finite neighbour is unaffected
    # geev is not given the matrix, so LAPACK prints no "illegal value" complaint
    assert "illegal value" not in capfd.readouterr().out
