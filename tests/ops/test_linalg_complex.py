"""Complex linear algebra (c64, c128) through LAPACK's c/z routines, against NumPy/SciPy:
reconstruction checks (l l^H = a, q r = a, u s vh = a, a v = v w) and agreement over batched,
odd and 1x1 shapes, eager and under jit; the adjoint solves (conjugate_a, SciPy's trans=2);
jnp.linalg's solvers on complex input; derivatives against JAX's (complex grads follow
JAX's convention, so `grad` of a real function of a complex matrix must equal JAX's) and
finite differences; vmap; and the HLO's LAPACK names (lapack_zheevd_ffi, ...)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from linalg_checks import both as _both
from linalg_checks import close, jax_x64

import ember
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(11)
SQUARE = [(1, 1), (5, 5), (3, 4, 4), (2, 1, 7, 7)]
RECT = [(4, 6), (7, 3), (2, 3, 5)]
# NumPy's own accuracy on these sizes (c64 at the float32 level, c128 at the float64 level)
TOL = {np.complex64: 3e-4, np.complex128: 1e-10}


def _rand(shape, dtype):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _hpd(shape, dtype):
    a = _rand(shape, np.complex128)
    n = shape[-1]
    return (a @ _H(a) + n * np.eye(n)).astype(dtype)


def _close(got, want, dtype, scale=1.0):
    close(got, want, TOL[dtype] * scale)


@pytest.fixture(params=[np.complex64, np.complex128], ids=["c64", "c128"])
def dtype(request, x64):
    return request.param


# -- decompositions ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky(shape, dtype):
    a = _hpd(shape, dtype)
    for (low,) in _both(jnp.linalg.cholesky, a):
        assert low.dtype == dtype and low.shape == shape
        _close(low @ _H(low), a, dtype, scale=shape[-1])
        np.testing.assert_array_equal(np.triu(low, 1), 0)
        _close(low, np.linalg.cholesky(a), dtype, scale=shape[-1])
    for (up,) in _both(lambda x: jnp.linalg.cholesky(x, upper=True), a):
        _close(_H(up) @ up, a, dtype, scale=shape[-1])
    for (up,) in _both(ember.scipy.linalg.cholesky, a):  # SciPy's default: upper
        _close(up, scipy.linalg.cholesky(a[(0,) * (a.ndim - 2)]) if a.ndim == 2 else up,
               dtype, scale=shape[-1])
        _close(_H(up) @ up, a, dtype, scale=shape[-1])


def test_cholesky_not_positive_definite_is_nan(x64):
    bad = np.stack([np.eye(3), -np.eye(3)]).astype(np.complex128)
    for (low,) in _both(jnp.linalg.cholesky, bad):
        assert np.all(np.isfinite(low[0]))
        assert np.all(np.isnan(low[1][np.tril_indices(3)]))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False),
                                                     (True, True), (False, True)])
def test_triangular_solve(left_side, lower, transpose_a, conjugate_a, dtype):
    a = _rand((2, 5, 5), dtype) + 5 * np.eye(5, dtype=dtype)
    b = _rand((2, 5, 3) if left_side else (2, 3, 5), dtype)

    def f(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a, conjugate_a=conjugate_a)
    op = np.tril(a) if lower else np.triu(a)
    if transpose_a:
        op = np.swapaxes(op, -1, -2)
    if conjugate_a:
        op = np.conj(op)
    for (x,) in _both(f, a, b):
        _close(op @ x if left_side else x @ op, b, dtype, scale=4)


@pytest.mark.parametrize("shape", SQUARE + RECT)
def test_lu(shape, dtype):
    a = _rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    for lu, piv, perm in _both(lax.linalg.lu, a):
        low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
        up = np.triu(lu[..., :k, :])
        pa = np.take_along_axis(a, perm[..., :, None].astype(np.int64), axis=-2)
        _close(low @ up, pa, dtype, scale=4)
        for idx in np.ndindex(*shape[:-2]):  # the same pivoting as SciPy's zgetrf
            np.testing.assert_array_equal(piv[idx], scipy.linalg.lu_factor(a[idx])[1])


@pytest.mark.parametrize("shape", SQUARE + RECT)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(shape, mode, dtype):
    a = _rand(shape, dtype)
    m, n = shape[-2:]
    for q, r in _both(lambda x: jnp.linalg.qr(x, mode=mode), a):
        kq = m if mode == "complete" else min(m, n)
        assert q.shape == shape[:-2] + (m, kq) and q.dtype == dtype
        _close(q @ r, a, dtype, scale=4)
        _close(_H(q) @ q, np.broadcast_to(np.eye(kq), q.shape[:-2] + (kq, kq)), dtype, scale=4)
        np.testing.assert_array_equal(np.tril(r, -1), 0)


@pytest.mark.parametrize("shape", SQUARE)
def test_eigh(shape, dtype):
    a = _hpd(shape, dtype)
    real = np.empty((), dtype).real.dtype
    (w0, v0), (w1, v1) = _both(jnp.linalg.eigh, a)
    np.testing.assert_array_equal(v0, v1)  # eager and jit call the same heevd
    for w, v in ((w0, v0), (w1, v1)):
        assert w.dtype == real and v.dtype == dtype
        _close(w, np.linalg.eigvalsh(a), dtype, scale=shape[-1] ** 2)
        _close(a @ v, v * w[..., None, :].astype(dtype), dtype, scale=shape[-1] ** 2)
    for idx in np.ndindex(*shape[:-2]):  # the upper triangle, as LAPACK reads it
        w, _ = lax.linalg.eigh(a[idx], lower=False, symmetrize_input=False)[::-1]
        _close(np.asarray(w), np.linalg.eigvalsh(a[idx], UPLO="U"), dtype, scale=shape[-1] ** 2)


@pytest.mark.parametrize("shape", SQUARE + RECT)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(shape, full_matrices, dtype):
    a = _rand(shape, dtype)
    real = np.empty((), dtype).real.dtype
    k = min(shape[-2:])
    for u, s, vh in _both(lambda x: jnp.linalg.svd(x, full_matrices=full_matrices), a):
        assert s.dtype == real and u.dtype == dtype
        _close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=4)
        _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, scale=4)
    for (s,) in _both(jnp.linalg.svdvals, a):
        _close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=4)


# -- what jnp.linalg and scipy.linalg build on them --------------------------------------------

def test_solvers_match_numpy(dtype):
    a = _rand((3, 6, 6), dtype) + 3 * np.eye(6, dtype=dtype)
    b = _rand((3, 6, 2), dtype)
    checks = [
        (jnp.linalg.solve, np.linalg.solve, (a, b)),
        (jnp.linalg.inv, np.linalg.inv, (a,)),
        (jnp.linalg.det, np.linalg.det, (a,)),
        (lambda x: jnp.linalg.slogdet(x), lambda x: tuple(np.linalg.slogdet(x)), (a,)),
        (jnp.linalg.pinv, np.linalg.pinv, (a[..., :4],)),
        (jnp.linalg.matrix_rank, np.linalg.matrix_rank, (a[..., :4] @ a[..., :4, :],)),
        (lambda x: jnp.linalg.norm(x, 2, axis=(-2, -1)),
         lambda x: np.linalg.norm(x, 2, axis=(-2, -1)), (a,)),
        (lambda x: jnp.linalg.norm(x, "nuc", axis=(-2, -1)),
         lambda x: np.linalg.norm(x, "nuc", axis=(-2, -1)), (a,)),
        (jnp.linalg.cond, np.linalg.cond, (a,)),
        (lambda x: jnp.linalg.matrix_power(x, -2), lambda x: np.linalg.matrix_power(x, -2),
         (a,)),
    ]
    for ours, theirs, args in checks:
        want = theirs(*args)
        want = list(want) if isinstance(want, tuple) else [want]
        for got in _both(ours, *args):
            for g, w in zip(got, want):
                assert g.dtype == np.asarray(w).dtype or g.dtype.kind == "i", (ours, g.dtype)
                _close(g, w, dtype, scale=10)


def test_lstsq(dtype):
    a = _rand((7, 4), dtype)
    b = _rand((7, 2), dtype)
    x, resid, rank, s = np.linalg.lstsq(a, b)
    for got in _both(lambda a, b: jnp.linalg.lstsq(a, b, numpy_resid=True), a, b):
        for g, w in zip(got, (x, resid, rank, s)):
            _close(g, w, dtype, scale=10)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_scipy_adjoint_solves(trans, dtype):
    a = _rand((5, 5), dtype) + 5 * np.eye(5, dtype=dtype)
    b = _rand((5, 2), dtype)
    sl = ember.scipy.linalg
    for lower in (True, False):
        want = scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower)
        for (x,) in _both(lambda a, b, lo=lower: sl.solve_triangular(a, b, trans=trans,
                                                                     lower=lo), a, b):
            _close(x, want, dtype, scale=4)
    want = scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans)
    for (x,) in _both(lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=trans), a, b):
        _close(x, want, dtype, scale=4)
    h = _hpd((5, 5), dtype)
    for lower in (True, False):
        for (x,) in _both(lambda h, b, lo=lower: sl.cho_solve(sl.cho_factor(h, lower=lo), b),
                          h, b):
            _close(h @ x, b, dtype, scale=10)
    for (x,) in _both(lambda h, b: sl.solve(jnp.triu(h), b, assume_a="pos"), h, b):
        _close(h @ x, b, dtype, scale=10)
    for u, p in _both(sl.polar, a):
        _close(u @ p, a, dtype, scale=10)
        _close(p, _H(p), dtype, scale=10)


def test_lapack_custom_call_names(x64):
    a = _rand((4, 4), np.complex128)
    for fn, target in ((jnp.linalg.eigh, "lapack_zheevd_ffi"),
                       (jnp.linalg.qr, "lapack_zungqr_ffi"),
                       (jnp.linalg.svd, "lapack_zgesdd_ffi"),
                       (jnp.linalg.solve, "lapack_zgetrf_ffi")):
        text = ember.jit(fn).lower(*([a] * (2 if fn is jnp.linalg.solve else 1))).as_text()
        assert target in text, (fn, text)
    text = ember.jit(lambda a: lax.linalg.triangular_solve(
        a, a, left_side=True, transpose_a=True, conjugate_a=True)).lower(a).as_text()
    assert "transpose_a=ADJOINT" in text
    low = ember.jit(lax.linalg.cholesky).lower(a.astype(np.complex64)).as_text()
    assert "cholesky(" in low and "c64[4,4]" in low


# -- derivatives -------------------------------------------------------------------------------

def _fd_jvp(f, a, t, eps=1e-6):
    plus, minus = f(a + eps * t), f(a - eps * t)
    return [(np.asarray(p) - np.asarray(m)) / (2 * eps)
            for p, m in zip(ember.tree_util.tree_leaves(plus),
                            ember.tree_util.tree_leaves(minus))]


def _check_jvp(f, a, rtol=1e-5):
    t = _rand(a.shape, np.complex128)
    _, got = ember.jvp(f, (a,), (t,))
    for g, w in zip(ember.tree_util.tree_leaves(got), _fd_jvp(f, a, t)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=rtol)


def test_grads_match_jax_and_finite_differences(x64):
    a = _rand((4, 4), np.complex128) + 4 * np.eye(4)
    h = _hpd((4, 4), np.complex128)
    tall = _rand((5, 3), np.complex128)
    wide = _rand((3, 5), np.complex128)
    b = _rand((4, 2), np.complex128)
    # real functions of the results that do not depend on the eigen/singular vectors' phases
    fns = [
        ("cholesky", lambda x, m: m.linalg.cholesky(x), h),
        ("eigh", lambda x, m: (m.linalg.eigh(x)[0], m.abs(m.linalg.eigh(x)[1]) ** 2), h),
        ("svd tall", lambda x, m: (m.linalg.svd(x, full_matrices=False)[1],
                                   m.abs(m.linalg.svd(x, full_matrices=False)[0]) ** 2,
                                   m.abs(m.linalg.svd(x, full_matrices=False)[2]) ** 2), tall),
        ("svd wide", lambda x, m: m.matmul(*m.linalg.svd(x, full_matrices=False)[::2]), wide),
        ("qr", lambda x, m: m.linalg.qr(x), tall),
        ("det", lambda x, m: m.linalg.det(x), a),
        ("slogdet", lambda x, m: tuple(m.linalg.slogdet(x)), a),
        ("solve", lambda x, m: m.linalg.solve(x, b), a),
        ("inv", lambda x, m: m.linalg.inv(x), a),
        ("eigvals", lambda x, m: m.linalg.eigvals(x), a),
    ]
    with jax_x64() as jax:
        for name, f, x in fns:
            _check_jvp(lambda y, f=f: f(y, jnp), x, rtol=1e-4)

            def loss(y, f=f, m=jnp):
                return sum(m.sum(m.real(v) * 0.3 + m.imag(v) * 0.7)
                           for v in ember.tree_util.tree_leaves(f(y, m)))

            def jloss(y, f=f):
                m = jax.numpy
                return sum(m.sum(m.real(v) * 0.3 + m.imag(v) * 0.7)
                           for v in jax.tree_util.tree_leaves(f(y, m)))
            want = np.asarray(jax.jit(jax.grad(jloss))(x))
            grads = [ember.grad(loss)(x)]
            if name in ("eigh", "eigvals"):  # (compiling each is slow: a few)
                grads.append(ember.jit(ember.grad(loss))(x))
            for g in grads:
                np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8,
                                           err_msg=name)
    for kw in ({"left_side": True, "lower": True, "transpose_a": True, "conjugate_a": True},
               {"left_side": False, "lower": False, "conjugate_a": True}):
        bb = b if kw["left_side"] else b.T
        _check_jvp(lambda x, kw=kw, bb=bb: lax.linalg.triangular_solve(x, bb, **kw), a)
        _check_jvp(lambda y, kw=kw: lax.linalg.triangular_solve(a, y, **kw), bb)
        ct = _rand(bb.shape, np.complex128)
        _, pull = ember.vjp(lambda y, kw=kw: lax.linalg.triangular_solve(a, y, **kw), bb)
        t = _rand(bb.shape, np.complex128)
        _, jv = ember.jvp(lambda y, kw=kw: lax.linalg.triangular_solve(a, y, **kw), (bb,), (t,))
        # the transpose (JAX's convention: no conjugation) <ct, J t> = <J^T ct, t>
        np.testing.assert_allclose(np.sum(ct * np.asarray(jv)),
                                   np.sum(np.asarray(pull(ct)[0]) * t), rtol=1e-10)


def test_vmap(dtype):
    a = _rand((3, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    h = _hpd((3, 4, 4), dtype)
    for f, x in ((lambda x: lax.linalg.cholesky(x), h), (lambda x: lax.linalg.lu(x), a),
                 (lambda x: lax.linalg.qr(x), a), (lambda x: lax.linalg.eigh(x), h),
                 (lambda x: lax.linalg.svd(x), a), (jnp.linalg.eigvals, a),
                 (jnp.linalg.det, a)):
        got = ember.tree_util.tree_leaves(ember.vmap(f)(x))
        want = ember.tree_util.tree_leaves(f(x))
        for g, w in zip(got, want):
            _close(np.asarray(g), np.asarray(w), dtype)


def test_tridiagonal_solve(dtype):
    m = 7
    dl, d, du = (_rand((2, m), dtype) for _ in range(3))
    d = d + 4
    b = _rand((2, m, 3), dtype)
    full = np.stack([np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
                     for i in range(2)])
    for (x,) in _both(lax.linalg.tridiagonal_solve, dl, d, du, b):
        assert x.dtype == dtype
        _close(full @ x, b, dtype, scale=4)
