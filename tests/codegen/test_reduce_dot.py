"""Reductions (row and column schemes, any axes, variadic) and dot, against the
interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import check, edge_array

from ember.backends import cpu
from ember.hlo import Builder, Shape

INIT = {"add": 0, "multiply": 1, "and": True, "or": False}


def _reduce_module(et, dims, axes, op, producer=None):
    b = Builder(f"reduce_{op}")
    x = b.parameter(Shape(et, dims))
    if producer:
        x = b.unary(producer, x)
    if op == "maximum":
        init = -np.inf if et.startswith("f") else np.iinfo(Shape(et, ()).dtype).min
    elif op == "minimum":
        init = np.inf if et.startswith("f") else np.iinfo(Shape(et, ()).dtype).max
    else:
        init = INIT[op]
    comp = Builder.scalar_computation(op, et)
    return b.build(b.reduce(x, b.scalar(init, et), axes, comp))


@pytest.mark.parametrize("dims,axes", [((), ()), ((0,), (0,)), ((33,), (0,)), ((7, 0), (1,)),
                                       ((5, 33), (1,)), ((5, 33), (0,)), ((4, 5, 6), (0, 2)),
                                       ((4, 5, 6), (1,)), ((4, 5, 6), (0, 1, 2)),
                                       ((3, 1, 130), (2,))], ids=str)
@pytest.mark.parametrize("et,op", [("f32", "add"), ("f64", "multiply"), ("f32", "maximum"),
                                   ("f64", "minimum"), ("s32", "add"), ("u32", "maximum"),
                                   ("s8", "minimum"), ("pred", "and"), ("pred", "or")])
def test_reduce(dims, axes, et, op):
    m = _reduce_module(et, dims, axes, op)
    x = edge_array(Shape(et, ()).dtype, dims, seed=11)
    if et.startswith("f") and x.size:
        x = np.where(np.isfinite(x), np.clip(x, -4, 4), 1.5).astype(x.dtype)
    ulps = 0 if et[0] in "sup" or op in ("maximum", "minimum") else 64
    check(m, x, ulps=ulps, signed_zeros=False, what=f"{op} {et}{dims} over {axes}")


@pytest.mark.parametrize("dims,axes", [((16, 1024), (0,)), ((12, 1030), (0,)),
                                       ((10, 1027), (0,)), ((9, 1024), (0,)),
                                       ((8, 3, 1100), (0,)), ((2, 6, 2, 700), (1,)),
                                       ((4, 8, 1024), (0, 1))], ids=str)
@pytest.mark.parametrize("et,op", [("f32", "add"), ("f64", "multiply"), ("f32", "maximum"),
                                   ("s32", "add"), ("pred", "or")])
def test_column_reduce_with_rows_combined_in_registers(dims, axes, et, op):
    """Column-scheme rows of >= 4 KB combine 8, 4 or 2 input rows (by the reduced extent,
    odd: 1) before each accumulator update (kernels._column_unroll)."""
    m = _reduce_module(et, dims, axes, op)
    x = edge_array(Shape(et, ()).dtype, dims, seed=5)
    if et.startswith("f") and x.size:
        x = np.where(np.isfinite(x), np.clip(x, -1.5, 1.5), 0.75).astype(x.dtype)
        if op != "maximum":  # positive terms: no cancellation, so an ulp bound is fair
            x = (0.5 + np.abs(x)).astype(x.dtype)
        else:
            x.reshape(-1)[777] = np.nan  # one column's max is NaN, the others are not
    ulps = 0 if et[0] in "sup" or op in ("maximum", "minimum") else 64
    check(m, x, ulps=ulps, signed_zeros=False, what=f"{op} {et}{dims} over {axes}")


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_reduce_propagates_nan(op):
    m = _reduce_module("f32", (3, 40), (1,), op)
    x = np.random.default_rng(1).standard_normal((3, 40)).astype(np.float32)
    x[1, 17] = np.nan
    got = cpu.compile(m)(x)
    assert np.isnan(got[1]) and not np.isnan(got[0]) and not np.isnan(got[2])


def test_variadic_argmax():
    s, si = Shape("f32", ()), Shape("s32", ())
    cb = Builder("argmax")
    av, ai, bv, bi = cb.parameter(s), cb.parameter(si), cb.parameter(s), cb.parameter(si)
    take_a = cb.or_(cb.compare(av, bv, "GT"),
                    cb.and_(cb.compare(av, bv, "EQ"), cb.compare(ai, bi, "LT")))
    comp = cb.build_computation(cb.tuple([cb.select(take_a, av, bv),
                                          cb.select(take_a, ai, bi)]))
    b = Builder("argmax_rows")
    x = b.parameter(Shape("f32", (6, 37)))
    idx = b.iota(Shape("s32", (6, 37)), 1)
    r = b.reduce([x, idx], [b.scalar(-np.inf, "f32"), b.scalar(0, "s32")], (1,), comp)
    m = b.build(r)
    x = np.random.default_rng(0).standard_normal((6, 37)).astype(np.float32)
    check(m, x)
    m2 = b.build(b.reduce([b.parameter(Shape("f32", (6, 37))), idx],
                          [b.scalar(-np.inf, "f32"), b.scalar(0, "s32")], (0,), comp))
    check(m2, x, x)


@pytest.mark.parametrize("et", ["f32", "f64", "s32", "pred"])
@pytest.mark.parametrize("case", ["mm", "mv", "batch", "transposed", "empty_k"])
def test_dot(et, case):
    b = Builder(f"dot_{case}")
    specs = {
        "mm": ((5, 7), (7, 9), (1,), (0,), (), ()),
        "mv": ((5, 7), (7,), (1,), (0,), (), ()),
        "batch": ((2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,)),
        "transposed": ((7, 5), (9, 7), (0,), (1,), (), ()),
        "empty_k": ((3, 0), (0, 4), (1,), (0,), (), ()),
    }
    ls, rs, lc, rc, lb, rb = specs[case]
    lhs, rhs = b.parameter(Shape(et, ls)), b.parameter(Shape(et, rs))
    m = b.build(b.dot(lhs, rhs, lc, rc, lb, rb))
    dt = Shape(et, ()).dtype
    rng = np.random.default_rng(3)
    if et == "pred":
        x, y = rng.integers(0, 2, ls).astype(bool), rng.integers(0, 2, rs).astype(bool)
    else:
        x, y = (rng.integers(-5, 6, ls)).astype(dt), (rng.integers(-5, 6, rs)).astype(dt)
    check(m, x, y)


def test_fused_reduce_is_one_kinput_kernel():
    b = Builder("sumsq")
    x = b.parameter(Shape("f32", (64, 100)))
    sq = b.multiply(b.exponential(x), b.exponential(x))
    m = b.build(b.reduce(sq, b.scalar(0.0, "f32"), (1,),
                         Builder.scalar_computation("add", "f32")))
    x = np.random.default_rng(0).standard_normal((64, 100)).astype(np.float32)
    exe = check(m, x, ulps=64)
    assert exe.kernel_names == ["fusion"]
    assert "kind=kInput" in exe.as_text()
