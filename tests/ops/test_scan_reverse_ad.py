"""Reverse mode through `scan` and static-bound `fori_loop` (prims/_scan_reverse.py).

Checked as JAX's check_grads does (tests/ops/ad_checks.py: JVPs against central finite
differences in float64, VJPs against JVPs, orders 1 and 2), eagerly and under jit; plus
JAX as the reference for gradients, and the shape of the staged program: residuals that
do not change between iterations are not stacked, a residual that is an x slice is read
from xs, and the backward scan runs the other way.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from tests.ops.ad_checks import check_grads


@pytest.fixture
def jx(x64):
    """JAX (an optional extra) as the reference, with float64 on for the test."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        yield jax


def _multi(np_, lax_, reverse):
    """Two float carries, an int carry, two xs, two consts, two ys."""
    def f(a, b, xs, zs, w, v):
        def body(carry, inp):
            p, q, i = carry
            x, z = inp
            p2 = np_.sin(p) * w + x * q
            q2 = np_.tanh(q * v) + z * p
            return (p2, q2, i + 1), (p2 * x, np_.cos(q2))
        (p, q, i), (y1, y2) = lax_.scan(body, (a, b, 0), (xs, zs), reverse=reverse)
        return p + q * i, y1, y2
    return f


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_grads_multi(reverse, use_jit, x64):
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((4, 3)),
            rng.standard_normal((4, 3)), np.array(0.8), rng.standard_normal(3)]
    check_grads(_multi(jnp, lax, reverse), args, order=2, use_jit=use_jit)


def test_scan_grads_match_jax(jx):
    jax, jjnp = jx, jx.numpy
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((5, 3)),
            rng.standard_normal((5, 3)), np.array(0.8), rng.standard_normal(3)]

    def loss(mod_np, mod_lax):
        f = _multi(mod_np, mod_lax, False)
        return lambda *a: mod_np.sum(f(*a)[0]) + mod_np.sum(f(*a)[1] * f(*a)[2])

    got = ember.jit(ember.grad(loss(jnp, lax), argnums=tuple(range(6))))(*args)
    want = jax.grad(loss(jjnp, jax.lax), argnums=tuple(range(6)))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("use_jit", [False, True])
def test_fori_loop_static_grads(use_jit, x64):
    def f(x, w):
        return lax.fori_loop(0, 5, lambda i, v: v * 0.9 + w * jnp.sin(v) * i, x)

    rng = np.random.default_rng(3)
    check_grads(f, [rng.standard_normal(4), rng.standard_normal(4)], order=2,
                use_jit=use_jit)


def test_grad_of_grad_and_jacobians(jx):
    jax, jjnp = jx, jx.numpy
    def f(x):
        return lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) * x, x)

    def f_jax(x):
        return jax.lax.fori_loop(0, 3, lambda i, v: jjnp.sin(v) * x, x)

    x = 0.7
    np.testing.assert_allclose(ember.grad(ember.grad(f))(x), jax.grad(jax.grad(f_jax))(x),
                               rtol=1e-12)
    np.testing.assert_allclose(ember.jit(ember.grad(ember.grad(f)))(x),
                               jax.grad(jax.grad(f_jax))(x), rtol=1e-12)

    def g(v):
        return lax.scan(lambda c, x: (c * x + jnp.sin(c), c * c), v[0], v)[1]

    def g_jax(v):
        return jax.lax.scan(lambda c, x: (c * x + jjnp.sin(c), c * c), v[0], v)[1]

    v = np.array([0.3, -0.5, 1.2, 0.9])
    want = jax.jacrev(g_jax)(v)
    for jac in (ember.jacrev(g), ember.jit(ember.jacrev(g)), ember.jacfwd(g)):
        np.testing.assert_allclose(jac(v), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ember.jacrev(ember.jacrev(g))(v),
                               jax.jacrev(jax.jacrev(g_jax))(v), rtol=1e-12, atol=1e-14)
    # jacrev pushes its basis through one lax.map: a scan, transposed inside, not unrolled.
    text = str(ember.make_jaxpr(ember.jacrev(ember.jacrev(g)))(v))
    assert text.count("scan[") < 12


