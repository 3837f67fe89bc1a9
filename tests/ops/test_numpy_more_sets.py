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
                     "setxor1d": want[0] if want.size else 0, "setdiff1d": 0}
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
