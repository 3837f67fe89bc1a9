"""A nested jit under jvp, linearize, vjp and grad stays one call while staged
(core/call_ad.py), and computes what inlining it (the eager path) and NumPy compute.

Input: small programs with nested `ember.jit` calls and jnp functions wrapped in jit.
Output: their staged texts' call structure, and values (staged == eager == NumPy, with
NaN, -0.0 and an odd size among the inputs).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.prims.call import jit_p

X = np.array([3.0, 1.0, np.nan, 1.5, -0.0, 0.0, -2.0], np.float32)


def _calls(jaxpr: object) -> list:
    """The jit equations of a (closed) jaxpr's top level."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    return [e for e in inner.eqns if e.primitive is jit_p]


def _where_loss(x: object) -> object:
    return jnp.sum(jnp.where(x > 1, x * x, jnp.exp(x)))


def _where_grad_numpy(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(x > 1, 2 * x, np.exp(x)).astype(np.float32)


def test_grad_of_where_keeps_the_forward_and_the_transposed_call() -> None:
    closed = ember.make_jaxpr(ember.grad(_where_loss))(X)
    calls = _calls(closed)
    assert [c.params["name"] for c in calls] == ["_where", "_where"]
    forward, backward = calls
    assert len(forward.outvars) == 1 and len(backward.outvars) == 2
    assert [e.primitive.name for e in backward.params["jaxpr"].eqns] == [
        "broadcast_in_dim", "select_n", "select_n"]


def test_grad_of_where_values_staged_eager_and_numpy() -> None:
    want = _where_grad_numpy(X)
    eager = np.asarray(ember.grad(_where_loss)(X))
    staged = np.asarray(ember.jit(ember.grad(_where_loss))(X))
    np.testing.assert_allclose(eager, want, rtol=1e-6)   # (NaN where x is NaN)
    np.testing.assert_allclose(staged, want, rtol=1e-6)


def test_vjp_jvp_and_linearize_of_where_agree_with_numpy() -> None:
    def f(x: object) -> object:
        return jnp.where(x > 1, x * x, jnp.exp(x))

    t = np.linspace(-1, 1, X.size).astype(np.float32)
    d = _where_grad_numpy(X)
    with np.errstate(invalid="ignore"):
        primal = np.where(X > 1, X * X, np.exp(X)).astype(np.float32)

    def all_modes(x: object, t: object) -> tuple:
        p, jt = ember.jvp(f, (x,), (t,))
        lin = ember.linearize(f, x)[1](t)
        ct = ember.vjp(f, x)[1](t)[0]
        return p, jt, lin, ct

    for fn in (all_modes, ember.jit(all_modes)):
        p, jt, lin, ct = (np.asarray(v) for v in fn(X, t))
        np.testing.assert_allclose(p, primal, rtol=1e-6)
        np.testing.assert_allclose(jt, d * t, rtol=1e-6)
        np.testing.assert_allclose(lin, d * t, rtol=1e-6)
        np.testing.assert_allclose(ct, d * t, rtol=1e-6)


def test_jvp_of_a_jit_is_one_call_of_its_jvp() -> None:
    g = ember.jit(lambda x, y: (jnp.sin(x) * y, x + 1.0))
    closed = ember.make_jaxpr(lambda x, t: ember.jvp(lambda x: g(x, 2.0), (x,), (t,)))(
        X[:3], X[:3])
    (call,) = _calls(closed)
    # primals (x, 2.0) and x's tangent in; two primal outputs and two tangents out
    assert len(call.invars) == 3 and len(call.outvars) == 4
    x = np.array([0.5, -1.0, 2.0], np.float32)
    p, t = ember.jit(lambda x, t: ember.jvp(lambda x: g(x, 2.0), (x,), (t,)))(x, x)
    np.testing.assert_allclose(np.asarray(t[0]), np.cos(x) * 2.0 * x, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(t[1]), x)
    np.testing.assert_allclose(np.asarray(p[0]), np.sin(x) * 2.0, rtol=1e-6)


def test_linearize_forwards_inputs_and_outputs_instead_of_returning_them() -> None:
    # The call returns its input x as is and x * y: the known call returns x * y only (x
    # is forwarded), and its residuals x and y are the call's own inputs, not outputs.
    g = ember.jit(lambda x, y: (x, x * y))

    def loss(x: object, y: object) -> object:
        a, b = g(x, y)
        return jnp.sum(a * b)

    closed = ember.make_jaxpr(ember.grad(loss, argnums=(0, 1)))(X[:3], X[3:6])
    known = _calls(closed)[0]
    assert len(known.outvars) == 1
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y = np.array([3.0, 0.25, -0.0], np.float32)
    for fn in (ember.grad(loss, argnums=(0, 1)), ember.jit(ember.grad(loss, argnums=(0, 1)))):
        gx, gy = (np.asarray(v) for v in fn(x, y))
        np.testing.assert_allclose(gx, 2 * x * y, rtol=1e-6)
        np.testing.assert_allclose(gy, x * x, rtol=1e-6)


def test_nested_calls_and_integer_outputs_under_grad() -> None:
    inner = ember.jit(lambda x: (jnp.tanh(x), jnp.argmax(x)))
    outer = ember.jit(lambda x: inner(x * 2.0))

    def loss(x: object) -> object:
        t, i = outer(x)
        return jnp.sum(t) + i.astype(jnp.float32)

    x = np.array([0.1, -0.4, 0.3, 0.0, 0.2], np.float32)
    want = 2.0 * (1 - np.tanh(2 * x) ** 2)
    text = str(ember.make_jaxpr(ember.grad(loss))(x))
    assert text.count("jit[") >= 4   # forward and transposed, each with the inner call
    for fn in (ember.grad(loss), ember.jit(ember.grad(loss))):
        np.testing.assert_allclose(np.asarray(fn(x)), want, rtol=1e-5)


def test_grad_of_grad_through_a_jit() -> None:
    f = ember.jit(lambda x: jnp.where(x > 1, x * x * x, jnp.sin(x)))
    gg = ember.grad(ember.grad(f))
    for x in (np.float32(1.5), np.float32(0.3), np.float32(-0.0)):
        want = 6 * x if x > 1 else -np.sin(x)
        np.testing.assert_allclose(np.asarray(gg(x)), want, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(ember.jit(gg)(x)), want, rtol=1e-6)


def test_an_input_no_cotangent_reaches_gets_zero() -> None:
    # y reaches only the integer output: its cotangent is zero, staged or not
    g = ember.jit(lambda x, y: (x * 3.0, jnp.floor(y).astype(jnp.int32)))

    def loss(x: object, y: object) -> object:
        return jnp.sum(g(x, y)[0])

    x = np.array([1.0, 2.0, 3.0], np.float32)
    for fn in (ember.grad(loss, argnums=(0, 1)), ember.jit(ember.grad(loss, argnums=(0, 1)))):
        gx, gy = fn(x, x)
        np.testing.assert_array_equal(np.asarray(gx), [3.0, 3.0, 3.0])
        np.testing.assert_array_equal(np.asarray(gy), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("fun,tie", [(lambda x: jnp.clip(x, -0.5, 1.0), 0),
                                     (lambda x: jnp.maximum(x, 0.0), 2)],
                         ids=["clip", "maximum"])
def test_max_min_tie_factor_staged_equals_eager(fun: object, tie: int) -> None:
    # ties (x == bound) take half the tangent in both forms of the tie factor
    x = np.array([-0.5, 1.0, 0.0, 2.0, -3.0, np.nan, -0.0], np.float32)

    def loss(x: object) -> object:
        return jnp.sum(fun(x) * 3.0)

    eager = np.asarray(ember.grad(loss)(x))
    staged = np.asarray(ember.jit(ember.grad(loss))(x))
    np.testing.assert_array_equal(staged, eager)
    assert eager[tie] == 1.5


def test_transposed_call_gets_only_the_residuals_its_used_outputs_need() -> None:
    # Only exp(a) is used: the transposed call reads exp(a)'s residual and the cotangent,
    # not a and b (the residuals of a * b's tangent), and gives a's cotangent alone.
    g = ember.jit(lambda a, b: (a * b, jnp.exp(a), b))

    def loss(x: object) -> object:
        return jnp.sum(g(x, x * 3.0)[1])

    x = np.array([0.5, -1.0, 2.0], np.float32)
    closed = ember.make_jaxpr(ember.grad(loss))(x)
    backward = _calls(closed)[-1]
    assert len(backward.invars) == 2 and len(backward.outvars) == 1
    for fn in (ember.grad(loss), ember.jit(ember.grad(loss))):
        np.testing.assert_allclose(np.asarray(fn(x)), np.exp(x), rtol=1e-6)
