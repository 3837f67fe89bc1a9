"""Op table for ember.lax's conversion, selection, shape, reduction and iota primitives.

Each op runs over SHAPES and dtypes (bool, ints, float32; 64-bit types under x64) with edge
values in the inputs, eagerly and under ember.jit: eager == jit bit for bit, no retrace on a
second call, and the result equals a NumPy reference (float sums and products within a
relative tolerance, everything else exactly). The reduction tests add all their shapes and
axes to a `LaxBatch` (tests/ops/batched_checks.py): the same assertions per case, one
compiled program per test instead of one per case.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from batched_checks import LaxBatch
from op_tables import (
    ALL,
    ALL_FLOATS,
    BOOL,
    FLOATS,
    INTS,
    SHAPES,
    X64_INTS,
    assert_eager_jit_numpy,
    ieee_maximum,
    ieee_minimum,
    ieee_reduce_max,
    ieee_reduce_min,
    sample,
    seeded_rng,
    use_dtype,
)

import ember
from ember import lax
from ember.core.trace import get_aval

BASIC = BOOL + INTS + FLOATS  # 32-bit world; the 64-bit types run in the x64 variants


_rng = seeded_rng


# -- convert_element_type -------------------------------------------------------------------
def _convert_ref(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """XLA's convert from its definition: -> bool is x != 0; float -> int truncates toward
    zero and saturates, NaN -> 0; int -> int wraps; everything else rounds to nearest."""
    if dt.kind == "b":
        return x != 0
    if dt.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(dt)
        vals = [0 if math.isnan(v) else info.max if v == math.inf else info.min
                if v == -math.inf else min(max(math.trunc(v), info.min), info.max)
                for v in x.ravel().tolist()]
        return np.array(vals, dt).reshape(x.shape)
    if dt.kind in "iu" and x.dtype.kind in "iu":
        bits = 8 * dt.itemsize
        vals = [v % (1 << bits) for v in x.ravel().tolist()]
        vals = [v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v
                for v in vals]
        return np.array(vals, dt).reshape(x.shape)
    with np.errstate(over="ignore"):
        return x.astype(dt)


@pytest.mark.parametrize("src", BASIC, ids=lambda d: d.name)
def test_convert_element_type(src: np.dtype) -> None:
    rng = _rng("convert", src)
    for dst in BASIC:
        fn = ember.jit(lambda x, dst=dst: lax.convert_element_type(x, dst))
        for shape in [(), (0,), (33,), (2, 3, 4)]:
            x = sample(shape, src, rng, -300, 300)
            out = assert_eager_jit_numpy(lambda x, dst=dst: lax.convert_element_type(x, dst),
                                         lambda x, dst=dst: _convert_ref(x, dst), x,
                                         jitted=fn, what=f"convert {src}->{dst}")
            assert get_aval(out).weak_type is False


def test_convert_element_type_x64(x64: None) -> None:
    dts = BOOL + [np.dtype(np.int32), np.dtype(np.float32)] + X64_INTS + [np.dtype(np.float64)]
    rng = _rng("convert64")
    for src, dst in itertools.product(dts, dts):
        x = sample((33,), src, rng, -1e6, 1e6)
        assert_eager_jit_numpy(lambda x, dst=dst: lax.convert_element_type(x, dst),
                               lambda x, dst=dst: _convert_ref(x, dst), x,
                               what=f"convert {src}->{dst}")


def test_convert_element_type_weak_param() -> None:
    x = np.arange(3, dtype=np.int32)
    for weak in (False, True):
        out = assert_eager_jit_numpy(
            lambda x, weak=weak: lax.convert_element_type(x, np.float32, weak), None, x)
        assert get_aval(out).weak_type is weak


# -- bitcast_convert_type -------------------------------------------------------------------
BITCASTS = [(np.float32, np.int32), (np.float32, np.uint32), (np.int32, np.float32),
            (np.uint16, np.int16), (np.int8, np.uint8), (np.int32, np.uint8),
            (np.float32, np.uint16)]


@pytest.mark.parametrize("src,dst", BITCASTS, ids=lambda d: np.dtype(d).name)
def test_bitcast_convert_type(src: Any, dst: Any) -> None:
    src, dst = np.dtype(src), np.dtype(dst)
    rng = _rng("bitcast", src, dst)
    ratio = src.itemsize // dst.itemsize
    for shape in SHAPES:
        x = sample(shape, src, rng)
        bits = np.ascontiguousarray(x.reshape(-1)).view(dst)
        ref = bits.reshape(*shape, ratio) if ratio > 1 else bits.reshape(shape)
        assert_eager_jit_numpy(lambda x: lax.bitcast_convert_type(x, dst), lambda x, r=ref: r, x)


def test_bitcast_widening() -> None:
    rng = _rng("bitcast_widen")
    for shape in [(4,), (3, 4), (0, 4)]:
        x = sample(shape, np.uint8, rng)
        assert_eager_jit_numpy(lambda x: lax.bitcast_convert_type(x, np.int32),
                               lambda x, s=shape: x.view(np.int32).reshape(s[:-1]), x)


def test_bitcast_x64(x64: None) -> None:
    x = sample((7,), np.float64, _rng("bitcast64"))
    assert_eager_jit_numpy(lambda x: lax.bitcast_convert_type(x, np.int64),
                           lambda x: x.view(np.int64), x)
    assert_eager_jit_numpy(lambda x: lax.bitcast_convert_type(x, np.uint32),
                           lambda x: x.view(np.uint32).reshape(7, 2), x)


# -- select_n and clamp ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", BASIC, ids=lambda d: d.name)
def test_select_n(dtype: np.dtype) -> None:
    rng = _rng("select", dtype)
    for shape in SHAPES:
        a, b, c = (sample(shape, dtype, rng) for _ in range(3))
        pred = sample(shape, np.bool_, rng)
        assert_eager_jit_numpy(lax.select_n, lambda p, a, b: np.where(p, b, a), pred, a, b)
        assert_eager_jit_numpy(lax.select, lambda p, a, b: np.where(p, a, b), pred, a, b)
        # scalar predicate, and an int32 `which` over three cases (out of range clips)
        assert_eager_jit_numpy(lax.select_n, lambda p, a, b: b, np.bool_(True), a, b)
        which = sample(shape, np.int32, rng, -1, 3, edges=np.array([0, 1, 2]))
        assert_eager_jit_numpy(lax.select_n,
                               lambda w, a, b, c: np.choose(np.clip(w, 0, 2), [a, b, c]),
                               which, a, b, c)


@pytest.mark.parametrize("dtype", BASIC, ids=lambda d: d.name)
def test_clamp(dtype: np.dtype) -> None:
    rng = _rng("clamp", dtype)
    for shape in SHAPES:
        x = sample(shape, dtype, rng)
        lo, hi = (np.array(v, dtype) for v in ((0, 1) if dtype.kind in "bu" else (-3, 5)))
        ref = lambda lo, x, hi: ieee_minimum(ieee_maximum(x, lo), hi)  # noqa: E731
        assert_eager_jit_numpy(lax.clamp, ref, lo, x, hi)
        lo_arr = np.minimum(sample(shape, dtype, rng), hi)
        assert_eager_jit_numpy(lax.clamp, ref, lo_arr, x, hi)


# -- shape ops --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", BASIC, ids=lambda d: d.name)
def test_shape_ops(dtype: np.dtype) -> None:
    rng = _rng("shape", dtype)
    x3 = sample((2, 3, 4), dtype, rng)
    x1 = sample((7,), dtype, rng)
    s = sample((), dtype, rng)
    e = sample((0, 3), dtype, rng)
    cases: list[tuple[Any, Any, Any]] = [
        (lambda x: lax.broadcast_in_dim(x, (5, 7), (1,)), lambda x: np.broadcast_to(x, (5, 7)),
         x1),
        (lambda x: lax.broadcast_in_dim(x, (7, 2), (0,)),
         lambda x: np.broadcast_to(x[:, None], (7, 2)), x1),
        (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), lambda x: np.full((2, 3), x), s),
        (lambda x: lax.broadcast_in_dim(x, (2, 5, 3, 4), (0, 2, 3)),
         lambda x: np.broadcast_to(x[:, None], (2, 5, 3, 4)), x3),
        (lambda x: lax.broadcast_in_dim(x, (4, 0, 3), (1, 2)),
         lambda x: np.broadcast_to(x, (4, 0, 3)), e),
        (lambda x: lax.reshape(x, (6, 4)), lambda x: x.reshape(6, 4), x3),
        (lambda x: lax.reshape(x, (24,)), lambda x: x.ravel(), x3),
        (lambda x: lax.reshape(x, (4, 6), (2, 1, 0)), lambda x: x.transpose(2, 1, 0)
         .reshape(4, 6), x3),
        (lambda x: lax.reshape(x, (1, 1)), lambda x: x.reshape(1, 1), s),
        (lambda x: lax.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), e),
        (lambda x: lax.squeeze(lax.reshape(x, (2, 1, 3, 4, 1)), (1, 4)), lambda x: x, x3),
        (lambda x: lax.squeeze(lax.reshape(x, (1, 7)), (-2,)), lambda x: x, x1),
        (lambda x: lax.expand_dims(x, (0, 2)), lambda x: x[None, :, None], x1),
        (lambda x: lax.expand_dims(x, (-1,)), lambda x: x[..., None], x3),
        (lambda x: lax.expand_dims(x, (0,)), lambda x: x[None], s),
        (lambda x: lax.transpose(x, (2, 0, 1)), lambda x: x.transpose(2, 0, 1), x3),
        (lambda x: lax.transpose(x, (1, 0)), lambda x: x.T, e),
        (lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1], x3),
        (lambda x: lax.rev(x, (0,)), lambda x: x[::-1], x1),
        (lambda x: lax.rev(x, ()), lambda x: x, s),
    ]
    for fn, ref, x in cases:
        assert_eager_jit_numpy(fn, ref, x)


def test_shape_ops_keep_weak_type() -> None:
    fns = [lambda x: lax.broadcast_in_dim(x, (3,), ()), lambda x: lax.reshape(x, (1,)),
           lambda x: lax.expand_dims(x, (0,)), lambda x: lax.rev(x, ())]
    for fn in fns:
        assert get_aval(fn(2.0)).weak_type
        assert get_aval(ember.jit(fn)(2.0)).weak_type


# -- iota -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda d: d.name)
def test_iota(dtype: np.dtype) -> None:
    for n in (0, 1, 7, 33):
        out = assert_eager_jit_numpy(lambda n=n: lax.iota(dtype, n), lambda n=n: np.arange(n))
        assert out.dtype == dtype
    for shape, dim in [((2, 3, 4), 0), ((2, 3, 4), 2), ((5, 1), 1), ((0, 3), 1)]:
        ref = np.broadcast_to(np.arange(shape[dim]).reshape(
            [shape[dim] if i == dim else 1 for i in range(len(shape))]), shape)
        assert_eager_jit_numpy(lambda shape=shape, dim=dim: lax.broadcasted_iota(dtype, shape,
                                                                                  dim),
                               lambda ref=ref: ref)


def test_iota_uint8_wraps() -> None:
    # iota counts in its dtype: past 255 a uint8 iota wraps (XLA computes it in-type).
    assert_eager_jit_numpy(lambda: lax.iota(np.uint8, 300),
                           lambda: (np.arange(300) % 256).astype(np.uint8))


# -- reductions -------------------------------------------------------------------------------
def _axes_for(ndim: int) -> list[tuple[int, ...]]:
    single = [(a,) for a in range(ndim)]
    return [(), *single, tuple(range(ndim))] + ([(0, ndim - 1)] if ndim == 3 else [])


def _identity_fill(ref: Any, ident: Any) -> Any:
    """ref(x, axes), with `ident` where the reduced axes are empty (NumPy raises there)."""
    def f(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        if x.size == 0 or any(x.shape[a] == 0 for a in axes):
            shape = [s for i, s in enumerate(x.shape) if i not in axes]
            return np.full(shape, ident(x.dtype), x.dtype)
        return ref(x, axes)
    return f


def _lowest(dt: np.dtype) -> Any:
    return -np.inf if dt.kind == "f" else False if dt.kind == "b" else np.iinfo(dt).min


def _highest(dt: np.dtype) -> Any:
    return np.inf if dt.kind == "f" else True if dt.kind == "b" else np.iinfo(dt).max


REDUCTIONS: dict[str, tuple[Any, Any, str]] = {
    # name: (lax function, reference(x, axes), dtype kinds)
    # (+ 0.0: the sum starts from XLA's init value +0.0, so sum([-0.0]) = 0.0 + -0.0 = +0.0)
    "reduce_sum": (lax.reduce_sum, lambda x, a: np.add.reduce(x, axis=a, dtype=x.dtype)
                   if x.dtype.kind != "f" else np.sum(x.astype(np.float64), axis=a) + 0.0,
                   "iuf"),
    "reduce_prod": (lax.reduce_prod, lambda x, a: np.multiply.reduce(x, axis=a, dtype=x.dtype)
                    if x.dtype.kind != "f" else np.prod(x.astype(np.float64), axis=a), "iuf"),
    "reduce_max": (lax.reduce_max, _identity_fill(lambda x, a: ieee_reduce_max(x, a), _lowest),
                   "biuf"),
    "reduce_min": (lax.reduce_min, _identity_fill(lambda x, a: ieee_reduce_min(x, a), _highest),
                   "biuf"),
    "reduce_and": (lax.reduce_and, _identity_fill(
        lambda x, a: np.bitwise_and.reduce(x, axis=a), lambda d: ~np.zeros((), d)), "biu"),
    "reduce_or": (lax.reduce_or, lambda x, a: np.bitwise_or.reduce(x, axis=a), "biu"),
    "reduce_xor": (lax.reduce_xor, lambda x, a: np.bitwise_xor.reduce(x, axis=a), "biu"),
}


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    fn, ref, kinds = REDUCTIONS[name]
    if dtype.kind not in kinds:
        pytest.skip(f"{name} does not take {dtype.name} (checked in test_lax_errors)")
    use_dtype(request, dtype)
    rng = _rng(name, dtype)
    arith = name in ("reduce_sum", "reduce_prod") and dtype.kind == "f"
    batch = LaxBatch()
    for shape in SHAPES:
        if arith:  # finite values: float32 overflow vs a float64 reference is not the point
            lo, hi = (0.5, 2.0) if name == "reduce_prod" else (-10, 10)
            x = sample(shape, dtype, rng, lo, hi, edges=np.array([0.0, -0.0, 1.0, -1.0]))
        else:
            x = sample(shape, dtype, rng)
        for axes in _axes_for(len(shape)):
            batch.add(lambda x, axes=axes: fn(x, axes), lambda x, axes=axes: ref(x, axes), x,
                      ulps=None if arith else 0, rtol=1e-5 if arith else None, atol=1e-5,
                      what=f"{name}{axes}", float_reduction=arith)
    batch.run()


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    use_dtype(request, dtype)
    fn = getattr(lax, name)
    pick = np.argmax if name == "argmax" else np.argmin

    def ref(x: np.ndarray, axis: int) -> np.ndarray:
        # JAX: the first NaN wins, else the first of equal extremes (np.argmax's rule too,
        # written out here so the reference does not lean on NumPy's NaN handling).
        if x.dtype.kind == "f":
            nan = np.isnan(x)
            first_nan = np.argmax(nan, axis=axis)
            clean = np.where(nan, -np.inf if name == "argmax" else np.inf, x)
            return np.where(nan.any(axis=axis), first_nan, pick(clean, axis=axis))
        return pick(x, axis=axis)

    rng = _rng(name, dtype)
    batch = LaxBatch()
    for shape in [(7,), (33,), (3, 5), (2, 3, 4), (1,)]:
        # few distinct values, so ties are common
        x = sample(shape, dtype, rng, -2, 2)
        for axis in range(len(shape)):
            for index_dtype in (np.int32, np.uint8):
                # The eager dtype here, jit == eager (dtype included) by batch.run().
                assert fn(x, axis, index_dtype).dtype == np.dtype(index_dtype)
                batch.add(lambda x, axis=axis, it=index_dtype: fn(x, axis, it),
                          lambda x, axis=axis: ref(x, axis), x, what=f"{name}({axis})")
    batch.run()


def test_float_reductions_keep_weak_type() -> None:
    for fn in (lambda x: lax.reduce_sum(x, ()), lambda x: lax.reduce_max(x, ())):
        assert get_aval(fn(2.0)).weak_type
    assert not get_aval(lax.argmax(lax.broadcast_in_dim(2.0, (3,), ()), 0, np.int32)) \
        .weak_type


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=lambda d: d.name)
def test_reduce_max_propagates_nan(dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    use_dtype(request, dtype)
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]], dtype)
    for fn, expected in [(lax.reduce_max, [np.nan, np.inf]), (lax.reduce_min, [np.nan, -np.inf])]:
        assert_eager_jit_numpy(lambda x, fn=fn: fn(x, (1,)),
                               lambda x, e=expected: np.array(e, dtype), x)


# -- jaxpr params, as JAX 0.10.2 prints them --------------------------------------------------
JAXPR_LINES: list[tuple[Any, str]] = [
    (lambda x: lax.argmax(x, 1, np.int32), "b:i32[2] = argmax[axes=(1,) index_dtype=int32] a"),
    (lambda x: lax.argmin(x, 0, np.int32), "b:i32[3] = argmin[axes=(0,) index_dtype=int32] a"),
    (lambda x: lax.round(x), "b:f32[2,3] = round[rounding_method=0] a"),
    (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
     "b:f32[2,3] = round[rounding_method=1] a"),
    (lambda x: lax.integer_pow(x, -2), "b:f32[2,3] = integer_pow[y=-2] a"),
    (lambda x: lax.reduce_max(x, (1,)), "b:f32[2] = reduce_max[axes=(1,)] a"),
    (lambda x: lax.reduce_sum(x, (0, 1)), "b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a"),
    (lambda x: lax.transpose(x, (1, 0)), "b:f32[3,2] = transpose[permutation=(1, 0)] a"),
    (lambda x: lax.rev(x, (0,)), "b:f32[2,3] = rev[dimensions=(0,)] a"),
    (lambda x: lax.reshape(x, (6,)),
     "b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a"),
    (lambda x: lax.expand_dims(x, (0,)),
     "b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a"),
    (lambda x: lax.convert_element_type(x, np.int32),
     "b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a"),
    (lambda x: lax.bitcast_convert_type(x, np.int32),
     "b:i32[2,3] = bitcast_convert_type[new_dtype=int32] a"),
    (lambda x: lax.square(x), "b:f32[2,3] = square a"),
    (lambda x: lax.stop_gradient(x), "b:f32[2,3] = stop_gradient a"),
    (lambda x: lax.clamp(0.0, x, 1.0), "b:f32[2,3] = clamp 0.0:f32[] a 1.0:f32[]"),
    (lambda x: lax.select_n(True, x, x), "b:f32[2,3] = select_n True:bool[] a a"),
]


@pytest.mark.parametrize("fn,line", JAXPR_LINES, ids=lambda v: v if isinstance(v, str) else "")
def test_jaxpr_params(fn: Any, line: str) -> None:
    x = np.ones((2, 3), np.float32)
    text = str(ember.make_jaxpr(fn)(x))
    assert line in text, text
