"""psum_scatter, ppermute, pshuffle and all_to_all under vmap's `axis_name` (their batching
rules), eager and under jit, and their transposes under grad, against JAX 0.10.2."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import ember
from ember import lax

X = np.arange(4 * 8 * 3, dtype=np.float32).reshape(4, 8, 3) - 40.0

CASES = {
    "psum_scatter_tiled": lambda L, v: L.psum_scatter(v, "i", tiled=True),
    "psum_scatter": lambda L, v: L.psum_scatter(v[:4], "i"),
    "psum_scatter_dim1": lambda L, v: L.psum_scatter(v.T, "i", scatter_dimension=1,
                                                     tiled=True),
    "ppermute_ring": lambda L, v: L.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "pshuffle": lambda L, v: L.pshuffle(v, "i", [2, 0, 3, 1]),
    "all_to_all_tiled": lambda L, v: L.all_to_all(v, "i", 0, 1, tiled=True),
    "all_to_all_tiled_10": lambda L, v: L.all_to_all(v.T, "i", 1, 0, tiled=True),
    "all_to_all": lambda L, v: L.all_to_all(v[:4], "i", 0, 1),
    "all_to_all_same": lambda L, v: L.all_to_all(v[:4], "i", 0, 0),
    "all_to_all_10": lambda L, v: L.all_to_all(v[:4].T, "i", 1, 0),
    "psum_scatter_int": lambda L, v: L.psum_scatter(v.astype(np.int32), "i", tiled=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_collective_matches_jax(name):
    f = CASES[name]
    want = np.asarray(jax.vmap(lambda v: f(jax.lax, v), axis_name="i")(X))
    batched = ember.vmap(lambda v: f(lax, v), axis_name="i")
    np.testing.assert_array_equal(np.asarray(batched(X)), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(batched)(X)), want)
    if want.dtype.kind != "f":
        return
    w = np.random.RandomState(0).randn(*want.shape).astype(np.float32)
    gj = jax.grad(lambda v: (jax.vmap(lambda u: f(jax.lax, u), axis_name="i")(v) * w).sum())
    ge = ember.grad(lambda v: (batched(v) * w).sum())
    np.testing.assert_allclose(np.asarray(ge(X)), np.asarray(gj(X)), rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis"):
        ember.vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(X)
    with pytest.raises(ValueError, match="must match shard count 4"):
        ember.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(X)
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        ember.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: j"):
        ember.vmap(lambda v: lax.psum_scatter(v, "j"), axis_name="i")(X)


def test_partial_ppermute_fills_zeros():
    got = ember.vmap(lambda v: lax.ppermute(v, "i", [(0, 2), (3, 1)]), axis_name="i")(X)
    want = np.zeros_like(X)
    want[2], want[1] = X[0], X[3]
    np.testing.assert_array_equal(np.asarray(got), want)
