"""Set operations (isin, union1d, intersect1d, setdiff1d, setxor1d) and jnp.vectorize,
apply_along_axis, apply_over_axes against NumPy, eager and under jit (set operations with
a static `size=`, as JAX asks), plus the jnp names issue 25 item 5 adds.
"""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import NumpyBatch

import ember
import ember.numpy as jnp
from ember.core.errors import ConcretizationTypeError

F32 = np.float32
SET_OPS = ("union1d", "intersect1d", "setdiff1d", "setxor1d")


def _pad(v, size, fill):
    v = np.asarray(v)[:size]
    return np.concatenate([v, np.full(size - v.shape[0], fill, v.dtype)])


def _smallest(v):
    """JAX's default padding of setxor1d and intersect1d: the min of the result (NaN when
    it holds one), 0 when it is empty."""
    return np.min(v) if v.size else 0


def _pairs():
    rng = np.random.default_rng(0)
    out = []
    for n, m in ((9, 5), (1, 7), (0, 4), (6, 0), (0, 0), (13, 13)):
        out.append((rng.integers(-4, 6, n).astype(np.int32),
                    rng.integers(-4, 6, m).astype(np.int32)))
    nan = np.array([3.0, 1.0, np.nan, 2.0, 3.0, np.nan], F32)
    out.append((nan, np.array([2.0, np.nan, 5.0], F32)))
    out.append((rng.integers(0, 3, (2, 3)).astype(np.int32),
                rng.integers(1, 4, (3, 1)).astype(np.int32)))
    return out


def test_set_operations_eager_and_jit_with_size():
    b = NumpyBatch()
    for n_pair, (x, y) in enumerate(_pairs()):
        # every pair eagerly; the jit of the size= forms on every other pair (one compile)
        check = b.check if n_pair % 2 == 0 or x.dtype == F32 else b.check_eager
        for name in SET_OPS:
            want = getattr(np, name)(x, y)
            b.check_eager(getattr(jnp, name), getattr(np, name), x, y)
            size = want.shape[0] + 2
            # padding: JAX's defaults (union1d: the smallest value; intersect1d and
            # setxor1d: the smallest result, 0 without one; setdiff1d: 0) or fill_value
            fills = {"union1d": np.nanmin(np.concatenate([x.ravel(), y.ravel()]))
                     if x.size + y.size else 0,
                     "intersect1d": want[0] if want.size else 0,
                     "setxor1d": _smallest(want), "setdiff1d": 0}
            if x.dtype == F32 and name == "union1d":
                continue  # unique's own padding of a NaN-holding float input
            check(lambda x, y: getattr(jnp, name)(x, y, size=size),
                  lambda x, y: _pad(want, size, fills[name]), x, y)
            b.check_eager(lambda x, y: getattr(jnp, name)(x, y, size=max(size - 3, 0),
                                                          fill_value=-9),
                          lambda x, y: _pad(want, max(size - 3, 0), -9), x, y)
        for invert in (False, True):
            for method in ("auto", "sort", "binary_search", "compare_all"):
                (check if method == "sort" else b.check_eager)(
                    lambda x, y: jnp.isin(x, y, invert=invert, method=method),
                    lambda x, y: np.isin(x, y, invert=invert), x, y)
        vals, ia, ib = np.intersect1d(x, y, return_indices=True)
        b.check_eager(lambda x, y: jnp.intersect1d(x, y, return_indices=True),
                      lambda x, y: (vals, ia, ib), x, y)
        size = vals.shape[0] + 1
        check(lambda x, y: jnp.intersect1d(x, y, return_indices=True, size=size),
              lambda x, y: (_pad(vals, size, vals[0] if vals.size else 0),
                            _pad(ia, size, x.size), _pad(ib, size, y.size)), x, y)
    b.run()
    for name in SET_OPS:
        with pytest.raises(ConcretizationTypeError, match="size"):
            ember.jit(getattr(jnp, name))(np.arange(3), np.arange(2))
    with pytest.raises(ValueError, match="method='bad' is not implemented"):
        jnp.isin(np.arange(3), np.arange(2), method="bad")


