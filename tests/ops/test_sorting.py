"""sort / argsort / lexsort / lax.sort (multi-operand) / top_k / searchsorted / unique /
nonzero against NumPy, eager and under jit (eager == jit bit for bit).

A test's cases are collected in a `LaxBatch` (tests/ops/batched_checks.py) and compiled as
one program (one compile instead of one per case, same assertions per case). Every case
runs eagerly against NumPy; only the comparator differs per dtype (bool, signed, unsigned,
float total order; 8/32/64 bits), so the whole shape and axis grid is compiled for the
FULL_SORT_DTYPES and a subset of it for the rest."""

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import LaxBatch
from op_tables import (
    BOOL,
    FLOATS,
    INTS,
    X64_FLOATS,
    X64_INTS,
    assert_bitwise_equal,
    assert_eager_jit_numpy,
    dtype_params,
    sample,
    use_dtype,
)

import ember
import ember.numpy as jnp
from ember import lax
from ember.core.errors import ConcretizationTypeError
from ember.lax._sorting import take_prefix

RNG = np.random.default_rng(1)
SORT_DTYPES = dtype_params(BOOL + INTS + FLOATS + X64_INTS + X64_FLOATS)
SORT_SHAPES = [(0,), (7,), (33,), (3, 5), (2, 3, 4)]
# Every shape and axis compiled for these (an integer and a float comparator); the other
# dtypes (bool, unsigned, other widths, float64) compile a vector-tail length and the middle
# axis of a 3-D array and check the rest eagerly.
FULL_SORT_DTYPES = {np.dtype(d) for d in (np.int8, np.float32)}
# Cases per compiled program: sorts in one program fuse into kernels whose compile time
# grows faster than their number (measured for this file: 2 per program 30 s, all 42 s).
SORT_BATCH = 2


def _compiled(dtype, shape, axis=1):
    return np.dtype(dtype) in FULL_SORT_DTYPES or shape == (33,) or (
        shape == (2, 3, 4) and axis == 1)


def _eager_jit_tuple(fn, *args):
    """eager == jit bit for bit for a function returning a tuple, no retrace on a second
    call (op_tables.assert_no_retrace handles single arrays only). Returns jit's tuple."""
    jitted = ember.jit(fn)
    eager, out = fn(*args), jitted(*args)
    count = jitted.trace_count
    again = jitted(*args)
    assert jitted.trace_count == count
    assert len(eager) == len(out) == len(again)
    for e, o, a in zip(eager, out, again):
        assert_bitwise_equal(e, o, "eager vs jit")
        assert_bitwise_equal(o, a, "second jit call")
    return out


def _with_ties(shape, dtype, rng=RNG):
    """Samples with many repeats (and the edge values: NaN, -0.0, +0.0, ...)."""
    x = sample(shape, dtype, rng)
    if x.size > 4 and np.dtype(dtype).kind != "b":
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, flat.size // 3)] = flat[0]
    return x


@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_sort_and_argsort(request, dtype):
    use_dtype(request, dtype)
    batch = LaxBatch(max_cases=SORT_BATCH)
    for shape in SORT_SHAPES:
        x = _with_ties(shape, dtype)
        for axis in range(-len(shape), len(shape)):
            add = batch.add if _compiled(dtype, shape, axis % len(shape)) else batch.add_eager
            add(lambda v, a=axis: jnp.sort(v, axis=a),
                lambda v, a=axis: np.sort(v, axis=a, kind="stable"), x)
            add(lambda v, a=axis: jnp.argsort(v, axis=a),
                lambda v, a=axis: np.argsort(v, axis=a, kind="stable"), x)
            add(lambda v, a=axis: jnp.sort(v, axis=a, descending=True),
                lambda v, a=axis: np.flip(np.sort(v, axis=a, kind="stable"), a), x)

            def desc_ref(v, a=axis):
                # Stable descending: equal entries keep their input order.
                n = v.shape[a]
                return n - 1 - np.flip(np.argsort(np.flip(v, a), axis=a, kind="stable"), a)

            add(lambda v, a=axis: jnp.argsort(v, axis=a, descending=True), desc_ref, x)
    x = _with_ties((3, 4), dtype)
    batch.add(lambda v: jnp.sort(v, axis=None),
              lambda v: np.sort(v, axis=None, kind="stable"), x)
    batch.add(lambda v: jnp.argsort(v, axis=None),
              lambda v: np.argsort(v, axis=None, kind="stable"), x)
    batch.run()


