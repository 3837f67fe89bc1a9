"""The jax.numpy functions scientific code uses (issue 25, item 5) against NumPy (and JAX
where the two differ): histograms, index tricks, polynomials, calculus, statistics,
editing, number functions, windows, predicates. Eager and jit: each test collects its
cases in a `NumpyBatch` (tests/ops/batched_checks.py), so it pays one compile; static
arguments (bins, sizes, axes) are closed over. Shapes include odd sizes and empty ones;
bad input gets JAX's error text. Set operations and vectorize are in
test_numpy_more_sets.py; grad and vmap through these functions in
test_numpy_more_transforms.py.
"""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import NumpyBatch
from test_numpy_support import rand

import ember
import ember.numpy as jnp
from ember.core.errors import ConcretizationTypeError

F32 = np.float32


def _data(shape, seed=0, dtype=F32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- histograms -------------------------------------------------------------------------------

def test_bincount_digitize():
    b = NumpyBatch()
    for n in (0, 1, 7, 33):
        x = np.random.default_rng(n).integers(0, 9, n).astype(np.int32)
        w = _data(n, n)
        b.check(lambda x: jnp.bincount(x, length=12), lambda x: np.bincount(x, minlength=12), x)
        b.check(lambda x, w: jnp.bincount(x, w, length=12),
                lambda x, w: np.bincount(x, w, minlength=12), x, w, rtol=1e-5)
        b.check_eager(lambda x: jnp.bincount(x, minlength=3), lambda x: np.bincount(
            x, minlength=3), x)
        for bins in (np.array([-0.5, 0.0, 1.0], F32), np.array([2.0, 0.5, -1.0], F32)):
            for right in (False, True):
                b.check(lambda v, e: jnp.digitize(v, e, right), lambda v, e: np.digitize(
                    v, e, right), w, bins)
    b.run()
    x = np.array([-2, 0, 3, 3, 9], np.int32)
    # JAX's rules: negative values count in bin 0, values past `length` are dropped.
    np.testing.assert_array_equal(jnp.bincount(x, length=4), [2, 0, 0, 2])
    np.testing.assert_array_equal(jnp.bincount(np.array([True, True])), [0, 2])
    assert jnp.bincount(np.zeros(0, np.int32)).shape == (0,)
    assert jnp.digitize(np.ones(3, F32), np.zeros(0, F32)).dtype == np.int32
    with pytest.raises(TypeError, match="x argument to bincount must have an integer type"):
        jnp.bincount(np.ones(3, F32))
    with pytest.raises(ValueError, match="only 1-dimensional input supported"):
        jnp.bincount(np.ones((2, 2), np.int32))
    with pytest.raises(ConcretizationTypeError, match="pass a static `length`"):
        ember.jit(jnp.bincount)(x)
    with pytest.raises(ValueError, match="bins must be a 1-dimensional array"):
        jnp.digitize(x, np.ones((2, 2)))


def test_histogram_int_bins_places_values_on_edges_as_numpy() -> None:
    # Equal-width edges are searched (as JAX stages it): a value on an inner edge opens
    # the next bin, one on the last edge closes the last bin, a NaN or outside value is
    # dropped, and an empty span widens by 0.5 each way, as NumPy counts them.
    a = np.array([-1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0, 1.0, 3.0, np.nan, 9.0], F32)
    cases = [(a[:9], 4, None), (a[:9], 8, None), (a, 4, (-1.0, 1.0)), (a, 2, (0.0, 1.0)),
             (np.full(5, 2.0, F32), 3, None)]
    for x, bins, rng in cases:
        want_counts, want_edges = np.histogram(x, bins, rng)
        for fun in (jnp.histogram, ember.jit(jnp.histogram, static_argnums=(1, 2))):
            counts, edges = fun(x, bins, rng)
            np.testing.assert_array_equal(np.asarray(counts), want_counts)
            np.testing.assert_allclose(np.asarray(edges), want_edges, rtol=1e-7)


def test_histograms():
    b = NumpyBatch()
    for n in (2, 10, 37):
        a = _data(n, n)
        w = np.abs(_data(n, n + 1))
        check = b.check if n == 10 else b.check_eager
        for bins in (1, 5, 8):
            for rng in (None, (-1.0, 1.5)):
                check(lambda a: jnp.histogram(a, bins, rng), lambda a: np.histogram(
                    a, bins, rng), a, rtol=1e-5)
                check(lambda a, w: jnp.histogram(a, bins, rng, weights=w, density=True),
                        lambda a, w: np.histogram(a, bins, rng, weights=w, density=True),
                        a, w, rtol=1e-4)
        edges = np.array([-2.0, -0.5, 0.0, 0.25, 3.0], F32)
        check(lambda a, e: jnp.histogram(a, e), lambda a, e: np.histogram(a, e), a, edges)
        check(lambda a: jnp.histogram_bin_edges(a, 6), lambda a: np.histogram_bin_edges(
            a, 6), a, rtol=1e-5)
        y = _data(n, n + 2)
        for bins in (4, (3, 5)):
            check(lambda x, y: jnp.histogram2d(x, y, bins), lambda x, y: np.histogram2d(
                x, y, bins), a, y, rtol=1e-5)
        check(lambda x, y, w: jnp.histogram2d(x, y, 3, [(-1, 1), (-2, 2)], w, True),
                lambda x, y, w: np.histogram2d(x, y, 3, [(-1, 1), (-2, 2)], weights=w,
                                               density=True),
                a, y, w, rtol=1e-4)
        s = _data((n, 3), n)
        check(lambda s: jnp.histogramdd(s, (2, 3, 4)), lambda s: np.histogramdd(
            s, (2, 3, 4)), s, rtol=1e-5)
    # a constant input: the range widens by 1/2 each side; integers count as floats
    b.check(lambda a: jnp.histogram(a, 4), lambda a: np.histogram(a, 4), np.full(5, 2.0, F32))
    b.check(lambda a: jnp.histogram(a, 3), lambda a: np.histogram(a, 3),
            np.array([1, 2, 2, 3, 7], np.int32), rtol=1e-6)
    b.check(lambda a: jnp.histogram(a, 3, (0, 1)), lambda a: np.histogram(a, 3, (0, 1)),
            np.zeros(0, F32))
    # values on and one float either side of every edge: an int `bins` bins by arithmetic,
    # which must agree with the binary search over the same edges
    edges = np.asarray(jnp.histogram_bin_edges(np.zeros(1, F32), 6, (-1.0, 2.0)))
    near = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                           [np.nan, -np.inf, np.inf]]).astype(F32)
    b.check(lambda a: jnp.histogram(a, 6, (-1.0, 2.0)), lambda a: np.histogram(
        a[np.isfinite(a)], edges), near)
    b.check(lambda a: jnp.histogramdd(a[:, None], 6, [(-1.0, 2.0)])[0],
            lambda a: np.histogram(a[np.isfinite(a)], edges)[0], near)
    b.run()
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram(np.ones(3), "auto")
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        jnp.histogram(np.ones(3), 2, weights=np.ones(2))
    with pytest.raises(ValueError, match="should be a bin for each dimension"):
        jnp.histogramdd(np.ones((4, 2)), [2, 3, 4])
    with pytest.raises(ValueError, match="should have one weight for each sample"):
        jnp.histogramdd(np.ones((4, 2)), 2, weights=np.ones(3))


