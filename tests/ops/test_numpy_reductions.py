"""Reductions against NumPy: axis/keepdims/where/dtype/ddof/correction, JAX's accumulation
dtypes, ptp, average, nan-reductions, quantile/percentile/median; eager and jit.

Each test collects its cases in a `NumpyBatch` (tests/ops/batched_checks.py): every case is
checked eagerly against NumPy as it is added, and all of a test's cases are compiled as one
jitted program, each output compared with its own eager value (the suite's time is in
compiling, one program per case was most of it)."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import warnings

import numpy as np
import pytest
from batched_checks import NumpyBatch
from test_numpy_support import DTYPES, rand

import ember
import ember.numpy as jnp

AXES = [None, 0, -1, (0, 2), ()]


def _acc_dtype(dtype):
    d = np.dtype(dtype)
    if d.kind == "b" or (d.kind == "i" and d.itemsize < 4):
        return np.dtype(np.int32)
    if d.kind == "u" and d.itemsize < 4:
        return np.dtype(np.uint32)
    return d


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_prod(dtype):
    batch = NumpyBatch()
    x = rand((2, 3, 4), dtype, low=-3, high=3)
    acc = _acc_dtype(dtype)
    for axis in AXES:
        for keepdims in (False, True):
            batch.check(lambda a: jnp.sum(a, axis, keepdims=keepdims),
                        lambda a: np.sum(a, axis, dtype=acc, keepdims=keepdims), x,
                        rtol=1e-5, check_dtype=acc)
            batch.check(lambda a: jnp.prod(a, axis, keepdims=keepdims),
                        lambda a: np.prod(a, axis, dtype=acc, keepdims=keepdims), x,
                        rtol=1e-5, check_dtype=acc)
    w = rand((2, 3, 4), np.bool_, 9)
    batch.check(lambda a, m: jnp.sum(a, 1, where=m), lambda a, m: np.sum(a, 1, dtype=acc, where=m),
                x, w, rtol=1e-5)
    batch.check(lambda a: jnp.sum(a, initial=5), lambda a: np.sum(a, dtype=acc, initial=5), x,
                rtol=1e-5)
    batch.check(lambda a: jnp.sum(a, dtype=jnp.float32), lambda a: np.sum(a, dtype=np.float32), x,
                rtol=1e-5, check_dtype=np.float32)
    batch.check(jnp.sum, lambda a: np.sum(a, dtype=acc), rand((0, 3), dtype))
    batch.run()


# The dtypes whose reductions compile differently (bool, signed, unsigned, float; narrow and
# wide ints): every case eager and jitted. The rest take the same code paths (widths
# 16 and the other signedness at 8 and 32 bits): every case eager, a subset compiled, all
# of those dtypes in one program.
FULL_DTYPES = [np.bool_, np.int8, np.uint32, np.float32]
FOLDED_DTYPES = [d for d in DTYPES if d not in FULL_DTYPES]
FOLDED_JIT_AXES = [None, (0, 2)]


def _max_min_cases(batch, x, jit_axes):
    dtype = x.dtype
    for axis in AXES:
        add = batch.check if axis in jit_axes else batch.check_eager
        for keepdims in (False, True):
            for jf, nf in ((jnp.max, np.max), (jnp.min, np.min), (jnp.amax, np.amax),
                           (jnp.all, np.all), (jnp.any, np.any), (jnp.ptp, np.ptp)):
                if jf is jnp.ptp and dtype == np.bool_:
                    continue
                add(lambda a: jf(a, axis, keepdims=keepdims),
                    lambda a: nf(a, axis, keepdims=keepdims), x)
    for axis in (None, 0, 1, -1):
        add = batch.check if axis in jit_axes or axis == 1 else batch.check_eager
        for keepdims in (False, True):
            add(lambda a: jnp.argmax(a, axis, keepdims=keepdims),
                lambda a: np.argmax(a, axis, keepdims=keepdims), x, check_dtype=np.int32)
            add(lambda a: jnp.argmin(a, axis, keepdims=keepdims),
                lambda a: np.argmin(a, axis, keepdims=keepdims), x, check_dtype=np.int32)
    m = rand((3, 5, 2), np.bool_, 4)
    batch.check(lambda a, w: jnp.max(a, 1, where=w, initial=0),
                lambda a, w: np.max(a, 1, where=w, initial=0), x, m)
    with pytest.raises(ValueError):
        jnp.max(x, where=m)
    with pytest.raises(ValueError):
        jnp.max(np.zeros((0, 2)), axis=0)
    batch.check(lambda a: jnp.all(a, where=a > 0), lambda a: np.all(a, where=a > 0), x)


@pytest.mark.parametrize("dtype", FULL_DTYPES)
def test_max_min_all_any_arg(dtype):
    batch = NumpyBatch()
    _max_min_cases(batch, rand((3, 5, 2), dtype), AXES)
    batch.run()


def test_max_min_all_any_arg_other_ints():
    batch = NumpyBatch()
    for dtype in FOLDED_DTYPES:
        _max_min_cases(batch, rand((3, 5, 2), dtype), FOLDED_JIT_AXES)
    batch.run()


def test_max_nan_and_arg_nan():
    batch = NumpyBatch()
    x = np.array([[1.0, np.nan, 3.0], [-1.0, 2.0, 0.5]], np.float32)
    batch.check(lambda a: jnp.max(a, 1), lambda a: np.max(a, 1), x)
    batch.check(lambda a: jnp.argmax(a, 1), lambda a: np.argmax(a, 1), x)
    batch.check(lambda a: jnp.argmin(a, 1), lambda a: np.argmin(a, 1), x)
    batch.run()


def _mean_var_std_cases(batch, x, full):
    for axis in AXES[:4]:
        add = batch.check if full or axis in FOLDED_JIT_AXES else batch.check_eager
        for keepdims in (False, True):
            for jf, nf in ((jnp.mean, np.mean), (jnp.var, np.var), (jnp.std, np.std)):
                got = add(lambda a: jf(a, axis, keepdims=keepdims),
                          lambda a: nf(a.astype(np.float64), axis, keepdims=keepdims), x,
                          rtol=2e-5, atol=1e-5)
                assert got.dtype == np.float32
    # ddof, where= and dtype= act after the conversion to float: the same compiled code for
    # every integer dtype, so the folded dtypes check them eagerly only.
    add = batch.check if full else batch.check_eager
    for ddof in (0, 1, 2):
        add(lambda a: jnp.var(a, 1, ddof=ddof),
            lambda a: np.var(a.astype(float), 1, ddof=ddof), x, rtol=2e-5)
        add(lambda a: jnp.std(a, 0, correction=ddof),
            lambda a: np.std(a.astype(float), 0, ddof=ddof), x, rtol=2e-5)
    w = rand((3, 4, 5), np.bool_, 6) | (np.arange(5) == 0)
    for jf, nf in ((jnp.mean, np.mean), (jnp.var, np.var), (jnp.std, np.std)):
        add(lambda a, m: jf(a, -1, where=m), lambda a, m: nf(a.astype(float), -1, where=m),
            x, w, rtol=2e-5, atol=1e-5)
    add(lambda a: jnp.mean(a, dtype=jnp.float16), lambda a: np.mean(a.astype(np.float64)),
        x, rtol=5e-3, atol=1e-2)


@pytest.mark.parametrize("dtype", FULL_DTYPES)
def test_mean_var_std(dtype):
    batch = NumpyBatch()
    _mean_var_std_cases(batch, rand((3, 4, 5), dtype), full=True)
    batch.run()


def test_mean_var_std_other_ints():
    batch = NumpyBatch()
    for dtype in FOLDED_DTYPES:
        _mean_var_std_cases(batch, rand((3, 4, 5), dtype), full=False)
    batch.run()


def test_mean_var_x64(x64):
    batch = NumpyBatch()
    x = rand((4, 5), np.int32)
    got = batch.check(jnp.mean, np.mean, x, rtol=1e-12)
    assert got.dtype == np.float64
    assert jnp.sum(np.ones(3, np.int8)).dtype == np.int64
    batch.run()


def test_average():
    batch = NumpyBatch()
    x = rand((3, 4), np.float32)
    w = rand((3, 4), np.float32, 2, low=0.5, high=2)
    batch.check(jnp.average, np.average, x, rtol=1e-5)
    batch.check(lambda a, b: jnp.average(a, weights=b), lambda a, b: np.average(a, weights=b), x, w,
                rtol=1e-5)
    batch.check(lambda a, b: jnp.average(a, 1, weights=b[0]),
                lambda a, b: np.average(a, 1, weights=b[0]), x, w, rtol=1e-5)
    batch.check(lambda a, b: jnp.average(a, 0, weights=b, returned=True),
                lambda a, b: np.average(a, 0, weights=b, returned=True), x, w, rtol=1e-5)
    batch.check(lambda a: jnp.average(a, 1, keepdims=True),
                lambda a: np.average(a, 1, keepdims=True), x, rtol=1e-5)
    # weights along a tuple of axes, in either order (shaped as a along them, as NumPy)
    x3 = x.reshape(2, 3, 2)
    for axes, wt in (((0, 2), w[0, :4].reshape(2, 2)), ((2, 0), w[1, :4].reshape(2, 2))):
        batch.check(lambda a, b, ax=axes: jnp.average(a, ax, weights=b, returned=True),
                    lambda a, b, ax=axes: np.average(a, ax, weights=b, returned=True), x3,
                    wt, rtol=1e-5)
    batch.run()
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        jnp.average(x, 1, weights=w[:, 0])


def test_nan_reductions():
    batch = NumpyBatch()
    x = rand((4, 5), np.float32)
    x[0, 1] = x[2, :] = x[3, 4] = np.nan
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        for jf, nf in ((jnp.nansum, np.nansum), (jnp.nanprod, np.nanprod),
                       (jnp.nanmax, np.nanmax), (jnp.nanmin, np.nanmin),
                       (jnp.nanmean, np.nanmean)):
            for axis in (None, 0, 1):
                batch.check(lambda a: jf(a, axis), lambda a: nf(a, axis), x, rtol=1e-5)
        batch.check(lambda a: jnp.nanargmax(a, 1), lambda a: np.nanargmax(a, 1),
                    x[[0, 1, 3]])
    batch.check(jnp.nansum, np.nansum, rand((5,), np.int16))
    batch.run()


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(method):
    batch = NumpyBatch()
    x = rand((5, 6), np.float32)
    for q in (0.0, 0.3, 0.5, 1.0, np.array([0.1, 0.9], np.float32)):
        for axis in (None, 0, 1):
            # Compiled: every q along axis 1, the vector q along every axis (the sort and
            # the interpolation are the same code for each scalar q); eager: all of them.
            add = batch.check if axis == 1 or np.ndim(q) else batch.check_eager
            add(lambda a: jnp.quantile(a, q, axis, method=method),
                lambda a: np.quantile(a, q, axis, method=method), x, rtol=1e-5, atol=1e-6)
    batch.check(lambda a: jnp.percentile(a, 40, 1, method=method, keepdims=True),
                lambda a: np.percentile(a, 40, 1, method=method, keepdims=True), x, rtol=1e-5,
                atol=1e-6)
    batch.run()


def test_median():
    batch = NumpyBatch()
    x = rand((4, 7), np.float32)
    for axis in (None, 0, 1):
        batch.check(lambda a: jnp.median(a, axis), lambda a: np.median(a, axis), x, rtol=1e-6)
    batch.check(jnp.median, np.median, rand((6,), np.int32))
    y = x.copy()
    y[1, 2] = np.nan
    batch.check(lambda a: jnp.median(a, 1), lambda a: np.median(a, 1), y)
    got = ember.jit(lambda a, q: jnp.quantile(a, q))(x, np.float32(0.25))
    np.testing.assert_allclose(got, np.quantile(x, 0.25), rtol=1e-6)
    batch.run()


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nan_arg_extremes_give_minus_one_for_all_nan_slices(name: str) -> None:
    # JAX gives -1 for a slice of only NaNs (NumPy raises); the other slices skip NaNs.
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [0.0, -1.0, np.nan]],
                 np.float32)
    fn = getattr(jnp, name)
    best = {"nanargmax": [2, -1, 0], "nanargmin": [0, -1, 1]}[name]
    for f in (fn, ember.jit(fn, static_argnames=("axis", "keepdims"))):
        np.testing.assert_array_equal(np.asarray(f(x, axis=1)), best)
        np.testing.assert_array_equal(np.asarray(f(x, axis=1, keepdims=True)),
                                      np.array(best)[:, None])
        assert int(f(np.full((4,), np.nan, np.float32))) == -1
        assert int(f(x[0])) == best[0]


@pytest.mark.parametrize("name,initial", [("nanmax", 5.0), ("nanmin", -5.0)])
def test_nan_extremes_with_initial_give_it_for_all_nan_slices(name: str, initial: float) -> None:
    # Without initial an all-NaN slice is NaN; with one it is the initial value, as in JAX.
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], np.float32)
    fn = getattr(jnp, name)
    for f in (fn, ember.jit(fn, static_argnames=("axis",))):
        np.testing.assert_array_equal(np.asarray(f(x, axis=1, initial=initial)),
                                      [initial, initial])
        out = np.asarray(f(x, axis=1))
        assert out[0] == {"nanmax": 3.0, "nanmin": 1.0}[name] and np.isnan(out[1])


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@pytest.mark.parametrize("shape", [(3, 4), (1, 7), (5, 33), (2, 3, 5)])
def test_nan_extremes_with_where_and_initial(name: str, shape: tuple[int, ...]) -> None:
    # where= masks elements out; an all-NaN (or all masked-out) slice gives initial, as in
    # JAX and NumPy; the first row is all NaN, the second masked out entirely.
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) < 0.3] = np.nan
    x[0] = np.nan
    w = rng.random(shape) < 0.6
    if shape[0] > 1:
        w[1] = False
    initial = {"nanmax": -0.5, "nanmin": 0.5}[name]
    jf, nf = getattr(jnp, name), getattr(np, name)
    for axis in (None, 0, -1):
        with warnings.catch_warnings():  # (NumPy warns on an all-NaN slice)
            warnings.simplefilter("ignore", RuntimeWarning)
            want = nf(x, axis=axis, where=w, initial=initial)
        fn = lambda a, m: jf(a, axis=axis, where=m, initial=initial)  # noqa: E731
        for got in (fn(x, w), ember.jit(fn)(x, w)):
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("fname", ["var", "std"])
def test_var_std_nonpositive_divisor_is_nan(fname: str) -> None:
    # n - ddof <= 0 gives NaN, as JAX (NumPy gives inf where the sum is not 0, and warns);
    # a masked-out slice too. The correction is a traced argument of the nested jit, so
    # one compiled program serves every ddof.
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], np.float32)
    f = getattr(jnp, fname)
    for ddof, want_finite in ((2, True), (3, False), (4, False)):
        for got in (f(x, axis=1, ddof=ddof),
                    ember.jit(lambda a, d=ddof: f(a, axis=1, ddof=d))(x)):
            got = np.asarray(got)
            assert np.isfinite(got).all() == want_finite, (ddof, got)
            if want_finite:
                np.testing.assert_allclose(got, getattr(np, fname)(x, axis=1, ddof=ddof),
                                           rtol=1e-6)
            else:
                assert np.isnan(got).all()
    w = np.array([[True, True, False], [False, False, False]])
    got = np.asarray(ember.jit(lambda a, m: f(a, axis=1, where=m))(x, w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(got, getattr(np, fname)(x, axis=1, where=w), rtol=1e-6)


def test_reductions_over_axes_given_out_of_order() -> None:
    # The axes reach the primitive in the order given (reduce_sum[axes=(2, 0)], as JAX);
    # values, keepdims shapes, gradients and vmap match NumPy's for any order
    x = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(np.float32)
    b = NumpyBatch()
    for axes in ((2, 0), (1, -3), (2, 1, 0)):
        for name in ("sum", "prod", "max", "min", "mean", "var", "any", "all"):
            b.check(lambda a, n=name, ax=axes: getattr(jnp, n)(a > 0 if n in ("any", "all")
                                                                else a, axis=ax),
                    lambda a, n=name, ax=axes: getattr(np, n)(a > 0 if n in ("any", "all")
                                                              else a, axis=ax), x, rtol=1e-5)
        b.check(lambda a, ax=axes: jnp.max(a, axis=ax, keepdims=True),
                lambda a, ax=axes: np.max(a, axis=ax, keepdims=True), x)
    b.run()
    grad = ember.grad(lambda a: jnp.prod(a, axis=(2, 0)).sum())(x)
    want = np.prod(x, axis=(2, 0), keepdims=True) / x
    np.testing.assert_allclose(np.asarray(grad), want, rtol=1e-4)
    out = ember.vmap(lambda a: jnp.sum(a, axis=(1, 0)))(x)
    np.testing.assert_allclose(np.asarray(out), x.sum(axis=(2, 1)), rtol=1e-5)