def test_sort_nan_and_signed_zero_order():
    x = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, -np.nan, np.inf, -0.0, -1.0], np.float32)
    out = np.asarray(jnp.sort(x))
    assert out[:7].tolist() == [-np.inf, -1.0, -0.0, 0.0, -0.0, 1.0, np.inf]
    # -0.0 and +0.0 compare equal (JAX's comparator): the stable sort keeps input order.
    assert np.signbit(out[2:5]).tolist() == [True, False, True]
    assert np.isnan(out[7:]).all()
    idx = np.asarray(ember.jit(jnp.argsort)(x))
    assert idx.tolist() == [3, 8, 2, 4, 7, 1, 6, 0, 5]
    assert idx.dtype == np.int32
    assert np.asarray(jnp.argsort(x, descending=True)).tolist() == [0, 5, 6, 1, 2, 4, 7, 8, 3]


def test_lax_sort_multi_operand_and_jaxpr():
    k1 = np.array([2, 1, 2, 1, 0, 2], np.int32)
    k2 = np.array([3.0, np.nan, 1.0, 0.5, 9.0, 1.0], np.float32)
    v = np.arange(6, dtype=np.int32)

    def f(a, b, c):
        return lax.sort((a, b, c), dimension=0, num_keys=2)

    outs = _eager_jit_tuple(f, k1, k2, v)
    order = np.lexsort((k2, k1))
    assert np.asarray(outs[2]).tolist() == order.tolist() == [4, 3, 1, 2, 5, 0]
    one_key = ember.jit(lambda a, b: lax.sort((a, b), num_keys=1))(k1, v)
    assert np.asarray(one_key[1]).tolist() == [4, 1, 3, 0, 2, 5]
    text = str(ember.make_jaxpr(f)(k1, k2, v))
    assert "= sort[dimension=0 is_stable=True num_keys=2] a b" in text
    keys, vals = lax.sort_key_val(np.array([3, 1, 2]), np.array([30, 10, 20]))
    assert np.asarray(vals).tolist() == [10, 20, 30]
    with pytest.raises(TypeError):
        lax.sort((np.ones(3), np.ones(4)))
    with pytest.raises(ValueError):
        lax.sort((np.ones(3), np.ones(3)), num_keys=3)


