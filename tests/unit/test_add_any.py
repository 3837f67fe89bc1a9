"""add_any, autodiff's sum of tangents (prims/add_any.py): its rules, and where it is bound.

Input: add_any_p bound directly, and gradients whose values fan out. Output: its type rule
(one shape and dtype, JAX's; no broadcasting), eager and jit values with IEEE edge cases
(NaN, inf, -0.0), the same HLO `add` as lax.add, its JVP, transpose and batching rules
against NumPy, and its place in differentiated programs (a fan-out sums cotangents with
add_any; add and sub of two tangents stay add and sub; a zero side adds nothing).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.prims.add_any import add_any

X = np.array([1.5, -0.0, 0.0, np.nan, np.inf, -np.inf, -2.0], np.float32)
Y = np.array([-1.5, -0.0, -0.0, 1.0, -np.inf, 3.0, 2.0], np.float32)


def _bits(a: object) -> np.ndarray:
    return np.asarray(a).view(np.uint32)


def test_values_eager_and_jit_are_ieee_addition() -> None:
    with np.errstate(invalid="ignore"):
        expected = X + Y  # (-0.0 + -0.0 is -0.0, 0.0 + -0.0 is 0.0, inf - inf is NaN)
    np.testing.assert_array_equal(_bits(add_any(X, Y)), _bits(expected))
    np.testing.assert_array_equal(_bits(ember.jit(add_any)(X, Y)), _bits(expected))
    ints = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(ember.jit(add_any)(ints, ints)), 2 * ints)


def test_operands_of_different_types_are_rejected() -> None:
    with pytest.raises(TypeError, match=r"add_any takes two values of one type, got f32\[7\] "
                       r"and f32\[\]"):
        ember.jit(add_any)(X, np.float32(1))
    with pytest.raises(TypeError, match="add_any takes two values of one type"):
        ember.jit(add_any)(X, np.arange(7, dtype=np.int32))


def test_lowers_to_the_same_hlo_add_as_lax_add() -> None:
    ours = ember.jit(lambda x, y: add_any(x, y)).lower(X, Y)
    theirs = ember.jit(lambda x, y: ember.lax.add(x, y)).lower(X, Y)
    assert " add(" in ours.as_text()
    assert ours.as_text() == theirs.as_text()
    assert ours.compile().as_text() == theirs.compile().as_text()


def test_jvp_transpose_and_vmap_rules() -> None:
    # linear: its tangent is add_any of the tangents; its transpose copies the cotangent
    primal, tangent = ember.jvp(add_any, (X, Y), (Y, X))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_bits(tangent), _bits(Y + X))
    text = str(ember.make_jaxpr(lambda x, y: ember.jvp(add_any, (x, y), (y, x)))(X, Y))
    assert text.count("add_any") == 2
    ct = np.linspace(-1, 1, 7).astype(np.float32)
    cx, cy = ember.linear_transpose(add_any, X, Y)(ct)
    np.testing.assert_array_equal(np.asarray(cx), ct)
    np.testing.assert_array_equal(np.asarray(cy), ct)
    # vmap: both mapped at different axes, one unmapped (broadcast to the batch)
    m = np.arange(21, dtype=np.float32).reshape(3, 7)
    out = ember.vmap(add_any, in_axes=(0, 1))(m, m.T.copy())
    np.testing.assert_array_equal(np.asarray(out), 2 * m)
    out = ember.vmap(add_any, in_axes=(None, 0))(X[:7], m)
    np.testing.assert_array_equal(_bits(out), _bits(X[None, :] + m))
    out = ember.vmap(add_any, in_axes=(1, None), out_axes=1)(m.T.copy(), X)
    np.testing.assert_array_equal(_bits(out), _bits((m + X[None, :]).T))


def test_gradients_sum_fanned_out_cotangents_with_add_any() -> None:
    def f(x: object) -> object:
        return jnp.sum(jnp.sin(x) * x)

    text = str(ember.make_jaxpr(ember.grad(f))(X[:3]))
    assert text.count("add_any") == 1 and " add " not in text
    x = np.linspace(-2, 2, 7).astype(np.float32)
    expected = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(np.asarray(ember.grad(f)(x)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ember.jit(ember.grad(f))(x)), expected, rtol=1e-6)
    # one use per value, or a tangent that is zero on one side: nothing to sum
    assert "add_any" not in str(ember.make_jaxpr(ember.grad(lambda x: jnp.sum(x * 3.0)))(x))
    # add/sub of two tangents are add/sub (JAX's rules), not add_any of the terms
    jvp_text = str(ember.make_jaxpr(lambda x, y: ember.jvp(lambda a, b: a - b, (x, y),
                                                           (y, x)))(x, x))
    assert "sub b a" in jvp_text and "add_any" not in jvp_text and "neg" not in jvp_text


def test_eager_gradient_equals_jit_bit_for_bit() -> None:
    def f(x: object) -> object:
        return jnp.sum(x * jnp.exp(x) + x)

    x = np.linspace(-3, 3, 33).astype(np.float32)
    np.testing.assert_array_equal(_bits(ember.grad(f)(x)), _bits(ember.jit(ember.grad(f))(x)))
