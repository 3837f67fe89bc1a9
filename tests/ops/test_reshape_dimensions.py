"""reshape's `dimensions` (a permutation applied before the row-major regrouping), end to end.

Input: lax.reshape(x, new_sizes, dimensions) and the jnp functions that stage it (concatenate
and stack of one array past axis 0, reshape/ravel with order="F", average's weights over
unordered axes). Output: values equal to NumPy's x.transpose(dimensions).reshape(new_sizes)
eagerly and under jit (odd sizes, NaN, -0.0, empty arrays, ints and bools); the one
`reshape[dimensions=...]` equation in the jaxpr and a transpose before the reshape in HLO;
its JVP, transpose (grad) and batching rules against NumPy; JAX's error for a dimensions
that is not a permutation.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_tables import assert_eager_jit_numpy

import ember
import ember.numpy as jnp
from ember import lax

ODD = np.arange(3 * 5 * 7, dtype=np.float32).reshape(3, 5, 7) - 50.0
ODD.flat[[0, 11, 40]] = [np.nan, -0.0, np.inf]


def _ref(x: np.ndarray, sizes: tuple[int, ...], dims: tuple[int, ...]) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, dims)).reshape(sizes)


@pytest.mark.parametrize("dims", list(itertools.permutations(range(3)))[1:],
                         ids=lambda d: "".join(map(str, d)))
def test_every_permutation_of_odd_sizes_matches_numpy(dims: tuple[int, ...]) -> None:
    sizes = (ODD.shape[dims[0]] * ODD.shape[dims[1]], ODD.shape[dims[2]])
    out = assert_eager_jit_numpy(lambda x: lax.reshape(x, sizes, dims),
                                 lambda x: _ref(x, sizes, dims), ODD)
    assert np.signbit(np.asarray(out)).sum() == np.signbit(_ref(ODD, sizes, dims)).sum()


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float64], ids=str)
def test_other_dtypes_and_empty(dtype: type) -> None:
    x = (np.arange(2 * 3 * 5) % 3).astype(dtype).reshape(2, 3, 5)
    assert_eager_jit_numpy(lambda x: lax.reshape(x, (5, 6), (2, 1, 0)),
                           lambda x: _ref(x, (5, 6), (2, 1, 0)), x)
    e = np.zeros((0, 3, 2), dtype)
    assert_eager_jit_numpy(lambda x: lax.reshape(x, (2, 0), (2, 0, 1)),
                           lambda x: _ref(x, (2, 0), (2, 0, 1)), e)


def test_one_equation_in_the_jaxpr_and_transpose_then_reshape_in_hlo() -> None:
    fn = lambda x: lax.reshape(x, (7, 15), (2, 0, 1))  # noqa: E731
    text = str(ember.make_jaxpr(fn)(ODD))
    assert "reshape[dimensions=(2, 0, 1) new_sizes=(7, 15) sharding=None] a" in text
    assert "transpose" not in text
    hlo = ember.jit(fn).lower(ODD).as_text()
    assert "transpose(" in hlo and "dimensions={2,0,1}" in hlo and "reshape(" in hlo
    # the identity permutation is no permutation: no equation at all for the same shape
    assert "reshape" not in str(ember.make_jaxpr(lambda x: lax.reshape(x, (3, 5, 7),
                                                                        (0, 1, 2)))(ODD))


def test_not_a_permutation_raises_jax_message() -> None:
    with pytest.raises(TypeError, match="reshape dimensions must be a permutation of operand "
                       r"dimensions, got dimensions \(0, 0, 1\) for shape \(3, 5, 7\)"):
        lax.reshape(ODD, (105,), (0, 0, 1))


def test_grad_and_jvp_match_numpy() -> None:
    x = np.linspace(-1, 1, 30, dtype=np.float32).reshape(2, 3, 5)
    w = np.linspace(0.5, 3, 30, dtype=np.float32).reshape(5, 6)
    dims = (2, 0, 1)
    loss = lambda x: jnp.sum(lax.reshape(x, (5, 6), dims) * w)  # noqa: E731
    # d/dx sum(w * T(x)) = T^-1(w): w back to the permuted shape, then un-permuted
    expected = np.transpose(w.reshape(5, 2, 3), np.argsort(dims))
    for g in (ember.grad(loss)(x), ember.jit(ember.grad(loss))(x)):
        np.testing.assert_array_equal(np.asarray(g), expected)
    t = np.cos(x)
    _, tangent = ember.jvp(lambda x: lax.reshape(x, (5, 6), dims), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), _ref(t, (5, 6), dims))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_vmap_matches_numpy(in_axis: int) -> None:
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    per = [np.take(x, i, axis=in_axis) for i in range(x.shape[in_axis])]
    sizes = (per[0].shape[1], per[0].shape[0])
    fn = ember.vmap(lambda r: lax.reshape(r, sizes, (1, 0)), in_axes=in_axis)
    expected = np.stack([_ref(p, sizes, (1, 0)) for p in per])
    np.testing.assert_array_equal(np.asarray(fn(x)), expected)
    np.testing.assert_array_equal(np.asarray(ember.jit(fn)(x)), expected)


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_stack_and_concatenate_of_one_array(axis: int) -> None:
    if axis < 2:  # (the rows are 2-D: concatenate's axes are 0 and 1)
        assert_eager_jit_numpy(lambda x: jnp.concatenate(x, axis=axis),
                               lambda x: np.concatenate(x, axis=axis), ODD)
    assert_eager_jit_numpy(lambda x: jnp.stack(x, axis=axis),
                           lambda x: np.stack(list(x), axis=axis), ODD)


def test_order_f_and_average_over_unordered_axes() -> None:
    assert_eager_jit_numpy(lambda x: jnp.reshape(x, (7, 15), order="F"),
                           lambda x: np.reshape(x, (7, 15), order="F"), ODD)
    assert_eager_jit_numpy(lambda x: jnp.ravel(x, order="F"),
                           lambda x: np.ravel(x, order="F"), ODD)
    x = np.linspace(-2, 2, 105, dtype=np.float32).reshape(3, 5, 7)
    w = np.linspace(0.5, 2, 21, dtype=np.float32).reshape(7, 3)
    # weights w[k, i] lie along axis 2 (k) and axis 0 (i): in full, W[i, j, k] = w[k, i]
    full = np.broadcast_to(w.T[:, None, :], x.shape)
    for avg in (lambda x, w: jnp.average(x, axis=(2, 0), weights=w),
                ember.jit(lambda x, w: jnp.average(x, axis=(2, 0), weights=w))):
        np.testing.assert_allclose(np.asarray(avg(x, w)),
                                   np.average(x, axis=(2, 0), weights=full), rtol=1e-5)
