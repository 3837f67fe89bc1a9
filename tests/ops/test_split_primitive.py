"""lax.split / split_p (JAX 0.10.2's primitive, which jnp.split, array_split and hsplit
stage): values eager and under jit (the lowering's slices), its JVP, transpose (grad),
batching rule, and its errors.

Input: small arrays. Output: NumPy's np.split pieces, and the derivatives of sums of the
pieces. Invariant: each piece keeps the operand's dtype.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


def _pieces(out):
    return [np.asarray(p) for p in out]


@pytest.mark.parametrize("shape, sizes, axis", [((7,), (2, 3, 2), 0), ((3, 4), (1, 0, 3), 1),
                                                ((2, 3, 4), (3,), 1), ((4, 2), (0, 4), 0)])
def test_split_values_eager_and_jit(shape, sizes, axis):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    for fun in (lambda a: lax.split(a, sizes, axis), ember.jit(lambda a: lax.split(a, sizes,
                                                                                   axis))):
        got = _pieces(fun(x))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == np.float32
            np.testing.assert_array_equal(g, w)


def test_split_jvp_grad_and_vmap():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    weights = (1.0, 10.0, 100.0)

    def f(a):
        parts = lax.split(a, (1, 0, 3), axis=1)
        return sum(w * jnp.sum(jnp.sin(p)) for w, p in zip(weights, parts))

    want = np.cos(x) * np.array([1.0, 100.0, 100.0, 100.0], np.float32)
    np.testing.assert_allclose(np.asarray(ember.grad(f)(x)), want, rtol=1e-6)
    # a piece the output does not use gets a zero cotangent
    g = ember.grad(lambda a: jnp.sum(lax.split(a, (2, 2), axis=1)[1]))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0, 0, 1, 1]] * 3)
    t = np.ones_like(x)
    _, tangent = ember.jvp(lambda a: lax.split(a, (1, 3), axis=1)[1] * 2.0, (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), np.full((3, 3), 2.0, np.float32))
    # each column (in_axes=1) split in (2, 1): the batch axis sits after the split axis
    outs = ember.vmap(lambda r: lax.split(r, (2, 1)), in_axes=1, out_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(outs[0]), x[:2])
    np.testing.assert_array_equal(np.asarray(outs[1]), x[2:])
    outs = ember.vmap(lambda r: lax.split(r, (1, 3)))(x)  # each row, batch axis first
    np.testing.assert_array_equal(np.asarray(outs[1]), x[:, 1:])
    text = str(ember.make_jaxpr(lambda a: lax.split(a, (1, 3), axis=1))(x))
    assert "split[axis=1 sizes=(1, 3)]" in text


def test_split_errors():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="Sum of sizes"):
        lax.split(x, (1, 2), axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.split(x, (3,), axis=2)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.split(x, (5, -1), axis=1)


def test_jnp_split_keeps_numpy_semantics_for_decreasing_indices():
    x = np.arange(7, dtype=np.float32)
    for idx in ([5, 2], [-2, 3], [0, 7, 9]):
        for fun in (jnp.split, ember.jit(jnp.split, static_argnums=1)):
            got = _pieces(fun(x, tuple(idx)))
            want = np.split(x, idx)
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