@pytest.mark.parametrize("dtype", dtype_params(FLOATS + INTS[:3] + BOOL))
def test_top_k(dtype):
    batch = LaxBatch(max_cases=SORT_BATCH)
    for shape in [(7,), (33,), (3, 5), (2, 3, 4)]:
        x = _with_ties(shape, dtype)
        for k in (0, 1, shape[-1] // 2, shape[-1]):
            def ref(v, k=k):
                # Descending, lower index first on ties; +0.0 above -0.0 (JAX's top_k
                # orders floats by totalOrder, as JAX's jax.lax.top_k does).
                key = -v.astype(np.float64)
                if v.dtype.kind == "f":  # (totalOrder through the bits: -0.0 < +0.0)
                    ity = {2: np.int16, 4: np.int32, 8: np.int64}[v.dtype.itemsize]
                    bits = v.view(ity).astype(np.int64)
                    key = -np.where(bits < 0, bits ^ np.iinfo(ity).max, bits)
                order = np.argsort(key, axis=-1, kind="stable")[..., :k]
                return np.take_along_axis(v, order, -1), order.astype(np.int32)

            if dtype.kind == "f":
                # NaN placement (first) is checked separately below.
                x = np.where(np.isnan(x), np.float32(0), x).astype(dtype)
            # The eager values are checked here, jit == eager bit for bit by batch.run().
            got = lax.top_k(x, k)
            if dtype in FULL_SORT_DTYPES or shape == (33,):
                batch.add(lambda v, k=k: lax.top_k(v, k), None, x)
            for g, w in zip(got, ref(x)):
                assert np.asarray(g).tobytes() == w.tobytes()
    batch.run()
    vals, idx = lax.top_k(np.array([1.0, np.nan, 5.0, 5.0, -np.inf], np.float32), 3)
    assert np.isnan(np.asarray(vals)[0]) and np.asarray(idx).tolist() == [1, 2, 3]
    # totalOrder, as JAX's top_k: -NaN lowest, +0.0 above -0.0, +NaN highest (eager == jit)
    x = np.array([1.0, -np.nan, -0.0, np.nan, -np.inf, 0.0, -0.0], np.float32)
    for fn in (lax.top_k, ember.jit(lax.top_k, static_argnums=1)):
        vals, idx = fn(x, 7)
        assert np.asarray(idx).tolist() == [3, 0, 5, 2, 6, 4, 1]
        assert np.asarray(vals).tobytes() == x[[3, 0, 5, 2, 6, 4, 1]].tobytes()
    v0, i0 = lax.top_k(np.arange(12, dtype=np.int32).reshape(3, 4), 2, axis=0)
    assert np.asarray(i0).tolist() == [[2, 2, 2, 2], [1, 1, 1, 1]]


def test_lexsort():
    a = sample((33,), np.int8, RNG, low=0, high=3)
    b = sample((33,), np.float32, RNG, low=0, high=2).round()
    c = sample((33,), np.uint8, RNG, low=0, high=2)
    assert_eager_jit_numpy(lambda x, y, z: jnp.lexsort((x, y, z)),
                           lambda x, y, z: np.lexsort((x, y, z)), a, b, c)
    m = sample((3, 4, 5), np.int32, RNG, low=0, high=3)
    assert_eager_jit_numpy(lambda x: jnp.lexsort(x, axis=0), lambda x: np.lexsort(x, axis=0), m)
    assert_eager_jit_numpy(jnp.lexsort, np.lexsort, m)


@pytest.mark.parametrize("dtype", dtype_params(FLOATS + INTS[:3] + X64_FLOATS))
def test_searchsorted(request, dtype):
    use_dtype(request, dtype)
    a = np.sort(_with_ties((33,), dtype), kind="stable")
    for vshape in [(), (7,), (3, 5), (0,)]:
        v = sample(vshape, dtype, RNG)
        if a.size and v.size:
            v.reshape(-1)[0] = a[5]
        for side in ("left", "right"):
            for method in ("scan", "sort", "compare_all"):
                assert_eager_jit_numpy(
                    lambda x, y, s=side, m=method: jnp.searchsorted(x, y, side=s, method=m),
                    lambda x, y, s=side: np.searchsorted(x, y, side=s), a, v)
    perm = RNG.permutation(33)
    unsorted = a[np.argsort(perm)]
    sorter = np.argsort(unsorted, kind="stable").astype(np.int32)
    v = sample((7,), dtype, RNG)
    assert_eager_jit_numpy(lambda x, y, s: jnp.searchsorted(x, y, sorter=s),
                           lambda x, y, s: np.searchsorted(x, y, sorter=s), unsorted, v, sorter)
    with pytest.raises(ValueError):
        jnp.searchsorted(a, v, side="middle")


@pytest.mark.parametrize("dtype", dtype_params(BOOL + INTS + FLOATS))
def test_unique(dtype):
    batch = LaxBatch(max_cases=SORT_BATCH)
    for shape in [(0,), (7,), (33,), (3, 5)]:
        x = _with_ties(shape, dtype)
        out = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
        ref = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                        equal_nan=True)
        for got, want in zip(out, ref):
            np.testing.assert_array_equal(np.asarray(got), want.reshape(np.shape(got)))
        count = ref[0].size
        for size in (count, count + 3, max(count - 1, 0)):
            def f(v, size=size):
                return jnp.unique(v, return_index=True, return_inverse=True,
                                  return_counts=True, size=size, fill_value=0)

            # The eager values are checked here, jit == eager bit for bit by batch.run().
            got = f(x)
            # A unique program compiles slowly (a sort, scans and a scatter): the dtypes
            # outside FULL_SORT_DTYPES compile a single case (their comparators are
            # compiled over more shapes by test_sort_and_argsort).
            if dtype in FULL_SORT_DTYPES or (shape == (7,) and size == count + 3):
                batch.add(f, None, x)
            keep = min(size, count)
            # Padding (as JAX's): fill_value for the values, the first index of the
            # smallest value for the indices (nonzero's padding position 0 of the sorted
            # order), 0 for the counts.
            pads = [0, ref[1][0] if count else 0, None, 0]
            for g, want, pad in zip(got, ref, pads):
                if g.shape != x.shape:
                    np.testing.assert_array_equal(np.asarray(g)[:keep], want[:keep])
                    assert (np.asarray(g)[keep:] == pad).all()
            np.testing.assert_array_equal(np.asarray(got[2]), ref[2].reshape(x.shape))
    x = _with_ties((33,), dtype)
    vals, counts = jnp.unique_counts(x)
    assert np.asarray(counts).sum() == 33
    assert jnp.unique_all(x).inverse_indices.shape == (33,)
    np.testing.assert_array_equal(np.asarray(jnp.unique_values(x)), np.unique(x))
    np.testing.assert_array_equal(np.asarray(jnp.unique_inverse(x).values), np.unique(x))
    batch.run()


