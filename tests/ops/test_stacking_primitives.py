"""lax.stack / unstack / tile (JAX 0.10.2's primitives, which jnp.stack, jnp.unstack and
jnp.tile stage): values eager and under jit (the lowerings), JVP, transposes (grad),
batching rules and errors.

Input: small arrays. Output: NumPy's np.stack / np.tile values and the derivatives of
weighted sums. Invariant: dtype and weak type follow the operands.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax

X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_unstack_values(axis):
    y = X * 10
    want = np.stack([X, y], axis=axis)
    for fun in (lambda a, b: lax.stack([a, b], axis), ember.jit(lambda a, b: lax.stack(
            [a, b], axis))):
        np.testing.assert_array_equal(np.asarray(fun(X, y)), want)
    for fun in (lambda s: lax.unstack(s, axis), ember.jit(lambda s: lax.unstack(s, axis))):
        pieces = fun(want)
        assert len(pieces) == 2
        np.testing.assert_array_equal(np.asarray(pieces[0]), X)
        np.testing.assert_array_equal(np.asarray(pieces[1]), y)


@pytest.mark.parametrize("reps", [(1, 1), (2, 3), (0, 2), (3, 1)])
def test_tile_values(reps):
    for fun in (lambda a: lax.tile(a, reps), ember.jit(lambda a: lax.tile(a, reps))):
        np.testing.assert_array_equal(np.asarray(fun(X)), np.tile(X, reps))
    # jnp.tile pads short reps and adds axes for long ones, as NumPy
    for r in (2, (2, 1, 3)):
        np.testing.assert_array_equal(np.asarray(ember.jit(jnp.tile, static_argnums=1)(X, r)),
                                      np.tile(X, r))
    np.testing.assert_array_equal(np.asarray(jnp.tile(np.float32(2), 3)), [2, 2, 2])


def test_stack_unstack_tile_derivatives():
    x = np.linspace(-1, 1, 4).astype(np.float32)
    g = ember.grad(lambda a: jnp.sum(jnp.stack([a, 3.0 * a], axis=1) ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), 20 * x, rtol=1e-6)
    # a piece of unstack the output does not use gets a zero cotangent
    g = ember.grad(lambda a: jnp.sum(jnp.unstack(a)[1] * 2.0))(X)
    np.testing.assert_array_equal(np.asarray(g), [[0] * 4, [2] * 4, [0] * 4])
    g = ember.grad(lambda a: jnp.sum(jnp.tile(a, (2, 3)) * np.arange(72, dtype=np.float32)
                                     .reshape(6, 12)))(X)
    w = np.arange(72, dtype=np.float32).reshape(2, 3, 3, 4)  # (r0, d0, r1, d1)
    np.testing.assert_array_equal(np.asarray(g), w.sum(axis=(0, 2)))
    _, t = ember.jvp(lambda a: lax.tile(a, (1, 2)), (X,), (np.ones_like(X),))
    np.testing.assert_array_equal(np.asarray(t), np.ones((3, 8), np.float32))
    _, t = ember.jvp(lambda a: lax.stack([a, a]), (X,), (np.ones_like(X),))
    np.testing.assert_array_equal(np.asarray(t), np.ones((2, 3, 4), np.float32))


def test_stack_unstack_tile_batching():
    # in_axes=1: the batch axis sits after axis 0, so each rule must shift past it
    out = ember.vmap(lambda c, d: lax.stack([c, d], 0), in_axes=(1, None))(X, X[:, 0])
    np.testing.assert_array_equal(np.asarray(out), np.stack([np.stack([X[:, j], X[:, 0]])
                                                             for j in range(4)]))
    out = ember.vmap(lambda r: lax.tile(r, (2,)), in_axes=1, out_axes=1)(X)
    np.testing.assert_array_equal(np.asarray(out), np.tile(X, (2, 1)))
    pieces = ember.vmap(lambda r: lax.unstack(r), in_axes=1)(X)
    for i, p in enumerate(pieces):
        np.testing.assert_array_equal(np.asarray(p), X[i])


def test_stack_unstack_tile_jaxprs_and_errors():
    text = str(ember.make_jaxpr(lambda a: jnp.stack([a, a], axis=-1))(X))
    assert "stack[axis=2] a a" in text
    assert "tile[reps=(1, 2)]" in str(ember.make_jaxpr(lambda a: jnp.tile(a, 2))(X))
    with pytest.raises(ValueError, match="same shape"):
        lax.stack([X, X[0]])
    with pytest.raises(ValueError, match="one entry per axis"):
        lax.tile(X, (2,))
    with pytest.raises(ValueError, match="nonnegative"):
        lax.tile(X, (1, -1))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack(X, 2)
    # mixed dtypes promote before the stack, as jnp.stack does in JAX
    out = jnp.stack([np.ones(2, np.int32), np.ones(2, np.float32)])
    assert np.asarray(out).dtype == np.float32
