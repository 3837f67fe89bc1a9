"""Argmax splitting (passes/argmax_splitting.py): argmax/argmin compiled as a max and a
first-hit min equal NumPy's first extremum for every dtype, shape, axis and edge value
(NaN first, ties, -0.0 against +0.0, infinities, empty rows); the optimized module holds no
variadic reduce; combiners that are not the first-extremum rule are left alone."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.hlo import Builder, Shape
from ember.passes.argmax_splitting import combiner_direction


def _edge_array(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        pool = np.array([-np.inf, -1.0, -0.0, 0.0, 0.5, 1.0, np.inf, np.nan], dtype)
        x = rng.standard_normal(shape).astype(dtype)
        mask = rng.random(shape) < 0.3
        x[mask] = rng.choice(pool, size=int(mask.sum()))
        return x
    info = np.iinfo(dtype)
    pool = np.array([info.min, 0, 1, info.max], dtype)
    x = rng.integers(-3 if info.min < 0 else 0, 4, shape).astype(dtype)
    mask = rng.random(shape) < 0.2
    x[mask] = rng.choice(pool, size=int(mask.sum()))
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.uint8])
@pytest.mark.parametrize("shape, axis", [((7,), 0), ((33, 5), 0), ((4, 3, 17), 1),
                                         ((3, 130), -1)])
def test_argmax_and_argmin_equal_numpy(dtype, shape, axis, x64) -> None:
    rng = np.random.default_rng(hash((np.dtype(dtype).name, shape, axis)) % 2**32)
    x = _edge_array(rng, shape, dtype)
    f = ember.jit(lambda v: (jnp.argmax(v, axis=axis), jnp.argmin(v, axis=axis)))
    got_max, got_min = (np.asarray(r) for r in f(x))
    np.testing.assert_array_equal(got_max, np.argmax(x, axis=axis))
    np.testing.assert_array_equal(got_min, np.argmin(x, axis=axis))


def test_ties_of_signed_zeros_and_all_nan_rows() -> None:
    x = np.array([[-0.0, 0.0, 0.0], [0.0, -0.0, 1.0], [np.nan, np.nan, 1.0],
                  [1.0, np.nan, np.nan], [-np.inf, -np.inf, -np.inf]], np.float32)
    f = ember.jit(lambda v: (jnp.argmax(v, axis=1), jnp.argmin(v, axis=1)))
    got_max, got_min = (np.asarray(r) for r in f(x))
    np.testing.assert_array_equal(got_max, [0, 2, 0, 1, 0])
    np.testing.assert_array_equal(got_min, [0, 0, 0, 1, 0])


def test_no_variadic_reduce_is_left() -> None:
    x = np.ones((64, 48), np.float32)
    text = ember.jit(lambda v: jnp.argmax(v, axis=1)).lower(x).compile().as_text()
    assert "(f32[64], s32[64]) reduce" not in text and "argmax" not in text


def _combiner(last: bool):
    """An argmax combiner keeping the first (or, `last`, the last) maximum, NaN ignored."""
    b = Builder("combiner")
    sv, si = Shape("f32", ()), Shape("s32", ())
    av, ai, bv, bi = (b.parameter(s) for s in (sv, si, sv, si))
    tie = b.binary("and", b.compare(bv, av, "EQ"), b.compare(bi, ai, "GT" if last else "LT"))
    take = b.binary("or", b.compare(bv, av, "GT"), tie)
    return b.build_computation(b.op("tuple", [b.select(take, bv, av), b.select(take, bi, ai)],
                                    shape=Shape.tuple_of([sv, si])))


def test_only_the_first_extremum_rule_is_rewritten() -> None:
    f32, s32 = np.dtype(np.float32), np.dtype(np.int32)
    assert combiner_direction(_combiner(last=True), f32, s32) is None
    # (without the NaN rule, the first maximum among numbers only: not argmax either)
    assert combiner_direction(_combiner(last=False), f32, s32) is None
    x = np.ones((2, 4), np.float32)
    module = ember.jit(lambda v: jnp.argmax(v, axis=1)).lower(x)._lowered.module
    (red,) = [i for c in module.computations for i in c.instructions
              if i.opcode == "reduce" and len(i.operands) == 4]
    assert combiner_direction(red.to_apply, f32, s32) == "max"
    assert combiner_direction(red.to_apply, np.dtype(np.int32), s32) == "max"
