"""Pinned JAX 0.10.2 values where NumPy and XLA disagree, checked eagerly and under jit.

Each row: a lax call, its inputs, and the exact value JAX gives (on CPU). NumPy differs on
most of them (it traps or warns on integer x/0, masks shift counts, rounds half to even,
ignores NaN in argmax's ties, ...), which is why they are written out here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_tables import assert_eager_jit_numpy

import ember
from ember import lax

i8, i16, i32, u8, u32 = np.int8, np.int16, np.int32, np.uint8, np.uint32
f32 = np.float32
I32_MIN, I32_MAX = np.iinfo(i32).min, np.iinfo(i32).max
nan, inf = np.nan, np.inf


def a(values: Any, dtype: Any) -> np.ndarray:
    return np.array(values, dtype)


AFZ = lax.RoundingMethod.AWAY_FROM_ZERO
EVEN = lax.RoundingMethod.TO_NEAREST_EVEN

# (id, function, args, expected)
PINNED: list[tuple[str, Any, tuple, np.ndarray]] = [
    # integer division: x/0 = -1 (all ones unsigned), truncation toward zero, INT_MIN/-1 wraps
    ("div_by_zero_i32", lax.div, (a([7, -7, 0, I32_MIN], i32), a([0, 0, 0, 0], i32)),
     a([-1, -1, -1, -1], i32)),
    ("div_by_zero_u8", lax.div, (a([7, 0, 255], u8), a([0, 0, 0], u8)), a([255] * 3, u8)),
    ("div_by_zero_u32", lax.div, (a([7], u32), a([0], u32)), a([2**32 - 1], u32)),
    ("div_truncates", lax.div, (a([-7, 7, -7, 7], i32), a([2, -2, -2, 2], i32)),
     a([-3, -3, 3, 3], i32)),
    ("div_int_min_by_minus_one", lax.div, (a([-128], i8), a([-1], i8)), a([-128], i8)),
    ("div_int_min_by_minus_one_i32", lax.div, (a([I32_MIN], i32), a([-1], i32)),
     a([I32_MIN], i32)),
    # remainder: x%0 = x, sign of the dividend, INT_MIN % -1 = 0
    ("rem_by_zero", lax.rem, (a([7, -7, 0], i32), a([0, 0, 0], i32)), a([7, -7, 0], i32)),
    ("rem_by_zero_u8", lax.rem, (a([7, 200], u8), a([0, 0], u8)), a([7, 200], u8)),
    ("rem_sign_of_dividend", lax.rem, (a([-7, 7, -7], i32), a([2, -2, -2], i32)),
     a([-1, 1, -1], i32)),
    ("rem_int_min_by_minus_one", lax.rem, (a([-128], i8),
                                          a([-1], i8)), a([0], i8)),
    ("rem_int_min_by_minus_one_i32", lax.rem, (a([I32_MIN], i32), a([-1], i32)), a([0], i32)),
    ("float_rem", lax.rem, (a([-5.5, 5.5, 5.0, inf], f32), a([2.0, -2.0, 0.0, 2.0], f32)),
     a([-1.5, 1.5, nan, nan], f32)),
    ("float_div_by_zero", lax.div, (a([1.0, -1.0, 0.0, -1.0], f32), a([0.0, 0.0, 0.0, -0.0],
                                                                      f32)),
     a([inf, -inf, nan, inf], f32)),
    # shifts: counts >= width or negative give 0; arithmetic right shift fills with the sign
    ("shl_past_width", lax.shift_left, (a([1, 1, 1, 1], i32), a([31, 32, 33, -1], i32)),
     a([I32_MIN, 0, 0, 0], i32)),
    ("shl_u8", lax.shift_left, (a([1, 255, 3], u8), a([7, 8, 1], u8)), a([128, 0, 6], u8)),
    ("shr_logical", lax.shift_right_logical, (a([-1, -1, -1, 16], i32),
                                             a([28, 32, -1, 2], i32)), a([15, 0, 0, 4], i32)),
    ("shr_arith", lax.shift_right_arithmetic, (a([-8, -8, 8, -8, 8], i32),
                                              a([1, 40, 40, -1, -1], i32)),
     a([-4, -1, 0, -1, 0], i32)),
    ("shr_arith_unsigned", lax.shift_right_arithmetic, (a([0x80, 0x80, 0x40], u8),
                                                       a([1, 9, 1], u8)),
     a([0xC0, 0xFF, 0x20], u8)),
    # float -> int conversion saturates, NaN -> 0; float -> uint: negatives -> 0
    ("f32_to_i32", lambda x: lax.convert_element_type(x, i32),
     (a([nan, inf, -inf, 3e9, -3e9, -1.7, 1.7, -0.0], f32),),
     a([0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, -1, 1, 0], i32)),
    ("f32_to_u8", lambda x: lax.convert_element_type(x, u8),
     (a([nan, inf, -inf, 300.0, -5.0, -0.5, 1.9, 255.9], f32),),
     a([0, 255, 0, 255, 0, 0, 1, 255], u8)),
    ("f32_to_i8", lambda x: lax.convert_element_type(x, i8), (a([127.9, -128.9, 1e20], f32),),
     a([127, -128, 127], i8)),
    ("f32_to_bool", lambda x: lax.convert_element_type(x, np.bool_),
     (a([0.0, -0.0, nan, 0.1, -inf, 1e-45], f32),), a([0, 0, 1, 1, 1, 1], np.bool_)),
    ("bool_to_f32", lambda x: lax.convert_element_type(x, f32), (a([True, False], np.bool_),),
     a([1.0, 0.0], f32)),
    ("int_to_bool", lambda x: lax.convert_element_type(x, np.bool_), (a([0, 2, -1, 256], i32),),
     a([0, 1, 1, 1], np.bool_)),
    ("i32_to_u8_wraps", lambda x: lax.convert_element_type(x, u8), (a([256, -1, 300], i32),),
     a([0, 255, 44], u8)),
    # rounding: lax.round is half away from zero; TO_NEAREST_EVEN is jnp.round's mode
    ("round_afz", lambda x: lax.round(x, AFZ),
     (a([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.3, 8388609.0], f32),),
     a([1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -0.0, 8388609.0], f32)),
    ("round_even", lambda x: lax.round(x, EVEN),
     (a([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, 3.5], f32),),
     a([0.0, 2.0, 2.0, -0.0, -2.0, 0.0, 4.0], f32)),
    # max / min propagate NaN from either side
    ("max_nan", lax.max, (a([nan, 1.0, nan, -inf], f32), a([1.0, nan, nan, nan], f32)),
     a([nan, nan, nan, nan], f32)),
    ("min_nan", lax.min, (a([nan, 1.0, inf], f32), a([1.0, nan, nan], f32)),
     a([nan, nan, nan], f32)),
    ("clamp_nan", lax.clamp, (f32(0), a([nan, -1.0, 2.0], f32), f32(1)), a([nan, 0.0, 1.0], f32)),
    # argmax / argmin: the first NaN, else the first of ties
    ("argmax_first_nan", lambda x: lax.argmax(x, 0, i32), (a([1.0, nan, 3.0, nan], f32),),
     a(1, i32)),
    ("argmin_first_nan", lambda x: lax.argmin(x, 0, i32), (a([1.0, 0.0, nan, nan], f32),),
     a(2, i32)),
    ("argmax_first_tie", lambda x: lax.argmax(x, 0, i32), (a([3.0, 1.0, 3.0], f32),),
     a(0, i32)),
    ("argmin_first_tie", lambda x: lax.argmin(x, 0, i32), (a([2, 0, 5, 0], i32),), a(1, i32)),
    ("argmax_all_neg_inf", lambda x: lax.argmax(x, 0, i32), (a([-inf, -inf], f32),), a(0, i32)),
    ("argmax_rows", lambda x: lax.argmax(x, 1, i32), (a([[1, nan, nan], [2, 2, 1]], f32),),
     a([1, 0], i32)),
    # integer overflow wraps
    ("add_wraps", lax.add, (a([I32_MAX], i32), a([1], i32)), a([I32_MIN], i32)),
    ("sub_wraps_u8", lax.sub, (a([0], u8), a([1], u8)), a([255], u8)),
    ("mul_wraps", lax.mul, (a([100, 16], i8), a([3, 16], i8)), a([44, 0], i8)),
    ("mul_wraps_u32", lax.mul, (a([0x10001], u32), a([0x10001], u32)), a([0x20001], u32)),
    ("neg_int_min", lax.neg, (a([I32_MIN, -128], i32),), a([I32_MIN, 128], i32)),
    ("abs_int_min", lax.abs, (a([-128, -1, 5], i8),), a([-128, 1, 5], i8)),
    ("integer_pow_wraps", lambda x: lax.integer_pow(x, 2), (a([65536, -3], i32),),
     a([0, 9], i32)),
    # sign keeps -0.0 and NaN; unsigned sign is 0 or 1
    ("sign_float", lax.sign, (a([-0.0, 0.0, nan, -3.0, inf], f32),),
     a([-0.0, 0.0, nan, -1.0, 1.0], f32)),
    ("sign_uint", lax.sign, (a([0, 5, 255], u8),), a([0, 1, 1], u8)),
    ("sign_int", lax.sign, (a([-128, 0, 7], i8),), a([-1, 0, 1], i8)),
    # bit counting on negative numbers counts the two's-complement bits
    ("popcount_negative", lax.population_count, (a([-1, -128, -2], i8),), a([8, 1, 7], i8)),
    ("popcount_i32", lax.population_count, (a([-1, I32_MIN, 0], i32),), a([32, 1, 0], i32)),
    ("clz", lax.clz, (a([0, -1, 1, 0x00FF0000], i32),), a([32, 0, 31, 8], i32)),
    ("clz_u8", lax.clz, (a([0, 1, 128, 16], u8),), a([8, 7, 0, 3], u8)),
    # bool: max / min / and / or / xor / not / comparisons are allowed
    ("max_bool", lax.max, (a([True, False, False], np.bool_), a([False, False, True], np.bool_)),
     a([True, False, True], np.bool_)),
    ("min_bool", lax.min, (a([True, False, True], np.bool_), a([True, True, False], np.bool_)),
     a([True, False, False], np.bool_)),
    ("not_bool", lax.bitwise_not, (a([True, False], np.bool_),), a([False, True], np.bool_)),
    ("lt_bool", lax.lt, (a([False, True, False], np.bool_), a([True, True, False], np.bool_)),
     a([True, False, False], np.bool_)),
    ("not_int", lax.bitwise_not, (a([0, -1, 5], i32),), a([-1, 0, -6], i32)),
    # float special values
    ("logistic_limits", lax.logistic, (a([-inf, inf, 0.0, nan], f32),),
     a([0.0, 1.0, 0.5, nan], f32)),
    ("rsqrt_zeros", lax.rsqrt, (a([0.0, -0.0, inf, -1.0], f32),), a([inf, -inf, 0.0, nan], f32)),
    ("erf_inv_limits", lax.erf_inv, (a([1.0, -1.0, 0.0, 2.0], f32),),
     a([inf, -inf, 0.0, nan], f32)),
    ("is_finite", lax.is_finite, (a([nan, inf, -inf, 0.0, 3e38, 1e-45], f32),),
     a([0, 0, 0, 1, 1, 1], np.bool_)),
    ("pow_zero", lax.pow, (a([0.0, 0.0, -0.0, 2.0, nan], f32), a([-1.0, 0.0, -1.0, nan, 0.0],
                                                                  f32)),
     a([inf, 1.0, -inf, nan, 1.0], f32)),
    ("integer_pow_negative", lambda x: lax.integer_pow(x, -1), (a([0.0, -0.0, 4.0], f32),),
     a([inf, -inf, 0.25], f32)),
    ("eq_nan", lax.eq, (a([nan, 0.0], f32), a([nan, -0.0], f32)), a([False, True], np.bool_)),
    ("ne_nan", lax.ne, (a([nan], f32), a([nan], f32)), a([True], np.bool_)),
    # select_n with an integer `which`: out of range picks the nearest end case
    ("select_n_int", lax.select_n, (a([0, 1, 2, 5, -1], i32), a([1, 1, 1, 1, 1], f32),
                                    a([2, 2, 2, 2, 2], f32), a([3, 3, 3, 3, 3], f32)),
     a([1, 2, 3, 3, 1], f32)),
    ("reduce_and_empty", lambda x: lax.reduce_and(x, (0,)), (a([], i32),), a(-1, i32)),
    ("reduce_max_empty", lambda x: lax.reduce_max(x, (0,)), (a([], i8),), a(-128, i8)),
    ("reduce_min_empty_f32", lambda x: lax.reduce_min(x, (0,)), (a([], f32),), a(inf, f32)),
    ("reduce_sum_wraps", lambda x: lax.reduce_sum(x, (0,)), (a([100, 100, 100], i8),),
     a(44, i8)),
]


@pytest.mark.parametrize("fn,args,expected", [pytest.param(*row[1:], id=row[0])
                                              for row in PINNED])
def test_pinned(fn: Any, args: tuple, expected: np.ndarray) -> None:
    assert_eager_jit_numpy(fn, lambda *_: expected, *args)


def test_pinned_x64(x64: None) -> None:
    i64, u64 = np.int64, np.uint64
    i64_min = np.iinfo(i64).min
    rows = [
        (lax.div, (a([i64_min, 5], i64), a([-1, 0], i64)), a([i64_min, -1], i64)),
        (lax.rem, (a([i64_min, 5], i64), a([-1, 0], i64)), a([0, 5], i64)),
        (lax.div, (a([5], u64), a([0], u64)), a([2**64 - 1], u64)),
        (lax.shift_left, (a([1, 1], i64), a([63, 64], i64)), a([i64_min, 0], i64)),
        (lax.shift_right_arithmetic, (a([-1], i64), a([64], i64)), a([-1], i64)),
        (lambda x: lax.convert_element_type(x, i64), (a([nan, 1e19, -1e19, -2.5], np.float64),),
         a([0, np.iinfo(i64).max, i64_min, -2], i64)),
        (lambda x: lax.convert_element_type(x, u64), (a([nan, 2e19, -1.0, 1.5], np.float64),),
         a([0, 2**64 - 1, 0, 1], u64)),
        (lax.population_count, (a([-1], i64),), a([64], i64)),
        (lambda x: lax.round(x), (a([0.5, -2.5, 0.49999999999999994], np.float64),),
         a([1.0, -3.0, 0.0], np.float64)),
    ]
    for fn, args, expected in rows:
        assert_eager_jit_numpy(fn, lambda *_, e=expected: e, *args)


# -- random int32 pairs against the definitions, edge values weighted in -------------------
_I32 = st.one_of(st.sampled_from([I32_MIN, I32_MAX, -1, 0, 1, 31, 32, 33]),
                 st.integers(I32_MIN, I32_MAX))


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


@settings(max_examples=60, deadline=None)
@given(xs=st.lists(st.tuples(_I32, _I32), min_size=1, max_size=9))
def test_int32_div_rem_shift_definitions(xs: list[tuple[int, int]]) -> None:
    x = np.array([p for p, _ in xs], np.int32)
    y = np.array([q for _, q in xs], np.int32)
    div = [-1 if q == 0 else _wrap32(_trunc_div(p, q)) for p, q in xs]
    rem = [p if q == 0 else _wrap32(p - q * _trunc_div(p, q)) for p, q in xs]
    shl = [0 if not 0 <= q < 32 else _wrap32(p << q) for p, q in xs]
    sra = [(-1 if p < 0 else 0) if not 0 <= q < 32 else p >> q for p, q in xs]
    srl = [0 if not 0 <= q < 32 else _wrap32((p % 2**32) >> q) for p, q in xs]
    for fn, expected in [(lax.div, div), (lax.rem, rem), (lax.shift_left, shl),
                         (lax.shift_right_arithmetic, sra), (lax.shift_right_logical, srl)]:
        assert_eager_jit_numpy(fn, lambda *_, e=expected: np.array(e, np.int32), x, y)


def test_pow_with_a_scalar_exponent_is_pow_not_sqrt():
    # NumPy turns x ** 0.5 with a scalar exponent into sqrt (sqrt(-0.0) = -0.0, and a
    # different last bit); C's pow and XLA give +0.0. Eager, jit and every operand shape
    # must agree.
    x = np.array([1.5, -0.0, 2.0, 3.0], np.float32)
    for y in (np.float32(0.5), np.full(4, 0.5, np.float32)):
        eager = np.asarray(lax.pow(x, y))
        jitted = np.asarray(ember.jit(lax.pow)(x, y))
        assert eager.tobytes() == jitted.tobytes()
        assert not np.signbit(eager[1])
    scalar = np.asarray(lax.pow(np.float32(1.5), np.float32(0.5)))
    assert scalar == np.asarray(lax.pow(x, np.float32(0.5)))[0]


def test_pow_by_two_is_exactly_x_times_x():
    # So `power(x, 2) => x * x` in the algebraic simplifier never changes a result.
    x = np.random.default_rng(3).uniform(-30, 30, 257).astype(np.float32)
    want = (x * x).tobytes()
    assert np.asarray(lax.pow(x, np.float32(2))).tobytes() == want
    assert np.asarray(ember.jit(lax.pow)(x, np.full_like(x, 2))).tobytes() == want
