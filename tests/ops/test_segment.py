"""ember.ops.segment_{sum,prod,max,min} against a NumPy loop and JAX 0.10.2: several
dtypes and shapes (rank-1 and rank-2 data, an empty segment, out-of-range and negative ids
dropped, zero rows), eager and under one jit per op, with and without bucket_size."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import ops

OPS = {"sum": (np.add, 0), "prod": (np.multiply, 1), "max": (np.maximum, None),
       "min": (np.minimum, None)}


def _identity(name: str, dtype: np.dtype):
    if OPS[name][1] is not None:
        return OPS[name][1]
    if dtype == np.bool_:
        return name == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max if name == "min" else info.min
    return np.inf if name == "min" else -np.inf


def _reference(name: str, data: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    out = np.full((n, *data.shape[1:]), _identity(name, data.dtype), data.dtype)
    combine = OPS[name][0]
    for i, s in enumerate(ids):
        if 0 <= s < n:
            out[s] = combine(out[s], data[i])
    return out


CASES = [  # (data shape, ids, num_segments)
    ((6,), [0, 0, 2, 2, 2, 3], 5),          # segment 1 and 4 empty
    ((5, 3), [1, 0, 1, -1, 7], 3),          # a negative and an out-of-range id dropped
    ((0, 2), [], 2),                         # no rows
    ((4,), [3, 2, 1, 0], 4),                 # a permutation
    ((7, 2), [0, 1, 0, 1, 0, 1, 2], 1),      # most ids out of range
]


def _data(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_segment_ops_match_numpy_eager_and_jit(name, dtype) -> None:
    rng = np.random.default_rng(0)
    fn = getattr(ops, f"segment_{name}")
    jitted = {}
    for shape, ids, n in CASES:
        data = _data(shape, dtype, rng)
        ids = np.asarray(ids, np.int32)
        want = _reference(name, data, ids, n)
        got = fn(data, ids, n)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        f = jitted.setdefault(n, ember.jit(lambda d, s, n=n: fn(d, s, n)))
        np.testing.assert_array_equal(f(data, ids), want)
        bucketed = fn(data, ids, n, bucket_size=2)
        np.testing.assert_array_equal(bucketed, want)


def test_segment_ops_agree_with_jax_including_defaults() -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((9, 2)).astype(np.float32)
    ids = np.array([0, 0, 1, 4, 4, 4, 2, 1, 0], np.int32)
    for name in OPS:
        ours, theirs = getattr(ops, f"segment_{name}"), getattr(jax.ops, f"segment_{name}")
        np.testing.assert_allclose(ours(data, ids), theirs(data, ids), rtol=1e-6)
        np.testing.assert_allclose(ours(data, ids, 6, bucket_size=4),
                                   theirs(data, ids, 6, bucket_size=4), rtol=1e-6)
        np.testing.assert_allclose(ours(data, np.sort(ids), 5, indices_are_sorted=True),
                                   theirs(data, np.sort(ids), 5, indices_are_sorted=True),
                                   rtol=1e-6)
    far = np.array([0, 1, 7, -1, 2], np.int32)  # mode="clip" clamps instead of dropping
    for mode in ("clip", "drop"):
        np.testing.assert_array_equal(ops.segment_sum(data[:5], far, 3, mode=mode),
                                      jax.ops.segment_sum(data[:5], far, 3, mode=mode))
    bools = np.array([True, False, True, False])
    bids = np.array([0, 0, 1, 3])
    for name in ("max", "min"):
        np.testing.assert_array_equal(getattr(ops, f"segment_{name}")(bools, bids, 4),
                                      getattr(jax.ops, f"segment_{name}")(bools, bids, 4))
    # ids of rank 2 index as `out.at[ids]` does, broadcasting data (JAX's behaviour)
    two = np.array([[0, 1], [1, 0]])
    np.testing.assert_array_equal(ops.segment_sum(np.ones((2, 2), np.float32), two, 2),
                                  jax.ops.segment_sum(np.ones((2, 2), np.float32), two, 2))


def test_segment_sum_jaxpr_is_one_scatter_add() -> None:
    text = str(ember.make_jaxpr(lambda d, s: ops.segment_sum(d, s, 4))(
        jnp.ones((5, 3)), jnp.zeros(5, jnp.int32)))
    assert text.count("scatter-add[") == 1 and "mode=GatherScatterMode.FILL_OR_DROP" in text


def test_segment_errors() -> None:
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_sum(np.ones(3), np.zeros(3, np.int32), -1)
    with pytest.raises(ember.errors.ConcretizationTypeError, match="num_segments"):
        ember.jit(lambda d, s: ops.segment_sum(d, s))(np.ones(3), np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        ops.segment_sum(np.ones(3), np.zeros(3, np.float32), 2)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        ops.segment_sum([1.0, 2.0], np.zeros(2, np.int32), 2)


def test_segment_gradients_match_jax() -> None:
    data = np.array([0.5, -1.0, 2.0, 3.0, -2.5], np.float32)
    ids = np.array([0, 1, 1, 0, 2], np.int32)
    for name in ("sum", "max", "min"):
        ours_fn, theirs_fn = getattr(ops, f"segment_{name}"), getattr(jax.ops, f"segment_{name}")
        ours = ember.grad(lambda d, fn=ours_fn: (fn(d, ids, 3) ** 2).sum())
        theirs = jax.grad(lambda d, fn=theirs_fn: (fn(d, ids, 3) ** 2).sum())
        np.testing.assert_allclose(ours(data), theirs(data), rtol=1e-6)
