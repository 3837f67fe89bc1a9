"""Ops on transposed, sliced and broadcast inputs, compiled by the CPU backend (where layout
assignment lays intermediate arrays out other than row-major and kernels index memory
through those layouts), against NumPy and eager mode: elementwise ops, reductions over
every axis (the column scheme reads transposed memory in order), products, and chains
that leave a transposed intermediate between kernels."""

from __future__ import annotations

import numpy as np
import pytest
from op_tables import assert_eager_jit_numpy, ieee_maximum, ieee_reduce_max, seeded_rng

import ember.numpy as jnp


@pytest.fixture(autouse=True)
def _cpu(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


SHAPES_2D = [(3, 5), (33, 7), (1, 9), (16, 16), (0, 4)]
DTYPES = [np.dtype(np.float32), np.dtype(np.int32)]

# (name, ember view, numpy view): the views of x that feed the ops under test
VIEWS = [
    ("T", lambda x: x.T, lambda x: x.T),
    ("slice", lambda x: x[1::2, ::3], lambda x: x[1::2, ::3]),
    ("T_slice", lambda x: x.T[::2, 1:], lambda x: x.T[::2, 1:]),
    ("bcast", lambda x: jnp.broadcast_to(x[:1], x.shape).T,
     lambda x: np.broadcast_to(x[:1], x.shape).T),
]


def _sample(shape, dtype, *key):
    rng = seeded_rng(*key)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v[0])
def test_elementwise_on_views(shape, dtype, view):
    _, ev, nv = view
    x = _sample(shape, dtype, "ew", shape, dtype.name)
    assert_eager_jit_numpy(lambda a: ev(a) * 3 + ev(a), lambda a: nv(a) * 3 + nv(a), x)
    assert_eager_jit_numpy(lambda a: jnp.maximum(ev(a), ev(-a)).T,
                           lambda a: ieee_maximum(nv(a), nv(-a)).T, x)
    if dtype.kind == "f":
        assert_eager_jit_numpy(lambda a: jnp.exp(ev(a)).T + 1,
                               lambda a: (np.exp(nv(a)).T + 1).astype(np.float32), x, ulps=4)


@pytest.mark.parametrize("shape", SHAPES_2D + [(2, 3, 4), (5, 1, 7)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_reductions_of_transposes_over_every_axis(shape, dtype):
    x = _sample(shape, dtype, "red", shape, dtype.name)
    perm = tuple(reversed(range(len(shape))))
    for axis in range(len(shape)):
        assert_eager_jit_numpy(lambda a, ax=axis: jnp.sum(jnp.transpose(a, perm) * 2, axis=ax),
                               lambda a, ax=axis: np.sum(np.transpose(a, perm) * 2, axis=ax,
                                                         dtype=a.dtype),
                               x, ulps=None, rtol=1e-5, atol=1e-5)
        if x.size:
            assert_eager_jit_numpy(lambda a, ax=axis: jnp.max(jnp.transpose(a, perm), axis=ax),
                                   lambda a, ax=axis: ieee_reduce_max(np.transpose(a, perm),
                                                                      axis=ax), x)
        if dtype.kind == "f":
            assert_eager_jit_numpy(lambda a, ax=axis: jnp.mean(a, axis=ax),
                                   lambda a, ax=axis: np.mean(a, axis=ax, dtype=np.float32),
                                   x, ulps=None, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(3, 5, 4), (33, 7, 9), (1, 16, 1)])
def test_products_of_transposed_and_elementwise_operands(m, k, n):
    x = _sample((k, m), np.dtype(np.float32), "dot", m, k, n)
    y = _sample((k, n), np.dtype(np.float32), "dot2", m, k, n)
    tol = dict(ulps=None, rtol=2e-5, atol=2e-5)
    assert_eager_jit_numpy(lambda a, b: a.T @ b, lambda a, b: a.T @ b, x, y, **tol)
    assert_eager_jit_numpy(lambda a, b: jnp.exp(a * 0.1).T @ b,
                           lambda a, b: np.exp(a * np.float32(0.1)).T @ b, x, y, **tol)
    assert_eager_jit_numpy(lambda a, b: jnp.tanh(a).T @ b + jnp.tanh(a).T.sum(axis=1)[:, None],
                           lambda a, b: np.tanh(a).T @ b + np.tanh(a).T.sum(axis=1)[:, None],
                           x, y, **tol)


def test_three_d_permutations_through_several_kernels():
    x = _sample((4, 5, 6), np.dtype(np.float32), "3d")
    for perm in [(1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)]:
        assert_eager_jit_numpy(
            lambda a, p=perm: jnp.sin(jnp.transpose(jnp.exp(a * 0.1), p))
            + jnp.sum(jnp.transpose(a, p), axis=1, keepdims=True),
            lambda a, p=perm: np.sin(np.transpose(np.exp(a * np.float32(0.1)), p))
            + np.sum(np.transpose(a, p), axis=1, keepdims=True),
            x, ulps=None, rtol=2e-5, atol=2e-5)
