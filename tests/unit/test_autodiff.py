"""The autodiff API (ember/ad_api.py): JAX's signatures, pytrees, composition with jit and
with itself, JAX's error texts, and a small MLP whose jitted gradient matches NumPy's.

Per-primitive rules are checked in tests/ops/test_jvp_rules.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


def f_scalar(x):
    return jnp.sum(jnp.sin(x) * x ** 2)


def df_scalar(x):
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


X = np.linspace(-1.0, 1.5, 5)


def test_grad_matches_the_analytic_gradient(x64):
    np.testing.assert_allclose(ember.grad(f_scalar)(X), df_scalar(X), rtol=1e-12)


def test_jit_of_grad_equals_grad_of_jit_equals_grad(x64):
    want = ember.grad(f_scalar)(X)
    np.testing.assert_allclose(ember.jit(ember.grad(f_scalar))(X), want, rtol=1e-12)
    np.testing.assert_allclose(ember.grad(ember.jit(f_scalar))(X), want, rtol=1e-12)
    np.testing.assert_allclose(ember.jit(ember.grad(ember.jit(f_scalar)))(X), want, rtol=1e-12)


def test_grad_of_grad(x64):
    def f(x):
        return jnp.sin(x) * x ** 3

    d2 = ember.grad(ember.grad(f))
    d3 = ember.jit(ember.grad(ember.grad(ember.grad(f))))
    x = 0.7
    np.testing.assert_allclose(d2(x), -np.sin(x) * x ** 3 + 6 * x ** 2 * np.cos(x)
                               + 6 * x * np.sin(x), rtol=1e-12)
    want3 = (-np.cos(x) * x ** 3 - 3 * x ** 2 * np.sin(x) + 12 * x * np.cos(x)
             - 6 * x ** 2 * np.sin(x) + 6 * np.sin(x) + 6 * x * np.cos(x))
    np.testing.assert_allclose(d3(x), want3, rtol=1e-12)


def test_grad_through_a_closure_over_an_outer_tracer(x64):
    # d/dy [d/dx (x * y)^2] at (x, y) = d/dy [2 x y^2] = 4 x y
    def outer(y):
        return ember.grad(lambda x: (x * y) ** 2)(3.0)

    np.testing.assert_allclose(ember.grad(outer)(2.0), 24.0)
    np.testing.assert_allclose(ember.jit(ember.grad(outer))(2.0), 24.0)


def test_value_and_grad_with_argnums_and_aux(x64):
    def loss(w, b, x):
        y = jnp.tanh(x @ w + b)
        return jnp.sum(y ** 2), {"y": y}

    rng = np.random.default_rng(0)
    w, b, x = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((4, 3))
    (value, aux), (gw, gb) = ember.value_and_grad(loss, argnums=(0, 1), has_aux=True)(w, b, x)
    y = np.tanh(x @ w + b)
    np.testing.assert_allclose(value, np.sum(y ** 2), rtol=1e-12)
    np.testing.assert_allclose(aux["y"], y, rtol=1e-12)
    dz = 2 * y * (1 - y ** 2)
    np.testing.assert_allclose(gw, x.T @ dz, rtol=1e-12)
    np.testing.assert_allclose(gb, dz.sum(0), rtol=1e-12)
    g, aux2 = ember.grad(loss, argnums=1, has_aux=True)(w, b, x)
    np.testing.assert_allclose(g, gb, rtol=1e-12)
    assert set(aux2) == {"y"}
    gx = ember.grad(loss, argnums=(2,), has_aux=True)(w, b, x)[0]
    assert isinstance(gx, tuple) and gx[0].shape == (4, 3)


def test_pytrees_in_and_out(x64):
    params = {"a": np.array([1.0, 2.0]), "b": (np.array(3.0), [np.array([[0.5]])])}

    def f(p):
        return jnp.sum(p["a"] ** 2) * p["b"][0] + jnp.sum(p["b"][1][0])

    g = ember.grad(f)(params)
    assert ember.tree_util.tree_structure(g) == ember.tree_util.tree_structure(params)
    np.testing.assert_allclose(g["a"], 2 * params["a"] * 3.0)
    np.testing.assert_allclose(g["b"][0], 5.0)
    np.testing.assert_allclose(g["b"][1][0], [[1.0]])
    out, f_vjp = ember.vjp(lambda p: {"s": f(p), "a": p["a"] * 2}, params)
    (ct,) = f_vjp({"s": np.array(1.0), "a": np.array([1.0, 1.0])})
    np.testing.assert_allclose(ct["a"], 2 * params["a"] * 3.0 + 2)


def test_jvp_and_linearize(x64):
    def f(x, y):
        return jnp.sin(x) * y, x + y

    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    tx, ty = np.array([1.0, 0.5]), np.array([0.0, 2.0])
    (p1, p2), (t1, t2) = ember.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(p1, np.sin(x) * y)
    np.testing.assert_allclose(t1, np.cos(x) * tx * y + np.sin(x) * ty)
    np.testing.assert_allclose(t2, tx + ty)
    out, f_jvp = ember.linearize(f, x, y)
    np.testing.assert_allclose(out[0], p1)
    l1, l2 = f_jvp(tx, ty)
    np.testing.assert_allclose(l1, t1, rtol=1e-14)
    np.testing.assert_allclose(l2, t2, rtol=1e-14)
    # has_aux: aux is returned with the primal outputs, undifferentiated
    _, _, aux = ember.jvp(lambda a: (a * 2, a ** 2), (x,), (tx,), has_aux=True)
    np.testing.assert_allclose(aux, x ** 2)


def test_vjp_with_aux_and_unused_inputs(x64):
    def f(x, y, n):
        return x * 3.0, n

    out, f_vjp, aux = ember.vjp(f, np.array([1.0, 2.0]), np.array(5.0), np.int32(4),
                                has_aux=True)
    assert int(aux) == 4
    cx, cy, cn = f_vjp(np.array([1.0, -1.0]))
    np.testing.assert_allclose(cx, [3.0, -3.0])
    np.testing.assert_array_equal(cy, 0.0)  # not used: a zero cotangent
    assert np.shape(cn) == ()


def test_jvp_of_integer_inputs_takes_float0_tangents(x64):
    out, t = ember.jvp(lambda n, x: x * n, (np.int32(3), np.array([1.0, 2.0])),
                       (np.zeros((), ember.float0), np.array([1.0, 1.0])))
    np.testing.assert_allclose(t, [3.0, 3.0])
    # an integer output's tangent is float0 zeros of its shape
    _, (_, tn) = ember.jvp(lambda n, x: (x * n, n * 2), (np.arange(4), np.array(1.0)),
                           (np.zeros(4, ember.float0), np.array(1.0)))
    assert tn.dtype == ember.float0 and tn.shape == (4,)
    # JAX's rule: an integer primal's tangent must be float0
    with pytest.raises(TypeError, match=re.escape(
            "Got primal dtype int32 and so expected tangent dtype float0, but got tangent "
            "dtype int32 instead.")):
        ember.jvp(lambda n: n * 2, (np.int32(3),), (np.int32(1),))


def test_allow_int_gives_float0_gradients(x64):
    assert ember.float0 == np.dtype([("float0", np.void, 0)])
    gx, gn = ember.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, np.int32(3))
    np.testing.assert_allclose(gx, 3.0)
    assert gn.dtype == ember.float0 and gn.shape == ()
    g = ember.grad(lambda n, x: jnp.sum(x), allow_int=True)(np.arange(6).reshape(2, 3), 1.0)
    assert g.dtype == ember.float0 and g.shape == (2, 3)
    (v, aux), g = ember.value_and_grad(lambda b: (jnp.where(b, 1.0, 2.0).sum(), 7),
                                       has_aux=True, allow_int=True)(np.array([True, False]))
    assert float(v) == 3.0 and aux == 7 and g.dtype == ember.float0 and g.shape == (2,)
    # vjp gives float0 cotangents for integer inputs and takes them for integer outputs
    _, f_vjp = ember.vjp(lambda x, n: (x * n, n), np.array([1.0, 2.0]), np.arange(2))
    cx, cn = f_vjp((np.ones(2), np.zeros(2, ember.float0)))
    np.testing.assert_allclose(cx, [0.0, 1.0])
    assert cn.dtype == ember.float0 and cn.shape == (2,)
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs"):
        ember.grad(jnp.sin, holomorphic=True)(1.0)


def test_jit_returns_float0_gradients(x64):
    """A jitted gradient with respect to an integer input returns float0 zeros, as JAX's
    jit does: in the output tree, not through the compiled program (cached calls too)."""
    g = ember.jit(ember.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1), allow_int=True))
    for _ in range(3):
        gx, gn = g(np.array([1.0, 2.0]), np.arange(2, 4))
        np.testing.assert_allclose(gx, [2.0, 3.0])
        assert gn.dtype == ember.float0 and gn.shape == (2,)
    assert g.trace_count == 1


def test_stop_gradient_blocks_the_gradient(x64):
    g = ember.grad(lambda x: jnp.sum(x * lax.stop_gradient(x)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [1.0, 2.0])
    g = ember.grad(lambda x: ember.stop_gradient(x) * x)(3.0)
    np.testing.assert_allclose(g, 3.0)


def test_zero_gradients_are_arrays_with_the_inputs_weak_type():
    # a gradient that does not depend on x is a symbolic zero, materialized as an Array
    # (not a NumPy array), weak when x is a Python scalar, as JAX's
    g = ember.grad(lambda x: 3.0)(1.0)
    assert isinstance(g, ember.Array) and g.weak_type and float(g) == 0.0
    _, g = ember.value_and_grad(lambda x, y: y * 2.0)(np.float32(1.0), 2.0)
    assert isinstance(g, ember.Array) and not g.weak_type and g.dtype == np.float32
    gs = ember.grad(lambda x, y: y * 2.0, argnums=(0, 1))(1.0, 2.0)
    assert all(isinstance(a, ember.Array) for a in gs)
    assert [float(a) for a in gs] == [0.0, 2.0]


def test_make_jaxpr_of_grad_is_readable():
    text = str(ember.make_jaxpr(ember.grad(lambda x: jnp.sum(jnp.sin(x) * x)))(
        np.ones(3, np.float32)))
    for name in ("sin", "cos", "mul", "reduce_sum", "broadcast_in_dim"):
        assert re.search(rf"\b{name}\b", text), text
    assert "f32[3]" in text


def test_grad_works_with_jnp_functions_that_stage_jit_calls(x64):
    # jnp.where and friends are jit-wrapped like JAX's: their call is inlined under AD.
    def f(x):
        return jnp.sum(jnp.where(x > 0, x ** 2, -x))

    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(ember.grad(f)(x), [-1.0, 1.0, 4.0])
    np.testing.assert_allclose(ember.jit(ember.grad(f))(x), [-1.0, 1.0, 4.0])


# -- errors ----------------------------------------------------------------------------------

def test_grad_of_a_non_scalar_output():
    with pytest.raises(TypeError, match=re.escape(
            "Gradient only defined for scalar-output functions. Output had shape: (3,).")):
        ember.grad(lambda x: x * 2)(np.ones(3, np.float32))


def test_grad_of_an_integer_input():
    with pytest.raises(TypeError, match=re.escape(
            "grad requires real-valued inputs (input dtype that is a sub-dtype of np.inexact), "
            "but got int32. If you want to use Boolean- or integer-valued inputs, use vjp or "
            "set allow_int to True.")):
        ember.grad(lambda x: x * 2)(np.int32(3))


def test_grad_of_an_integer_output():
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        ember.grad(lambda x: lax.convert_element_type(x, np.int32))(1.0)


def test_argnums_out_of_range():
    with pytest.raises(TypeError, match=re.escape(
            "differentiating with respect to argnums=(0, 3) requires at least 4 positional "
            "arguments to be passed by the caller, but got only 2 positional arguments.")):
        ember.grad(lambda x, y: x * y, argnums=(0, 3))(1.0, 2.0)


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="expected function with aux output to return a "
                                        "two-element tuple"):
        ember.grad(lambda x: x * 2, has_aux=True)(1.0)


def test_jvp_primal_and_tangent_must_match():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=re.escape(
            "jvp called with different primal and tangent shapes;Got primal shape (3,) and "
            "tangent shape as (4,)")):
        ember.jvp(jnp.sin, (x,), (np.ones(4, np.float32),))
    with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp do not match; "
                                        "dtypes must be equal"):
        ember.jvp(jnp.sin, (x,), (np.ones(3, np.int32),))
    with pytest.raises(TypeError, match="must be a tuple or a list"):
        ember.jvp(jnp.sin, x, x)
    with pytest.raises(TypeError, match="same tree structure"):
        ember.jvp(lambda a, b: a, (x, x), ((x, x), x))


def test_a_primitive_without_a_rule_says_so(monkeypatch):
    # cumsum has a rule now: take it away for this test, so the check outlives the gaps.
    from ember.prims.cumulative import cumsum_p
    monkeypatch.setattr(cumsum_p, "jvp_rule", None)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'cumsum' not "
                                                  "implemented"):
        ember.grad(lambda x: jnp.sum(lax.cumsum(x)))(np.ones(3, np.float32))


# -- a small MLP against a hand-written NumPy gradient ------------------------------------------

def _mlp_loss(params, x, labels):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = lax.stop_gradient(jnp.max(logits, axis=1, keepdims=True))
    lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
    logp = logits - lse
    return -jnp.mean(jnp.sum(logp * labels, axis=1))


def _mlp_numpy(params, x, labels):
    (w1, b1), (w2, b2) = params
    z1 = x @ w1 + b1
    h = np.tanh(z1)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    n = x.shape[0]
    loss = -np.mean(np.sum(np.log(p) * labels, axis=1))
    dlogits = (p - labels) / n
    dw2, db2 = h.T @ dlogits, dlogits.sum(0)
    dz1 = (dlogits @ w2.T) * (1 - h ** 2)
    dw1, db1 = x.T @ dz1, dz1.sum(0)
    return loss, ((dw1, db1), (dw2, db2))


def test_mlp_gradient_matches_numpy(x64):
    rng = np.random.default_rng(0)
    params = ((rng.standard_normal((8, 16)) * 0.5, rng.standard_normal(16) * 0.1),
              (rng.standard_normal((16, 5)) * 0.5, rng.standard_normal(5) * 0.1))
    x = rng.standard_normal((32, 8))
    labels = np.eye(5)[rng.integers(0, 5, 32)]
    want_loss, want = _mlp_numpy(params, x, labels)
    loss, got = ember.jit(ember.value_and_grad(_mlp_loss))(params, x, labels)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    for g, w in zip(ember.tree_util.tree_leaves(got), ember.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-12)
    # eagerly, too
    got_eager = ember.grad(_mlp_loss)(params, x, labels)
    for g, w in zip(ember.tree_util.tree_leaves(got_eager), ember.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-12)