def test_integer_carry_and_unused_ys(x64):
    # The int carry has no tangent; the ys nobody differentiates get no cotangent.
    def f(x):
        (c, n), (ys, ks) = lax.scan(lambda cr, _: ((cr[0] * 1.5 + cr[1], cr[1] + 2),
                                                   (cr[0], cr[1])), (x, 1), None, length=4)
        return c + 0.0 * n, ys, ks

    out, pull = ember.vjp(lambda x: f(x)[0], 2.0)
    np.testing.assert_allclose(pull(1.0)[0], 1.5 ** 4)
    ct = ember.vjp(f, 2.0)[1]((1.0, np.ones(4), np.zeros(4, np.int32)))
    np.testing.assert_allclose(ct[0], 1.5 ** 4 + 1 + 1.5 + 1.5 ** 2 + 1.5 ** 3)


def test_scan_of_length_zero_and_no_xs(x64):
    f = lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=0)[0]  # noqa: E731
    np.testing.assert_allclose(ember.grad(f)(3.0), 1.0)
    g = lambda x: jnp.sum(lax.scan(lambda c, _: (c, jnp.sin(c)), x, None, length=3)[1])  # noqa
    np.testing.assert_allclose(ember.jit(ember.grad(g))(0.4), 3 * np.cos(0.4))


def _scans(fun, *args):
    """The scan equations of fun's jaxpr, top level, in order."""
    jaxpr = ember.make_jaxpr(fun)(*args).jaxpr
    return [e for e in jaxpr.eqns if e.primitive.name == "scan"]


def test_loop_invariant_and_x_residuals_are_not_stacked(jx):
    jax, jjnp = jx, jx.numpy
    # exp(w) depends only on the const w (invariant); x is the body's own slice (read from
    # xs); cos(c) changes each step: only it is stacked.
    def f(c, w, xs):
        return lax.scan(lambda c, x: (jnp.sin(c) * jnp.exp(w) * x, c), c, xs)[0]

    xs = np.linspace(0.1, 1.0, 6)
    # Differentiating in c only: the residuals are cos(c), exp(w) and x.
    scans = _scans(lambda c, w: ember.vjp(lambda c: f(c, w, xs), c)[1](1.0), 0.3, 0.2)
    fwd, bwd = scans
    assert len(fwd.outvars) == 2 + 1  # carry, ys, one stacked residual
    # In c and w, sin(c) is a residual too (for w's tangent): two stacked.
    fwd2 = _scans(lambda c, w: ember.vjp(lambda c, w: f(c, w, xs), c, w)[1](1.0), 0.3, 0.2)[0]
    assert len(fwd2.outvars) == 2 + 2
    assert bwd.params["reverse"] is True and fwd.params["reverse"] is False
    got = ember.grad(f, argnums=(0, 1))(0.3, 0.2, xs)
    want = jax.grad(lambda c, w: jax.lax.scan(
        lambda c, x: (jjnp.sin(c) * jjnp.exp(w) * x, c), c, xs)[0], argnums=(0, 1))(0.3, 0.2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_fori_loop_residuals_are_one_carry_per_step(jx):
    jax, jjnp = jx, jx.numpy
    # The goal's body: one residual (cos x) per iteration, x's size each.
    def f(x):
        return jnp.sum(lax.fori_loop(0, 7, lambda i, v: v * 0.99 + 0.01 * jnp.sin(v), x))

    x = np.linspace(-1, 1, 5)
    fwd = _scans(lambda x: ember.vjp(f, x)[1](1.0), x)[0]
    stacked = [v.aval.shape for v in fwd.outvars[2:]]
    assert stacked == [(7, 5)]
    np.testing.assert_allclose(ember.grad(f)(x), jax.grad(lambda x: jjnp.sum(jax.lax.fori_loop(
        0, 7, lambda i, v: v * 0.99 + 0.01 * jjnp.sin(v), x)))(x), rtol=1e-12)


def test_linear_transpose_of_scan(x64):
    def cumsum(xs):
        return lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]

    xs = np.arange(5.0)
    (ct,) = ember.linear_transpose(cumsum, xs)(np.ones(5))
    np.testing.assert_allclose(ct, [5.0, 4.0, 3.0, 2.0, 1.0])