def test_vectorize():
    b = NumpyBatch()
    x = np.arange(3, dtype=F32)[:, None]
    y = np.linspace(0, 1, 4).astype(F32)
    add = jnp.vectorize(lambda a, c: a * 2 + c)
    b.check(add, lambda a, c: a * 2 + c, x, y)
    b.check(add, lambda a, c: a * 2 + c, np.float32(2.0), y)
    b.check(add, lambda a, c: a * 2 + c, np.ones((1, 4), F32), np.ones((3, 1), F32))
    clip = jnp.vectorize(lambda v: jnp.where(v > 0.5, v * 10, -v))
    b.check(clip, lambda v: np.where(v > 0.5, v * 10, -v), y)
    mv = jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    m = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(F32)
    v = np.random.default_rng(2).standard_normal((2, 1, 4)).astype(F32)
    b.check(mv, lambda m, v: np.einsum("...mn,...n->...m", m, v), m, v, rtol=1e-5)
    stats = jnp.vectorize(lambda r: (r.mean(), r.max()), signature="(n)->(),()")
    b.check(stats, lambda r: (r.mean(-1), r.max(-1)), m, rtol=1e-6)
    power = jnp.vectorize(lambda a, p: a ** p, excluded={1})
    b.check(lambda a: power(a, 3), lambda a: a ** 3, y, rtol=1e-6)
    kw = jnp.vectorize(lambda a, c=1.0: a + c)
    b.check(lambda a, c: kw(a, c=c), lambda a, c: a + c, y, y[::-1].copy())
    b.check(lambda a: kw(a), lambda a: a + 1, y)
    b.run()
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        mv(m, np.ones(3, F32))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        mv(np.ones(4, F32), np.ones(4, F32))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda a: a, signature="(n->()")(y)
    bad = jnp.vectorize(lambda r: r, signature="(n)->()")
    with pytest.raises(ValueError, match="output shape .* does not match core dimensions"):
        bad(m)
    with pytest.raises(TypeError, match="can only exclude integer or string arguments"):
        jnp.vectorize(lambda a: a, excluded={1.5})
    assert add.__name__ == "<lambda>"


