"""lax slicing primitives against NumPy and hand-written loop references.

slice, pad (negative and interior padding), concatenate, dynamic_slice /
dynamic_update_slice (XLA's clamping), gather and scatter with general dimension numbers
(batching dims included) and every mode, the printed params, and the abstract-eval errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_indexing import DTYPES, same_bits, sample

import ember
import ember.numpy as jnp
from ember import lax
from ember.lax import GatherDimensionNumbers as GDN
from ember.lax import GatherScatterMode
from ember.lax import ScatterDimensionNumbers as SDN


def both(f, *args):
    """f eagerly and under jit; asserts they agree bit for bit and returns the result."""
    eager = f(*args)
    jitted = ember.jit(f)(*args)
    assert same_bits(eager, jitted)
    return np.asarray(eager)


# --- slice -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(dtype):
    x = sample((7, 33), dtype)
    for start, limit, strides in [((0, 0), (7, 33), None), ((1, 5), (6, 33), (2, 7)),
                                  ((3, 3), (3, 10), None), ((0, 32), (7, 33), (3, 1))]:
        got = both(lambda a, b=start, e=limit, s=strides: lax.slice(a, b, e, s), x)
        want = x[tuple(slice(s, e, st) for s, e, st in zip(start, limit, strides or (1, 1)))]
        np.testing.assert_array_equal(got, want)
        assert got.dtype == x.dtype


def test_slice_in_dim_and_index_in_dim():
    x = sample((5, 6), np.float32)
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, -1, 2, axis=1), x[:, 1:-1:2])
    np.testing.assert_array_equal(lax.slice_in_dim(x, None, None, axis=0), x)
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, 0), x[-1:])
    np.testing.assert_array_equal(lax.index_in_dim(x, 2, 1, keepdims=False), x[:, 2])
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(x, 5, 0)


def test_slice_errors():
    x = jnp.zeros((4,))
    for args, msg in [(((1, 0), (2, 2)), "length equal"), (((-1,), (2,)), "greater than"),
                      (((0,), (5,)), "less than or equal"), (((3,), (2,)), "greater than")]:
        with pytest.raises(TypeError, match=msg):
            lax.slice(x, *args)
    with pytest.raises(TypeError, match="positive"):
        lax.slice(x, (0,), (4,), (0,))


# --- pad ---------------------------------------------------------------------------------------

def pad_reference(x, value, config):
    """Build the padded array element by element (interior first, then edges)."""
    out = x
    for d, (lo, hi, interior) in enumerate(config):
        n = out.shape[d]
        pieces = []
        for i in range(n):
            pieces.append(np.take(out, [i], axis=d))
            if i < n - 1 and interior:
                shape = list(out.shape)
                shape[d] = interior
                pieces.append(np.full(shape, value, out.dtype))
        shape = list(out.shape)
        shape[d] = 0
        body = np.concatenate(pieces, axis=d) if pieces else np.zeros(shape, out.dtype)
        shape = list(body.shape)
        shape[d] = max(lo, 0)
        left = np.full(shape, value, out.dtype)
        shape[d] = max(hi, 0)
        right = np.full(shape, value, out.dtype)
        body = np.concatenate([left, body, right], axis=d)
        start = max(-lo, 0)
        stop = body.shape[d] - max(-hi, 0)
        out = np.take(body, np.arange(start, stop), axis=d)
    return out


@pytest.mark.parametrize("config", [
    ((0, 0, 0), (0, 0, 0)), ((1, 2, 0), (0, 3, 1)), ((-1, 2, 1), (2, -3, 0)),
    ((-2, -2, 2), (0, 0, 3)), ((3, -5, 1), (-4, 1, 2)), ((0, 0, 5), (-9, 0, 4)),
])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "uint32"])
def test_pad(config, dtype):
    x = sample((3, 4), dtype)
    value = sample((), dtype, seed=9)[()]
    got = both(lambda a: lax.pad(a, value, config), x)
    np.testing.assert_array_equal(got, pad_reference(x, value, config))


def test_pad_edge_cases():
    np.testing.assert_array_equal(lax.pad(np.zeros((0,), np.float32), 1.0, [(2, 1, 3)]),
                                  [1, 1, 1])
    np.testing.assert_array_equal(lax.pad(np.arange(3, dtype=np.int32), 0, [(-3, 0, 0)]), [])
    assert float(lax.pad(np.float32(5), 0.0, [])) == 5.0
    text = str(ember.make_jaxpr(lambda a: lax.pad(a, 0.0, [(1, -1, 2)]))(
        np.zeros(3, np.float32)))
    assert "pad[padding_config=((1, -1, 2),)] a 0.0:f32[]" in text
    with pytest.raises(ValueError, match="nonnegative"):
        lax.pad(np.zeros(3, np.float32), 0.0, [(0, 0, -1)])
    with pytest.raises(ValueError, match="at least 0"):
        lax.pad(np.zeros(3, np.float32), 0.0, [(-3, -1, 0)])
    with pytest.raises(TypeError, match="same dtype"):
        lax.pad(np.zeros(3, np.float32), np.int32(0), [(1, 1, 0)])


# --- concatenate -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate(dtype):
    a, b, c = sample((2, 3), dtype, 1), sample((2, 5), dtype, 2), sample((2, 0), dtype, 3)
    got = both(lambda p, q, r: lax.concatenate([p, q, r], 1), a, b, c)
    np.testing.assert_array_equal(got, np.concatenate([a, b, c], 1))
    got = both(lambda p: lax.concatenate([p, p], 0), a)
    np.testing.assert_array_equal(got, np.concatenate([a, a], 0))


def test_concatenate_params_and_errors():
    f = lambda x: jnp.concatenate([x[1:], x[:1]])  # noqa: E731
    assert str(ember.make_jaxpr(f)(np.zeros(4, np.float32))) == """{ lambda ; a:f32[4]. let
    b:f32[3] = slice[limit_indices=(4,) start_indices=(1,) strides=None] a
    c:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    d:f32[4] = concatenate[dimension=0] b c
  in (d,) }"""
    x = jnp.zeros((2, 3))
    assert lax.concatenate([x], 0) is x
    with pytest.raises(TypeError, match="same dtypes"):
        lax.concatenate([x, jnp.zeros((2, 3), np.int32)], 0)
    with pytest.raises(TypeError, match="differ in dimensions"):
        lax.concatenate([x, jnp.zeros((3, 3))], 1)
    with pytest.raises(TypeError, match="numbers of dimensions"):
        lax.concatenate([x, jnp.zeros((3,))], 0)
    with pytest.raises(TypeError, match="out of bounds"):
        lax.concatenate([x, x], 2)


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------

@pytest.mark.parametrize("start", [(0, 0), (2, 3), (-1, -2), (5, 1), (100, -100), (-7, 30)])
def test_dynamic_slice_clamps(start):
    x = sample((7, 33), np.int16)
    sizes = (3, 4)
    got = both(lambda a, i, j: lax.dynamic_slice(a, (i, j), sizes), x, np.int32(start[0]),
               np.int32(start[1]))
    # Negative indices wrap once (i + n), then XLA clamps so the window fits.
    s = [int(np.clip(i + n if i < 0 else i, 0, n - z))
         for i, n, z in zip(start, x.shape, sizes)]
    np.testing.assert_array_equal(got, x[s[0]:s[0] + 3, s[1]:s[1] + 4])
    upd = sample(sizes, np.int16, seed=4)
    got = both(lambda a, u, i, j: lax.dynamic_update_slice(a, u, (i, j)), x, upd,
               np.int32(start[0]), np.int32(start[1]))
    want = x.copy()
    want[s[0]:s[0] + 3, s[1]:s[1] + 4] = upd
    np.testing.assert_array_equal(got, want)


def test_dynamic_slice_variants():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 3, 2, axis=1), x[:, 3:5])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 4, 2, axis=1), x[:, 3:5])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, -1, 0, keepdims=False), x[3])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, np.int32(1), 1), x[:, 1:2])
    u = np.ones((4, 2), np.float32)
    want = x.copy()
    want[:, 3:] = 1
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(x, u, 9, axis=1), want)
    want = x.copy()
    want[2] = -1
    got = ember.jit(lambda a, i: lax.dynamic_update_index_in_dim(a, -np.ones(5, np.float32),
                                                                 i, 0))(x, np.int32(2))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lax.dynamic_slice(x, np.array([1, 1]), (2, 2)), x[1:3, 1:3])
    # allow_negative_indices=False: -1 clamps to 0 instead of wrapping.
    np.testing.assert_array_equal(
        lax.dynamic_slice(x, (np.int32(-1), 0), (1, 5), allow_negative_indices=False), x[:1])
    np.testing.assert_array_equal(lax.dynamic_slice(np.float32(3), (), ()), 3)


def test_dynamic_slice_params_and_errors():
    text = str(ember.make_jaxpr(lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1)))(
        np.zeros((3, 4), np.float32), np.zeros((1, 2), np.float32), np.int32(0)))
    assert "g:f32[3,4] = dynamic_update_slice a b f 1:i32[]" in text
    with pytest.raises(ValueError, match="must match number of operand dimensions"):
        lax.dynamic_slice(np.zeros((3, 4)), (0,), (1, 1))
    with pytest.raises(TypeError, match="less than or equal"):
        lax.dynamic_slice(np.zeros((3, 4), np.float32), (0, 0), (4, 1))
    with pytest.raises(TypeError, match="integer"):
        lax.dynamic_slice(np.zeros((3,), np.float32), (np.float32(1),), (1,))
    with pytest.raises(TypeError, match="update shape"):
        lax.dynamic_update_slice(np.zeros(3, np.float32), np.zeros(4, np.float32), (0,))


# --- gather / scatter: hand-written loop references ------------------------------------------

def _start(shape, vec, start_map, obatch, ibatch, g):
    start = [0] * len(shape)
    for k, d in enumerate(start_map):
        start[d] = int(vec[k])
    for d, j in zip(obatch, ibatch):
        start[d] = g[j]
    return start


def gather_reference(x, idx, dn, sizes, mode, fill):
    batch = idx.shape[:-1]
    kept = [d for d in range(x.ndim) if d not in dn.collapsed_slice_dims
            and d not in dn.operand_batching_dims]
    out_rank = len(batch) + len(kept)
    out_shape = [0] * out_rank
    bpos = [i for i in range(out_rank) if i not in dn.offset_dims]
    for i, s in zip(bpos, batch):
        out_shape[i] = s
    for i, d in zip(dn.offset_dims, kept):
        out_shape[i] = sizes[d]
    out = np.zeros(out_shape, x.dtype)
    for g in np.ndindex(*batch):
        start = _start(x.shape, idx[g], dn.start_index_map, dn.operand_batching_dims,
                       dn.start_indices_batching_dims, g)
        fits = all(0 <= s <= n - z for s, n, z in zip(start, x.shape, sizes))
        start = [min(max(s, 0), n - z) for s, n, z in zip(start, x.shape, sizes)]
        for w in np.ndindex(*[sizes[d] for d in kept]):
            pos = [0] * out_rank
            for i, v in zip(bpos, g):
                pos[i] = v
            for i, v in zip(dn.offset_dims, w):
                pos[i] = v
            full = list(start)
            for d, v in zip(kept, w):
                full[d] += v
            use_fill = mode == GatherScatterMode.FILL_OR_DROP and not fits
            out[tuple(pos)] = fill if use_fill else x[tuple(full)]
    return out


def scatter_reference(x, idx, upd, dn, combine, mode):
    out = x.copy()
    window_operand = [d for d in range(x.ndim) if d not in dn.inserted_window_dims
                      and d not in dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for j, d in zip(dn.update_window_dims, window_operand):
        sizes[d] = upd.shape[j]
    scatter_dims = [i for i in range(upd.ndim) if i not in dn.update_window_dims]
    for u in np.ndindex(*upd.shape):
        g = tuple(u[i] for i in scatter_dims)
        w = [u[j] for j in dn.update_window_dims]
        start = _start(x.shape, idx[g], dn.scatter_dims_to_operand_dims,
                       dn.operand_batching_dims, dn.scatter_indices_batching_dims, g)
        if mode == GatherScatterMode.CLIP:
            start = [min(max(s, 0), n - z) for s, n, z in zip(start, x.shape, sizes)]
        elif not all(0 <= s <= n - z for s, n, z in zip(start, x.shape, sizes)):
            continue
        full = list(start)
        for d, v in zip(window_operand, w):
            full[d] += v
        with np.errstate(all="ignore"):  # integer products wrap
            out[tuple(full)] = combine(out[tuple(full)], upd[u])
    return out


COMBINE = {
    lax.scatter: lambda a, b: b, lax.scatter_add: lambda a, b: a + b,
    lax.scatter_mul: lambda a, b: a * b, lax.scatter_min: np.minimum,
    lax.scatter_max: np.maximum,
}

GATHER_CASES = [
    # x[idx] on rows of a matrix: indices (3, 1), window = one whole row.
    ((5, 4), (3, 1), GDN((1,), (0,), (0,)), (1, 4)),
    # Point gather with a permuted start_index_map and a 2-D batch.
    ((5, 6), (2, 3, 2), GDN((), (0, 1), (1, 0)), (1, 1)),
    # Windows of 2x3 without collapsing, offset dims in the middle of the output.
    ((6, 7, 3), (4, 2), GDN((1, 2), (2,), (0, 1)), (2, 3, 1)),
    # Offset dims first, batch last; one operand dim never indexed (start 0).
    ((4, 5, 6), (2, 1), GDN((0, 1), (1,), (1,)), (3, 1, 6)),
    # Batching dims: per-batch row selection (take_along_axis-like).
    ((3, 5), (3, 4, 1), GDN((), (1,), (1,), (0,), (0,)), (1, 1)),
    # Batching on a middle operand dim, indices batch dim last.
    ((2, 4, 6), (5, 4, 1), GDN((2,), (0,), (0,), (1,), (1,)), (1, 1, 3)),
]


@pytest.mark.parametrize("case", GATHER_CASES, ids=lambda c: str(c[2]))
@pytest.mark.parametrize("mode", list(GatherScatterMode))
def test_gather_general(case, mode):
    oshape, ishape, dn, sizes = case
    x = sample(oshape, np.float32)
    rng = np.random.default_rng(1)
    idx = rng.integers(-3, max(oshape) + 3, ishape).astype(np.int32)
    fill = np.float32(-1.0) if mode == GatherScatterMode.FILL_OR_DROP else None
    got = both(lambda a, i: lax.gather(a, i, dn, sizes, mode=mode, fill_value=fill), x, idx)
    want = gather_reference(x, idx, dn, sizes, mode, fill)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", GATHER_CASES, ids=lambda c: str(c[2]))
@pytest.mark.parametrize("fn", list(COMBINE), ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", list(GatherScatterMode))
def test_scatter_general(case, fn, mode):
    oshape, ishape, gdn, sizes = case
    dn = SDN(gdn.offset_dims, gdn.collapsed_slice_dims, gdn.start_index_map,
             gdn.operand_batching_dims, gdn.start_indices_batching_dims)
    x = sample(oshape, np.int32)
    rng = np.random.default_rng(2)
    idx = rng.integers(-2, max(oshape) + 2, ishape).astype(np.int32)
    out_shape = np.asarray(lax.gather(x, idx, gdn, sizes)).shape
    upd = sample(out_shape, np.int32, seed=6)
    got = both(lambda a, i, u: fn(a, i, u, dn, mode=mode), x, idx, upd)
    want = scatter_reference(x, idx, upd, dn, COMBINE[fn], mode)
    np.testing.assert_array_equal(got, want)


@st.composite
def gather_problems(draw):
    """A random valid (operand shape, indices shape, dnums, slice sizes)."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    dims = list(range(rank))
    obatch = tuple(sorted(draw(st.lists(st.sampled_from(dims), max_size=1, unique=True))))
    free = [d for d in dims if d not in obatch]
    start_map = tuple(draw(st.permutations(free))[:draw(st.integers(0, len(free)))])
    collapsed = tuple(sorted(draw(st.lists(st.sampled_from(free), unique=True))
                             if free else []))
    sizes = tuple(1 if d in obatch or d in collapsed else draw(st.integers(0, shape[d]))
                  for d in dims)
    nbatch = draw(st.integers(len(obatch), 2))
    batch = [draw(st.integers(0, 3)) for _ in range(nbatch)]
    ibatch = tuple(draw(st.permutations(range(nbatch)))[:len(obatch)])
    for d, j in zip(obatch, ibatch):
        batch[j] = shape[d]
    n_offset = rank - len(collapsed) - len(obatch)
    out_rank = n_offset + nbatch
    offset = tuple(sorted(draw(st.permutations(range(out_rank)))[:n_offset]))
    dn = GDN(offset, collapsed, start_map, obatch, ibatch)
    return shape, tuple(batch) + (len(start_map),), dn, sizes