def test_float32_grad_under_jit(jx):
    jax, jjnp = jx, jx.numpy
    def f(x):
        return jnp.sum(lax.fori_loop(0, 20, lambda i, v: v * 0.99 + 0.01 * jnp.sin(v), x))

    x = np.linspace(-2, 2, 33, dtype=np.float32)
    got = ember.jit(ember.grad(f))(x)
    assert got.dtype == np.float32
    want = jax.grad(lambda x: jjnp.sum(jax.lax.fori_loop(
        0, 20, lambda i, v: v * 0.99 + 0.01 * jjnp.sin(v), x)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_fori_loop_grad_memory_is_the_stacked_residuals():
    # Issue 19's goal: the residual memory of grad through a fori_loop is steps x carry
    # plus a constant. The forward scan's stacked residuals are the backward scan's
    # state (no second copy of them: the CPU planner hands the buffer from loop to loop).
    steps, n = 200, 1000

    def f(x):
        return jnp.sum(lax.fori_loop(0, steps, lambda i, v: v * 0.99 + 0.01 * jnp.sin(v), x))

    x = np.linspace(-1, 1, n, dtype=np.float32)
    g = ember.jit(ember.grad(f))
    stats = g.lower(x).compile().memory_analysis()
    if stats is None:
        pytest.skip("the interpreter backend holds no buffer plan")
    assert steps * x.nbytes <= stats.temp_size_in_bytes <= steps * x.nbytes + 8 * x.nbytes
    np.testing.assert_allclose(g(x), ember.grad(f)(x), rtol=1e-6)


_COMPOSED = {
    "xs_only": lambda np_, L, J: lambda x: np_.sum(
        L.scan(lambda c, xi: (c * 0.5 + np_.sin(xi), c * xi), 1.0, x)[1]),
    "unroll": lambda np_, L, J: lambda x: np_.sum(
        L.scan(lambda c, xi: (c * np_.cos(xi), c * xi), x[0], x, unroll=2)[1]),
    "cond_in_body": lambda np_, L, J: lambda x: np_.sum(L.scan(
        lambda c, xi: (L.cond(xi > 0.5, lambda: np_.sin(c) * xi, lambda: c * c), c),
        x[0], x)[1]),
    "nested_scan": lambda np_, L, J: lambda x: np_.sum(L.scan(
        lambda c, xi: (L.scan(lambda d, _: (np_.sin(d) * xi, d), c, None, length=3)[0], c),
        x[0], x)[1]),
    "checkpoint_around_scan": lambda np_, L, J: lambda x: np_.sum(J.checkpoint(
        lambda x: L.scan(lambda c, xi: (np_.sin(c) * xi, c * c), x[0], x)[1])(x)),
}


@pytest.mark.parametrize("name", sorted(_COMPOSED))
def test_composed_against_jax(name, jx):
    fe = _COMPOSED[name](jnp, lax, ember)
    fj = _COMPOSED[name](jx.numpy, jx.lax, jx)
    x = np.linspace(0.1, 0.9, 5)
    want = jx.grad(fj)(x)
    np.testing.assert_allclose(ember.grad(fe)(x), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ember.jit(ember.grad(fe))(x), want, rtol=1e-12, atol=1e-14)


def test_effects_run_once_per_iteration_under_grad(capsys, x64):
    # The hoisted loop-invariant residual (exp(w)) is computed before the loop without the
    # body's print; the known scan prints once per step; the backward scan never.
    def f(x, w):
        def body(c, xi):
            ember.debug.print("step {}", xi)
            return jnp.sin(c) * jnp.exp(w) + xi, c
        return jnp.sum(lax.scan(body, x, jnp.arange(3.0))[1])

    for g in (ember.grad(f), ember.jit(ember.grad(f))):
        np.testing.assert_allclose(g(0.5, 0.1), 1 + np.cos(0.5) * np.exp(0.1)
                                   + np.cos(np.sin(0.5) * np.exp(0.1) + 0.0) * np.exp(0.1)
                                   * np.cos(0.5) * np.exp(0.1), rtol=1e-12)
        assert capsys.readouterr().out.count("step") == 3