def test_apply_along_and_over_axes():
    b = NumpyBatch()
    a = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(F32)
    for axis in (0, 1, -1):
        b.check(lambda a: jnp.apply_along_axis(lambda v: v.sum() * v[0], axis, a),
                lambda a: np.apply_along_axis(lambda v: v.sum() * v[0], axis, a), a,
                rtol=1e-5)
        b.check(lambda a: jnp.apply_along_axis(lambda v: jnp.stack([v.min(), v.max()]),
                                               axis, a),
                lambda a: np.apply_along_axis(lambda v: np.stack([v.min(), v.max()]),
                                              axis, a), a)
        b.check(lambda a: jnp.apply_along_axis(jnp.diff, axis, a, n=2),
                lambda a: np.apply_along_axis(np.diff, axis, a, n=2), a, rtol=1e-6)
    for axes in ((0,), (0, 2), (1, 2, 0)):
        b.check(lambda a: jnp.apply_over_axes(jnp.sum, a, axes),
                lambda a: np.apply_over_axes(np.sum, a, axes), a, rtol=1e-5)
    b.check(lambda a: jnp.apply_over_axes(lambda x, ax: x * 2, a, (1,)),
            lambda a: a * 2, a)
    b.run()
    with pytest.raises(ValueError, match="not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda x, ax: x.sum(), a, (0,))


ADDED = ("histogram histogram2d histogramdd histogram_bin_edges bincount digitize interp "
         "polyval polyfit roots poly polyadd polysub polymul polydiv polyder polyint trapezoid "
         "gradient vander cov corrcoef unwrap isin intersect1d union1d setdiff1d setxor1d "
         "tril_indices triu_indices tril_indices_from triu_indices_from diag_indices "
         "diag_indices_from fill_diagonal ravel_multi_index unravel_index ix_ r_ c_ s_ "
         "index_exp mask_indices block insert delete compress extract choose partition "
         "argpartition nanmedian nanpercentile nanquantile nanstd nanvar frexp gcd lcm "
         "spacing i0 packbits unpackbits bitwise_count apply_along_axis apply_over_axes "
         "vectorize hanning hamming blackman bartlett kaiser iscomplex isreal isscalar "
         "iscomplexobj isrealobj iterable convolve correlate trim_zeros ediff1d resize "
         "rollaxis put_along_axis place put fromfunction matvec vecmat ComplexWarning "
         "array_repr array_str get_printoptions printoptions set_printoptions save savez "
         "load fromstring fromfile").split()


def test_the_added_names_are_jax_names_and_exist():
    from ember._jax_names import NAMES
    assert set(ADDED) <= set(NAMES["jax.numpy"])
    assert set(ADDED) <= set(dir(jnp))
    assert {"associative_scan", "reduce"} <= set(dir(ember.lax))


def test_place_put_fromfunction_matvec():
    import jax.numpy as jjnp
    b = NumpyBatch()
    a = np.arange(12, dtype=F32).reshape(3, 4)
    mask = a % 3 == 0

    def np_place(a, m, v):
        a = a.copy()
        np.place(a, m, v)
        return a

    b.check(lambda a, m, v: jnp.place(a, m, v, inplace=False), np_place, a, mask,
            np.array([-1.0, -2.0], F32))
    ind = np.array([0, 5, -1, 20, -30], np.int32)
    vals = np.array([9.0, 8.0], F32)
    for mode in (None, "clip", "wrap"):
        want = np.asarray(jjnp.put(a, ind, vals, mode=mode, inplace=False))
        b.check(lambda a, i, v: jnp.put(a, i, v, mode=mode, inplace=False),
                lambda a, i, v: want, a, ind, vals)
    m = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(F32)
    v = np.random.default_rng(5).standard_normal((4,)).astype(F32)
    w = np.random.default_rng(6).standard_normal((3,)).astype(F32)
    b.check(jnp.matvec, np.matvec, m, v, rtol=1e-5)
    b.check(jnp.vecmat, np.vecmat, w, m, rtol=1e-5)
    b.check(lambda x: jnp.fromfunction(lambda i, j: i * 10 + j + x, (3, 4), dtype=np.int32),
            lambda x: np.fromfunction(lambda i, j: i * 10 + j + x, (3, 4), dtype=np.int32),
            np.int32(1))
    b.check(lambda x: jnp.fromfunction(lambda i: i * x, 5), lambda x: np.fromfunction(
        lambda i: i * x, (5,)).astype(F32), np.float32(0.5))
    b.run()
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put(a, ind, vals)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.place(a, mask, vals)
    with pytest.raises(ValueError, match="Cannot place values from an empty array"):
        jnp.place(a, mask, np.zeros(0, F32), inplace=False)
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.put(a, ind, vals, mode="raise", inplace=False)


def test_host_io(tmp_path):
    x = jnp.arange(3.0)
    assert jnp.array_repr(x) == "ArrayImpl([0., 1., 2.], dtype=float32)"  # as JAX's
    assert jnp.array_str(x) == "[0. 1. 2.]"
    before = jnp.get_printoptions()["precision"]
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
    assert jnp.get_printoptions()["precision"] == before
    path = tmp_path / "a.npy"
    jnp.save(path, x)
    y = jnp.load(path)
    assert isinstance(y, ember.Array) and np.array_equal(y, [0.0, 1.0, 2.0])
    jnp.savez(tmp_path / "b.npz", a=np.arange(2))
    assert np.array_equal(jnp.load(tmp_path / "b.npz")["a"], [0, 1])
    z = jnp.fromstring("1 2 3", dtype=np.int32, sep=" ")
    assert isinstance(z, ember.Array) and z.dtype == np.int32 and z.tolist() == [1, 2, 3]
    assert issubclass(jnp.ComplexWarning, Warning)
    with pytest.raises(NotImplementedError, match="may be non-pure"):
        jnp.fromfile(str(path))


def _many_pairs():
    """Inputs of odd sizes with repeats, NaN, -0.0 beside 0.0, infinities, empty ones,
    all-NaN ones, 2-D ones and mixed dtypes."""
    rng = np.random.default_rng(7)
    special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0], F32)
    out = []
    for n, m in ((1, 1), (2, 3), (5, 5), (7, 2), (11, 6), (13, 17), (0, 3), (4, 0)):
        out.append((rng.integers(-3, 4, n).astype(np.int32),
                    rng.integers(-3, 4, m).astype(np.int32)))
        out.append((rng.choice(special, n), rng.choice(special, m)))
    out.append((np.full(3, np.nan, F32), np.array([1.0], F32)))
    out.append((np.array([np.nan, 2.0, np.nan], F32), np.full(2, np.nan, F32)))
    out.append((np.array([-0.0, 0.0, -0.0], F32), np.array([0.0], F32)))
    out.append((rng.integers(0, 4, (3, 3)).astype(np.int32), rng.choice(special, (2, 2))))
    return out