@settings(max_examples=30, deadline=None)
@given(gather_problems(), st.sampled_from(list(GatherScatterMode)), st.integers(0, 99))
def test_gather_scatter_random_dnums(problem, mode, seed):
    oshape, ishape, gdn, sizes = problem
    rng = np.random.default_rng(seed)
    x = sample(oshape, np.int16, seed)
    idx = rng.integers(-2, 6, ishape).astype(np.int32)
    got = lax.gather(x, idx, gdn, sizes, mode=mode)
    fill = np.iinfo(np.int16).min
    np.testing.assert_array_equal(got, gather_reference(x, idx, gdn, sizes, mode, fill))
    dn = SDN(*gdn)
    upd = sample(np.asarray(got).shape, np.int16, seed + 1)
    for fn in (lax.scatter, lax.scatter_add):
        got = fn(x, idx, upd, dn, mode=mode)
        want = scatter_reference(x, idx, upd, dn, COMBINE[fn], mode)
        np.testing.assert_array_equal(got, want)


def test_scatter_nan_and_bool():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    idx = np.array([[0], [1], [2], [0]], np.int32)
    dn = SDN((), (0,), (0,))
    upd = np.array([np.nan, 0.0, 5.0, 2.0], np.float32)
    np.testing.assert_array_equal(lax.scatter_max(x, idx, upd, dn), [np.nan, np.nan, 5.0])
    np.testing.assert_array_equal(lax.scatter_min(x, idx, upd, dn), [np.nan, np.nan, 3.0])
    b = np.array([False, True, False])
    upd_b = np.array([True, False, False, False])
    np.testing.assert_array_equal(lax.scatter_add(b, idx, upd_b, dn), [True, True, False])
    np.testing.assert_array_equal(lax.scatter_mul(b, idx, upd_b, dn), [False, False, False])


