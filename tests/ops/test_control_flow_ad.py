"""Autodiff through control flow: cond/switch (forward and reverse), while_loop (forward;
reverse raises JAX's error), scan and fori_loop (forward and reverse).

Checked as JAX's check_grads does (tests/ops/ad_checks.py: JVPs against central finite
differences in float64, VJPs against JVPs), eagerly and under jit.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from tests.ops.ad_checks import check_grads, check_jvp


def _cond_fn(x, y):
    return lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.sin(a) * b, lambda a, b: jnp.exp(a) - b,
                    x, y)


def _switch_fn(x):
    idx = jnp.clip(jnp.floor(jnp.sum(x)).astype(np.int32), 0, 2)
    return lax.switch(idx, [lambda v: v * v, lambda v: jnp.tanh(v), lambda v: 3.0 * v], x)


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_grads_both_branches(sign, use_jit, x64):
    rng = np.random.default_rng(0)
    x = sign * rng.uniform(0.5, 1.5, (3,))
    y = rng.standard_normal((3,))
    check_grads(_cond_fn, [x, y], order=2, use_jit=use_jit)


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("total", [-1.0, 1.5, 2.5])
def test_switch_grads_every_branch(total, use_jit, x64):
    x = np.full((2,), total / 2) + np.array([0.01, -0.01])
    check_grads(_switch_fn, [x], order=2, use_jit=use_jit)


def test_cond_grad_matches_branch_derivative_and_jit(x64):
    def f(x):
        return lax.cond(x > 0, lambda v: jnp.sin(v) * v, jnp.cos, x)

    for x in (0.7, -0.7):
        want = np.cos(x) * x + np.sin(x) if x > 0 else -np.sin(x)
        np.testing.assert_allclose(ember.grad(f)(x), want, rtol=1e-12)
        np.testing.assert_allclose(ember.jit(ember.grad(f))(x), want, rtol=1e-12)
        np.testing.assert_allclose(ember.grad(ember.jit(f))(x), want, rtol=1e-12)


def test_cond_residual_slots_are_shared_by_type():
    # only one branch runs: the k-th residual of a type shares a slot with the k-th of that
    # type in the other branches (slots numbered as the branches first need them)
    from ember.core.aval import ShapedArray
    from ember.prims._control_flow_ad import _residual_slots
    f3, f3b, i0 = (ShapedArray((3,), np.dtype(np.float32)), ShapedArray((3,), np.dtype(
        np.float32)), ShapedArray((), np.dtype(np.int32)))
    assert _residual_slots([[f3], [f3, f3b, i0]]) == ([f3, f3, i0], [[0], [0, 1, 2]])
    assert _residual_slots([[i0, f3], [f3, i0], []]) == ([i0, f3], [[0, 1], [1, 0], []])
    assert _residual_slots([[], []]) == ([], [[], []])
    # in a program: the known cond returns the primal and 3 residual slots (JAX's count):
    # exp(x) of one branch shares a slot with cos(x) of the other, not 1 + 3 slots
    def f(x, p):
        return lax.cond(p > 0, lambda x: jnp.sum(jnp.sin(x) * x),
                        lambda x: jnp.sum(jnp.exp(x)), x)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    jaxpr = ember.make_jaxpr(ember.grad(f))(x, np.float32(1)).jaxpr
    known = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
    assert len(known.outvars) == 1 + 3
    for p in (1.0, -1.0):  # the empty2-filled slots never reach a value
        want = np.sin(x) + x * np.cos(x) if p > 0 else np.exp(x)
        for g in (ember.grad(f), ember.jit(ember.grad(f))):
            np.testing.assert_allclose(g(x, np.float32(p)), want, rtol=1e-6)


def test_empty2_is_a_scalar_of_its_dtype():
    from ember.core.aval import ShapedArray
    from ember.prims.empty import MemorySpace, empty2_p, empty_like
    for dt in (np.float32, np.int32, np.bool_, np.complex64):
        v = empty2_p.bind(dtype=np.dtype(dt), memory_space=MemorySpace.Device)
        assert np.asarray(v).shape == () and np.asarray(v).dtype == dt
        aval = ShapedArray((2, 3), np.dtype(dt))
        out = ember.jit(lambda aval=aval: empty_like(aval))()
        assert out.shape == (2, 3) and out.dtype == dt
    assert repr(MemorySpace.Device) == "MemorySpace.Device"


def test_cond_untaken_branch_nan_does_not_poison_gradient(x64):
    # sqrt's derivative is inf/NaN at negative x; the branch is not taken there, so its
    # residuals and cotangents must never be computed (a select of both branches would
    # give 0 * NaN).
    def f(x):
        return lax.cond(x > 0, jnp.sqrt, lambda v: 0.0 * v, x)

    assert float(ember.grad(f)(-1.0)) == 0.0
    assert float(ember.jit(ember.grad(f))(-1.0)) == 0.0
    np.testing.assert_allclose(ember.grad(f)(4.0), 0.25)


def test_cond_pytrees_through_branches(x64):
    def f(params, x):
        def yes(p, v):
            return {"out": p["w"] * v + p["b"], "aux": (p["w"], v * v)}

        def no(p, v):
            return {"out": p["b"] - v, "aux": (jnp.ones_like(p["w"]), jnp.sin(v))}
        r = lax.cond(x[0] > 0, yes, no, params, x)
        return jnp.sum(r["out"] ** 2) + jnp.sum(r["aux"][0] * r["aux"][1])

    params = {"w": np.array([0.5, -1.0]), "b": np.array(0.3)}
    for x in (np.array([1.0, 2.0]), np.array([-1.0, 2.0])):
        g = ember.grad(f, argnums=(0, 1))(params, x)
        gj = ember.jit(ember.grad(f, argnums=(0, 1)))(params, x)
        eps = 1e-6
        for leaf_path in ("w", "b"):
            p = params[leaf_path]
            flat = np.atleast_1d(np.asarray(p, np.float64)).copy()
            for k in range(flat.size):
                up, dn = flat.copy(), flat.copy()
                up[k] += eps
                dn[k] -= eps
                fu = f({**params, leaf_path: up.reshape(np.shape(p))}, x)
                fd = f({**params, leaf_path: dn.reshape(np.shape(p))}, x)
                want = (float(fu) - float(fd)) / (2 * eps)
                got = np.atleast_1d(np.asarray(g[0][leaf_path]))[k]
                gotj = np.atleast_1d(np.asarray(gj[0][leaf_path]))[k]
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
                np.testing.assert_allclose(gotj, want, rtol=1e-6, atol=1e-8)


def test_cond_output_tangent_zero_in_one_branch(x64):
    # One branch ignores the operand: its tangent is a symbolic zero there, materialized
    # so both branches of the tangent cond agree.
    def f(x):
        return lax.cond(x > 0, lambda v: v * v, lambda v: jnp.zeros_like(v) + 2.0, x)

    assert ember.jvp(f, (3.0,), (1.0,))[1] == 6.0
    assert ember.jvp(f, (-3.0,), (1.0,))[1] == 0.0
    assert ember.grad(f)(-3.0) == 0.0


def test_grad_of_grad_through_cond(x64):
    def f(x):
        return lax.cond(x > 0, lambda v: v ** 3, lambda v: jnp.sin(v), x)

    np.testing.assert_allclose(ember.grad(ember.grad(f))(2.0), 12.0)
    np.testing.assert_allclose(ember.grad(ember.grad(f))(-2.0), -np.sin(-2.0))


# -- while_loop ---------------------------------------------------------------------------------

def _while_fn(x, y):
    def body(c):
        i, a, b = c
        return i + 1, a * jnp.cos(b), b + 0.1 * a

    return lax.while_loop(lambda c: c[0] < 4, body, (0, x, y))[1:]


@pytest.mark.parametrize("use_jit", [False, True])
def test_while_jvp_vs_finite_differences(use_jit, x64):
    rng = np.random.default_rng(1)
    check_jvp(_while_fn, [rng.standard_normal((3,)), rng.standard_normal((3,))], rng,
              use_jit=use_jit)


def test_while_tangent_becomes_nonzero_inside_loop(x64):
    # The carry `acc` starts as a constant (zero tangent) but the body mixes x into it.
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x * x),
                              (0, 0.0))[1]

    assert ember.jvp(f, (2.0,), (1.0,))[1] == 12.0
    assert ember.jit(lambda x: ember.jvp(f, (x,), (1.0,)))(2.0)[1] == 12.0


def test_while_predicate_on_primals_only(x64):
    # Newton iterations for sqrt(a): the loop stops on the primal residual; the tangent
    # follows the iterates.
    def f(a):
        return lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-12,
                              lambda x: 0.5 * (x + a / x), a)

    _, t = ember.jvp(f, (2.0,), (1.0,))
    np.testing.assert_allclose(t, 0.5 / np.sqrt(2.0), rtol=1e-6)


def test_while_reverse_mode_raises_jax_error(x64):
    msg = ("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
           "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
           "static start/stop.")
    with pytest.raises(ValueError) as e:
        ember.grad(lambda x: jnp.sum(_while_fn(x, x)[0]))(np.ones(3))
    assert str(e.value) == msg
    with pytest.raises(ValueError):
        ember.jit(ember.grad(lambda x: jnp.sum(_while_fn(x, x)[0])))(np.ones(3))

    def dyn_fori(x, n):
        return lax.fori_loop(0, n, lambda i, v: v * x, x)
    with pytest.raises(ValueError):
        ember.jit(ember.grad(dyn_fori))(1.5, 3)
    # Forward mode through a fori_loop with a traced bound (a while) works.
    t = ember.jit(lambda x, n: ember.jvp(lambda v: dyn_fori(v, n), (x,), (1.0,))[1])(1.5, 3)
    np.testing.assert_allclose(t, 4 * 1.5 ** 3)


# -- scan and fori_loop -------------------------------------------------------------------------

def _scan_fn(c0, xs, w):
    def body(c, x):
        c = jnp.tanh(c * w + x)
        return c, jnp.sin(c) * x

    return lax.scan(body, c0, xs)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("use_jit", [False, True])
def test_scan_jvp_vs_finite_differences(use_jit, reverse, x64):
    rng = np.random.default_rng(2)

    def f(c0, xs, w):
        return lax.scan(lambda c, x: (jnp.tanh(c * w + x), jnp.sin(c) * x), c0, xs,
                        reverse=reverse)
    check_jvp(f, [rng.standard_normal((2,)), rng.standard_normal((5, 2)),
                  rng.standard_normal((2,))], rng, use_jit=use_jit)


def test_scan_tangent_only_through_consts(x64):
    # Only the closed-over w has a tangent: it reaches the carry at the first step.
    xs = np.arange(4.0)
    out, t = ember.jvp(lambda w: _scan_fn(np.zeros(()), xs, w), (0.5,), (1.0,))
    eps = 1e-6
    up, dn = _scan_fn(np.zeros(()), xs, 0.5 + eps), _scan_fn(np.zeros(()), xs, 0.5 - eps)
    np.testing.assert_allclose(t[0], (up[0] - dn[0]) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(t[1], (up[1] - dn[1]) / (2 * eps), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("use_jit", [False, True])
def test_fori_loop_static_bounds_forward(use_jit, x64):
    def f(x):
        return lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * x + i, x)
    rng = np.random.default_rng(3)
    check_jvp(f, [rng.standard_normal((3,))], rng, use_jit=use_jit)


def test_scan_and_static_fori_reverse_mode(x64):
    # Reverse mode through scan (tests/ops/test_scan_reverse_ad.py has the rest).
    g = ember.grad(lambda w: jnp.sum(_scan_fn(np.zeros(()), np.arange(3.0), w)[1]))(0.5)
    eps = 1e-6
    up = np.sum(_scan_fn(np.zeros(()), np.arange(3.0), 0.5 + eps)[1])
    dn = np.sum(_scan_fn(np.zeros(()), np.arange(3.0), 0.5 - eps)[1])
    np.testing.assert_allclose(g, (up - dn) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(
        ember.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, x))(1.5), 4 * 1.5 ** 3)


def test_linearize_through_loops_works_only_while_transpose_fails(x64):
    # As in JAX: linearize stages the while's JVP loop (primals recomputed) and its jvp is
    # right; vjp fails when it transposes that loop. A static fori_loop is a scan: both work.
    def w(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]

    def s(x):
        return lax.fori_loop(0, 3, lambda i, v: v * x, x)

    for f in (w, s):
        out, f_lin = ember.linearize(f, 1.5)
        np.testing.assert_allclose(out, 1.5 ** 4)
        np.testing.assert_allclose(f_lin(1.0), 4 * 1.5 ** 3)
        np.testing.assert_allclose(ember.jit(lambda x, f=f: ember.linearize(f, x)[1](1.0))(1.5),
                                   4 * 1.5 ** 3)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        ember.vjp(w, 1.5)[1](1.0)
    np.testing.assert_allclose(ember.vjp(s, 1.5)[1](1.0)[0], 4 * 1.5 ** 3)


def test_nested_forward_mode_through_loops(x64):
    def w(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]

    def s(x):
        return lax.fori_loop(0, 3, lambda i, v: v * x, x)

    for f in (w, s):
        d2 = ember.jvp(lambda x, f=f: ember.jvp(f, (x,), (1.0,))[1], (1.5,), (1.0,))[1]
        np.testing.assert_allclose(d2, 12 * 1.5 ** 2)
        np.testing.assert_allclose(ember.jacfwd(ember.jacfwd(f))(1.5), 12 * 1.5 ** 2)


def test_hessian_through_cond(x64):
    def f(x):
        return lax.cond(jnp.sum(x) > 0, lambda v: jnp.sum(v ** 3), lambda v: jnp.sum(v * v), x)

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(ember.hessian(f)(x), np.diag(6 * x))
    np.testing.assert_allclose(ember.hessian(f)(-x), 2 * np.eye(2))
    np.testing.assert_allclose(ember.jacfwd(ember.jacrev(f))(x), np.diag(6 * x))


def test_jacobians_nest(x64):
    # the inner jacobian's basis goes through vmap (as in JAX): jacfwd of jacrev pushes
    # tangents through a batched program, reverse over a jacobian (jacrev of jacfwd/jacrev,
    # grad of jacfwd) transposes one; no loop in either.
    def f(x):
        return jnp.sum(jnp.sin(x) * x[::-1])

    x = np.array([0.3, -0.7, 1.1])
    want = ember.jacfwd(ember.jacfwd(f))(x)
    assert "scan" not in str(ember.make_jaxpr(ember.jacfwd(ember.jacrev(f)))(x))
    for h in (ember.jacfwd(ember.jacrev(f)), ember.jacrev(ember.jacfwd(f)),
              ember.jacrev(ember.jacrev(f)), ember.jit(ember.hessian(f))):
        np.testing.assert_allclose(h(x), want, rtol=1e-12, atol=1e-12)
    g = ember.grad(lambda v: jnp.sum(ember.jacfwd(f)(v) ** 2))(x)
    eps = 1e-6
    num = [(np.sum(np.asarray(ember.jacfwd(f)(x + eps * e)) ** 2)
            - np.sum(np.asarray(ember.jacfwd(f)(x - eps * e)) ** 2)) / (2 * eps)
           for e in np.eye(3)]
    np.testing.assert_allclose(g, num, rtol=1e-6)