def _unique_shuffled(rng, v):
    u = np.unique(v)
    if u.dtype.kind == "f":
        u = u[~np.isnan(u)]
    return rng.permutation(u)


def test_intersect_setdiff_setxor_against_numpy_over_many_inputs():
    # Eagerly, with and without size= (padding as JAX defines it: fill_value, else
    # setdiff1d 0, intersect1d and setxor1d the result's min, 0 when empty); under jit
    # one pair. assume_unique on inputs without repeats.
    rng = np.random.default_rng(8)
    b = NumpyBatch()
    for k, (x, y) in enumerate(_many_pairs()):
        # (under jit: one pair of floats with NaN, -0.0 and infinities; compiles are costly,
        # and the fidelity table checks jit against eager on its own set-op cases)
        check = b.check if k == 11 else b.check_eager
        for name in ("intersect1d", "setdiff1d", "setxor1d"):
            want = getattr(np, name)(x, y)
            got = b.check_eager(getattr(jnp, name), getattr(np, name), x, y)
            # (JAX's promotion: int32 with float32 is float32; setdiff1d keeps x's dtype)
            assert got.dtype == (x.dtype if name == "setdiff1d" else jnp.result_type(x, y))
            default = 0 if name == "setdiff1d" else _smallest(want)
            for size in (want.size + 3, max(want.size - 1, 0)):
                (check if size > want.size else b.check_eager)(
                    lambda x, y: getattr(jnp, name)(x, y, size=size),
                    lambda x, y: _pad(want, size, default), x, y)
                b.check_eager(lambda x, y: getattr(jnp, name)(x, y, size=size, fill_value=7),
                              lambda x, y: _pad(want, size, 7), x, y)
            xu, yu = _unique_shuffled(rng, x), _unique_shuffled(rng, y)
            want_u = getattr(np, name)(xu, yu, assume_unique=True)
            b.check_eager(lambda x, y: getattr(jnp, name)(x, y, assume_unique=True),
                          lambda x, y: want_u, xu, yu)
            b.check_eager(lambda x, y: getattr(jnp, name)(x, y, assume_unique=True,
                                                          size=want_u.size + 2),
                          lambda x, y: _pad(want_u, want_u.size + 2, 0 if name == "setdiff1d"
                                            else _smallest(want_u)), xu, yu)
        vals, ia, ib = np.intersect1d(x, y, return_indices=True)
        b.check_eager(lambda x, y: jnp.intersect1d(x, y, return_indices=True),
                      lambda x, y: (vals, ia, ib), x, y)
        for size in (vals.size + 2, max(vals.size - 1, 0)):
            (check if size > vals.size else b.check_eager)(
                lambda x, y: jnp.intersect1d(x, y, return_indices=True, size=size),
                lambda x, y: (_pad(vals, size, _smallest(vals)), _pad(ia, size, x.size),
                              _pad(ib, size, y.size)), x, y)
        vu, iu, ju = np.intersect1d(xu, yu, assume_unique=True, return_indices=True)
        b.check_eager(lambda x, y: jnp.intersect1d(x, y, assume_unique=True,
                                                   return_indices=True),
                      lambda x, y: (vu, iu, ju), xu, yu)
        check(lambda x, y: jnp.intersect1d(x, y, assume_unique=True, return_indices=True,
                                           size=vu.size + 1, fill_value=-1),
              lambda x, y: (_pad(vu, vu.size + 1, -1), _pad(iu, vu.size + 1, xu.size),
                            _pad(ju, vu.size + 1, yu.size)), xu, yu)
    b.run()


