"""Gather and scatter compiled by the CPU backend, against the interpreter (the spec) and
NumPy: general dimension numbers, index dtypes, out-of-bounds indices (gather clamps,
scatter drops the window), duplicate indices (accumulated in update order), fusion."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same, check, edge_array

from ember.backends import cpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate

DTYPES = ["f32", "f64", "s32", "u8", "f16", "pred"]
NP = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "u8": np.uint8,
      "f16": np.float16, "pred": np.bool_, "s8": np.int8, "u32": np.uint32, "s64": np.int64,
      "u64": np.uint64}


def _indices(ity: str, shape: tuple[int, ...], lo: int, hi: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    info = np.iinfo(NP[ity])
    v = rng.integers(max(lo, info.min), min(hi, info.max) + 1, shape)
    return v.astype(NP[ity])


# (name, operand dims, indices dims, gather attrs)
GATHERS = [
    ("take", (13,), (7, 1), dict(offset_dims=(), collapsed_slice_dims=(0,),
                                 start_index_map=(0,), index_vector_dim=1, slice_sizes=(1,))),
    ("rows", (9, 5), (6,), dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                                start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 5))),
    ("columns", (4, 11), (3,), dict(offset_dims=(0,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), index_vector_dim=1,
                                    slice_sizes=(4, 1))),
    ("windows", (6, 7), (5, 2), dict(offset_dims=(1, 2), collapsed_slice_dims=(),
                                     start_index_map=(0, 1), index_vector_dim=1,
                                     slice_sizes=(2, 3))),
    ("vector_dim_first", (6, 7), (2, 4), dict(offset_dims=(1, 2), collapsed_slice_dims=(),
                                              start_index_map=(1, 0), index_vector_dim=0,
                                              slice_sizes=(3, 2))),
    ("interleaved", (5, 6, 7), (4, 3, 2), dict(offset_dims=(1, 3), collapsed_slice_dims=(1,),
                                               start_index_map=(2, 1), index_vector_dim=2,
                                               slice_sizes=(2, 1, 3))),
    ("scalar_index", (8,), (), dict(offset_dims=(), collapsed_slice_dims=(0,),
                                    start_index_map=(0,), index_vector_dim=0,
                                    slice_sizes=(1,))),
    ("empty_indices", (8,), (0, 1), dict(offset_dims=(), collapsed_slice_dims=(0,),
                                         start_index_map=(0,), index_vector_dim=1,
                                         slice_sizes=(1,))),
]


def _gather_module(et, odims, idims, ity, attrs):
    b = Builder("gather")
    x = b.parameter(Shape(et, odims))
    i = b.parameter(Shape(ity, idims))
    return b.build(b.gather(x, i, **attrs))


@pytest.mark.parametrize("case", GATHERS, ids=[c[0] for c in GATHERS])
@pytest.mark.parametrize("et", DTYPES)
def test_gather_matches_interpreter(case, et):
    _, odims, idims, attrs = case
    m = _gather_module(et, odims, idims, "s32", attrs)
    x = edge_array(NP[et], odims)
    # in range, negative and far beyond the end: every start is clamped into the operand
    idx = _indices("s32", idims, -20, 20)
    check(m, x, idx)


@pytest.mark.parametrize("ity", ["s8", "u8", "u32", "s64", "u64"])
def test_gather_index_dtypes_clamp_like_the_interpreter(ity):
    _, odims, idims, attrs = GATHERS[3]
    m = _gather_module("f32", odims, idims, ity, attrs)
    x = edge_array(np.float32, odims)
    info = np.iinfo(NP[ity])
    idx = _indices(ity, idims, -300, 300)
    idx.reshape(-1)[:4] = np.array([info.min, info.max, 0, 1], dtype=NP[ity])
    check(m, x, idx)


def test_take_equals_numpy_with_clipped_indices():
    _, odims, idims, attrs = GATHERS[0]
    m = _gather_module("f32", odims, (33, 1), "s32", attrs)
    x = np.arange(13, dtype=np.float32) * 1.5
    idx = _indices("s32", (33, 1), -40, 40)
    got = cpu.compile(m)(x, idx)
    assert_same(got, x[np.clip(idx[:, 0], 0, 12)])


def test_gather_fuses_with_its_index_math_and_consumer():
    # x[select(i < 0, i + n, i)] * 2: one kernel (the gather reads through its producers)
    b = Builder("take_times_two")
    x = b.parameter(Shape("f32", (10,)))
    i = b.parameter(Shape("s32", (5,)))
    zero = b.broadcast(b.scalar(0, "s32"), (5,), ())
    n = b.broadcast(b.scalar(10, "s32"), (5,), ())
    j = b.select(b.compare(i, zero, "LT"), b.add(i, n), i)
    g = b.gather(x, b.reshape(j, (5, 1)), offset_dims=(), collapsed_slice_dims=(0,),
                 start_index_map=(0,), index_vector_dim=1, slice_sizes=(1,))
    m = b.build(b.multiply(g, b.broadcast(b.scalar(2.0, "f32"), (5,), ())))
    xs = np.arange(10, dtype=np.float32)
    idx = np.array([1, -2, 3, 12, -30], dtype=np.int32)
    exe = check(m, xs, idx)
    assert len(exe.kernel_names) == 1
    np.testing.assert_array_equal(exe(xs, idx), [2.0, 16.0, 6.0, 18.0, 0.0])


def test_expensive_producer_is_not_recomputed_under_a_gather():
    b = Builder("exp_take")
    x = b.parameter(Shape("f32", (10,)))
    i = b.parameter(Shape("s32", (40, 1)))
    g = b.gather(b.exponential(x), i, offset_dims=(), collapsed_slice_dims=(0,),
                 start_index_map=(0,), index_vector_dim=1, slice_sizes=(1,))
    m = b.build(g)
    exe = check(m, np.linspace(-2, 2, 10).astype(np.float32), _indices("s32", (40, 1), 0, 9),
                ulps=1)
    assert len(exe.kernel_names) == 2  # exp once per element, then the gather


# -- scatter ----------------------------------------------------------------------------------

# (name, operand dims, indices dims, updates dims, scatter attrs)
SCATTERS = [
    ("points", (11,), (9, 1), (9,), dict(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,),
                                         index_vector_dim=1)),
    ("rows", (7, 5), (6,), (6, 5), dict(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,),
                                        index_vector_dim=1)),
    ("windows", (6, 7), (5, 2), (5, 2, 3), dict(update_window_dims=(1, 2),
                                                inserted_window_dims=(),
                                                scatter_dims_to_operand_dims=(0, 1),
                                                index_vector_dim=1)),
    ("vector_dim_first", (5, 6, 7), (2, 4), (2, 4, 3),
     dict(update_window_dims=(0, 2), inserted_window_dims=(1,),
          scatter_dims_to_operand_dims=(2, 1), index_vector_dim=0)),
    ("scalar_index", (8,), (), (), dict(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,),
                                        index_vector_dim=0)),
    ("empty_updates", (8,), (0, 1), (0,), dict(update_window_dims=(), inserted_window_dims=(0,),
                                               scatter_dims_to_operand_dims=(0,),
                                               index_vector_dim=1)),
]


def _custom_combiner(et: str):
    """old * 0.5 - new (not commutative: catches swapped parameters)."""
    sb = Builder(f"combine_{et}")
    s = Shape(et, ())
    old, new = sb.parameter(s, "old"), sb.parameter(s, "new")
    half = sb.scalar(0.5 if et.startswith("f") else 3, et)
    return sb.build_computation(sb.subtract(sb.multiply(old, half), new))


def _overwrite(et: str):
    sb = Builder(f"assign_{et}")
    s = Shape(et, ())
    sb.parameter(s, "old")
    return sb.build_computation(sb.parameter(s, "new"))


def _combiner(kind: str, et: str):
    if kind == "set":
        return _overwrite(et)
    if kind == "custom":
        return _custom_combiner(et)
    return Builder.scalar_computation(kind, et)


def _scatter_module(et, odims, idims, udims, ity, attrs, kind):
    b = Builder("scatter")
    x = b.parameter(Shape(et, odims))
    i = b.parameter(Shape(ity, idims))
    u = b.parameter(Shape(et, udims))
    return b.build(b.scatter(x, i, u, _combiner(kind, et), **attrs))


@pytest.mark.parametrize("case", SCATTERS, ids=[c[0] for c in SCATTERS])
@pytest.mark.parametrize("kind", ["add", "multiply", "maximum", "minimum", "set", "custom"])
@pytest.mark.parametrize("et", ["f32", "s32", "f64", "u8"])
def test_scatter_matches_interpreter(case, kind, et):
    _, odims, idims, udims, attrs = case
    m = _scatter_module(et, odims, idims, udims, "s32", attrs, kind)
    x = edge_array(NP[et], odims, seed=2)
    u = edge_array(NP[et], udims, seed=3)
    # duplicates (small range) and out-of-bounds starts on both sides
    idx = _indices("s32", idims, -3, 8)
    check(m, x, idx, u)


@pytest.mark.parametrize("kind", ["add", "maximum", "set"])
def test_scatter_pred(kind):
    _, odims, idims, udims, attrs = SCATTERS[0]
    m = _scatter_module("pred", odims, idims, udims, "s32", attrs, kind)
    x = edge_array(np.bool_, odims)
    u = edge_array(np.bool_, udims, seed=5)
    check(m, x, _indices("s32", idims, -2, 12), u)


@pytest.mark.parametrize("ity", ["u8", "s8", "s64", "u64"])
def test_scatter_index_dtypes(ity):
    _, odims, idims, udims, attrs = SCATTERS[2]
    m = _scatter_module("f32", odims, idims, udims, ity, attrs, "add")
    idx = _indices(ity, idims, -200, 200)
    info = np.iinfo(NP[ity])
    idx.reshape(-1)[:4] = np.array([info.min, info.max, 0, 1], dtype=NP[ity])
    check(m, edge_array(np.float32, odims), idx, edge_array(np.float32, udims, seed=4))


def test_scatter_add_equals_numpy_add_at_in_update_order():
    _, odims, idims, udims, attrs = SCATTERS[0]
    n = 1000
    m = _scatter_module("f32", (37,), (n, 1), (n,), "s32", attrs, "add")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(37).astype(np.float32)
    u = (rng.standard_normal(n) * 1e3).astype(np.float32)  # rounding depends on the order
    idx = _indices("s32", (n, 1), -5, 41)
    got = cpu.compile(m)(x, idx, u)
    keep = (idx[:, 0] >= 0) & (idx[:, 0] < 37)
    want = x.copy()
    np.add.at(want, idx[keep, 0], u[keep])
    assert_same(got, want)


def test_scatter_set_last_duplicate_wins_and_partial_windows_are_dropped():
    _, odims, idims, udims, attrs = SCATTERS[1]
    m = _scatter_module("s32", (4, 3), (5,), (5, 3), "s32", attrs, "set")
    x = np.zeros((4, 3), np.int32)
    idx = np.array([1, 1, -1, 4, 3], np.int32)
    u = np.arange(15, dtype=np.int32).reshape(5, 3) + 1
    got = cpu.compile(m)(x, idx, u)
    want = np.zeros((4, 3), np.int32)
    want[1] = u[1]
    want[3] = u[4]
    assert_same(got, want)
    # windows of 2x3 on a 6x7 operand: a start of 5 (row) or 5 (column) does not fit
    _, odims, idims, udims, attrs = SCATTERS[2]
    m = _scatter_module("f32", odims, idims, udims, "s32", attrs, "add")
    x = np.zeros(odims, np.float32)
    idx = np.array([[0, 0], [5, 0], [4, 4], [4, 5], [-1, 2]], np.int32)
    u = np.ones(udims, np.float32)
    got = cpu.compile(m)(x, idx, u)
    want = np.zeros(odims, np.float32)
    want[0:2, 0:3] += 1
    want[4:6, 4:7] += 1
    assert_same(got, want)
    assert_same(got, evaluate(m, x, idx, u))


def test_scatter_nan_max_propagates():
    _, odims, idims, udims, attrs = SCATTERS[0]
    m = _scatter_module("f32", (4,), (3, 1), (3,), "s32", attrs, "maximum")
    x = np.array([0, np.nan, 2, 3], np.float32)
    idx = np.array([[0], [1], [0]], np.int32)
    u = np.array([np.nan, 5, 1], np.float32)
    got = cpu.compile(m)(x, idx, u)
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == 2 and got[3] == 3


def test_scatter_does_not_write_its_operand():
    _, odims, idims, udims, attrs = SCATTERS[0]
    m = _scatter_module("f32", odims, idims, udims, "s32", attrs, "add")
    x = edge_array(np.float32, odims)
    before = x.copy()
    cpu.compile(m)(x, _indices("s32", idims, 0, 10), edge_array(np.float32, udims))
    assert_same(x, before)


def test_gather_fuses_into_a_reduction():
    # sum over the rows picked by i: reduce(gather(x, i)) is one kInput kernel
    b = Builder("sum_rows")
    x = b.parameter(Shape("f32", (9, 33)))
    i = b.parameter(Shape("s32", (7,)))
    g = b.gather(x, i, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                 index_vector_dim=1, slice_sizes=(1, 33))
    add = Builder.scalar_computation("add", "f32")
    m = b.build(b.reduce(b.multiply(g, g), b.scalar(0.0, "f32"), (1,), add))
    xs = edge_array(np.float32, (9, 33))
    xs[~np.isfinite(xs)] = 1.0
    xs = np.clip(xs, -100, 100)
    exe = check(m, xs, _indices("s32", (7,), -3, 12), ulps=64)
    assert len(exe.kernel_names) == 1


# -- through jnp, compiled by the CPU backend -------------------------------------------------


def _cpu_jit(monkeypatch, fn, *args):
    import ember

    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    compiled = ember.jit(fn).lower(*args).compile()._compiled
    assert compiled.backend == "cpu"
    return [np.asarray(o) for o in compiled(list(args))]


def test_jnp_indexing_with_negative_and_out_of_range_indices(monkeypatch):
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    i = np.array([0, -1, 3, -5, 2, 2], np.int32)
    (got,) = _cpu_jit(monkeypatch, lambda x, i: x[i] * 2, x, i)
    assert_same(got, x[i] * 2)
    (got,) = _cpu_jit(monkeypatch, lambda x, i: x[:, i], x, i)
    assert_same(got, x[:, i])
    # out of range: JAX clamps a gather's start index
    j = np.array([9, -9, 4], np.int32)
    (got,) = _cpu_jit(monkeypatch, lambda x, j: x[j], x, j)
    assert_same(got, x[np.clip(np.where(j < 0, j + 5, j), 0, 4)])


def test_jnp_at_updates_with_duplicates_and_dropped_indices(monkeypatch):
    x = np.zeros(6, np.float32)
    i = np.array([1, -1, 1, 9, -9, 1], np.int32)  # 9 and -9 are dropped
    u = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], np.float32)
    keep = (i >= -6) & (i < 6)
    (got,) = _cpu_jit(monkeypatch, lambda x, i, u: x.at[i].add(u), x, i, u)
    want = x.copy()
    np.add.at(want, i[keep], u[keep])
    assert_same(got, want)
    (got,) = _cpu_jit(monkeypatch, lambda x, i, u: x.at[i].max(u), x, i, u)
    want = x.copy()
    np.maximum.at(want, i[keep], u[keep])
    assert_same(got, want)
    (got,) = _cpu_jit(monkeypatch, lambda x, i, u: x.at[i].set(u), x, i, u)
    assert got[1] == 32.0 and got[5] == 2.0 and got[0] == 0.0
