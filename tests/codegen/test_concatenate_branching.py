"""Concatenates of many operands (codegen/elemental.py `BRANCHING_CONCAT` or more) branch
to the one operand each element reads: values equal NumPy's for equal and unequal
pieces, along inner and outer axes, with fused producers (a diamond shared by pieces,
which each case computes on its own)."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.codegen.elemental import BRANCHING_CONCAT


def test_many_operands_equal_and_unequal_pieces():
    rng = np.random.default_rng(0)
    n = BRANCHING_CONCAT + 3
    xs = [rng.standard_normal((k + 1, 5)).astype(np.float32) for k in range(n)]
    ys = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(n)]

    def f(xs, ys, s):
        t = jnp.tanh(s) * 2.0  # shared by every piece
        return (jnp.concatenate([x * t + 1.0 for x in xs], axis=0),
                jnp.concatenate([jnp.exp(y) - t for y in ys], axis=1),
                jnp.concatenate([y[None] for y in ys], axis=0) * t)

    s = np.float32(0.3)
    got = ember.jit(f)(xs, ys, s)
    t = np.tanh(s) * 2.0
    want = (np.concatenate([x * t + 1.0 for x in xs], axis=0),
            np.concatenate([np.exp(y) - t for y in ys], axis=1),
            np.stack(ys) * t)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def test_many_operands_inside_reductions_and_rows():
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((6, 7)).astype(np.float32) for _ in range(BRANCHING_CONCAT + 1)]

    def f(xs):
        c = jnp.concatenate([x * 2.0 for x in xs], axis=1)
        e = jnp.exp(c - jnp.max(c, axis=1, keepdims=True))
        return jnp.sum(c, axis=0), jnp.sum(c, axis=1), e / jnp.sum(e, axis=1, keepdims=True)

    c = np.concatenate([x * 2.0 for x in xs], axis=1)
    e = np.exp(c - c.max(axis=1, keepdims=True))
    want = (c.sum(axis=0), c.sum(axis=1), e / e.sum(axis=1, keepdims=True))
    for g, w in zip(ember.jit(f)(xs), want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)