# -- index tricks -----------------------------------------------------------------------------

def test_ravel_unravel_index():
    b = NumpyBatch()
    dims = (3, 5, 4)
    idx = tuple(np.random.default_rng(i).integers(0, d, 7).astype(np.int32)
                for i, d in enumerate(dims))
    for order in ("C", "F"):
        b.check(lambda *i: jnp.ravel_multi_index(i, dims, mode="clip", order=order),
                lambda *i: np.ravel_multi_index(i, dims, order=order), *idx)
        b.check_eager(lambda *i: jnp.ravel_multi_index(i, dims, order=order),
                      lambda *i: np.ravel_multi_index(i, dims, order=order), *idx)
    wild = (np.array([-1, 3, 7], np.int32), np.array([6, 0, -7], np.int32))
    for mode in ("wrap", "clip"):
        b.check(lambda *i: jnp.ravel_multi_index(i, (3, 5), mode=mode),
                lambda *i: np.ravel_multi_index(i, (3, 5), mode=mode), *wild)
    flat = np.array([0, 7, 59, 23, 41], np.int32)
    b.check(lambda f: jnp.unravel_index(f, dims), lambda f: np.unravel_index(f, dims), flat)
    b.check(lambda f: jnp.unravel_index(f, (7,)), lambda f: np.unravel_index(f, (7,)),
            np.arange(7, dtype=np.int32))
    b.run()
    # out of range: clipped to the corners (JAX), not an error; -size..-1 count from the end
    got = jnp.unravel_index(np.array([-5, -1, 60, 100, -61], np.int32), (3, 20))
    np.testing.assert_array_equal(got[0], [2, 2, 2, 2, 0])
    np.testing.assert_array_equal(got[1], [15, 19, 19, 19, 0])
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        jnp.ravel_multi_index(wild, (3, 5))
    with pytest.raises(ConcretizationTypeError, match="Use mode='wrap' or mode='clip'"):
        ember.jit(lambda i, j: jnp.ravel_multi_index((i, j), (3, 5)))(*wild)
    with pytest.raises(ValueError, match="not large enough"):
        jnp.ravel_multi_index(wild, (300, 500), dtype=np.int8)


