"""Dense linear algebra (prims/linalg.py, lax.linalg, jnp.linalg's decompositions) against
NumPy/SciPy: reconstruction checks and agreement over f32/f64, batched, odd, 0x0 and 1x1
shapes, eager and under jit (tolerance-based: LAPACK results need not match bit for bit);
singular and non-positive-definite input (NaN/inf as JAX, never an exception); gradients
(f64, finite differences and the transpose identity); vmap; JAX's error texts; and the HLO
names (XLA's opcodes and LAPACK custom-call targets)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from ad_checks import check_grads
from linalg_checks import both as _both
from linalg_checks import close

import ember
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(7)
SQUARE = [(0, 0), (1, 1), (5, 5), (3, 4, 4), (2, 1, 3, 3)]
RECT = [(4, 6), (6, 4), (2, 3, 5), (0, 3), (3, 0)]
TOL = {np.float32: 2e-4, np.float64: 1e-10}


def _rand(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _spd(shape, dtype):
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _close(got, want, dtype, scale=1.0):
    close(got, want, TOL[dtype] * scale)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request, x64):
    return request.param


# -- decompositions ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky(shape, dtype):
    a = _spd(shape, dtype)
    for low in _both(jnp.linalg.cholesky, a):
        low = low[0]
        assert low.dtype == dtype and low.shape == shape
        _close(low @ np.swapaxes(low, -1, -2), a, dtype, scale=max(shape[-1], 1))
        np.testing.assert_array_equal(np.triu(low, 1), 0)
    up = np.asarray(jnp.linalg.cholesky(a, upper=True))
    _close(np.swapaxes(up, -1, -2) @ up, a, dtype, scale=max(shape[-1], 1))


def test_cholesky_not_positive_definite_is_nan(x64):
    bad = np.stack([np.eye(3), -np.eye(3)])
    for low in _both(jnp.linalg.cholesky, bad):
        assert np.all(np.isfinite(low[0][0]))
        assert np.all(np.isnan(low[0][1][np.tril_indices(3)]))
        np.testing.assert_array_equal(np.triu(low[0][1], 1), 0)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal, x64):
    dtype = np.float64
    a = _rand((2, 4, 4), dtype) + 4 * np.eye(4)
    b = _rand((2, 4, 3) if left_side else (2, 3, 4), dtype)

    def f(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        tri = tri - tri * np.eye(4) + np.eye(4)
    op = np.swapaxes(tri, -1, -2) if transpose_a else tri
    for (x,) in _both(f, a, b):
        _close(op @ x if left_side else x @ op, b, dtype)


def test_triangular_solve_singular_gives_inf_not_error():
    a = np.array([[1.0, 0.0], [2.0, 0.0]], np.float32)
    for (x,) in _both(lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True,
                                                               lower=True), a, np.eye(2, 2,
                                                                                      dtype=np.float32)):
        assert not np.all(np.isfinite(x))


@pytest.mark.parametrize("shape", SQUARE + RECT)
def test_lu(shape, dtype):
    a = _rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    for lu, piv, perm in _both(lax.linalg.lu, a):
        assert piv.shape == shape[:-2] + (k,) and perm.shape == shape[:-2] + (m,)
        assert piv.dtype == np.int32 and perm.dtype == np.int32
        low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
        up = np.triu(lu[..., :k, :])
        pa = np.take_along_axis(a, perm[..., :, None].astype(np.int64), axis=-2)
        _close(low @ up, pa, dtype, scale=4)
        for idx in np.ndindex(*shape[:-2]):
            if m and n:  # the same pivoting as SciPy's getrf
                want = scipy.linalg.lu_factor(a[idx], check_finite=False)[1]
                np.testing.assert_array_equal(piv[idx], want)


def test_lu_pivots_to_permutation():
    piv = np.array([[2, 2, 2], [0, 1, 2]], np.int32)
    for (p,) in _both(lambda x: lax.linalg.lu_pivots_to_permutation(x, 4), piv):
        np.testing.assert_array_equal(p, [[2, 0, 1, 3], [0, 1, 2, 3]])


@pytest.mark.parametrize("shape", SQUARE + RECT)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode, dtype):
    a = _rand(shape, dtype)
    got = _both(lambda x: jnp.linalg.qr(x, mode=mode), a)
    want_r = np.linalg.qr(a, mode="r" if mode == "r" else mode)
    for res in got:
        if mode == "r":
            (r,) = res
            want = want_r if mode == "r" else want_r[1]
            _close(np.abs(r), np.abs(want), dtype, scale=10)
            continue
        q, r = res
        wq, wr = want_r
        assert q.shape == wq.shape and r.shape == wr.shape
        _close(q @ r, a, dtype, scale=10)
        _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                                           + (q.shape[-1],) * 2), dtype, 10)
        np.testing.assert_array_equal(np.tril(r, -1), 0)


@pytest.mark.parametrize("shape", SQUARE)
def test_eigh(shape, dtype):
    a = _rand(shape, dtype)
    a = a + np.swapaxes(a, -1, -2)
    for w, v in _both(jnp.linalg.eigh, a):
        _close(w, np.linalg.eigvalsh(a), dtype, scale=10)
        _close(v @ (w[..., :, None] * np.swapaxes(v, -1, -2)), a, dtype, scale=10)
    for (w,) in _both(jnp.linalg.eigvalsh, a):
        _close(w, np.linalg.eigvalsh(a), dtype, scale=10)


def test_eigh_reads_the_named_triangle(x64):
    a = np.array([[2.0, 100.0], [1.0, 3.0]])
    _close(np.asarray(jnp.linalg.eigh(a, UPLO="L", symmetrize_input=False)[0]),
           np.linalg.eigvalsh(a, UPLO="L"), np.float64)
    _close(np.asarray(ember.jit(lambda x: jnp.linalg.eigh(x, UPLO="U",
                                                          symmetrize_input=False))(a)[0]),
           np.linalg.eigvalsh(a, UPLO="U"), np.float64)


@pytest.mark.parametrize("shape", SQUARE + RECT)
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, full, dtype):
    a = _rand(shape, dtype)
    want_s = np.linalg.svd(a, compute_uv=False)
    for u, s, vt in _both(lambda x: jnp.linalg.svd(x, full_matrices=full), a):
        wu, _, wvt = np.linalg.svd(a, full_matrices=full)
        assert u.shape == wu.shape and vt.shape == wvt.shape
        _close(s, want_s, dtype, scale=10)
        k = s.shape[-1]
        _close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, dtype, scale=10)
    for (s,) in _both(jnp.linalg.svdvals, a):
        _close(s, want_s, dtype, scale=10)


# -- functions built on them ---------------------------------------------------------------------

def test_solvers_and_determinants(dtype):
    a = _rand((3, 5, 5), dtype) + 3 * np.eye(5, dtype=dtype)
    b = _rand((3, 5, 2), dtype)
    v = _rand((5,), dtype)
    cases = [
        (lambda a, b, v: jnp.linalg.solve(a, b), np.linalg.solve(a, b)),
        (lambda a, b, v: jnp.linalg.solve(a, v), np.linalg.solve(a, v[:, None])[..., 0]),
        (lambda a, b, v: jnp.linalg.inv(a), np.linalg.inv(a)),
        (lambda a, b, v: jnp.linalg.det(a), np.linalg.det(a)),
        (lambda a, b, v: jnp.linalg.slogdet(a), np.linalg.slogdet(a)),
        (lambda a, b, v: jnp.linalg.pinv(b), np.linalg.pinv(b)),
        (lambda a, b, v: jnp.linalg.matrix_rank(b), np.linalg.matrix_rank(b)),
        (lambda a, b, v: jnp.linalg.matrix_power(a, 3), np.linalg.matrix_power(a, 3)),
        (lambda a, b, v: jnp.linalg.matrix_power(a, -2), np.linalg.matrix_power(a, -2)),
        (lambda a, b, v: jnp.linalg.matrix_power(a, 0), np.linalg.matrix_power(a, 0)),
        (lambda a, b, v: jnp.linalg.cond(a), np.linalg.cond(a)),
        (lambda a, b, v: jnp.linalg.cond(a, 1), np.linalg.cond(a, 1)),
        (lambda a, b, v: jnp.linalg.norm(a, "nuc", axis=(1, 2)),
         np.linalg.norm(a, "nuc", axis=(1, 2))),
        (lambda a, b, v: jnp.linalg.lstsq(a[0, :, :3], b[0]),
         np.linalg.lstsq(a[0, :, :3], b[0])),
        (lambda a, b, v: jnp.linalg.multi_dot([v, a[0], a[1], b[2]]),
         np.linalg.multi_dot([v, a[0], a[1], b[2]])),
        (lambda a, b, v: jnp.linalg.tensorinv(a[0].reshape(5, 1, 5), ind=1),
         np.linalg.tensorinv(a[0].reshape(5, 1, 5), ind=1)),
        (lambda a, b, v: jnp.linalg.tensorsolve(a[0], v), np.linalg.tensorsolve(a[0], v)),
        (lambda a, b, v: jnp.linalg.cross(b[..., :3, 0], b[..., 2:, 1]),
         np.cross(b[..., :3, 0], b[..., 2:, 1])),
    ]
    for f, want in cases:
        want = want if isinstance(want, tuple) else (want,)
        for got in _both(f, a, b, v):
            for g, w in zip(got, want):
                _close(g.astype(np.float64), np.asarray(w, np.float64), dtype, scale=100)


def test_singular_input_gives_nan_or_inf_not_errors(x64):
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    for det, (sign, logdet), inv in [(jnp.linalg.det(s), jnp.linalg.slogdet(s), jnp.linalg.inv(s)),
                                     ember.jit(lambda x: (jnp.linalg.det(x), jnp.linalg.slogdet(x),
                                                          jnp.linalg.inv(x)))(s)]:
        assert float(det) == 0.0 and float(sign) == 0.0 and float(logdet) == -np.inf
        assert not np.all(np.isfinite(np.asarray(inv)))
    assert float(jnp.linalg.det(np.zeros((0, 0)))) == 1.0


def test_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[\.\.\., n, n\], "
                                         r"got \(2, 3\)\."):
        jnp.linalg.inv(x)
    with pytest.raises(ValueError, match=r"Argument to slogdet\(\) must have shape"):
        jnp.linalg.slogdet(x)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'bad'"):
        jnp.linalg.qr(x, mode="bad")
    with pytest.raises(TypeError, match="Last 2 dimensions of the array must be square"):
        jnp.linalg.matrix_power(x, 2)
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        jnp.linalg.solve(np.ones((2, 3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        jnp.linalg.tensorinv(x)
    with pytest.raises(ValueError, match=r"Argument to eig must have shape \[..., n, n\]"):
        jnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(TypeError, match="eig does not accept dtype bool at position 0"):
        lax.linalg.eig(np.eye(2, dtype=bool))
    with pytest.raises(TypeError, match="cholesky does not accept dtype int32 at position 0"):
        lax.linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    for fn in (lax.linalg.lu, lax.linalg.qr, lax.linalg.svd, lax.linalg.cholesky,
               lax.linalg.eigh):
        with pytest.raises(TypeError, match=r"Input 0 to \w+ must have rank at least 2, but "
                                            r"got shape=\(3,\)"):
            fn(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="symmetric eigendecomposition must have shape"):
        lax.linalg.eigh(np.ones((2, 3), np.float32), symmetrize_input=False)
    with pytest.raises(ValueError, match="Incompatible shapes for arguments to "
                                         "triangular_solve"):
        lax.linalg.triangular_solve(np.ones((3, 3)), np.ones((2, 3)), left_side=True)
    with pytest.raises(ValueError, match="first input to triangular_solve must be a square"):
        lax.linalg.triangular_solve(np.ones((2, 3)), np.ones((3, 3)))


def test_hlo_names_are_xlas(x64):
    a = np.eye(3)
    text = ember.jit(lambda x: (lax.linalg.cholesky(x),
                                lax.linalg.triangular_solve(x, x, left_side=True, lower=True),
                                lax.linalg.lu(x), lax.linalg.qr(x), lax.linalg.eigh(x),
                                lax.linalg.svd(x))).lower(a).as_text()
    for name in ("cholesky(", "lower=true", "triangular-solve(", "left_side=true",
                 "transpose_a=NO_TRANSPOSE", "lapack_dgetrf_ffi", "lapack_dgeqrf_ffi",
                 "lapack_dorgqr_ffi", "lapack_dsyevd_ffi", "lapack_dgesdd_ffi"):
        assert name in text, name


# -- autodiff ------------------------------------------------------------------------------------

def _sym(a):
    return a + a.T


def test_grads(x64):
    spd = _spd((4, 4), np.float64)
    a = _rand((4, 4), np.float64) + 4 * np.eye(4)
    tall = _rand((5, 3), np.float64)
    wide = _rand((3, 5), np.float64)
    b = _rand((4, 2), np.float64)
    check_grads(lambda x: lax.linalg.cholesky(x), [spd], 1)
    for kw in ({"left_side": True, "lower": True}, {"left_side": False, "transpose_a": True},
               {"left_side": True, "lower": False, "unit_diagonal": True}):
        bb = b if kw["left_side"] else b.T
        check_grads(lambda x, y, kw=kw: lax.linalg.triangular_solve(x, y, **kw), [a, bb], 1)
    check_grads(lambda x: lax.linalg.lu(x)[0], [a], 1)
    check_grads(lambda x: lax.linalg.lu(x)[0], [tall], 1)
    check_grads(lambda x: lax.linalg.lu(x)[0], [wide], 1)
    check_grads(lambda x: jnp.linalg.qr(x), [tall], 1)
    check_grads(lambda x: jnp.linalg.qr(x), [a], 1)
    check_grads(lambda x: jnp.linalg.eigh(_sym(x)), [a], 1, rtol=1e-4)
    check_grads(lambda x: jnp.linalg.svd(x, full_matrices=False), [tall], 1, rtol=1e-4)
    check_grads(lambda x: jnp.linalg.svd(x, full_matrices=False), [wide], 1, rtol=1e-4)
    check_grads(jnp.linalg.svdvals, [a], 1)
    check_grads(jnp.linalg.det, [a], 2)
    check_grads(lambda x: jnp.linalg.slogdet(x)[1], [a], 1)
    check_grads(jnp.linalg.solve, [a, b], 1)
    check_grads(jnp.linalg.inv, [a], 1, use_jit=True)
    # det's derivative is the adjugate's transpose, finite at singular matrices (as JAX)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for g in (ember.grad(jnp.linalg.det)(singular),
              ember.jit(ember.grad(jnp.linalg.det))(singular)):
        np.testing.assert_allclose(np.asarray(g), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    np.testing.assert_array_equal(np.asarray(ember.grad(jnp.linalg.det)(np.zeros((2, 2)))), 0)
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        ember.jvp(lambda x: jnp.linalg.qr(x, mode="complete"), (tall,), (tall,))


# -- vmap ----------------------------------------------------------------------------------------

def test_vmap(x64):
    a = _rand((3, 4, 4), np.float64) + 4 * np.eye(4)
    spd = _spd((3, 4, 4), np.float64)
    b = _rand((4, 2), np.float64)
    fns = [
        (lambda x: lax.linalg.cholesky(x), spd),
        (lambda x: lax.linalg.lu(x), a),
        (lambda x: lax.linalg.qr(x), a),
        (lambda x: lax.linalg.eigh(x), spd),
        (lambda x: lax.linalg.svd(x), a),
        (lambda x: lax.linalg.triangular_solve(x, b, left_side=True, lower=True), a),
        (lambda x: lax.linalg.triangular_solve(a[0], x[:, :2], left_side=True), a),
        (lambda x: jnp.linalg.solve(x, b), a),
    ]
    for f, x in fns:
        got = ember.vmap(f, in_axes=1, out_axes=0)(np.swapaxes(x, 0, 1))
        want = [f(x[i]) for i in range(3)]
        got = got if isinstance(got, tuple) else (got,)
        for k, g in enumerate(got):
            w = np.stack([np.asarray(wi[k] if isinstance(wi, tuple) else wi) for wi in want])
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-9)


def test_cpu_calls_lapack_from_compiled_code(x64):
    """The CPU backend compiles every routine to a direct call (no interpreter fallback)."""
    a = np.stack([np.eye(3), 2 * np.eye(3)])
    compiled = ember.jit(lambda x: (lax.linalg.cholesky(x),
                                    lax.linalg.triangular_solve(x, x, left_side=True),
                                    lax.linalg.lu(x), lax.linalg.qr(x), lax.linalg.eigh(x),
                                    lax.linalg.svd(x),
                                    lax.linalg.svd(x, compute_uv=False))).lower(a).compile()
    ir_text = compiled.llvm_ir()
    for routine in ("potrf", "trsm", "getrf", "geqrf", "orgqr", "syevd", "gesdd"):
        assert f"ember_lapack_d{routine}" in ir_text, routine
    kinds = {k.name: k.kind for k in compiled.kernels()}
    assert any(name.startswith("cholesky") for name in kinds)


def _tridiagonal(dl, d, du):
    m = d.shape[-1]
    out = np.zeros(d.shape + (m,), d.dtype)
    for idx in np.ndindex(*d.shape[:-1]):
        out[idx] = np.diag(d[idx]) + np.diag(dl[idx][1:], -1) + np.diag(du[idx][:-1], 1)
    return out


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (2, 4, 2), (3, 1, 1)])
def test_tridiagonal_solve(shape, dtype):
    m = shape[-2]
    diag = shape[:-1]
    dl, du = _rand(diag, dtype), _rand(diag, dtype)
    d = (_rand(diag, dtype) + 4).astype(dtype)
    b = _rand(shape, dtype)
    dl[..., 0] = 7  # outside the matrix: never read
    du[..., m - 1] = 7
    want = np.linalg.solve(_tridiagonal(dl, d, du).astype(np.float64), b)
    for (x,) in _both(lax.linalg.tridiagonal_solve, dl, d, du, b):
        _close(x, want, dtype, scale=10)
    zero = np.zeros_like(d)  # singular: NaN as JAX
    for (x,) in _both(lax.linalg.tridiagonal_solve, dl, zero, zero, b):
        assert np.all(np.isnan(x))


def test_tridiagonal_solve_grads_and_vmap(x64):
    m = 4
    dl, du, b = _rand((m,), np.float64), _rand((m,), np.float64), _rand((m, 2), np.float64)
    d = _rand((m,), np.float64) + 5
    check_grads(lax.linalg.tridiagonal_solve, [dl, d, du, b], 2)
    check_grads(lax.linalg.tridiagonal_solve, [dl, d, du, b], 1, use_jit=True)
    bs = _rand((3, m, 2), np.float64)
    got = ember.vmap(lambda y: lax.linalg.tridiagonal_solve(dl, d, du, y))(bs)
    want = np.stack([np.asarray(lax.linalg.tridiagonal_solve(dl, d, du, y)) for y in bs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="all diagonal arguments have the same shape"):
        lax.linalg.tridiagonal_solve(dl[:3], d, du, b)
    with pytest.raises(TypeError, match="Input 3 to tridiagonal_solve must have rank at least"):
        lax.linalg.tridiagonal_solve(dl, d, du, b[:, 0])


@pytest.mark.parametrize("shape", [(70, 45), (45, 70), (64, 64), (2, 33, 40)])
def test_larger_than_a_transpose_tile(shape, x64):
    """The CPU kernels' tiled row/column-major copies: whole tiles and both strips."""
    a = _rand(shape, np.float64)
    m, n = shape[-2:]
    k = min(m, n)
    lu, _, perm = ember.jit(lax.linalg.lu)(a)
    lu, perm = np.asarray(lu), np.asarray(perm)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
    pa = np.take_along_axis(a, perm[..., :, None].astype(np.int64), axis=-2)
    np.testing.assert_allclose(low @ np.triu(lu[..., :k, :]), pa, atol=1e-10)
    q, r = ember.jit(lambda x: lax.linalg.qr(x, full_matrices=False))(a)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-10)
    b = _rand(shape, np.float64)
    d = _rand(shape[:-1], np.float64) + 6
    x = ember.jit(lax.linalg.tridiagonal_solve)(d * 0.1, d, d * 0.2, b)
    np.testing.assert_allclose(np.asarray(x), np.asarray(lax.linalg.tridiagonal_solve(
        d * 0.1, d, d * 0.2, b)), atol=1e-12)
