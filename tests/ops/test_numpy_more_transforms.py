"""grad and vmap through the jax.numpy functions of issue 25 item 5, against JAX's own
grad / vmap of the same function (or NumPy per example), and lax.associative_scan /
lax.reduce with a user computation (eager, jit, grad, vmap) against JAX.
"""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax

F32 = np.float32
RNG = np.random.default_rng(5)


def _close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


GRAD_CASES = [
    # (name, function of one float array in both namespaces, input)
    ("histogram weights", lambda np_, w: np_.histogram(
        np.linspace(0, 1, 7, dtype=F32), 3, weights=w, density=True)[0].sum() * 2,
     RNG.uniform(0.5, 1, 7).astype(F32)),
    ("interp", lambda np_, x: np_.interp(x, np.array([0.0, 1, 3], F32),
                                         np.array([1.0, -1, 2], F32)).sum(),
     np.array([-0.5, 0.5, 2.0, 2.9], F32)),
    ("interp fp", lambda np_, f: np_.interp(np.array([0.3, 1.7], F32),
                                            np.array([0.0, 1, 3], F32), f).sum(),
     np.array([1.0, -1, 2], F32)),
    ("trapezoid", lambda np_, y: np_.trapezoid(y * y, dx=0.3), RNG.standard_normal(6).astype(
        F32)),
    ("gradient", lambda np_, y: (np_.gradient(y) ** 2).sum(), RNG.standard_normal(6).astype(
        F32)),
    ("polyval", lambda np_, p: np_.polyval(p, np.array([0.5, -2.0], F32)).sum(),
     np.array([1.0, 2, 3], F32)),
    ("cov", lambda np_, x: np_.cov(x.reshape(2, 4)).sum(), RNG.standard_normal(8).astype(
        F32)),
    ("corrcoef", lambda np_, x: np_.corrcoef(x.reshape(2, 4))[0, 1],
     RNG.standard_normal(8).astype(F32)),
    ("nanvar", lambda np_, x: np_.nanvar(np_.where(x > 1.5, np.nan, x)),
     RNG.standard_normal(7).astype(F32)),
    ("nanmedian", lambda np_, x: np_.nanmedian(x.reshape(2, 3), axis=1).sum(),
     RNG.standard_normal(6).astype(F32)),
    ("i0", lambda np_, x: np_.i0(x).sum(), np.array([0.0, 0.5, -3.0, 25.0], F32)),
    ("convolve", lambda np_, x: np_.convolve(x, np.array([1.0, -2, 0.5], F32)).sum() ** 2,
     RNG.standard_normal(5).astype(F32)),
    ("unwrap", lambda np_, x: np_.unwrap(x * 3).sum(), RNG.standard_normal(6).astype(F32)),
    ("kaiser", lambda np_, b: np_.kaiser(6, b).sum(), np.float32(4.0)),
    ("vectorize", lambda np_, x: np_.vectorize(lambda a, b: a * b + np_.sin(a),
                                               signature="(),()->()")(x, x[::-1]).sum(),
     RNG.standard_normal(5).astype(F32)),
    ("polyfit", lambda np_, y: np_.polyfit(np.linspace(0, 1, 6, dtype=F32), y, 2).sum(),
     RNG.standard_normal(6).astype(F32)),
]