def test_triangle_diag_indices_and_fill():
    for n, k, m in ((4, 0, None), (5, 1, 3), (3, -1, 6), (0, 0, None), (1, 2, 1)):
        for name in ("tril_indices", "triu_indices"):
            got = getattr(jnp, name)(n, k, m)
            want = getattr(np, name)(n, k, m)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert g.dtype == np.int32
    a = np.zeros((3, 5))
    for name in ("tril_indices_from", "triu_indices_from"):
        for g, w in zip(getattr(jnp, name)(a, 1), getattr(np, name)(a, 1)):
            np.testing.assert_array_equal(g, w)
    for g, w in zip(jnp.diag_indices(4, 3), np.diag_indices(4, 3)):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(jnp.diag_indices_from(np.zeros((3, 3))), np.diag_indices_from(
            np.zeros((3, 3)))):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(jnp.mask_indices(4, jnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
        jnp.triu_indices_from(np.zeros(3))
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        jnp.diag_indices_from(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="must be nonnegative"):
        jnp.diag_indices(-1)

    b = NumpyBatch()

    def np_fill(a, v):
        a = a.copy()
        np.fill_diagonal(a, v)
        return a

    for shape in ((3, 5), (5, 3), (4, 4, 4), (1, 1)):
        a = rand(shape, F32)
        for v in (np.float32(7.0), np.array([1.0, 2.0], F32)):
            b.check(lambda a, v: jnp.fill_diagonal(a, v, inplace=False), np_fill, a, v)
    b.run()
    with pytest.raises(NotImplementedError, match="must use inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="array must be at least 2-d"):
        jnp.fill_diagonal(np.zeros(2), 1.0, inplace=False)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # NumPy's r_["r"]: a matrix
def test_ix_r_c_s_index_exp():
    rows, cols = np.array([0, 2], np.int32), np.array([1, 3, 4], np.int32)
    a = rand((3, 5), F32)
    np.testing.assert_array_equal(jnp.asarray(a)[jnp.ix_(rows, cols)], a[np.ix_(rows, cols)])
    assert [g.shape for g in jnp.ix_(rows, np.zeros(0, np.int32))] == [(2, 1), (1, 0)]
    with pytest.raises(ValueError, match="must be 1-dimensional"):
        jnp.ix_(np.zeros((2, 2), np.int32))
    with pytest.raises(NotImplementedError, match="Boolean arguments"):
        jnp.ix_(np.array([True, False]))
    v = np.array([7, 8], np.int32)
    cases = [
        (jnp.r_[1:4, 0, v], np.r_[1:4, 0, v]),
        (jnp.r_[0:1:5j, v], np.r_[0:1:5j, v]),
        (jnp.r_["0,2", v, v], np.r_["0,2", v, v]),
        (jnp.r_["0,2,0", v, v], np.r_["0,2,0", v, v]),
        (jnp.r_["0,3,-1", v, v], np.r_["0,3,-1", v, v]),
        (jnp.r_["r", 1:3], np.r_["r", 1:3]),
        (jnp.r_["c", v, 2], np.r_["c", v, 2]),
        (jnp.c_[np.arange(3), np.arange(3, 6)], np.c_[np.arange(3), np.arange(3, 6)]),
        (jnp.c_[a, a[:, :1]], np.c_[a, a[:, :1]]),
    ]
    # trans1d on a 2-D item: JAX rotates the axes (NumPy would give (1, 2, 2))
    assert jnp.r_["1,3,1", [[1, 2]], [[3, 4]]].shape == (1, 4, 1)
    for got, want in cases:
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[v, "r"]
    with pytest.raises(ValueError, match="could not understand directive"):
        jnp.r_["x,y", v]
    assert jnp.s_[1:3, ::2] == np.s_[1:3, ::2] and jnp.s_[4] == 4
    assert jnp.index_exp[1:3] == np.index_exp[1:3] == (slice(1, 3),)
    out = ember.jit(lambda x: x[jnp.s_[1:, ::2]] + jnp.r_[0:3])(a)
    np.testing.assert_array_equal(out, a[1:, ::2] + np.r_[0:3])


# -- convolution and polynomials --------------------------------------------------------------

def test_convolve_correlate():
    b = NumpyBatch()
    for n, m in ((7, 3), (3, 7), (1, 1), (5, 5), (8, 2)):
        x, y = _data(n, n), _data(m, m + 9)
        for mode in ("full", "same", "valid"):
            b.check(lambda x, y: jnp.convolve(x, y, mode), lambda x, y: np.convolve(
                x, y, mode), x, y, rtol=1e-5, atol=1e-6)
            b.check(lambda x, y: jnp.correlate(x, y, mode), lambda x, y: np.correlate(
                x, y, mode), x, y, rtol=1e-5, atol=1e-6)
    ints = np.array([1, 2, 3], np.int32)
    b.check(lambda a: jnp.convolve(a, a), lambda a: np.convolve(a, a).astype(F32), ints)
    b.check(lambda a: jnp.convolve(a, a, preferred_element_type=np.int32),
            lambda a: np.convolve(a, a), ints, check_dtype=np.int32)
    b.run()
    with pytest.raises(ValueError, match="only support 1-dimensional inputs"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        jnp.correlate(np.ones(0), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(np.ones(3), np.ones(2), "bad")


def test_polynomials():
    b = NumpyBatch()
    p = np.array([2.0, -1.0, 0.5, 3.0], F32)
    q = np.array([1.0, 4.0], F32)
    x = np.linspace(-2, 2, 9).astype(F32)
    b.check(jnp.polyval, np.polyval, p, x, rtol=1e-5)
    b.check(jnp.polyval, np.polyval, p, np.float32(1.5), rtol=1e-5)
    b.check(jnp.polyval, np.polyval, np.array([3, 0, -2], np.int32),
            np.arange(-3, 4, dtype=np.int32))
    b.check(jnp.polyval, np.polyval, np.zeros(0, F32), x)
    long_p = (_data(40, 3) * 0.1).astype(F32)  # longer than `unroll`: the scan
    b.check(jnp.polyval, np.polyval, long_p, x / 2, rtol=1e-5, atol=1e-6)
    b.check(lambda p, x: jnp.polyval(p, x, unroll=1), np.polyval, p, x, rtol=1e-5)
    for f in ("polyadd", "polysub", "polymul"):
        b.check(getattr(jnp, f), getattr(np, f), p, q, rtol=1e-6)
        b.check(getattr(jnp, f), getattr(np, f), q, p, rtol=1e-6)
    for m in (0, 1, 2, 5):
        b.check(lambda p: jnp.polyder(p, m), lambda p: np.polyder(p, m), p)
        b.check(lambda p: jnp.polyint(p, m), lambda p: np.polyint(p, m), p, rtol=1e-6)
    b.check(lambda p, k: jnp.polyint(p, 2, k), lambda p, k: np.polyint(p, 2, k), p,
            np.array([1.0, -2.0], F32), rtol=1e-6)
    b.check(lambda z: jnp.poly(z), lambda z: np.poly(z), np.array([1.0, -2.0, 0.5], F32),
            rtol=1e-6)
    b.check(lambda z: jnp.poly(z), lambda z: np.poly(z), np.zeros(0, F32))
    # polydiv keeps the remainder at u's length (JAX); NumPy trims it
    quot, rem = np.polydiv(p, q)
    b.check(jnp.polydiv, lambda u, v: (quot, np.concatenate([np.zeros(3), rem])), p, q,
            rtol=1e-5, atol=1e-6)
    b.run()
    np.testing.assert_allclose(jnp.polydiv(p, q, trim_leading_zeros=True)[1], rem, rtol=1e-5)
    np.testing.assert_array_equal(jnp.trim_zeros(np.array([0, 0, 1, 0, 2, 0, 0])), [1, 0, 2])
    np.testing.assert_array_equal(jnp.trim_zeros(np.array([0, 1, 0]), "b"), [0, 1])
    np.testing.assert_array_equal(jnp.polymul(np.array([0.0, 1, 2]), q,
                                              trim_leading_zeros=True), np.polymul([1, 2], q))
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(p))),
                               np.sort_complex(np.roots(p)), rtol=1e-4, atol=1e-5)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], F32)
    np.testing.assert_allclose(jnp.poly(m), np.poly(m), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(p, -1)
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array"):
        jnp.polyint(p, 2, np.ones(3))


def test_polyfit():
    rng = np.random.default_rng(3)
    x = np.linspace(-1, 2, 25).astype(F32)
    y = (0.5 * x**3 - x + 2 + 0.01 * rng.standard_normal(25)).astype(F32)
    y2 = np.stack([y, np.cos(x)], 1).astype(F32)
    w = rng.uniform(0.5, 2, 25).astype(F32)
    b = NumpyBatch()
    for deg in (0, 1, 3, 5):
        check = b.check if deg == 3 else b.check_eager
        check(lambda x, y: jnp.polyfit(x, y, deg), lambda x, y: np.polyfit(x, y, deg),
              x, y, rtol=2e-3, atol=2e-4)
    b.check_eager(lambda x, y: jnp.polyfit(x, y, 2), lambda x, y: np.polyfit(x, y, 2), x, y2,
                  rtol=2e-3, atol=2e-4)
    b.check_eager(lambda x, y, w: jnp.polyfit(x, y, 3, w=w), lambda x, y, w: np.polyfit(
        x, y, 3, w=w), x, y, w, rtol=2e-3, atol=2e-4)
    for cov in (True, "unscaled"):
        check = b.check if cov is True else b.check_eager
        check(lambda x, y: jnp.polyfit(x, y, 2, cov=cov), lambda x, y: np.polyfit(
            x, y, 2, cov=cov), x, y, rtol=5e-3, atol=1e-5)
    b.run()
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jnp.polyfit(x, y[:3], 1)
    with pytest.raises(TypeError, match="expected non-empty vector for x"):
        jnp.polyfit(np.zeros(0), np.zeros(0), 1)
    with pytest.raises(NotImplementedError, match=r"full=True.*not implemented yet"):
        jnp.polyfit(x, y, 1, full=True)


# -- calculus ----------------------------------------------------------------------------------

def test_trapezoid_gradient():
    b = NumpyBatch()
    for shape in ((7,), (3, 5), (2, 3, 4), (0,), (4, 1)):
        y = _data(shape, 1)
        for axis in range(-len(shape), len(shape)):
            b.check(lambda y: jnp.trapezoid(y, axis=axis), lambda y: np.trapezoid(
                y, axis=axis), y, rtol=1e-5, atol=1e-6)
            b.check(lambda y: jnp.trapezoid(y, dx=0.5, axis=axis), lambda y: np.trapezoid(
                y, dx=0.5, axis=axis), y, rtol=1e-5, atol=1e-6)
            n = shape[axis]
            xs = np.cumsum(np.abs(_data(n, 2)) + 0.1).astype(F32)
            b.check(lambda y, x: jnp.trapezoid(y, x, axis=axis), lambda y, x: np.trapezoid(
                y, x, axis=axis), y, xs, rtol=1e-5, atol=1e-6)
    b.check(lambda y: jnp.trapezoid(y), lambda y: np.trapezoid(y).astype(F32),
            np.arange(6, dtype=np.int32))
    for shape in ((7,), (3, 5), (2, 3, 4)):
        f = _data(shape, 4)
        b.check(lambda f: tuple(jnp.gradient(f)) if f.ndim > 1 else jnp.gradient(f),
                lambda f: tuple(np.gradient(f)) if f.ndim > 1 else np.gradient(f), f,
                rtol=1e-5, atol=1e-6)
        b.check(lambda f: jnp.gradient(f, 0.5, axis=-1), lambda f: np.gradient(
            f, 0.5, axis=-1), f, rtol=1e-5, atol=1e-6)
        coords = np.cumsum(np.abs(_data(shape[0], 5)) + 0.2).astype(F32)
        b.check(lambda f, c: jnp.gradient(f, c, axis=0), lambda f, c: np.gradient(
            f, c, axis=0), f, coords, rtol=1e-4, atol=1e-5)
    f = _data((4, 5), 6)
    b.check(lambda f: tuple(jnp.gradient(f, 2.0, axis=[1, 0])),  # (a list of axes)
            lambda f: tuple(np.gradient(f, 2.0, axis=(1, 0))), f, rtol=1e-5, atol=1e-6)
    b.run()
    assert jnp.gradient(np.ones((3, 3)), axis=()) == []
    with pytest.raises(ValueError, match="at least 2 elements are required"):
        jnp.gradient(np.ones((1, 3)))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(np.ones(3), edge_order=2)
    with pytest.raises(ValueError, match="Spacing arrays must have the same length"):
        jnp.gradient(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="Invalid number of spacing arguments"):
        jnp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0)


