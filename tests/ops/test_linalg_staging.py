"""Values of the jnp functions restaged as JAX 0.10.2 stages them (issue 22, item 7: the
linalg work): solve and inv through custom_linear_solve and jit[_lu_solve], det's explicit
2x2/3x3 products, pinv's custom_jvp and cutoff, lstsq, matrix_rank, cond, svd with
hermitian=True, eigvals, diagflat, insert, interp; and the rules they brought (the
triangular solve's batching with an unmapped matrix, squeeze and sort batching, x.at
updates promoting with their values, take_along_axis with unsigned indices).

Input: small arrays (odd sizes, 1x1, batched, singular, complex, NaN/-0.0 where they
apply). Output: agreement with NumPy (or JAX's documented value where JAX and NumPy
differ), eagerly and under jit; gradients against finite differences (ad_checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from ad_checks import check_grads
from linalg_checks import both

import ember
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(22)


def _rand(*shape: int, dtype=np.float64) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _well(n: int, *batch: int, dtype=np.float64) -> np.ndarray:
    return (_rand(*batch, n, n, dtype=dtype) + 2 * n * np.eye(n)).astype(dtype)


def _all_close(f, args, want, tol=1e-10):
    for got in both(f, *args):
        for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


# -- solve, inv ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ashape,bshape", [((1, 1), (1,)), ((7, 7), (7,)), ((7, 7), (7, 3)),
                                           ((2, 5, 5), (5,)), ((2, 5, 5), (2, 5, 4)),
                                           ((2, 1, 3, 3), (4, 3, 2)), ((3, 3), (2, 3, 1))])
def test_solve_matches_numpy(ashape, bshape, x64):
    a = _well(ashape[-1], *ashape[:-2])
    b = _rand(*bshape)
    want = np.linalg.solve(a, b) if len(bshape) > 1 else np.linalg.solve(
        a, np.broadcast_to(b, ashape[:-1])[..., None])[..., 0]
    _all_close(jnp.linalg.solve, (a, b), want)


def test_solve_complex_int_and_singular(x64):
    a = _well(4, dtype=np.complex128)
    b = _rand(4, 2, dtype=np.complex128)
    _all_close(jnp.linalg.solve, (a, b), np.linalg.solve(a, b))
    ai = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32)
    bi = np.array([1, 2, 3], np.int32)
    for got in both(jnp.linalg.solve, ai, bi):
        assert got[0].dtype == np.float64
        np.testing.assert_allclose(got[0], np.linalg.solve(ai, bi), rtol=1e-12)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for got in both(jnp.linalg.solve, singular, np.ones(2)):
        assert not np.all(np.isfinite(got[0]))  # inf or NaN, never an exception
    _all_close(jnp.linalg.inv, (a,), np.linalg.inv(a))
    stack = _well(3, 2, 2)
    _all_close(jnp.linalg.inv, (stack,), np.linalg.inv(stack))


def test_solve_and_inv_gradients(x64):
    # custom_linear_solve: one more solve with the same factors (transposed for reverse mode)
    a, b, v = _well(4), _rand(4, 2), _rand(4)
    check_grads(jnp.linalg.solve, [a, b], 2)
    check_grads(jnp.linalg.solve, [a, v], 1, use_jit=True)
    check_grads(jnp.linalg.solve, [_well(3, 2), _rand(2, 3, 2)], 1)
    check_grads(jnp.linalg.inv, [_well(3, 2)], 1)
    g = ember.grad(lambda a, b: jnp.linalg.solve(a, b).sum(), argnums=(0, 1))(a, v)
    x = np.linalg.solve(a, v)
    y = np.linalg.solve(a.T, np.ones(4))  # d sum(x) / db = a^-T 1, / da = -y x^T
    np.testing.assert_allclose(np.asarray(g[1]), y, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g[0]), -np.outer(y, x), rtol=1e-10)


def test_vmap_of_solve_over_either_operand(x64):
    a, bs = _well(5), _rand(3, 5)
    got = ember.vmap(jnp.linalg.solve, in_axes=(None, 0))(a, bs)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(a, bs.T).T, rtol=1e-10)
    As = _well(5, 3)
    got = ember.vmap(jnp.linalg.solve, in_axes=(0, None))(As, bs[0])
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(As, bs[0][:, None])[..., 0],
                               rtol=1e-10)


@pytest.mark.parametrize("left_side,lower,transpose_a", [(True, True, False),
                                                         (True, False, True),
                                                         (False, True, False),
                                                         (False, False, True)])
def test_triangular_solve_batches_an_unmapped_matrix_into_one_solve(left_side, lower,
                                                                   transpose_a, x64):
    a = _well(4)
    bs = _rand(3, 4, 2) if left_side else _rand(3, 2, 4)

    def f(b):
        return lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a)
    for axis in (0, 2):
        got = ember.vmap(f, in_axes=axis)(np.moveaxis(bs, 0, axis))
        want = np.stack([np.asarray(f(b)) for b in bs])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    # one solve of all the batch's columns: `a` is never broadcast to the batch
    text = str(ember.make_jaxpr(ember.vmap(f))(bs))
    assert text.count("triangular_solve") == 1 and "broadcast_in_dim" not in text


# -- det ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 2, 2), (2, 3, 3, 3), (1, 1), (5, 5)])
def test_det_matches_numpy(shape, x64):
    a = _rand(*shape)
    _all_close(jnp.linalg.det, (a,), np.linalg.det(a))
    z = _rand(*shape, dtype=np.complex128)
    _all_close(jnp.linalg.det, (z,), np.linalg.det(z))


def test_det_small_products_gradients_and_special_values(x64):
    for n in (2, 3):
        check_grads(jnp.linalg.det, [_rand(n, n)], 2)
        # the derivative of the products is the cofactor matrix, finite when singular
        s = np.outer(np.arange(1.0, n + 1), np.ones(n))
        g = np.asarray(ember.grad(jnp.linalg.det)(s + np.eye(n) * 0))
        cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(s, i, 0), j, 1))
                         for j in range(n)] for i in range(n)])
        np.testing.assert_allclose(g, cof, atol=1e-12)
    a = np.array([[1.0, np.inf, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for got in both(jnp.linalg.det, a):
        assert np.isnan(got[0])  # inf * 0 terms, as JAX's products give
    ints = np.array([[2, 1], [1, 3]], np.int32)
    for got in both(jnp.linalg.det, ints):
        assert got[0].dtype == np.float64 and got[0] == 5.0


# -- the SVD family ----------------------------------------------------------------------------

def test_pinv_drops_singular_values_below_ten_max_mn_eps(x64):
    u, _ = np.linalg.qr(_rand(5, 5))
    v, _ = np.linalg.qr(_rand(3, 3))
    eps = np.finfo(np.float64).eps
    # 30 eps is below the cutoff 10 * 5 * eps (NumPy's default rcond 1e-15 would keep it
    # and give entries near 1e14)
    a = u[:, :3] * np.array([1.0, 0.5, 30 * eps]) @ v.T
    want = np.linalg.pinv(a, rcond=10 * 5 * eps)
    _all_close(jnp.linalg.pinv, (a,), want, tol=1e-9)
    assert np.abs(np.asarray(jnp.linalg.pinv(a))).max() < 3
    _all_close(lambda a: jnp.linalg.pinv(a, rtol=0.7), (a,), np.linalg.pinv(a, rcond=0.7))
    z = _rand(2, 4, 3, dtype=np.complex128)
    _all_close(jnp.linalg.pinv, (z,), np.linalg.pinv(z), tol=1e-9)
    assert jnp.linalg.pinv(np.zeros((0, 3))).shape == (3, 0)
    check_grads(jnp.linalg.pinv, [_rand(5, 3)], 1)
    check_grads(jnp.linalg.pinv, [_rand(3, 5)], 1)


@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (5, 5)])
def test_lstsq_matches_numpy(shape, x64):
    a = _rand(*shape)
    for b in (_rand(shape[0]), _rand(shape[0], 2)):
        x, resid, rank, s = np.linalg.lstsq(a, b)
        got = both(jnp.linalg.lstsq, a, b)
        for g in got:
            np.testing.assert_allclose(g[0], x, rtol=1e-9, atol=1e-9)
            assert int(g[2]) == rank
            np.testing.assert_allclose(g[3], s, rtol=1e-10)
            if resid.size:
                np.testing.assert_allclose(g[1], resid, rtol=1e-8)
    deficient = np.outer(_rand(5), _rand(3))
    x = np.asarray(jnp.linalg.lstsq(deficient, np.ones(5))[0])
    np.testing.assert_allclose(x, np.linalg.lstsq(deficient, np.ones(5))[0], rtol=1e-9)
    zero = both(jnp.linalg.lstsq, np.zeros((4, 3)), np.ones(4))
    for g in zero:  # (s > 0 in the mask: a zero matrix has rank 0 and solution 0)
        assert int(g[2]) == 0 and not np.any(g[0])


def test_matrix_rank_and_cond(x64):
    low = np.outer(_rand(5), _rand(4)) + np.outer(_rand(5), _rand(4))
    stack = np.stack([low, _rand(5, 4), np.zeros((5, 4))])
    _all_close(jnp.linalg.matrix_rank, (stack,), np.linalg.matrix_rank(stack))
    s = np.linalg.svd(low, compute_uv=False)
    rtol = s[1] / s[0] * 1.01  # (a relative tolerance: just above the second value)
    assert int(jnp.linalg.matrix_rank(low, rtol)) == 1 == np.linalg.matrix_rank(low, rtol=rtol)
    assert int(jnp.linalg.matrix_rank(low, tol=s[1] * 0.99)) == 2
    assert int(jnp.linalg.matrix_rank(np.array([0.0, 1.0]))) == 1
    a = _well(4, 2)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf):
        _all_close(lambda a, p=p: jnp.linalg.cond(a, p), (a,), np.linalg.cond(a, p), tol=1e-9)
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    for p in (1, "fro"):
        assert float(jnp.linalg.cond(singular, p)) == np.inf


def test_svd_hermitian_and_eigvals(x64):
    h = _rand(5, 5)
    h = h + h.T
    for got in both(lambda x: jnp.linalg.svd(x, hermitian=True), h):
        u, s, vh = got
        np.testing.assert_allclose(s, np.linalg.svd(h, hermitian=True)[1], rtol=1e-12)
        np.testing.assert_allclose((u * s) @ vh, h, atol=1e-12)
    z = _rand(2, 4, 4, dtype=np.complex128)
    z = z + np.conj(np.swapaxes(z, -1, -2))
    s = np.asarray(jnp.linalg.svd(z, hermitian=True, compute_uv=False))
    np.testing.assert_allclose(s, np.linalg.svd(z, compute_uv=False), rtol=1e-12)
    g = _rand(4, 4)
    for got in both(jnp.linalg.eigvals, g):
        np.testing.assert_allclose(np.sort_complex(got[0]), np.sort_complex(np.linalg.eigvals(g)),
                                   rtol=1e-10)


# -- diagflat, insert, interp --------------------------------------------------------------------

@pytest.mark.parametrize("v,k", [(np.array([1.0, -0.0, np.nan]), 0), (np.arange(6.0).reshape(2, 3),
                                                                      -2),
                                 (np.zeros(0), 1), (np.array(5.0), 0),
                                 (np.array([1 + 2j, 3j]), 1), (np.array([True, False]), 3)])
def test_diagflat_matches_numpy(v, k, x64):
    for got in both(lambda v: jnp.diagflat(v, k), v):
        np.testing.assert_array_equal(got[0], np.diagflat(v, k))
        if got[0].dtype.kind == "f":
            assert np.array_equal(np.signbit(got[0]), np.signbit(np.diagflat(v, k)))


def test_insert_matches_numpy():
    x = np.arange(12.0).reshape(3, 4)
    cases = [(1, 5.0, None), (np.array([0, 2, 2]), np.array([7.0, 8.0, 9.0]), 1),
             (-1, x[0], 0), (slice(0, 4, 2), 1.5, 1), (np.array([4], np.int32), 3.0, 1),
             (np.array([], np.int32), 1.0, 0)]
    for obj, values, axis in cases:
        got = jnp.insert(x, obj, values, axis=axis)
        np.testing.assert_array_equal(np.asarray(got), np.insert(x, obj, values, axis=axis))
    ints = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.insert(ints, 2, 7.9)), np.insert(ints, 2, 7))


def test_interp_matches_numpy_and_jax_extrapolation():
    xp = np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32)  # (a repeated point: a step)
    fp = np.array([1.0, -0.0, 3.0, np.nan, 2.0], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, np.nan], np.float32)
    kws = [{}, {"left": -7.0, "right": 9.0}, {"period": 3.0}]
    for kw in kws:
        for got in both(lambda x, kw=kw: jnp.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 2, 4]], **kw),
                        x):
            np.testing.assert_allclose(got[0], np.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 2, 4]],
                                                         **kw), rtol=1e-6, equal_nan=True)
    # 'extrapolate' continues the end segments (JAX's option; NumPy has none)
    got = np.asarray(jnp.interp(np.array([-1.0, 5.0]), np.array([0.0, 1.0, 3.0]),
                                np.array([0.0, 2.0, 3.0]), left="extrapolate",
                                right="extrapolate"))
    np.testing.assert_allclose(got, [-2.0, 4.0])


# -- rules brought in by the restaging -----------------------------------------------------------

def test_index_updates_combine_in_the_promoted_dtype():
    # as JAX: the int array and float values promote, the scatter adds in float, and the
    # result converts back (0.5 + 0.5 = 1, not 0 + 0)
    x = jnp.zeros(3, jnp.int32)
    for f in (lambda x: x.at[np.array([0, 0])].add(np.array([0.5, 0.5], np.float32)),
              ember.jit(lambda x: x.at[np.array([0, 0])].add(np.array([0.5, 0.5],
                                                                        np.float32)))):
        out = f(x)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), [1, 0, 0])
    u = jnp.zeros(2, jnp.uint8).at[0].set(jnp.array(300, jnp.int32))
    np.testing.assert_array_equal(np.asarray(u), [44, 0])


def test_take_along_axis_unsigned_indices_and_batched_squeeze_sort():
    a = np.arange(12.0).reshape(3, 4)
    for dt in (np.uint8, np.uint32, np.int8):
        i = np.array([[3, 0], [1, 1], [2, 3]], dt)
        for got in both(lambda a, i: jnp.take_along_axis(a, i, axis=1), a, i):
            np.testing.assert_array_equal(got[0], np.take_along_axis(a, i.astype(np.int64), 1))
    # squeeze batches with the batch axis first; sort broadcasts an unmapped operand
    x = np.arange(24.0).reshape(2, 3, 1, 4)
    got = ember.vmap(lambda r: lax.squeeze(r, (2,)), in_axes=3)(x)
    np.testing.assert_array_equal(np.asarray(got), np.moveaxis(x[:, :, 0, :], 2, 0))
    keys = np.array([[3, 1, 2], [0, 2, 1]], np.int32)
    vals = np.array([10, 20, 30], np.int32)
    got = ember.vmap(lambda k: lax.sort_key_val(k, vals), in_axes=0)(keys)
    np.testing.assert_array_equal(np.asarray(got[1]), [[20, 30, 10], [10, 30, 20]])


def test_select_n_and_transpose_batch_as_jax_in_every_placement():
    # select_n's rule now follows JAX's cases (same batch axis: in place; an unbatched
    # scalar `which`: the cases' axis; else `which` first), and transpose puts the batch
    # axis first: every placement of the batch axes still computes the per-example values
    import itertools
    size = 3

    def batched(shape, d, boolean):
        full = list(shape)
        if d is not None:
            full.insert(d, size)
        return RNG.random(full) > 0.5 if boolean else RNG.standard_normal(full).astype(np.float32)

    def take(x, d, i):
        return x if d is None else np.take(x, i, axis=d)

    for wshape, cshape in [((), ()), ((), (2, 4)), ((2, 4), (2, 4))]:
        for wd in [None, *range(len(wshape) + 1)]:
            for cds in itertools.product([None, *range(len(cshape) + 1)], repeat=2):
                if wd is None and cds == (None, None):
                    continue
                w = batched(wshape, wd, True)
                cs = [batched(cshape, d, False) for d in cds]
                got = ember.vmap(lax.select_n, in_axes=(wd, *cds))(w, *cs)
                want = [np.asarray(lax.select_n(take(w, wd, i), *[take(c, d, i) for c, d
                                                                  in zip(cs, cds)]))
                        for i in range(size)]
                np.testing.assert_array_equal(np.asarray(got), np.stack(want))
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for d in range(3):
        for perm in ((0, 1), (1, 0)):
            got = ember.vmap(lambda a, perm=perm: lax.transpose(a, perm), in_axes=d)(x)
            want = np.stack([np.take(x, i, axis=d).transpose(perm) for i in range(x.shape[d])])
            np.testing.assert_array_equal(np.asarray(got), want)


def test_tridiagonal_solve_batches_unmapped_diagonals_into_one_solve(x64):
    dl, d, du = _rand(5), _rand(5) + 6, _rand(5)
    bs = _rand(5, 2, 3)

    def f(b, d=d):
        return lax.linalg.tridiagonal_solve(dl, d, du, b)
    for axis in (0, 1, 2):
        got = ember.vmap(f, in_axes=axis)(np.moveaxis(bs, 2, axis))
        want = np.stack([np.asarray(f(bs[..., i])) for i in range(3)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    text = str(ember.make_jaxpr(ember.vmap(f, in_axes=2))(bs))
    assert text.count("tridiagonal_solve") == 1 and "perturb_singular=False" in text
    ds = _rand(3, 5) + 6  # mapped diagonals: one system per member
    got = ember.vmap(lambda d, b: f(b, d), in_axes=(0, 2))(ds, bs)
    want = np.stack([np.asarray(f(bs[..., i], ds[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        lax.linalg.tridiagonal_solve(dl, d, du, bs[..., 0], perturb_singular=True)