@pytest.mark.parametrize("name,fn,x", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_matches_jax(name, fn, x):
    got = ember.grad(lambda v: fn(jnp, v))(x)
    want = jax.grad(lambda v: fn(jjnp, v))(x)
    _close(got, want, rtol=2e-4, atol=2e-5)


VMAP_CASES = [
    ("bincount", lambda np_, x: np_.bincount(x, length=6), RNG.integers(0, 7, (3, 9))),
    ("histogram", lambda np_, x: np_.histogram(x, 4, (-2, 2))[0],
     RNG.standard_normal((3, 10)).astype(F32)),
    ("polyval", lambda np_, x: np_.polyval(np.array([1.0, -2.0, 0.5], F32), x),
     RNG.standard_normal((3, 4)).astype(F32)),
    ("polyval p", lambda np_, p: np_.polyval(p, np.array([0.5, 2.0], F32)),
     RNG.standard_normal((3, 5)).astype(F32)),
    ("digitize", lambda np_, x: np_.digitize(x, np.array([-1.0, 0, 1], F32)),
     RNG.standard_normal((2, 5)).astype(F32)),
    ("interp", lambda np_, x: np_.interp(x, np.array([0.0, 1, 3], F32),
                                         np.array([1.0, -1, 2], F32)),
     RNG.uniform(-1, 4, (3, 4)).astype(F32)),
    ("isin", lambda np_, x: np_.isin(x, np.array([1, 3], np.int32)),
     RNG.integers(0, 5, (3, 6)).astype(np.int32)),
    ("union1d size", lambda np_, x: np_.union1d(x, np.array([2, 9], np.int32), size=8),
     RNG.integers(0, 5, (3, 6)).astype(np.int32)),
    ("setdiff1d size", lambda np_, x: np_.setdiff1d(x, np.array([2], np.int32), size=4),
     RNG.integers(0, 5, (3, 6)).astype(np.int32)),
    ("convolve", lambda np_, x: np_.convolve(x, np.array([1.0, 2], F32), "same"),
     RNG.standard_normal((3, 5)).astype(F32)),
    ("cov", lambda np_, x: np_.cov(x), RNG.standard_normal((2, 3, 5)).astype(F32)),
    ("nanquantile", lambda np_, x: np_.nanquantile(x, np.array([0.2, 0.9], F32)),
     RNG.standard_normal((3, 7)).astype(F32)),
    ("partition", lambda np_, x: np_.partition(x, 2), RNG.permutation(18).reshape(3, 6)
     .astype(F32)),
    ("compress size", lambda np_, x: np_.compress(x > 0, x, size=3),
     RNG.standard_normal((3, 6)).astype(F32)),
    ("insert", lambda np_, x: np_.insert(x, np.array([1, 3], np.int32), -1.0),
     RNG.standard_normal((2, 4)).astype(F32)),
    ("frexp", lambda np_, x: np_.frexp(x), RNG.standard_normal((2, 5)).astype(F32) * 50),
    ("packbits", lambda np_, x: np_.packbits(x > 0), RNG.standard_normal((3, 11)).astype(
        F32)),
    ("vectorize", lambda np_, x: np_.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")(
        x, np.ones(4, F32)), RNG.standard_normal((2, 3, 3, 4)).astype(F32)),
    ("apply_along_axis", lambda np_, x: np_.apply_along_axis(lambda v: v.max() - v.min(), 1,
                                                             x),
     RNG.standard_normal((2, 3, 5)).astype(F32)),
]


@pytest.mark.parametrize("name,fn,x", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_jax(name, fn, x):
    if x.dtype == np.int64:
        x = x.astype(np.int32)
    got = ember.vmap(lambda v: fn(jnp, v))(x)
    want = jax.vmap(lambda v: fn(jjnp, v))(x)
    _close(got, want)


# -- lax.associative_scan and lax.reduce ------------------------------------------------------

def _affine(np_):
    """Composition of affine maps x -> a x + b: associative, not commutative."""
    return lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1])


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_associative_scan_matches_jax(n):
    a = RNG.uniform(0.5, 1.5, (n, 3)).astype(F32)
    c = RNG.standard_normal((n, 3)).astype(F32)
    for reverse in (False, True):
        got = lax.associative_scan(_affine(jnp), (a, c), reverse=reverse)
        want = jax.lax.associative_scan(_affine(jjnp), (a, c), reverse=reverse)
        _close(got, want)
        got = ember.jit(lambda a: lax.associative_scan(lax.add, a, reverse, axis=1))(a.T)
        _close(got, np.cumsum(a.T[:, ::-1], 1)[:, ::-1] if reverse else np.cumsum(a.T, 1))


