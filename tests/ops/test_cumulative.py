"""Cumulative reductions (lax.cumsum/cumprod/cummax/cummin/cumlogsumexp and the jnp
cumsum/cumprod/nancumsum/nancumprod/cumulative_sum/cumulative_prod) against NumPy, eager and
under jit (eager == jit bit for bit).

The cases of a test (of one dtype, where a dtype may turn on x64) are collected in a
`LaxBatch` (tests/ops/batched_checks.py) and compiled SCAN_BATCH at a time: the same
assertions as `assert_eager_jit_numpy` per case, fewer compiles. Every case is checked
eagerly against NumPy; `_compiled` says which are also compiled."""

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
    dtype_params,
    ieee_maximum,
    ieee_minimum,
    sample,
    use_dtype,
)

import ember
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(2)
# Scans compile to log-depth trees of kernels, and several scans in one program fuse into
# kernels whose compile time grows faster than their number: two cases per program was
# the fastest measured (1: 23 s, 2: 21 s, 4: 42 s, all: 37 s for test_lax_cumulative).
SCAN_BATCH = 2
SHAPES = [(0,), (7,), (33,), (3, 5), (2, 3, 4)]


def _scan_ref(ufunc):
    def ref(x, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            if ufunc is np.add:
                out = np.cumsum(x, axis=axis, dtype=x.dtype)
            elif ufunc is np.multiply:
                out = np.cumprod(x, axis=axis, dtype=x.dtype)
            elif ufunc in (np.maximum, np.minimum) and x.dtype.kind == "f":
                # XLA's max/min: -0.0 < +0.0 (ufunc.accumulate picks by operand order)
                step = ieee_maximum if ufunc is np.maximum else ieee_minimum
                out = np.moveaxis(x, axis, 0).copy()
                for i in range(1, out.shape[0]):
                    out[i] = step(out[i - 1], out[i])
                out = np.moveaxis(out, 0, axis)
            else:
                out = ufunc.accumulate(x, axis=axis)
        return np.flip(out, axis) if reverse else out
    return ref


LAX_OPS = [
    ("cumsum", lax.cumsum, np.add, INTS + FLOATS + X64_INTS + X64_FLOATS),
    ("cumprod", lax.cumprod, np.multiply, INTS + FLOATS),
    ("cummax", lax.cummax, np.maximum, BOOL + INTS + FLOATS + X64_FLOATS),
    ("cummin", lax.cummin, np.minimum, BOOL + INTS + FLOATS),
    ("cumlogsumexp", lax.cumlogsumexp, np.logaddexp, FLOATS + X64_FLOATS),
]


SCAN_SAFE_EDGES = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5])


# Every (shape, axis, reverse) is checked eagerly for every dtype. Compiled: the whole grid
# for float32 cumsum; float32 of the other ops (the same scan, another combining operation)
# every shape forwards and a 1-D and a 3-D middle axis reversed; the other dtypes (which
# change only the combining operation: wrapping int, unsigned compare, float64) a tail of a
# vector length both ways, the middle axis of a 3-D array and the empty case.
def _compiled(name, dtype, shape, axis, reverse):
    if dtype == np.float32 and (name == "cumsum" or not reverse):
        return True
    return shape in ((33,), (0,)) or (shape == (2, 3, 4) and axis == 1 and
                                      (dtype == np.float32 or not reverse))


@pytest.mark.parametrize("name,fn,ufunc,dtypes", [pytest.param(*op, id=op[0]) for op in LAX_OPS])
def test_lax_cumulative(request, name, fn, ufunc, dtypes):
    ref = _scan_ref(ufunc)
    for dtype in dtypes:
        use_dtype(request, dtype)
        batch = LaxBatch(max_cases=SCAN_BATCH)
        for shape in SHAPES:
            # Products over the full range overflow to inf/0 fast: keep floats small there.
            hi = 2.0 if name == "cumprod" and dtype.kind == "f" else None
            # Float scans may be associated in any order (a tree scan when compiled), so
            # leave out the edge values whose sums and products depend on the order
            # (+-max cancelling, subnormals underflowing); NaN, infinities and zeros stay.
            edges = SCAN_SAFE_EDGES if dtype.kind == "f" and name != "cummax" and \
                name != "cummin" else None
            x = sample(shape, dtype, RNG, low=-hi if hi else None, high=hi, edges=edges)
            for axis in range(-len(shape), len(shape)):
                pos = axis % len(shape)
                for reverse in (False, True):
                    tol = dict(rtol=1e-5, atol=1e-5) if dtype.kind == "f" and name in (
                        "cumsum", "cumprod", "cumlogsumexp") else {}
                    add = batch.add if _compiled(name, dtype, shape, axis, reverse) else \
                        batch.add_eager
                    add(
                        lambda v, a=axis, r=reverse: fn(v, axis=a, reverse=r),
                        lambda v, a=pos, r=reverse: ref(v, a, r), x,
                        ignore_zero_sign=bool(tol), what=f"{name} {dtype} axis={axis}",
                        float_reduction=bool(tol), **tol)
        batch.run()