def test_interp_unwrap_vander_ediff1d():
    b = NumpyBatch()
    xp = np.array([-1.0, 0.0, 0.5, 2.0, 3.5], F32)
    fp = np.array([2.0, -1.0, 0.0, 4.0, 1.0], F32)
    for x in (np.linspace(-3, 5, 17).astype(F32), np.float32(0.25), np.zeros(0, F32),
              np.array([[-1.0, 0.5], [3.5, 9.0]], F32)):
        b.check(jnp.interp, np.interp, x, xp, fp, rtol=1e-6)
        b.check(lambda x, xp, fp: jnp.interp(x, xp, fp, left=-9.0, right=9.0),
                lambda x, xp, fp: np.interp(x, xp, fp, left=-9.0, right=9.0), x, xp, fp,
                rtol=1e-6)
        b.check(lambda x, xp, fp: jnp.interp(x, xp, fp, period=4.0),
                lambda x, xp, fp: np.interp(x, xp, fp, period=4.0), x, xp, fp,
                rtol=1e-5, atol=1e-6)
    b.check(jnp.interp, np.interp, np.arange(-2, 5, dtype=np.int32),
            np.arange(4, dtype=np.int32), np.array([0, 10, 20, 40], np.int32))
    for shape in ((9,), (3, 7), (0,)):
        ph = np.cumsum(np.random.default_rng(7).uniform(-2.5, 2.5, shape), -1).astype(F32)
        wrapped = np.mod(ph, 2 * np.pi).astype(F32)
        b.check(jnp.unwrap, np.unwrap, wrapped, rtol=1e-5, atol=1e-5)
        b.check(lambda p: jnp.unwrap(p, discont=4.0, axis=0), lambda p: np.unwrap(
            p, discont=4.0, axis=0), wrapped, rtol=1e-5, atol=1e-5)
    b.check(lambda p: jnp.unwrap(p, period=6), lambda p: np.unwrap(p, period=6),
            np.array([0, 5, 1, 6, 2, 9], np.int32))
    for x in (np.array([1.5, -2.0, 0.5], F32), np.array([2, 3, -1, 0], np.int32),
              np.zeros(0, F32)):
        b.check(jnp.vander, np.vander, x, rtol=1e-6)
        b.check(lambda x: jnp.vander(x, 5, increasing=True), lambda x: np.vander(
            x, 5, increasing=True), x, rtol=1e-6)
        b.check(jnp.ediff1d, np.ediff1d, x)
    b.check(lambda a, s, e: jnp.ediff1d(a, e, s), lambda a, s, e: np.ediff1d(a, e, s),
            rand((3, 4), np.int32), np.array([-7], np.int32), np.array([8, 9], np.int32))
    b.run()
    with pytest.raises(ValueError, match="xp and fp must be one-dimensional arrays of equal"):
        jnp.interp(1.0, np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="the only valid string value of `left`"):
        jnp.interp(1.0, xp, fp, left="x")
    ext = jnp.interp(np.array([-2.0, 5.0], F32), xp, fp, left="extrapolate",
                     right="extrapolate")
    np.testing.assert_allclose(ext, [5.0, -2.0], rtol=1e-6)
    with pytest.raises(ValueError, match="x must be a one-dimensional array"):
        jnp.vander(np.ones((2, 2)))
    with pytest.raises(ValueError, match="N must be nonnegative"):
        jnp.vander(np.ones(2), -1)