def test_gather_defaults_and_printing():
    x = np.arange(5, dtype=np.float32)
    idx = np.array([[7], [-1]], np.int32)
    dn = GDN((), (0,), (0,))
    np.testing.assert_array_equal(lax.gather(x, idx, dn, (1,)), [4, 0])  # clamped
    got = np.asarray(lax.gather(x, idx, dn, (1,), mode="fill"))
    assert np.isnan(got).all()
    for dtype, fill in [(np.int8, -128), (np.uint16, 65535), (np.bool_, True)]:
        got = lax.gather(x.astype(dtype), idx, dn, (1,), mode="fill")
        np.testing.assert_array_equal(got, [fill, fill])
    text = " ".join(str(ember.make_jaxpr(
        lambda a, i: lax.gather(a, i, dn, (1,), mode="clip"))(x, idx)).split())
    assert ("gather[ dimension_numbers=GatherDimensionNumbers(offset_dims=(), "
            "collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), "
            "start_indices_batching_dims=()) fill_value=None indices_are_sorted=False "
            "mode=GatherScatterMode.CLIP slice_sizes=(1,) unique_indices=False ] a b") in text


def test_mode_from_any_and_dnums():
    M = GatherScatterMode
    assert M.from_any("clip") is M.CLIP
    assert M.from_any("fill") is M.from_any("drop") is M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    assert M.from_any(M.CLIP) is M.CLIP
    with pytest.raises(ValueError, match="Unknown gather mode"):
        M.from_any("wrap")
    d = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    assert d.operand_batching_dims == () and hash(d) == hash(GDN((1,), (0,), (0,)))
    s = SDN((1,), (0,), (0,))
    assert s.scatter_indices_batching_dims == () and {s: 1}[SDN((1,), (0,), (0,))] == 1
    with pytest.raises(AttributeError):
        d.offset_dims = (2,)