def test_set_operations_size_edge_cases():
    nan2 = np.full(2, np.nan, F32)
    # NumPy's setdiff1d([nan, nan], [1]) is [nan]: padded with 0, not with a second NaN
    # (JAX 0.10.2's [nan, nan]; see setdiff1d's docstring)
    np.testing.assert_array_equal(jnp.setdiff1d(nan2, np.ones(1, F32), size=2), [np.nan, 0])
    np.testing.assert_array_equal(
        ember.jit(lambda a, b: jnp.setdiff1d(a, b, size=3, fill_value=5))(nan2, nan2[:1]),
        [np.nan, 5, 5])
    # setxor1d pads with the result's min, NaN when it holds one (as JAX)
    np.testing.assert_array_equal(jnp.setxor1d(np.array([1.0, np.nan], F32),
                                               np.array([2.0], F32), size=4),
                                  [1.0, 2.0, np.nan, np.nan])
    for name in ("intersect1d", "setdiff1d", "setxor1d"):
        assert getattr(jnp, name)(np.arange(3), np.arange(2), size=0).shape == (0,)
        with pytest.raises(ValueError, match="size must be non-negative"):
            getattr(jnp, name)(np.arange(3), np.arange(2), size=-1)
    # both inputs empty: every index is padding (JAX's gather of an empty array fails)
    e = np.zeros(0, np.int32)
    out = jnp.intersect1d(e, np.arange(3, dtype=np.int32), return_indices=True, size=2)
    assert [np.asarray(o).tolist() for o in out] == [[0, 0], [0, 0], [3, 3]]
    with pytest.raises(TypeError, match="fill_value must be a concrete scalar"):
        ember.jit(lambda a, f: jnp.intersect1d(a, a, size=2, fill_value=f))(
            np.arange(3), np.int32(1))


def test_membership_past_the_all_pairs_limit_searches():
    # Past 2**22 pairs isin (method="auto") and setdiff1d search a sorted copy instead of
    # comparing every pair (JAX's program): the same answers, NaN in nothing, -0.0 == 0.0
    rng = np.random.default_rng(9)
    x = rng.integers(-1500, 1500, 2100).astype(F32)
    y = rng.integers(-1500, 1500, 2100).astype(F32)
    x[::97], y[::89], x[5], y[7] = np.nan, np.nan, -0.0, 0.0
    assert x.size * y.size > 1 << 22
    for invert in (False, True):
        want = np.isin(x, y, invert=invert)
        np.testing.assert_array_equal(np.asarray(jnp.isin(x, y, invert=invert)), want)
        np.testing.assert_array_equal(
            np.asarray(ember.jit(lambda a, b, i=invert: jnp.isin(a, b, invert=i))(x, y)), want)
    want = np.setdiff1d(x, y)
    np.testing.assert_array_equal(np.asarray(jnp.setdiff1d(x, y)), want)
    np.testing.assert_array_equal(np.asarray(jnp.setdiff1d(x, y, size=want.size + 2,
                                                           fill_value=-7)),
                                  np.concatenate([want, [-7, -7]]))