# -- statistics --------------------------------------------------------------------------------

def test_cov_corrcoef():
    b = NumpyBatch()
    x = _data((3, 8), 1)
    y = _data(8, 2)
    fw = np.array([1, 2, 1, 3, 1, 1, 2, 1], np.int32)
    aw = np.abs(_data(8, 3)) + 0.1
    for args, kw in (((x,), {}), ((x, y), {}), ((x.T,), {"rowvar": False}),
                     ((x,), {"bias": True}), ((x,), {"ddof": 3}), ((y,), {}),
                     ((x[:1],), {})):
        b.check(lambda *a: jnp.cov(*a, **kw), lambda *a: np.cov(*a, **kw), *args,
                rtol=1e-5, atol=1e-6)
        b.check(lambda *a: jnp.corrcoef(*a, **{k: v for k, v in kw.items()
                                                if k == "rowvar"}),
                lambda *a: np.corrcoef(*a, **{k: v for k, v in kw.items() if k == "rowvar"}),
                *args, rtol=1e-5, atol=1e-6)
    for ddof in (None, 0, 2):
        b.check(lambda x, f: jnp.cov(x, fweights=f, ddof=ddof), lambda x, f: np.cov(
            x, fweights=f, ddof=ddof), x, fw, rtol=1e-5, atol=1e-6)
        b.check(lambda x, f, a: jnp.cov(x, fweights=f, aweights=a, ddof=ddof),
                lambda x, f, a: np.cov(x, fweights=f, aweights=a, ddof=ddof), x, fw, aw,
                rtol=1e-5, atol=1e-6)
    b.check(jnp.cov, np.cov, np.array([[1, 2, 4], [0, 3, 3]], np.int32), rtol=1e-6)
    b.run()
    assert jnp.cov(np.zeros((0, 3))).shape == (0, 0)
    assert np.isnan(np.asarray(jnp.cov(np.zeros((2, 0))))).all()
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="fweights must be integer"):
        jnp.cov(x, fweights=aw)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        jnp.cov(x, aweights=aw[:3])


def test_nan_statistics():
    b = NumpyBatch()
    a = _data((3, 5, 4), 2)
    a[0, 1, 2] = np.nan
    a[1, :, 3] = np.nan  # an all-NaN slice along axis 1
    q = np.array([0.0, 0.3, 0.5, 1.0], F32)
    for axis in (None, 0, 1, -1, (0, 2)):
        for keepdims in (False, True):
            kw = {"axis": axis, "keepdims": keepdims}
            # every variant eagerly; one compile for a few (the jit body is the same code)
            check = b.check if (axis, keepdims) in ((None, False), ((0, 2), True)) \
                else b.check_eager
            for f in ("nanvar", "nanstd", "nanmedian"):
                check(lambda a: getattr(jnp, f)(a, **kw), lambda a: getattr(np, f)(a, **kw),
                      a, rtol=1e-5, atol=1e-6)
            check(lambda a: jnp.nanvar(a, ddof=1, **kw), lambda a: np.nanvar(
                a, ddof=1, **kw), a, rtol=1e-5, atol=1e-6)
            for method in ("linear", "lower", "higher", "midpoint"):
                check(lambda a, q: jnp.nanquantile(a, q, method=method, **kw),
                      lambda a, q: np.nanquantile(a, q, method=method, **kw), a, q,
                      rtol=1e-5, atol=1e-6)
            check(lambda a: jnp.nanpercentile(a, 35.0, **kw), lambda a: np.nanpercentile(
                a, 35.0, **kw), a, rtol=1e-5, atol=1e-6)
    b.check(jnp.nanmedian, np.nanmedian, np.array([3, 1, 2, 8], np.int32))
    b.check(jnp.nanvar, np.nanvar, np.array([1.0, np.nan], F32))
    # inverted_cdf, with and without weights (shaped like a, or like the reduced axes)
    w = np.random.default_rng(3).uniform(0, 2, a.shape).astype(F32)
    w_bad = w.copy()
    w_bad[2, 0, 0] = -1.0  # a negative weight makes its slice NaN
    q = np.array([0.0, 0.2, 0.5, 0.99, 1.0], F32)
    for axis in (None, 1, (0, 2)):
        b.check(lambda a, q: jnp.nanquantile(a, q, axis, method="inverted_cdf"),
                lambda a, q: np.nanquantile(a, q, axis, method="inverted_cdf"), a, q)
        for weights in (w, w_bad):
            b.check(lambda a, q, w: jnp.nanquantile(a, q, axis, method="inverted_cdf",
                                                    weights=w),
                    lambda a, q, w: _np_weighted_quantile(a, q, axis, w), a, q, weights)
    b.check(lambda a, w: jnp.nanquantile(a, 0.4, 1, method="inverted_cdf", weights=w,
                                         keepdims=True),
            lambda a, w: np.nanquantile(a, 0.4, 1, method="inverted_cdf", keepdims=True,
                                        weights=np.broadcast_to(w[None, :, None], a.shape)),
            a, w[0, :, 0].copy())
    empty = np.zeros((0, 3), F32)  # an empty slice gives NaN, as NumPy (JAX raises)
    for axis in (0, 1, None):
        b.check(lambda a: jnp.nanmedian(a, axis=axis, keepdims=True),
                lambda a: np.nanmedian(a, axis=axis, keepdims=True), empty)
    b.run()
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        jnp.nanquantile(a, np.ones((2, 2)) / 2)
    with pytest.raises(ValueError, match="method can only be"):
        jnp.nanquantile(a, 0.5, method="bad")
    with pytest.raises(ValueError, match="does not support overwrite_input=True"):
        jnp.nanmedian(a, overwrite_input=True)
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf' supports"):
        jnp.nanquantile(a, 0.5, weights=w)
    with pytest.raises(ValueError, match="must match reduction axes"):
        jnp.nanquantile(a, 0.5, 1, method="inverted_cdf", weights=np.ones(3, F32))