def test_unique_merges_signed_zeros_and_nans_as_numpy() -> None:
    # -0.0 == 0.0 joins one run (the first in sorted order is kept); NaNs join one run
    # unless equal_nan=False; eager and jit(size=) agree with NumPy.
    x = np.array([3.0, 1.0, np.nan, 1.0, -0.0, 0.0, np.nan], np.float32)
    for equal_nan in (True, False):
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                         equal_nan=equal_nan)
        m = want[0].size
        got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                         equal_nan=equal_nan)
        jitted = ember.jit(lambda v, e=equal_nan, m=m: jnp.unique(
            v, return_index=True, return_inverse=True, return_counts=True, equal_nan=e,
            size=m))(x)
        for g, j, w in zip(got, jitted, want):
            np.testing.assert_array_equal(np.asarray(g), w)
            np.testing.assert_array_equal(np.asarray(j), w)
        assert np.signbit(np.asarray(got[0])[0])


def test_unique_nan_and_jit_errors():
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0], np.float32)
    assert np.asarray(jnp.unique(x)).size == 3
    assert np.asarray(jnp.unique(x, equal_nan=False)).size == 4
    with pytest.raises(ConcretizationTypeError, match="size="):
        ember.jit(jnp.unique)(x)
    with pytest.raises(ConcretizationTypeError, match="size="):
        ember.jit(jnp.nonzero)(x)
    padded = ember.jit(lambda v: jnp.unique(v, size=5))(np.array([3, 1, 3], np.int32))
    assert np.asarray(padded).tolist() == [1, 3, 1, 1, 1]   # fill defaults to the minimum


@pytest.mark.parametrize("dtype", dtype_params(BOOL + [np.dtype(np.int8)] + FLOATS))
def test_nonzero_family(dtype):
    batch = LaxBatch(max_cases=SORT_BATCH)
    for shape in [(0,), (7,), (33,), (3, 5), (2, 3, 4)]:
        x = sample(shape, dtype, RNG, low=-1, high=1)
        # Only the `!= 0` test depends on the dtype: every shape compiled for float32, a
        # 1-D and a 3-D one for the others, all of them eagerly.
        add = batch.add if dtype == np.float32 or shape in ((7,), (2, 3, 4)) else \
            batch.add_eager
        out = jnp.nonzero(x)
        ref = np.nonzero(x)
        assert len(out) == len(ref)
        for g, w in zip(out, ref):
            np.testing.assert_array_equal(np.asarray(g), w)
        n = ref[0].size
        for size in (n, n + 2, max(n - 2, 0)):
            keep = min(size, n)
            # The eager values are checked here, jit == eager bit for bit by batch.run().
            got = jnp.nonzero(x, size=size, fill_value=-1)
            if add == batch.add:
                batch.add(lambda v, s=size: jnp.nonzero(v, size=s, fill_value=-1), None, x)
            for g, w in zip(got, ref):
                assert np.asarray(g)[:keep].tolist() == w[:keep].tolist()
                assert (np.asarray(g)[keep:] == -1).all()
        add(lambda v, s=n: jnp.argwhere(v, size=s), np.argwhere, x)
        add(lambda v, s=n: jnp.flatnonzero(v, size=s), np.flatnonzero, x)
        add(jnp.count_nonzero, np.count_nonzero, x)
        if len(shape) > 1:
            add(lambda v: jnp.count_nonzero(v, axis=1, keepdims=True),
                lambda v: np.count_nonzero(v, axis=1, keepdims=True), x)
    batch.run()
    np.testing.assert_array_equal(np.asarray(jnp.argwhere(np.float32(2.0))),
                                  np.argwhere(np.float32(2.0)))
    with pytest.raises(ValueError):
        jnp.nonzero(np.float32(1.0))


