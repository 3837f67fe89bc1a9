"""Shared helpers for the ember.numpy op tests (imported by the other test_numpy_* files),
plus tests of the helpers themselves so a broken checker cannot hide failures.

`check(jfn, nfn, *args)` runs `jfn` eagerly and under `ember.jit`, asserts the two agree
bit for bit (same dtype, shape, weak type, bytes; float sums, dots and scans within
rounding, as op_tables.assert_eager_jit_numpy), and compares them against the NumPy
reference `nfn` (values cast to Ember's dtype; floats within a tolerance).
"""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from op_tables import has_float_reduction

import ember
import ember.numpy as jnp

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float32]
INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
NUM_DTYPES = INT_DTYPES + [np.float32]
SHAPES = [(), (0,), (7,), (33,), (3, 5), (2, 3, 4)]
BCAST_PAIRS = [((3, 5), (5,)), ((2, 1, 4), (3, 1)), ((), (7,)), ((4, 1), (1, 6)),
               ((0, 3), (3,))]


def rand(shape, dtype, seed=0, low=None, high=None):
    """Random values of a dtype: small signed ints, floats in [-5, 5] with a few specials."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = max(info.min, -50) if low is None else low
        hi = min(info.max, 50) if high is None else high
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    lo = -5.0 if low is None else low
    hi = 5.0 if high is None else high
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_leaves(v))
        return out
    return [x]


def assert_bitwise_equal(a, b):
    """Same dtype, shape, weak type and bytes (NaNs with the same payload compare equal)."""
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert isinstance(x, ember.Array) and isinstance(y, ember.Array)
        assert x.dtype == y.dtype and x.shape == y.shape, (x, y)
        assert x.weak_type == y.weak_type, (x, y)
        xa, ya = np.asarray(x), np.asarray(y)
        assert xa.tobytes() == ya.tobytes(), (xa, ya)


def assert_close(got, expected, rtol=None, atol=0.0, check_dtype=None):
    """got (ember value) against a NumPy value, cast to got's dtype. Floats: within rtol
    (default 1e-6 for f32, 1e-3 for f16, 1e-12 for f64) plus atol; NaN matches NaN."""
    lg, le = _leaves(got), _leaves(expected)
    assert len(lg) == len(le)
    for g, e in zip(lg, le):
        ga = np.asarray(g)
        if check_dtype is not None:
            assert ga.dtype == np.dtype(check_dtype), (ga.dtype, check_dtype)
        with np.errstate(all="ignore"):
            ea = np.asarray(e).astype(ga.dtype)
        assert ga.shape == np.shape(ea), (ga.shape, np.shape(ea))
        if ga.dtype.kind == "f":
            tol = rtol if rtol is not None else {2: 1e-3, 4: 1e-6, 8: 1e-12}[ga.dtype.itemsize]
            np.testing.assert_allclose(ga.astype(np.float64), ea.astype(np.float64),
                                       rtol=tol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(ga, ea)


def assert_reduction_close(a, b):
    """Same dtype, shape and weak type; float values within summation-order rounding
    (rtol 1e-5 for f32, 1e-12 for f64, 1e-2 for f16; atol the same), the rest exact."""
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert x.dtype == y.dtype and x.shape == y.shape and x.weak_type == y.weak_type, (x, y)
        xa, ya = np.asarray(x), np.asarray(y)
        if xa.dtype.kind in "fc":
            tol = {2: 1e-2, 4: 1e-5, 8: 1e-12}[np.finfo(xa.dtype).dtype.itemsize]
            np.testing.assert_allclose(xa, ya, rtol=tol, atol=tol, equal_nan=True)
        else:
            assert xa.tobytes() == ya.tobytes(), (xa, ya)


def check(jfn, nfn, *args, rtol=None, atol=0.0, check_dtype=None):
    """eager == jit bit for bit (within rounding for float sums, products, dots and scans,
    whose order the compiler may choose), and both against NumPy; returns the eager
    result."""
    eager = jfn(*args)
    jitted = ember.jit(jfn)(*args)
    if has_float_reduction(jfn, *args):
        assert_reduction_close(eager, jitted)
    else:
        assert_bitwise_equal(eager, jitted)
    with np.errstate(all="ignore"):
        expected = nfn(*[np.asarray(a) if isinstance(a, ember.Array) else a for a in args])
    assert_close(eager, expected, rtol, atol, check_dtype)
    return eager


def test_helpers_detect_mismatch():
    x = np.arange(5, dtype=np.float32)
    check(lambda a: jnp.sin(a), np.sin, x)
    with pytest.raises(AssertionError):
        check(lambda a: jnp.sin(a), np.cos, x)
    with pytest.raises(AssertionError):
        assert_close(jnp.arange(3), np.arange(4))
    with pytest.raises(AssertionError):
        assert_bitwise_equal(jnp.array(1.0), jnp.array(np.float32(1.0)))  # weak vs strong


def test_rand_covers_dtypes():
    for dt in DTYPES:
        v = rand((4,), dt)
        assert v.dtype == np.dtype(dt)