def test_lax_cumulative_semantics_and_jaxpr():
    x = np.array([1.0, np.nan, 3.0, 0.5], np.float32)
    assert np.isnan(np.asarray(lax.cummax(x))[1:]).all()
    i = np.array([2**30, 2**30, 2**30], np.int32)
    assert np.asarray(lax.cumsum(i)).tolist() == [2**30, 2**31 - 2**32, -2**30]
    inf = np.array([-np.inf, -np.inf, np.inf, 0.0], np.float32)
    assert np.asarray(lax.cumlogsumexp(inf)).tolist() == [-np.inf, -np.inf, np.inf, np.inf]
    text = str(ember.make_jaxpr(lambda v: lax.cumsum(v, axis=1, reverse=True))(
        np.zeros((2, 3), np.float32)))
    assert text == ("{ lambda ; a:f32[2,3]. let b:f32[2,3] = cumsum[axis=1 reverse=True] a "
                    "in (b,) }")
    for name in ("cumprod", "cummax", "cummin", "cumlogsumexp"):
        t = str(ember.make_jaxpr(getattr(lax, name))(np.zeros(3, np.float32)))
        assert f"{name}[axis=0 reverse=False]" in t
    with pytest.raises(TypeError):
        lax.cumlogsumexp(np.ones(3, np.int32))
    with pytest.raises(TypeError):
        lax.cumsum(np.ones(3, bool))
    with pytest.raises(ValueError):
        lax.cumsum(np.ones(3, np.float32), axis=1)


@pytest.mark.parametrize("dtype", dtype_params(BOOL + INTS + FLOATS + X64_FLOATS))
def test_jnp_cumsum_cumprod(request, dtype):
    use_dtype(request, dtype)
    batch = LaxBatch(max_cases=SCAN_BATCH)
    small = dtype.kind == "b" or dtype.itemsize < 4
    for shape in [(), *SHAPES]:
        x = sample(shape, dtype, RNG, low=-2, high=2,
                   edges=SCAN_SAFE_EDGES if dtype.kind == "f" else None)
        for axis in [None] + list(range(len(shape))):
            for fn, np_fn in ((jnp.cumsum, np.cumsum), (jnp.cumprod, np.cumprod)):
                out = jnp.cumsum(x, axis) if fn is jnp.cumsum else jnp.cumprod(x, axis)
                expected_dtype = out.dtype
                if small:
                    # Like jnp.sum: bool and narrow ints accumulate in the default int.
                    assert expected_dtype in (np.int32, np.uint32)

                def ref(v, a=axis, np_fn=np_fn, dt=expected_dtype):
                    with np.errstate(all="ignore"):
                        return np_fn(v.astype(dt), axis=a)

                tol = dict(rtol=1e-5, atol=1e-5) if dtype.kind == "f" else {}
                # The accumulation dtype (the convert before the scan) is what differs per
                # dtype: every shape compiled for float32, a scalar, a flattened and a
                # middle axis for the rest, all of them eagerly.
                compiled = dtype == np.float32 or shape in ((), (33,)) or (
                    shape == (2, 3, 4) and axis in (None, 1))
                add = batch.add if compiled else batch.add_eager
                add(lambda v, a=axis, fn=fn: fn(v, axis=a), ref, x,
                    ignore_zero_sign=True, float_reduction=bool(tol), **tol)
    batch.run()
    x = sample((3, 4), dtype, RNG, low=0, high=3)
    out = jnp.cumsum(x, axis=1, dtype=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.cumsum(x, axis=1, dtype=np.float32))
    b = jnp.cumsum(x, axis=0, dtype=bool)
    assert b.dtype == np.bool_
    # dtype=bool: x != 0 first, accumulated in int, then != 0 (as JAX).
    assert np.array_equal(np.asarray(b), np.cumsum(x != 0, axis=0) != 0)


def test_nancum_and_array_api_cumulative():
    batch = LaxBatch(max_cases=SCAN_BATCH)
    x = np.array([[1.0, np.nan, 2.0], [np.nan, 3.0, 0.5]], np.float32)
    batch.add(lambda v: jnp.nancumsum(v, axis=1), lambda v: np.nancumsum(v, axis=1), x,
              float_reduction=True)
    batch.add(lambda v: jnp.nancumprod(v), lambda v: np.nancumprod(v), x, float_reduction=True)
    for dtype in (np.int32, np.float32, np.uint8):
        for shape, axis in [((7,), None), ((3, 4), 1), ((3, 4), 0), ((0,), None),
                            ((2, 0), 1)]:
            v = sample(shape, dtype, RNG, low=0, high=3,
                       edges=SCAN_SAFE_EDGES if np.dtype(dtype).kind == "f" else None)
            for incl in (False, True):
                for fn, np_fn, ident in ((jnp.cumulative_sum, np.cumsum, 0),
                                         (jnp.cumulative_prod, np.cumprod, 1)):
                    acc = np.dtype(dtype) if np.dtype(dtype).itemsize >= 4 else np.uint32

                    def ref(a, axis=axis, incl=incl, np_fn=np_fn, ident=ident, acc=acc):
                        ax = 0 if axis is None else axis
                        out = np_fn(a, axis=ax, dtype=acc)
                        if incl:
                            pad = [(0, 0)] * a.ndim
                            pad[ax] = (1, 0)
                            out = np.pad(out, pad, constant_values=ident)
                        return out

                    batch.add(
                        lambda a, axis=axis, incl=incl, fn=fn: fn(a, axis=axis,
                                                                   include_initial=incl),
                        ref, v, float_reduction=True)
    batch.run()
    with pytest.raises(ValueError):
        jnp.cumulative_sum(np.ones((2, 2)))
