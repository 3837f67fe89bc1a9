"""jacfwd, jacrev, jacobian and hessian (ember/jac_api.py): against analytic Jacobians,
JAX's output structure (outputs outside, inputs inside, leaves out.shape + in.shape),
argnums, has_aux, allow_int, jit in both orders, and JAX's error texts.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember
import ember.numpy as jnp

RNG = np.random.default_rng(0)
X = RNG.standard_normal(4)
A = RNG.standard_normal((3, 4))
Q = RNG.standard_normal((4, 4))

JACS = [ember.jacfwd, ember.jacrev, ember.jacobian]


@pytest.mark.parametrize("jac", JACS)
@pytest.mark.parametrize("wrap", [lambda f: f, ember.jit])
def test_elementwise_and_matmul_match_the_analytic_jacobian(x64, jac, wrap):
    np.testing.assert_allclose(wrap(jac(jnp.sin))(X), np.diag(np.cos(X)), rtol=1e-12)
    np.testing.assert_allclose(wrap(jac(lambda x: A @ x))(X), A, rtol=1e-12)
    # a matrix input: d(x @ B)/dx has shape out.shape + in.shape
    m = RNG.standard_normal((2, 3))
    b = RNG.standard_normal((3, 5))
    j = wrap(jac(lambda x: jnp.tanh(x @ b)))(m)
    # d y[i, j] / d x[k, l] = delta(i, k) b[l, j] (1 - y[i, j]^2)
    sech2 = 1 - np.tanh(m @ b) ** 2
    expect = np.einsum("ik,lj->ijkl", np.eye(2), b) * sech2[:, :, None, None]
    assert j.shape == (2, 5, 2, 3)
    np.testing.assert_allclose(j, expect, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("jac", JACS)
def test_pytree_in_and_out_and_argnums(x64, jac):
    def f(d, s):
        return {"a": d["x"] * d["y"] * s, "b": (jnp.sum(d["x"] ** 2),)}

    d = {"x": X, "y": np.array(2.0)}
    j = jac(f)(d, 3.0)
    assert set(j) == {"a", "b"} and set(j["a"]) == {"x", "y"}
    np.testing.assert_allclose(j["a"]["x"], 6.0 * np.eye(4), rtol=1e-12)
    np.testing.assert_allclose(j["a"]["y"], 3.0 * X, rtol=1e-12)
    assert j["a"]["y"].shape == (4,)
    np.testing.assert_allclose(j["b"][0]["x"], 2 * X, rtol=1e-12)
    np.testing.assert_allclose(j["b"][0]["y"], 0.0)
    # a tuple argnums: the inner structure is a tuple of the arguments' trees
    jd, js = jac(f, argnums=(0, 1))(d, 3.0)["a"]
    np.testing.assert_allclose(jd["y"], 3.0 * X, rtol=1e-12)
    np.testing.assert_allclose(js, 2.0 * X, rtol=1e-12)
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        jac(f, argnums=2)(d, 3.0)


@pytest.mark.parametrize("jac", JACS)
def test_has_aux(x64, jac):
    j, aux = jac(lambda x: (jnp.sin(x), {"n": jnp.sum(x)}), has_aux=True)(X)
    np.testing.assert_allclose(j, np.diag(np.cos(X)), rtol=1e-12)
    np.testing.assert_allclose(aux["n"], X.sum(), rtol=1e-12)


@pytest.mark.parametrize("wrap", [lambda f: f, ember.jit])
def test_hessian_of_a_quadratic_form(x64, wrap):
    h = wrap(ember.hessian(lambda x: x @ Q @ x))(X)
    np.testing.assert_allclose(h, Q + Q.T, rtol=1e-12)
    # a nonlinear one, and jacfwd(jacrev) == jacrev(jacfwd) == jacfwd(jacfwd)
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 2)  # noqa: E731
    expect = np.diag(-np.sin(X) * X ** 2 + 4 * X * np.cos(X) + 2 * np.sin(X))
    for h in (ember.hessian(f), ember.jacrev(ember.jacfwd(f)), ember.jacfwd(ember.jacfwd(f))):
        np.testing.assert_allclose(wrap(h)(X), expect, rtol=1e-10, atol=1e-12)


def test_jit_inside_and_grad_of_a_jacobian(x64):
    f = ember.jit(lambda x: jnp.sin(x) * x)
    np.testing.assert_allclose(ember.jacrev(f)(X), np.diag(np.cos(X) * X + np.sin(X)),
                               rtol=1e-12)
    # grad of the trace of a Jacobian: d/dx sum(cos(x)) = -sin(x)
    g = ember.grad(lambda x: jnp.trace(ember.jacfwd(jnp.sin)(x)))(X)
    np.testing.assert_allclose(g, -np.sin(X), rtol=1e-12)


def test_jacobians_are_batched_programs_without_loops():
    """jacfwd/jacrev push the basis through vmap (as JAX): no scan or while in the jaxpr."""
    for jac in (ember.jacfwd, ember.jacrev, ember.hessian):
        text = str(ember.make_jaxpr(jac(lambda v: jnp.sin(v) * jnp.sum(v)))(
            np.ones(5, np.float32)))
        assert "scan[" not in text and "while[" not in text, text


def test_integer_inputs_and_outputs(x64):
    with pytest.raises(TypeError, match=re.escape(
            "jacrev requires real-valued inputs (input dtype that is a sub-dtype of "
            "np.inexact), but got int32. If you want to use Boolean- or integer-valued "
            "inputs, use vjp or set allow_int to True.")):
        ember.jacrev(lambda n: n * 2.0)(np.arange(3, dtype=np.int32))
    jx, jn = ember.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(
        X, np.arange(4, dtype=np.int32))
    np.testing.assert_allclose(jx, np.diag(np.arange(4.0)))
    assert jn.dtype == ember.float0 and jn.shape == (4, 4)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs .* but got int32"):
        ember.jacfwd(lambda n: n * 2.0)(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs .* but got int"):
        ember.jacrev(lambda x: jnp.floor(x).astype(np.int32))(X)
    j = ember.jacfwd(lambda x: (x * 2, jnp.floor(x).astype(np.int32)))(X)
    assert j[1].dtype == ember.float0 and j[1].shape == (4, 4)


@pytest.mark.parametrize("fn, d", [(ember.jacfwd, np.cos), (ember.jacrev, np.cos),
                                   (ember.hessian, lambda z: -np.sin(z))])
def test_holomorphic_derivatives_need_complex_values(fn, d):
    z = np.array([0.5 + 1j, -1 - 0.25j], np.complex64)
    got = fn(lambda z: jnp.sin(z), holomorphic=True)(z)
    want = np.diag(d(z)) if fn is not ember.hessian else np.zeros((2, 2, 2), z.dtype)
    if fn is ember.hessian:
        want[[0, 1], [0, 1], [0, 1]] = d(z)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    name = "jacrev" if fn is ember.jacrev else "jacfwd"  # (hessian is jacfwd of jacrev)
    with pytest.raises(TypeError, match=f"{name} with holomorphic=True requires inputs"):
        fn(jnp.sin, holomorphic=True)(np.ones(2, np.float32))


def test_zero_size_input(x64):
    j = ember.jacfwd(lambda x: jnp.sum(x) + 1.0)(np.zeros(0))
    assert j.shape == (0,)
    j = ember.jacrev(lambda x: x * 2.0)(np.zeros(0))
    assert j.shape == (0, 0)


@pytest.mark.parametrize("wrap", [lambda f: f, ember.jit])
def test_linear_transpose(x64, wrap):
    def f(x, y):
        return {"a": A @ x, "b": 2.0 * y}

    t = ember.linear_transpose(f, X, ember.ShapeDtypeStruct((2,), np.float64))
    ca, cb = RNG.standard_normal(3), RNG.standard_normal(2)
    cx, cy = wrap(t)({"a": ca, "b": cb})
    np.testing.assert_allclose(cx, A.T @ ca, rtol=1e-12)
    np.testing.assert_allclose(cy, 2.0 * cb, rtol=1e-12)
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        ember.linear_transpose(lambda n: n, np.arange(3))


@pytest.mark.parametrize("jac", [ember.jacfwd, ember.jacrev])
def test_mixed_dtypes_keep_jaxs_block_dtypes(x64, jac):
    # The basis is built in the inputs' common dtype and converted per leaf; a block takes
    # the output's dtype (jacfwd) or the input's (jacrev), as JAX's do.
    a = np.array([0.5, 1.5], np.float32)
    b = np.array([2.0, 3.0, 4.0])

    def f(a, b):
        return jnp.sin(a) * 2, jnp.sum(b) * a.astype(np.float64)[0]

    (daa, dab), (dba, dbb) = jac(f, (0, 1))(a, b)
    np.testing.assert_allclose(daa, np.diag(2 * np.cos(a)), rtol=1e-6)
    np.testing.assert_array_equal(dab, np.zeros((2, 3)))
    np.testing.assert_allclose(dba, [9.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(dbb, [0.5, 0.5, 0.5], rtol=1e-12)
    fwd = jac is ember.jacfwd
    assert daa.dtype == np.float32 and dbb.dtype == np.float64
    assert dab.dtype == (np.float32 if fwd else np.float64)
    assert dba.dtype == (np.float64 if fwd else np.float32)


def test_the_basis_is_staged_with_the_default_int_indices(x64):
    text = str(ember.make_jaxpr(ember.jacfwd(lambda s: s * s))(3.0))
    assert "iota[dimension=0 dtype=int64 shape=(1, 1)" in text
    assert "convert_element_type[new_dtype=float64 weak_type=True]" in text  # a weak input
    assert float(ember.jacfwd(lambda s: s * s)(3.0)) == 6.0
    assert float(ember.jit(ember.jacrev(lambda s: s * s))(3.0)) == 6.0