def _np_weighted_quantile(a, q, axis, w):
    """NumPy's weighted inverted_cdf, with JAX's NaN for a slice holding a negative
    weight (NumPy raises)."""
    bad = np.any(w < 0, axis=axis)
    out = np.nanquantile(a, q, axis, method="inverted_cdf", weights=np.maximum(w, 0))
    return np.where(bad, np.nan, out)


# -- building and editing ----------------------------------------------------------------------

def test_block_insert_delete():
    b = NumpyBatch()
    a = rand((3, 4), np.int32)
    c = rand((3, 2), np.int32, seed=1)
    d = rand((2, 6), np.int32, seed=2)
    b.check(lambda a, c, d: jnp.block([[a, c], [d]]), lambda a, c, d: np.block(
        [[a, c], [d]]), a, c, d)
    b.check(lambda a, c: jnp.block([a, c]), lambda a, c: np.block([a, c]), a, c)
    b.check(lambda v: jnp.block([[v], [v]]), lambda v: np.block([[v], [v]]),
            np.array([1.0, 2.0], F32))
    b.check(lambda v: jnp.block(v), lambda v: np.block(v), np.float32(3.0))
    for obj in (1, -1, slice(0, 3, 2), np.array([0, 2], np.int32),
                np.array([True, False, False, True])):
        b.check_eager(lambda a: jnp.delete(a, obj, axis=1), lambda a: np.delete(
            a, obj, axis=1), a)
    for obj in (2, slice(None, None, 3), np.array([0, 11, 5], np.int32)):
        b.check_eager(lambda a: jnp.delete(a, obj), lambda a: np.delete(a, obj), a)
    b.check(lambda a, i: jnp.delete(a, i, 1, assume_unique_indices=True),
            lambda a, i: np.delete(a, i, 1), a, np.array([3, 0], np.int32))
    b.check(lambda a: jnp.delete(a, slice(1, 3), 0), lambda a: np.delete(a, slice(1, 3), 0),
            a)
    for obj, v in ((1, np.int32(99)), (np.array([0, 2, 2], np.int32), np.array([7, 8, 9],
                                                                               np.int32)),
                   (slice(1, 3), np.array([5, 6], np.int32)), (4, np.array([1, 2, 3],
                                                                          np.int32)),
                   (-1, np.int32(0))):
        b.check(lambda a, v: jnp.insert(a, obj, v, axis=1), lambda a, v: np.insert(
            a, obj, v, axis=1), a, v)
        b.check(lambda a, v: jnp.insert(a, obj, v), lambda a, v: np.insert(a, obj, v), a, v)
    b.check(lambda a, v: jnp.insert(a, 1, v, axis=0), lambda a, v: np.insert(a, 1, v, axis=0),
            a, np.array([[1, 2, 3, 4]], np.int32))
    b.run()
    with pytest.raises(ValueError, match="does not allow tuples"):
        jnp.block((a, a))
    with pytest.raises(ValueError, match="Mismatched list depths"):
        jnp.block([[a], a])
    with pytest.raises(ValueError, match="does not allow empty list"):
        jnp.block([])
    with pytest.raises(ConcretizationTypeError):
        ember.jit(lambda a, i: jnp.delete(a, i))(a, np.array([1], np.int32))
    with pytest.raises(ValueError, match="index array must be integer typed"):
        jnp.insert(a, jnp.array([1.0]), 0)


