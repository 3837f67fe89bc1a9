"""`jnp.partition` / `jnp.argpartition` staged as JAX stages them (top_k of the negated
values), against NumPy's order for the values JAX gets right and JAX's own for NaN.

Order (JAX's): the kth+1 smallest first, ascending; the rest after them, descending;
argpartition's rest in index order. Checked: eager == jit bit for bit; ties, -0.0/+0.0,
inf and NaN (JAX's placement: top_k's order, NaN above +inf); the integer extremes JAX's
`neg` gets wrong (INT32_MIN, an unsigned maximum), where Ember keeps NumPy's order; bool
and complex (which JAX does not support); the partition axis anywhere in a 3-D array.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp


def _reference(a, kth, axis):
    """NumPy: values in JAX's order; argpartition's stable-sort indices then the rest."""
    a = np.moveaxis(a, axis, -1)
    k = kth % a.shape[-1]
    order = np.argsort(a, -1, kind="stable")
    s = np.take_along_axis(a, order, -1)
    vals = np.concatenate([s[..., :k + 1], s[..., k + 1:][..., ::-1]], -1)
    idx = np.concatenate([order[..., :k + 1], np.sort(order[..., k + 1:], -1)], -1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def _both(a, kth, axis):
    out = []
    for f in (jnp.partition, jnp.argpartition):
        eager = np.asarray(f(a, kth, axis))
        staged = np.asarray(ember.jit(lambda v, f=f: f(v, kth, axis))(a))
        assert eager.dtype == staged.dtype and eager.tobytes() == staged.tobytes()
        out.append(eager)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5, 4), 1), ((4, 3), 0),
                                        ((2, 3), -1)])
def test_partition_matches_numpy_order(dtype, shape, axis):
    rng = np.random.default_rng(len(shape))
    a = rng.integers(0, 5, shape).astype(dtype)  # (ties on purpose)
    for kth in (0, shape[axis] // 2, -1):
        vals, idx = _both(a, kth, axis)
        want_vals, want_idx = _reference(a, kth, axis)
        np.testing.assert_array_equal(vals, want_vals)
        np.testing.assert_array_equal(idx, want_idx)
        assert idx.dtype == np.int32 and vals.dtype == a.dtype


def test_integer_extremes_keep_numpy_order():
    # JAX's neg overflows here: partition([3, INT32_MIN, 5, 1, 2], 1) gives [1 2 ...]
    for a in (np.array([3, -2**31, 5, 1, 2, 2**31 - 1], np.int32),
              np.array([3, 255, 0, 1, 254, 2], np.uint8),
              np.array([2**32 - 1, 0, 7, 2**32 - 2], np.uint32),
              np.array([-128, 127, 0, -1], np.int8)):
        for kth in range(a.size):
            vals, idx = _both(a, kth, 0)
            want_vals, want_idx = _reference(a, kth, 0)
            np.testing.assert_array_equal(vals, want_vals)
            np.testing.assert_array_equal(idx, want_idx)


def test_float_specials_as_jax_places_them():
    import jax.numpy as jjnp
    a = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -np.inf, np.inf, 2.0, -np.nan], np.float32)
    for kth in range(a.size):
        vals, idx = _both(a, kth, 0)
        want = np.asarray(jjnp.partition(a, kth))
        assert vals.tobytes() == want.tobytes()  # (-0.0 and NaN bits included)
        np.testing.assert_array_equal(idx, np.asarray(jjnp.argpartition(a, kth)))
    # without NaN, the k-th value is NumPy's
    b = a[~np.isnan(a)]
    for kth in range(b.size):
        assert _both(b, kth, 0)[0][kth] == np.partition(b, kth)[kth]


def test_bool_and_complex():
    a = np.array([True, False, True, False, False])
    vals, idx = _both(a, 2, 0)
    np.testing.assert_array_equal(vals, _reference(a, 2, 0)[0])
    np.testing.assert_array_equal(idx, _reference(a, 2, 0)[1])
    c = np.array([2 + 1j, 1 + 5j, 2 - 1j, 0j], np.complex64)
    vals, idx = _both(c, 1, 0)
    np.testing.assert_array_equal(vals, _reference(c, 1, 0)[0])
    np.testing.assert_array_equal(c[idx[:2]], np.sort(c)[:2])


def test_jaxpr_stages_top_k():
    x = np.arange(6, dtype=np.float32)
    text = str(ember.make_jaxpr(lambda v: jnp.partition(v, 2))(x))
    assert "jit[" in text and "name=partition" in text and text.count("top_k[") == 2
    text = str(ember.make_jaxpr(lambda v: jnp.partition(v, 2))(x.astype(np.int32)))
    assert "not" in text and "neg" not in text
