"""The eager dispatch cache (ember/numpy/_eager_cache.py): a repeated eager call replays
its primitives' NumPy rules and gives exactly what the uncached call gives (bits, dtype,
weak type, shape), over dtypes, shapes (0-d, empty, broadcasting) and Python scalars; it
traces once per argument types, keys scalars by their bits, follows x64, and stays out of
the way under jit, under debug_nans, and for functions that depend on values or warn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.array import ArrayImpl
from ember.numpy import _eager_cache as cache


def _same(got, want):
    assert type(got) is ArrayImpl and type(want) is ArrayImpl
    assert got.aval == want.aval, (got.aval, want.aval)  # dtype, shape and weak type
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))
    assert not g.flags.writeable


def _uncached(fn):
    """The function the cache wraps (what eager mode runs without it)."""
    return getattr(fn, "_func", None) or fn.__wrapped_eager__


SHAPES = [(), (0,), (1,), (7,), (3, 5)]
DTYPES = [np.float32, np.float16, np.int32, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_replay_equals_uncached_eager(shape, dtype):
    rng = np.random.default_rng(0)
    x = jnp.asarray((rng.standard_normal(shape) * 3).astype(dtype))
    y = jnp.asarray((rng.standard_normal(shape[-1:]) * 3).astype(dtype))  # broadcasts
    calls = [(jnp.add, (x, y)), (jnp.add, (x, 1)), (jnp.multiply, (2.5, x)),
             (jnp.greater, (x, 0)), (jnp.maximum, (x, y)), (jnp.where, (x > 0, x, 0.0)),
             (jnp.sum, (x,)), (jnp.max, (x,)) if x.size else (jnp.sum, (y,))]
    if dtype != np.bool_:
        calls += [(jnp.subtract, (x, y)), (jnp.sin, (x,)), (jnp.exp, (x,)), (jnp.mean, (x,))]
    for fn, args in calls:
        want = _uncached(fn)(*args)
        for _ in range(3):  # uncached, a trace, then a replay
            _same(fn(*args), want)


def test_keyword_arguments_and_axes():
    x = jnp.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5)
    for kwargs in ({"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"axis": -1}):
        want = _uncached(jnp.sum)(x, **kwargs)
        for _ in range(3):
            _same(jnp.sum(x, **kwargs), want)
    _same(jnp.max(x, 0), _uncached(jnp.max)(x, 0))


def test_traces_once_per_argument_types():
    x = jnp.asarray(np.linspace(-1, 1, 11, dtype=np.float32))
    cache.clear()
    before = dict(cache.STATS)
    for _ in range(5):  # the first call runs uncached, the second traces
        jnp.sin(x)
    assert cache.STATS["traces"] - before["traces"] == 1
    assert cache.STATS["hits"] - before["hits"] == 3
    for _ in range(2):
        jnp.sin(jnp.asarray(np.ones(12, np.float32)))  # another shape: another trace
        jnp.sin(x.astype(jnp.float16))  # another dtype
    assert cache.STATS["traces"] - before["traces"] == 3


def test_a_changing_scalar_never_traces():
    x = jnp.asarray(np.linspace(-1, 1, 11, dtype=np.float32))
    before = cache.STATS["traces"]
    for k in range(20):
        np.testing.assert_array_equal(np.asarray(x * (0.1 * k)),
                                      np.asarray(_uncached(jnp.multiply)(x, 0.1 * k)))
    assert cache.STATS["traces"] == before


def test_python_scalars_are_keyed_by_their_bits():
    z = jnp.asarray(np.array([-0.0, 1.0], np.float32))
    for _ in range(3):  # uncached, traced, replayed: each key its own plan
        a, b = z + 0.0, z + -0.0  # -0 + +0 = +0; -0 + -0 = -0
        assert np.signbit(np.asarray(a))[0] == np.False_ and np.signbit(np.asarray(b))[0]
        np.testing.assert_array_equal(np.asarray(z * 2), [-0.0, 2.0])
        np.testing.assert_array_equal(np.asarray(z * 3), [-0.0, 3.0])
        assert np.isnan(np.asarray(z + float("nan"))).all()
        np.testing.assert_array_equal(np.asarray(z + 1), [1.0, 2.0])
        assert (z + True).dtype == np.float32 and (z + 1).aval == (z + 1.0).aval


def test_x64_changes_the_key(x64):
    i = jnp.asarray(np.arange(3, dtype=np.int32))
    for _ in range(3):
        ember.config.update("jax_enable_x64", False)
        narrow = i + 1.5
        ember.config.update("jax_enable_x64", True)
        wide = i + 1.5
        _same(wide, _uncached(jnp.add)(i, 1.5))
        ember.config.update("jax_enable_x64", False)
        _same(i + 1.5, narrow)
    assert narrow.dtype == np.float32 and wide.dtype == np.float64


def test_not_used_under_jit_or_debug_nans():
    x = jnp.asarray(np.array([1.0, -1.0], np.float32))
    before = dict(cache.STATS)
    out = ember.jit(lambda v: jnp.sin(v) + 1)(x)
    np.testing.assert_allclose(np.asarray(out), np.sin([1.0, -1.0]) + 1, rtol=1e-6)
    assert cache.STATS == before
    jnp.log(x)  # (a NaN, and no check)
    ember.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            jnp.log(x)
    finally:
        ember.config.update("jax_debug_nans", False)


def test_value_dependent_and_warning_functions_run_uncached():
    x = jnp.asarray(np.array([0.0, 2.0, 0.0, 3.0], np.float32))
    for _ in range(2):  # one-argument where needs the values: nonzero
        (idx,) = jnp.where(x)
        np.testing.assert_array_equal(np.asarray(idx), [1, 3])

    @cache.eager_cached
    def noisy(v):
        warnings.warn("noisy", UserWarning, stacklevel=2)
        return v * 2

    for _ in range(3):  # every call warns, as an uncached function does
        with pytest.warns(UserWarning, match="noisy"):
            out = noisy(x)
        np.testing.assert_array_equal(np.asarray(out), [0.0, 4.0, 0.0, 6.0])


def test_errors_and_deleted_arrays_as_uncached():
    x = jnp.asarray(np.ones(3, np.float32))
    y = jnp.asarray(np.ones(4, np.float32))
    for _ in range(2):
        with pytest.raises(TypeError, match="incompatible shapes"):
            jnp.add(x, y)
    jnp.add(x, x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        jnp.add(x, x)


def test_numpy_and_tracer_arguments_take_the_normal_path():
    xn = np.linspace(0, 1, 5).astype(np.float32)
    before = cache.STATS["hits"] + cache.STATS["traces"]
    cache.clear()
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(jnp.sin(xn)),
                                      np.asarray(jnp.sin(jnp.asarray(xn))))
    assert cache.STATS["hits"] + cache.STATS["traces"] == before + 2  # (the Array calls)
    g = ember.grad(lambda v: jnp.sum(jnp.sin(v)))(jnp.asarray(xn))
    np.testing.assert_allclose(np.asarray(g), np.cos(xn), rtol=1e-6)


@pytest.mark.parametrize("n", [5, cache.FOLD_MAX_ELEMENTS + 3])
def test_constant_operands_folded_or_not(n):
    # where's 0.0 is broadcast to x's shape: once, when the plan is made, for small
    # shapes; every call for large ones (a plan keeps no large constant)
    x = jnp.asarray(np.random.default_rng(n).standard_normal(n).astype(np.float32))
    want = _uncached(jnp.where)(x > 0, x, 0.0)
    for _ in range(3):
        _same(jnp.where(x > 0, x, 0.0), want)
        _same(x * 2.0 + 1.0, _uncached(jnp.add)(_uncached(jnp.multiply)(x, 2.0), 1.0))
    assert not np.asarray(want).flags.writeable
