"""ember.scipy.linalg against scipy.linalg over f32/f64, eager and under jit (tolerances,
not bits: LAPACK results), batched where JAX batches, with JAX's errors and modes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from ad_checks import check_grads

import ember
import ember.scipy.linalg as el

RNG = np.random.default_rng(3)
TOL = {np.float32: 5e-4, np.float64: 1e-10}


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request, x64):
    return request.param


def _check(f, want, args, dtype, scale=10.0):
    """f(*args) eagerly and under jit against `want` (a tuple or an array)."""
    want = want if isinstance(want, tuple) else (want,)
    for got in (f(*args), ember.jit(f)(*args)):
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale)


def test_against_scipy(dtype):
    a = (RNG.standard_normal((5, 5)) + 4 * np.eye(5)).astype(dtype)
    wide = RNG.standard_normal((3, 5)).astype(dtype)
    b = RNG.standard_normal((5, 2)).astype(dtype)
    v = b[:, 0]
    spd = (a @ a.T).astype(dtype)
    sym = (a + a.T).astype(dtype)
    for trans in (0, 1, "T"):
        for lower in (True, False):
            _check(lambda x, y, t=trans, lo=lower: el.solve_triangular(x, y, trans=t, lower=lo),
                   sl.solve_triangular(a, b, trans=trans, lower=lower), (a, b), dtype)
    _check(lambda x, y: el.solve_triangular(x, y, unit_diagonal=True),
           sl.solve_triangular(a, v, unit_diagonal=True), (a, v), dtype)
    _check(el.lu, sl.lu(a), (a,), dtype)
    _check(el.lu, sl.lu(wide), (wide,), dtype)
    _check(el.lu, sl.lu(wide.T), (wide.T,), dtype)
    _check(lambda x: el.lu(x, permute_l=True), sl.lu(a, permute_l=True), (a,), dtype)
    _check(el.lu_factor, sl.lu_factor(a), (a,), dtype)
    for trans in (0, 1):
        _check(lambda x, y, t=trans: el.lu_solve(el.lu_factor(x), y, trans=t),
               sl.lu_solve(sl.lu_factor(a), b, trans=trans), (a, b), dtype)
    _check(lambda x, y: el.lu_solve(el.lu_factor(x), y), sl.lu_solve(sl.lu_factor(a), v),
           (a, v), dtype)
    for lower in (True, False):
        _check(lambda x, lo=lower: el.cholesky(x, lower=lo), sl.cholesky(spd, lower=lower),
               (spd,), dtype, scale=100)
        _check(lambda x, y, lo=lower: el.cho_solve(el.cho_factor(x, lower=lo), y),
               sl.cho_solve(sl.cho_factor(spd, lower=lower), b), (spd, b), dtype, scale=100)
    _check(lambda x, y: el.solve(x, y), sl.solve(a, b), (a, b), dtype)
    _check(lambda x, y: el.solve(x, y), sl.solve(a, v), (a, v), dtype)
    _check(lambda x, y: el.solve(x, y, assume_a="pos"), sl.solve(spd, b, assume_a="pos"),
           (spd, b), dtype, scale=100)
    _check(lambda x: el.eigh(x, eigvals_only=True), sl.eigh(sym, eigvals_only=True), (sym,),
           dtype)
    w, vecs = el.eigh(sym)
    np.testing.assert_allclose(np.asarray(vecs) @ np.diag(np.asarray(w)) @ np.asarray(vecs).T,
                               sym, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    _check(el.inv, sl.inv(a), (a,), dtype)
    _check(el.det, sl.det(a), (a,), dtype, scale=100)
    _check(lambda x: el.svd(x, compute_uv=False), sl.svd(wide, compute_uv=False), (wide,),
           dtype)
    for mode in ("full", "economic"):
        q, r = el.qr(wide.T, mode=mode)
        wq, wr = sl.qr(wide.T, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), wide.T,
                                   rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    (r,) = el.qr(wide, mode="r")
    np.testing.assert_allclose(np.abs(np.asarray(r)), np.abs(sl.qr(wide, mode="r")[0]),
                               rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 30.0])
def test_expm(scale, dtype):
    a = (RNG.standard_normal((4, 4)) * scale).astype(dtype)
    want = sl.expm(a.astype(np.float64))
    _check(el.expm, want, (a,), dtype, scale=100 * max(1.0, np.abs(want).max()))
    batch = np.stack([a, -a])
    got = np.asarray(ember.jit(el.expm)(batch))
    np.testing.assert_allclose(got[1], sl.expm(-a.astype(np.float64)),
                               rtol=TOL[dtype] * 100, atol=TOL[dtype] * 100 * np.abs(got).max())


def test_expm_grad(x64):
    a = RNG.standard_normal((3, 3))
    check_grads(el.expm, [a], 1, rtol=1e-4)


def test_errors_and_unsupported(x64):
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'bad'"):
        el.qr(np.eye(2), mode="bad")
    with pytest.raises(NotImplementedError, match="b=None"):
        el.eigh(np.eye(2), np.eye(2))
    with pytest.raises(NotImplementedError):
        el.schur(np.eye(2))
    with pytest.raises(ValueError, match="Invalid 'trans' value 7"):
        el.solve_triangular(np.eye(2), np.ones(2), trans=7)
    with pytest.raises(AttributeError, match="not implement"):
        el.hessenberg  # noqa: B018


def test_structured_matrices(dtype):
    c = RNG.standard_normal(4).astype(dtype)
    r = RNG.standard_normal(3).astype(dtype)
    _check(el.toeplitz, sl.toeplitz(c, r), (c, r), dtype, scale=1)
    _check(el.toeplitz, sl.toeplitz(c), (c,), dtype, scale=1)
    _check(el.hankel, sl.hankel(c, r), (c, r), dtype, scale=1)
    _check(el.hankel, sl.hankel(c), (c,), dtype, scale=1)
    _check(el.circulant, sl.circulant(c), (c,), dtype, scale=1)
    batch = np.stack([c, 2 * c])
    got = np.asarray(ember.jit(el.toeplitz)(batch))
    np.testing.assert_array_equal(got, np.stack([sl.toeplitz(c), sl.toeplitz(2 * c)]))
    m = RNG.standard_normal((2, 3)).astype(dtype)
    _check(lambda x, y: el.block_diag(x, 3.0, y), sl.block_diag(m, 3.0, r), (m, r), dtype, 1)
    np.testing.assert_allclose(np.asarray(el.hilbert(5)), sl.hilbert(5), rtol=1e-6)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        el.block_diag(np.ones((2, 2, 2)))


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(side, dtype):
    a = RNG.standard_normal((4, 3)).astype(dtype)
    _check(lambda x: el.polar(x, side), sl.polar(a, side), (a,), dtype)


def test_more_constructors_frechet_and_tridiagonal_eigh(x64):
    a = np.array([2.0, -3.0, 1.0, 5.0])
    np.testing.assert_allclose(np.asarray(el.companion(a)), sl.companion(a))
    f, s = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.6])
    np.testing.assert_allclose(np.asarray(ember.jit(el.leslie)(f, s)), sl.leslie(f, s))
    np.testing.assert_array_equal(np.asarray(el.hadamard(8)), sl.hadamard(8))
    for full in (False, True):
        np.testing.assert_allclose(np.asarray(el.helmert(5, full)), sl.helmert(5, full),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="power of 2"):
        el.hadamard(6)
    m = RNG.standard_normal((3, 3))
    e = RNG.standard_normal((3, 3))
    want_value, want_deriv = sl.expm_frechet(m, e)
    got_value, got_deriv = ember.jit(el.expm_frechet)(m, e)
    np.testing.assert_allclose(np.asarray(got_value), want_value, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(got_deriv), want_deriv, rtol=1e-8, atol=1e-10)
    d, off = RNG.standard_normal(5), RNG.standard_normal(4)
    want = sl.eigh_tridiagonal(d, off, eigvals_only=True)
    np.testing.assert_allclose(np.asarray(el.eigh_tridiagonal(d, off, eigvals_only=True)),
                               want, rtol=1e-10, atol=1e-12)
    w, v = ember.jit(el.eigh_tridiagonal)(d, off)
    t = np.diag(d) + np.diag(off, 1) + np.diag(off, -1)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-10)
    sub = el.eigh_tridiagonal(d, off, eigvals_only=True, select="i", select_range=(1, 3))
    np.testing.assert_allclose(np.asarray(sub), want[1:4], rtol=1e-10, atol=1e-12)