def test_argwhere_size_fill_and_0d():
    # NumPy's rows, cut or padded to size= with fill_value (0 by default), eagerly and
    # under jit; 0-d inputs give shape (N, 0) as NumPy's (N = size when given)
    x = np.array([[0.0, -0.0, np.nan], [2.0, 0.0, -1.0]], np.float32)
    want = np.argwhere(x)
    for size, fill in ((5, None), (5, -1), (2, 7), (0, None)):
        pad = np.full((max(size - len(want), 0), 2), 0 if fill is None else fill)
        ref = np.concatenate([want, pad])[:size]
        for fn in (jnp.argwhere, ember.jit(jnp.argwhere, static_argnames=("size",
                                                                          "fill_value"))):
            got = np.asarray(fn(x, size=size, fill_value=fill))
            assert got.shape == ref.shape and (got == ref).all(), (size, fill, got)
    for v in (np.float32(0.0), np.float32(3.0), np.zeros((0, 3), np.float32)):
        assert np.asarray(jnp.argwhere(v)).shape == np.argwhere(v).shape
    assert np.asarray(ember.jit(lambda v: jnp.argwhere(v, size=3))(np.float32(2.0))
                      ).shape == (3, 0)


def test_take_along_axis_by_batched_gather():
    # The default mode is one gather with batching dimensions (JAX's program): NumPy's
    # values where the index broadcasts against the array on either side, negative
    # indices from the end, out-of-range ones filled (NaN, or fill_value), axis=None
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for ax, shape in ((0, (2, 4, 5)), (1, (3, 6, 1)), (2, (1, 4, 3)), (-1, (3, 1, 7)),
                      (1, (1, 2, 5))):
        i = rng.integers(-x.shape[ax], x.shape[ax], shape).astype(np.int32)
        want = np.take_along_axis(x, i, axis=ax)
        for fn in (jnp.take_along_axis, ember.jit(jnp.take_along_axis,
                                                  static_argnames=("axis",))):
            np.testing.assert_array_equal(np.asarray(fn(x, i, axis=ax)), want)
    i = np.array([0, 59, -1, 60, -61], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, i, axis=None)),
                                  [x.ravel()[0], x.ravel()[59], x.ravel()[-1], np.nan, np.nan])
    got = jnp.take_along_axis(x[0], np.array([[0, 5]]), axis=1, fill_value=-1.0)
    np.testing.assert_array_equal(np.asarray(got)[:, 1], -1.0)
    assert jnp.take_along_axis(np.zeros((3, 0), np.float32), np.zeros((3, 2), np.int32),
                               axis=1).shape == (3, 2)


def test_take_prefix_paths_agree():
    x = np.array([[-0.0, np.nan, 1.5], [2.0, -np.inf, 3.0]], np.float32)
    for k in (0, 2, 3, 5):
        a = take_prefix(x, k, 1, 7.0, onehot=True)
        ref = np.concatenate([x, np.full((2, 2), 7.0, np.float32)], 1)[:, :k]
        assert np.asarray(a).tobytes() == ref.tobytes()