def test_gather_scatter_errors():
    x = np.zeros((3, 4), np.float32)
    idx = np.zeros((2, 1), np.int32)
    with pytest.raises(TypeError, match="integer"):
        lax.gather(x, idx.astype(np.float32), GDN((1,), (0,), (0,)), (1, 4))
    with pytest.raises(TypeError, match="start_index_map"):
        lax.gather(x, idx, GDN((1,), (0,), (0, 1)), (1, 4))
    with pytest.raises(TypeError, match="out of range"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (1, 5))
    with pytest.raises(TypeError, match="bound 1"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (2, 4))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.scatter(x, idx, np.zeros((2, 4), np.int32), SDN((1,), (0,), (0,)))
    with pytest.raises(TypeError, match="scatter"):
        lax.scatter_add(x, idx, np.zeros((3, 4), np.float32), SDN((1,), (0,), (0,)))
    with pytest.raises(TypeError, match="must not exceed"):
        lax.scatter(x, idx, np.zeros((2, 5), np.float32), SDN((1,), (0,), (0,)))


def test_scatter_apply_duplicates():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    idx = np.array([[1], [1], [2], [1]], np.int32)
    got = both(lambda a: lax.scatter_apply(a, idx, lambda v: v * 2.0, SDN((), (0,), (0,)),
                                           update_shape=(4,)), x)
    np.testing.assert_array_equal(got, [1, 16, 6])


def test_prims_all_have_rules():
    from ember.core.primitive import PRIMITIVES
    names = ["slice", "pad", "concatenate", "dynamic_slice", "dynamic_update_slice", "gather",
             "scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"]
    for n in names:
        prim = PRIMITIVES[n]
        assert prim._impl is not None and prim._abstract_eval is not None


def test_all_lax_names_exported():
    for name in ["slice", "slice_in_dim", "index_in_dim", "pad", "concatenate",
                 "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
                 "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
                 "dynamic_update_index_in_dim", "gather", "scatter", "scatter_add",
                 "scatter_mul", "scatter_min", "scatter_max", "GatherDimensionNumbers",
                 "ScatterDimensionNumbers", "GatherScatterMode"]:
        assert hasattr(lax, name), name
    assert all(callable(getattr(jnp, n)) for n in ("take", "take_along_axis"))
    assert {"CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS"} <= set(GatherScatterMode.__members__)