def test_compress_extract_choose():
    b = NumpyBatch()
    a = rand((4, 5), F32)
    cond = np.array([True, False, True, True])
    b.check_eager(lambda c, a: jnp.compress(c, a, axis=0), lambda c, a: np.compress(
        c, a, axis=0), cond, a)
    b.check_eager(lambda c, a: jnp.compress(c, a), lambda c, a: np.compress(c, a), cond, a)
    b.check(lambda c, a: jnp.compress(c, a, axis=0, size=3), lambda c, a: np.compress(
        c, a, axis=0), cond, a)
    cols = np.array([True, False, True, False, False])
    b.check(lambda c, a: jnp.compress(c, a, axis=1, size=4, fill_value=-1.0),
            lambda c, a: np.concatenate([np.compress(c, a, axis=1),
                                         np.full((4, 2), -1.0, F32)], 1), cols, a)
    mask = a > 0
    b.check_eager(jnp.extract, np.extract, mask, a)
    n = int(mask.sum())
    b.check(lambda m, a: jnp.extract(m, a, size=n + 2, fill_value=7.0),
            lambda m, a: np.concatenate([np.extract(m, a), [7.0, 7.0]]), mask, a)
    choices = [rand((3, 4), np.int32, seed=s) for s in range(3)]
    idx = np.array([[0, 1, 2, 1], [2, 2, 0, 0], [1, 0, 1, 2]], np.int32)
    b.check_eager(lambda i, *c: jnp.choose(i, c), lambda i, *c: np.choose(i, c), idx,
                  *choices)
    wild = idx * 3 - 2
    for mode in ("wrap", "clip"):
        b.check(lambda i, *c: jnp.choose(i, c, mode=mode), lambda i, *c: np.choose(
            i, c, mode=mode), wild, *choices)
    b.check(lambda i, x: jnp.choose(i, [x, 0.5], mode="clip"),
            lambda i, x: np.choose(i, [x, np.float32(0.5)], mode="clip"),
            np.array([0, 1, 1, 0], np.int32), np.arange(4, dtype=F32))
    b.run()
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(wild, choices)
    with pytest.raises(ConcretizationTypeError, match="Use mode='wrap' or mode='clip'"):
        ember.jit(lambda i, c: jnp.choose(i, [c, c]))(idx, choices[0])
    with pytest.raises(ValueError, match="condition must be a 1D array"):
        jnp.compress(np.ones((2, 2), bool), a)
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        jnp.compress(cond, a, axis=0, size=9)


