"""A masked max or min, max(where(mask, x, -inf)) as a causal softmax or attention writes it,
stays a vector reduction. LLVM's InstCombine turns maximum(acc, select(c, x, -inf)) into
select(c, maximum(acc, x), acc) (-inf is the identity of maximum), a conditional min/max
reduction its loop vectorizer leaves scalar: 45x slower (kernels.row_combine freezes the
operand). The mask's row and column numbers (iotas) are generated inside the row kernel.
Checked on the optimized LLVM IR (vector intrinsics present), and the values
(NaN, -0.0 and the mask's fill) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp

X = np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32)
MASK = np.tri(64, 96, dtype=bool)


def _vector_intrinsic(fn, *args, name: str) -> bool:
    ir_text = str(ember.jit(fn).lower(*args).compile().llvm_ir())
    return f"@llvm.{name}.v" in ir_text


@pytest.mark.parametrize("axis", [1, None])
def test_masked_max_with_the_identity_fill_is_vectorized(axis) -> None:
    def masked_max(x, m):
        return jnp.max(jnp.where(m, x, -jnp.inf), axis=axis)

    def masked_min(x, m):
        return jnp.min(jnp.where(m, x, jnp.inf), axis=axis)

    assert _vector_intrinsic(masked_max, X, MASK, name="maximum")
    assert _vector_intrinsic(masked_min, X, MASK, name="minimum")


def test_masked_softmax_row_kernel_is_vectorized() -> None:
    def causal_softmax(x):
        s = jnp.where(jnp.tri(64, 96, dtype=bool), x, -jnp.inf)
        return ember.nn.softmax(s, axis=-1)

    assert _vector_intrinsic(causal_softmax, X, name="maximum")
    # (the mask's iotas are made inside the row kernel: row_fusion takes iota members)
    assert len(ember.jit(causal_softmax).lower(X).compile().kernels()) == 1
    e = np.exp(np.where(MASK, X, -np.inf) - np.where(MASK, X, -np.inf).max(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(ember.jit(causal_softmax)(X)),
                               e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_masked_max_keeps_nan_and_signed_zero() -> None:
    x = np.zeros((5, 33), np.float32)
    x[0, 7] = np.nan
    x[1] = -0.0
    x[2, 3] = np.nan
    m = np.ones_like(x, bool)
    m[2, 3] = False  # (a masked-out NaN does not count)
    m[3] = False     # (nothing left: the fill)
    x[4, ::2] = -0.0
    f = ember.jit(lambda x, m: (jnp.max(jnp.where(m, x, -jnp.inf), axis=1),
                                jnp.min(jnp.where(m, x, jnp.inf), axis=1)))
    got_max, got_min = (np.asarray(v) for v in f(x, m))
    want_max = np.max(np.where(m, x, -np.inf), axis=1)
    want_min = np.min(np.where(m, x, np.inf), axis=1)
    np.testing.assert_array_equal(got_max, want_max)
    np.testing.assert_array_equal(got_min, want_min)
    assert np.signbit(got_max[1]) and np.signbit(got_min[1]) and np.signbit(got_min[4])
    assert not np.signbit(got_max[4])  # (max(-0.0, 0.0) is +0.0)