def test_associative_scan_pytrees_grad_vmap_errors():
    x = RNG.standard_normal((7, 4)).astype(F32)
    tree = {"s": x, "m": x[:, :2]}
    got = lax.associative_scan(lambda p, q: {"s": p["s"] + q["s"],
                                             "m": jnp.maximum(p["m"], q["m"])}, tree)
    _close(got["s"], np.cumsum(x, 0))
    _close(got["m"], np.maximum.accumulate(x[:, :2], 0))
    f = (lambda lib, ax: lambda v: (lib.associative_scan(lib.mul, v, axis=ax) ** 2).sum())
    _close(ember.grad(f(lax, 1))(x), jax.grad(f(jax.lax, 1))(x), rtol=1e-4)
    _close(ember.vmap(lambda v: lax.associative_scan(lax.max, v))(x),
           np.maximum.accumulate(x, 1))
    with pytest.raises(TypeError, match="fn argument should be callable"):
        lax.associative_scan(3, x)
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(lax.add, (x, x[:3]))
    with pytest.raises(TypeError, match="same structure"):
        lax.associative_scan(lambda p, q: p[0], (x, x))


def test_reduce_monoids_and_user_computations():
    x = RNG.standard_normal((3, 5, 4)).astype(F32)
    i = RNG.integers(-9, 9, (4, 6)).astype(np.int32)
    # JAX's monoids become the lax reductions (one equation in the jaxpr)
    for comp, init, dims, ref in ((lax.add, 0.0, (0, 2), np.sum), (lax.mul, 1.0, (1,),
                                                                   np.prod),
                                  (lax.max, -np.inf, (0, 1, 2), np.max),
                                  (lax.min, np.inf, (2,), np.min)):
        _close(lax.reduce(x, init, comp, dims), ref(x, axis=dims), rtol=1e-5)
        jaxpr = ember.make_jaxpr(lambda v: lax.reduce(v, init, comp, dims))(x)
        assert len(jaxpr.jaxpr.eqns) == 1 and "reduce_" in str(jaxpr)
    for comp, init, ref in ((lax.bitwise_or, 0, np.bitwise_or.reduce),
                            (lax.bitwise_and, -1, np.bitwise_and.reduce),
                            (lax.bitwise_xor, 0, np.bitwise_xor.reduce)):
        np.testing.assert_array_equal(lax.reduce(i, np.int32(init), comp, (1,)), ref(i, 1))
    # a user computation: a pairwise tree of its vmapped applications, init combined once
    def smooth_max(a, b):
        return jnp.maximum(a, b) + 0.0 * a

    for dims in ((0,), (1, 2), (0, 1, 2)):
        got = lax.reduce(x, np.float32(0.25), smooth_max, dims)
        want = jax.lax.reduce(x, np.float32(0.25), lambda a, b: jjnp.maximum(a, b) + 0.0 * a,
                              dims)
        _close(got, want)
        _close(ember.jit(lambda v: lax.reduce(v, np.float32(0.25), smooth_max, dims))(x),
               want)
    # variadic: argmax as a reduction of (value, index) pairs
    def argmax_comp(lib):
        def comp(a, b):
            take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
            return lib.where(take, b[0], a[0]), lib.where(take, b[1], a[1])
        return comp

    v = np.array([3.0, 7, 7, 1, 9, 2, 9], F32)
    idx = np.arange(7, dtype=np.int32)
    got = lax.reduce((v, idx), (np.float32(-np.inf), np.int32(0)), argmax_comp(jnp), (0,))
    want = jax.lax.reduce((v, idx), (np.float32(-np.inf), np.int32(0)), argmax_comp(jjnp),
                          (0,))
    _close(got, want)
    # an empty reduction gives the init; grad and vmap go through the computation
    _close(lax.reduce(np.zeros((0, 3), F32), np.float32(2.0), smooth_max, (0,)),
           np.full(3, 2.0, F32))
    g = ember.grad(lambda w: lax.reduce(w, np.float32(1.0), lambda a, b: a * b * 1.0,
                                        (0,)))(np.array([1.0, 2, 3], F32))
    _close(g, np.array([6.0, 3.0, 2.0]))
    _close(ember.vmap(lambda w: lax.reduce(w, np.float32(-5.0), smooth_max, (1,)))(x),
           x.max(2))
    with pytest.raises(ValueError, match="same tree structure as init_values"):
        lax.reduce((x, x), 0.0, lax.add, (0,))