def _np_partition(a, kth, axis):
    """JAX's partition order: the kth+1 smallest ascending, then the rest descending; and
    argpartition's: their stable sort indices, then the other indices in index order."""
    a = np.moveaxis(a, axis, -1)
    n = a.shape[-1]
    k = kth % n
    s = np.sort(a, -1)
    vals = np.concatenate([s[..., :k + 1], s[..., k + 1:][..., ::-1]], -1)
    order = np.argsort(a, -1, kind="stable")
    low = order[..., :k + 1]
    rest = np.sort(order[..., k + 1:], -1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(np.concatenate([low, rest], -1), -1, axis)


def test_partition_resize_rollaxis_put_along_axis():
    import jax.numpy as jjnp
    a = np.random.default_rng(1).permutation(11).astype(F32)
    np.testing.assert_array_equal(_np_partition(a, 3, 0)[0], jjnp.partition(a, 3))
    np.testing.assert_array_equal(_np_partition(a, 3, 0)[1], jjnp.argpartition(a, 3))
    b = NumpyBatch()
    for shape, axis in (((11,), -1), ((3, 6, 4), 1), ((5, 4), 0), ((1,), 0)):
        a = np.random.default_rng(sum(shape)).permutation(int(np.prod(shape))).reshape(
            shape).astype(F32)
        for kth in (0, shape[axis] // 2, -1):
            check = b.check if kth == 0 else b.check_eager
            check(lambda a: jnp.partition(a, kth, axis),
                  lambda a: _np_partition(a, kth, axis)[0], a)
            check(lambda a: jnp.argpartition(a, kth, axis),
                  lambda a: _np_partition(a, kth, axis)[1], a)
    b.check(lambda a: jnp.partition(a, 2), lambda a: np.concatenate(
        [np.sort(a)[:3], np.sort(a)[3:][::-1]]), np.array([5, 1, 1, 9, 3, 3, 0], np.int32))
    for shape in ((3, 4), (7,), (2, 0), ()):
        b.check(lambda x: jnp.resize(np.arange(5, dtype=np.int32), shape),
                lambda x: np.resize(np.arange(5), shape).astype(np.int32), np.int32(0))
    b.check(lambda x: jnp.resize(x, (2, 3)), lambda x: np.zeros((2, 3), F32),
            np.zeros(0, F32))
    x = rand((2, 3, 4, 5), F32)
    for axis, start in ((3, 1), (0, 4), (2, -1), (-1, 0)):
        b.check(lambda x: jnp.rollaxis(x, axis, start), lambda x: np.rollaxis(
            x, axis, start), x)
    arr = rand((3, 4), F32)
    for ind, axis in ((np.array([[0], [2], [1]], np.int32), 1),
                      (np.array([[1, 0, 2, 2]], np.int32), 0),
                      (np.array([0, 5, 11], np.int32), None)):
        def np_put(a, i, axis=axis):
            a = a.copy()
            np.put_along_axis(a, i, -1.0, axis)
            return a
        b.check(lambda a, i: jnp.put_along_axis(a, i, -1.0, axis, inplace=False), np_put,
                arr, ind)
    b.run()
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put_along_axis(arr, ind, 0.0, None)
    with pytest.raises(ValueError, match="all elements of `new_shape` must be non-negative"):
        jnp.resize(arr, (-1, 2))


# -- number functions ----------------------------------------------------------------------------

def test_frexp_spacing_gcd_lcm():
    b = NumpyBatch()
    special = np.array([0.0, 1.0, -3.5, 6.0, 1e-40, -1e-45, 1.2e-38, 3e38, np.inf,
                        -np.inf, np.nan, 0.1], F32)
    for x in (special, _data((3, 5), 1) * 100, np.zeros(0, F32)):
        b.check(jnp.frexp, np.frexp, x)
        b.check(jnp.spacing, np.spacing, x)
    b.check(jnp.frexp, lambda x: np.frexp(x.astype(F32)), np.array([0, 1, -12, 1000],
                                                                    np.int32))
    for dt in (np.int8, np.int32, np.uint16):
        x1 = rand((4, 5), dt, seed=1, low=-10 if dt != np.uint16 else 0, high=10)
        x2 = rand((5,), dt, seed=2, low=-11 if dt != np.uint16 else 0, high=11)
        b.check(jnp.gcd, np.gcd, x1, x2)
        b.check(jnp.lcm, np.lcm, x1, x2)
    zeros = np.array([0, 0, 6, -4, 0], np.int32)
    b.check(jnp.gcd, np.gcd, zeros, np.array([0, 9, 0, 6, 5], np.int32))
    b.check(jnp.lcm, np.lcm, zeros, np.array([0, 9, 0, 6, 5], np.int32))
    b.run()
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(1.0, 2.0)
    # spacing(-0.0) is the negative smallest subnormal in JAX (NumPy: the positive one)
    assert float(jnp.spacing(np.float32(-0.0))) == -float(np.finfo(F32).smallest_subnormal)


def test_i0_bitwise_count_packbits():
    b = NumpyBatch()
    x = np.array([0.0, 0.25, -1.0, 3.0, -7.5, 15.0, 19.99, 20.01, 35.0, -60.0, 85.0], F32)
    b.check(jnp.i0, np.i0, x, rtol=2e-6)
    b.check(jnp.i0, np.i0, _data((2, 3), 5) * 4, rtol=2e-6)
    b.check(jnp.i0, lambda v: np.i0(v.astype(np.float64)).astype(F32),
            np.array([0, 2, -3], np.int32), rtol=2e-6)
    b.run()
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint32):
        v = rand((9,), dt)
        v[0] = np.iinfo(dt).min
        v[1] = np.iinfo(dt).max
        b.check(jnp.bitwise_count, np.bitwise_count, v)
    b.check(jnp.bitwise_count, np.bitwise_count, np.array([True, False]))
    b.run()
    for shape in ((9,), (2, 3, 8), (0,), (3, 13)):
        bits = rand(shape, np.bool_)
        b.check(jnp.packbits, np.packbits, bits)
        # Two empty packbits in one program trip a CPU backend bug ("array constant
        # without a buffer"): the empty case's second variant is checked eagerly.
        check = b.check if bits.size else b.check_eager
        for axis in range(len(shape)):
            check(lambda v: jnp.packbits(v, axis, "little"), lambda v: np.packbits(
                v, axis, "little"), bits.astype(np.int32))
        packed = np.packbits(bits.astype(np.uint8), -1)
        b.check(jnp.unpackbits, np.unpackbits, packed)
        b.check(lambda p: jnp.unpackbits(p, -1, shape[-1], "little"),
                lambda p: np.unpackbits(p, -1, shape[-1], "little"), packed)
        if bits.size:  # NumPy's unpackbits pads an empty input with garbage
            b.check(lambda p: jnp.unpackbits(p, 0, 20), lambda p: np.unpackbits(p, 0, 20),
                    packed)
    b.run()
    assert not np.isfinite(np.asarray(jnp.i0(np.float32(100.0))))  # overflows f32 as NumPy
    with pytest.raises(TypeError, match="Expected an input array of unsigned byte"):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(TypeError, match="integer or boolean data type"):
        jnp.packbits(np.ones(3, F32))
    with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
        jnp.packbits(np.ones(3, np.int32), bitorder="middle")


def test_windows_and_predicates():
    b = NumpyBatch()
    for name in ("hanning", "hamming", "blackman", "bartlett"):
        for M in (0, 1, 2, 7, 16):
            (b.check if M == 7 else b.check_eager)(
                lambda x: getattr(jnp, name)(M) + x, lambda x: getattr(np, name)(M) + x,
                np.float32(0.0), atol=2e-7)
    for M, beta in ((1, 3.0), (8, 0.0), (9, 5.0), (12, 14.0)):
        (b.check if M == 9 else b.check_eager)(
            lambda beta: jnp.kaiser(M, beta), lambda beta: np.kaiser(M, beta),
            np.float32(beta), rtol=1e-5, atol=1e-7)
    b.check(lambda x: (jnp.iscomplex(x), jnp.isreal(x)), lambda x: (np.iscomplex(x),
                                                                    np.isreal(x)),
            rand((3, 2), F32))
    b.run()
    assert jnp.hanning(3).dtype == np.float32
    with pytest.raises(ConcretizationTypeError):
        ember.jit(jnp.hamming)(4)
    for v in (3, 2.5, np.float32(1), jnp.ones(()), np.ones(()), True):
        assert jnp.isscalar(v)
    for v in ([1], np.ones(2), jnp.ones(3), None):
        assert not jnp.isscalar(v)
    assert jnp.iscomplexobj(1j) and jnp.iscomplexobj(np.ones(2, np.complex64))
    assert not jnp.iscomplexobj(jnp.ones(2)) and jnp.isrealobj(3.0)
    assert jnp.iterable([1]) and jnp.iterable(jnp.ones(2)) and not jnp.iterable(3)


def test_float64_under_x64(x64):
    b = NumpyBatch()
    special = np.array([0.0, 1e-310, -3.5, 6.0, 1e300, np.inf, np.nan, 0.1, -2.0**-1074])
    b.check(jnp.frexp, np.frexp, special)
    b.check(jnp.spacing, np.spacing, special)
    b.check(jnp.i0, np.i0, np.array([0.0, 0.5, -3.0, 10.0, 19.9, 20.1, 50.0, -80.0, 700.0]),
            rtol=4e-15)
    x = np.linspace(0, 1, 30)
    b.check(lambda x, y: jnp.polyfit(x, y, 6), lambda x, y: np.polyfit(x, y, 6), x,
            np.cos(3 * x), rtol=1e-9, atol=1e-11)
    a = np.random.default_rng(0).random(1000)
    b.check(lambda a: jnp.histogram(a, 17), lambda a: np.histogram(a, 17), a, rtol=1e-13)
    b.check(lambda a: jnp.nanquantile(a, 0.3), lambda a: np.nanquantile(a, 0.3), a)
    b.check(lambda v: jnp.bincount(v, length=4), lambda v: np.bincount(v, minlength=4),
            np.array([1, 2, 2, 0]), check_dtype=np.int64)
    b.run()
