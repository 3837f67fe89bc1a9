"""Every JVP and transpose rule, checked as JAX's check_grads does (tests/ops/ad_checks.py).

One record per rule: the function, its operands' shapes and the interval the random point
is drawn from (away from the points where the derivative jumps or blows up). Each record
runs at orders 1 and 2 in float64, eagerly and under jit; the tie rules of max/min, the
zero tangents of the non-differentiable primitives and the edges of pow are checked apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from tests.ops.ad_checks import check_grads


class Rec(NamedTuple):
    name: str
    fn: Callable[..., Any]
    shapes: tuple
    lo: float = -2.0
    hi: float = 2.0


def _signed(rng: np.random.Generator, shape: tuple, lo: float, hi: float) -> np.ndarray:
    """|x| in [lo, hi] with a random sign (away from 0, for abs and sign)."""
    mag = rng.uniform(lo, hi, shape)
    return np.where(rng.random(shape) < 0.5, -mag, mag)


S = (3, 4)
UNARY = [
    Rec("neg", lax.neg, (S,)), Rec("exp", lax.exp, (S,)), Rec("exp2", lax.exp2, (S,)),
    Rec("log", lax.log, (S,), 0.5, 3), Rec("log1p", lax.log1p, (S,), -0.5, 3),
    Rec("expm1", lax.expm1, (S,)), Rec("sqrt", lax.sqrt, (S,), 0.5, 3),
    Rec("rsqrt", lax.rsqrt, (S,), 0.5, 3), Rec("cbrt", lax.cbrt, (S,), 0.5, 3),
    Rec("sin", lax.sin, (S,)), Rec("cos", lax.cos, (S,)), Rec("tan", lax.tan, (S,), -1, 1),
    Rec("asin", lax.asin, (S,), -0.8, 0.8), Rec("acos", lax.acos, (S,), -0.8, 0.8),
    Rec("atan", lax.atan, (S,)), Rec("sinh", lax.sinh, (S,)), Rec("cosh", lax.cosh, (S,)),
    Rec("tanh", lax.tanh, (S,)), Rec("asinh", lax.asinh, (S,)),
    Rec("acosh", lax.acosh, (S,), 1.5, 3), Rec("atanh", lax.atanh, (S,), -0.8, 0.8),
    Rec("logistic", lax.logistic, (S,)), Rec("erf", lax.erf, (S,)),
    Rec("erfc", lax.erfc, (S,)), Rec("erf_inv", lax.erf_inv, (S,), -0.8, 0.8),
    Rec("square", lax.square, (S,)),
    Rec("integer_pow3", lambda x: lax.integer_pow(x, 3), (S,)),
    Rec("integer_pow2", lambda x: lax.integer_pow(x, 2), (S,)),
    Rec("integer_pow-2", lambda x: lax.integer_pow(x, -2), (S,), 0.5, 2),
    Rec("integer_pow1", lambda x: lax.integer_pow(x, 1), (S,)),
]
SIGNED = [Rec("abs", lax.abs, (S,), 0.5, 2)]  # drawn with a random sign, |x| >= 0.5
BINARY = [
    Rec("add", lax.add, (S, S)), Rec("add_scalar", lax.add, (S, ())),
    Rec("add_size1", lax.add, ((3, 1), (1, 4))), Rec("sub", lax.sub, (S, S)),
    Rec("sub_scalar", lax.sub, ((), S)), Rec("mul", lax.mul, (S, S)),
    Rec("mul_size1", lax.mul, ((3, 1), S)), Rec("div", lax.div, (S, S), 0.5, 2),
    Rec("div_scalar", lax.div, ((), S), 0.5, 2),
    Rec("max", lax.max, (S, S)), Rec("min", lax.min, (S, S)),
    Rec("max_scalar", lax.max, (S, ())),
    Rec("atan2", lax.atan2, (S, S), 0.5, 2),
    Rec("pow", lax.pow, (S, S), 0.5, 2),
    Rec("pow_scalar_exponent", lax.pow, (S, ()), 0.5, 2),
    Rec("rem", lambda x, y: lax.rem(x + 5.0, y), (S, S), 1.1, 1.4),
]
STRUCTURAL = [
    Rec("convert_f64_f64", lambda x: lax.convert_element_type(x, np.float64) * x, (S,)),
    Rec("select_n", lambda x, y: lax.select(jnp.asarray(np.arange(12).reshape(S) % 3 == 0),
                                            x, y), (S, S)),
    Rec("select_n_int", lambda x, y, z: lax.select_n(
        jnp.asarray((np.arange(12).reshape(S) % 3).astype(np.int32)), x, y, z), (S, S, S)),
    Rec("clamp", lambda x: lax.clamp(-1.0, x, 1.0), (S,), -3, 3),
    Rec("clamp_bounds", lambda lo, x, hi: lax.clamp(lo - 3.0, x * 3.0, hi + 3.0), ((), S, ())),
    Rec("reduce_sum", lambda x: lax.reduce_sum(x, (1,)), ((3, 4, 2),)),
    Rec("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1)), (S,)),
    Rec("reduce_max", lambda x: lax.reduce_max(x, (0,)), (S,)),
    Rec("reduce_min", lambda x: lax.reduce_min(x, (0, 1)), (S,)),
    Rec("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (S,)),
    Rec("broadcast_size1", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), ((1, 4),)),
    Rec("broadcast_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), ((),)),
    Rec("reshape", lambda x: lax.reshape(x, (2, 6)), (S,)),
    Rec("transpose", lambda x: lax.transpose(x, (2, 0, 1)), ((2, 3, 4),)),
    Rec("squeeze", lambda x: lax.squeeze(x, (1,)), ((3, 1, 4),)),
    Rec("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), (S,)),
    Rec("rev", lambda x: lax.rev(x, (1,)), (S,)),
    Rec("matmul", lambda x, y: x @ y, ((3, 4), (4, 5))),
    Rec("vector_dot", lambda x, y: jnp.dot(x, y), ((4,), (4,))),
    Rec("matvec", lambda x, y: jnp.dot(x, y), ((3, 4), (4,))),
    Rec("batched", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
        ((2, 3, 4), (2, 4, 5))),
    Rec("contract_first", lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((), ()))),
        ((4, 3), (5, 4))),
    Rec("two_contractions", lambda x, y: lax.dot_general(x, y, (((0, 2), (2, 0)), ((1,), (1,)))),
        ((2, 3, 4), (4, 3, 2))),
    Rec("slice", lambda x: lax.slice(x, (1, 0), (3, 4), (1, 2)), ((4, 5),)),
    Rec("slice_plain", lambda x: lax.slice(x, (0, 1), (2, 3)), (S,)),
    Rec("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))), (S, ())),
    Rec("concatenate", lambda x, y: lax.concatenate([x, y, x], 1), (S, (3, 2))),
    Rec("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), (S,)),
    Rec("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, (2, 3), (2, 2)), (S,)),
    Rec("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u, (1, 1)),
        (S, (2, 2))),
    Rec("copy", lambda x: jnp.array(x, copy=True) * 1.0, (S,)),
    Rec("cumsum", lambda x: lax.cumsum(x, 1), (S,)),
    Rec("cumsum_reverse", lambda x: lax.cumsum(x, 0, reverse=True), (S,)),
    Rec("cumprod", lambda x: lax.cumprod(x, 1), ((3, 5),)),
    Rec("cumprod_reverse", lambda x: lax.cumprod(x, 0, reverse=True), (S,)),
    Rec("cummax", lambda x: lax.cummax(x, 1), ((3, 5),)),
    Rec("cummin_reverse", lambda x: lax.cummin(x, 0, reverse=True), (S,)),
    Rec("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), ((3, 5),)),
    Rec("cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, 0, reverse=True), (S,)),
    Rec("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), ((3, 4, 2),)),
    Rec("reduce_prod_all", lambda x: lax.reduce_prod(x, (0, 1)), (S,)),
    Rec("jnp_mixture", lambda x: jnp.mean(jnp.tanh(x) ** 2, axis=0)
        + jnp.max(x, axis=0) * jnp.sum(x, axis=0), (S,)),
]
_GD = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                 start_index_map=(0,))
_SD = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))
_ROWS = np.array([[3], [0], [3]], np.int32)  # a duplicate target: row 3 twice
_UNIQUE_ROWS = np.array([[3], [0], [1]], np.int32)
_OOB_ROWS = np.array([[3], [7], [3]], np.int32)  # row 7 of 5 is out of bounds
_U = (3, 4)
INDEXED = [
    Rec("gather", lambda x: lax.gather(x, _ROWS, _GD, (1, 4)), ((5, 4),)),
    Rec("gather_fill", lambda x: lax.gather(x, _OOB_ROWS, _GD, (1, 4), mode="fill",
                                            fill_value=0.5), ((5, 4),)),
    Rec("gather_clip", lambda x: lax.gather(x, _OOB_ROWS, _GD, (1, 4), mode="clip"),
        ((5, 4),)),
    Rec("gather_windows", lambda x: lax.gather(
        x, np.array([[1, 0], [3, 2]], np.int32),
        lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                   start_index_map=(0, 1)), (2, 2)), ((5, 4),)),
    Rec("scatter_add", lambda x, u: lax.scatter_add(x, _ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_add_drop", lambda x, u: lax.scatter_add(x, _OOB_ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_add_clip", lambda x, u: lax.scatter_add(x, _OOB_ROWS, u, _SD, mode="clip"),
        ((5, 4), _U)),
    Rec("scatter", lambda x, u: lax.scatter(x, _ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_drop", lambda x, u: lax.scatter(x, _OOB_ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_unique", lambda x, u: lax.scatter(x, _UNIQUE_ROWS, u, _SD,
                                                   unique_indices=True), ((5, 4), _U)),
    Rec("scatter_max", lambda x, u: lax.scatter_max(x, _ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_min", lambda x, u: lax.scatter_min(x, _ROWS, u, _SD), ((5, 4), _U)),
    Rec("scatter_mul_unique", lambda x, u: lax.scatter_mul(x, _UNIQUE_ROWS, u, _SD,
                                                           unique_indices=True), ((5, 4), _U)),
    Rec("scatter_mul_operand", lambda x: lax.scatter_mul(
        x, _ROWS, np.linspace(0.5, 2.0, 12).reshape(_U), _SD), ((5, 4),)),
    Rec("jnp_take_and_at", lambda x, u: jnp.sum(x[np.array([4, 1, 1])] ** 2, axis=0)
        + jnp.asarray(x).at[np.array([0, 2])].add(u[:2]).at[3].set(u[2])[3] * x[0], ((5, 4), _U)),
]
SORTING = [
    Rec("sort", lambda x: lax.sort(x, dimension=1), ((3, 5),)),
    Rec("sort_dim0", lambda x: lax.sort(x, dimension=0), ((3, 5),)),
    Rec("sort_key_val", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1),
        ((3, 5), (3, 5))),
    Rec("sort_two_keys", lambda k, v: lax.sort((k, v), dimension=0, num_keys=2),
        ((3, 5), (3, 5))),
    Rec("sort_int_payload", lambda x: lax.sort((x, jnp.arange(15).reshape(3, 5)),
                                               dimension=1)[0] * 2.0, ((3, 5),)),
    Rec("top_k", lambda x: lax.top_k(x, 3)[0], ((3, 5),)),
    Rec("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0)[0], ((3, 5),)),
]
_EYE4 = 8 * np.eye(4)
LINALG = [  # well-conditioned points: SPD, diagonally dominant, distinct eigenvalues
    Rec("cholesky", lambda x: lax.linalg.cholesky(x @ x.T + _EYE4), ((4, 4),)),
    Rec("triangular_solve_a_b", lambda a, b: lax.linalg.triangular_solve(
        a + _EYE4, b, left_side=True, lower=True), ((4, 4), (4, 2))),
    Rec("triangular_solve_right_t_unit", lambda a, b: lax.linalg.triangular_solve(
        a + _EYE4, b, transpose_a=True, unit_diagonal=True), ((4, 4), (2, 4))),
    Rec("lu", lambda x: lax.linalg.lu(x + _EYE4)[0], ((4, 4),)),
    Rec("lu_wide", lambda x: lax.linalg.lu(x)[0], ((3, 5),)),
    Rec("qr", lambda x: lax.linalg.qr(x, full_matrices=False), ((5, 3),)),
    Rec("eigh", lambda x: lax.linalg.eigh(x + x.T + np.diag([0.0, 3.0, 6.0, 9.0])), ((4, 4),),
        -0.5, 0.5),
    Rec("svd", lambda x: lax.linalg.svd(x + np.diag([1.0, 3.0, 5.0]) @ np.eye(3, 4),
                                        full_matrices=False), ((3, 4),), -0.5, 0.5),
    Rec("det", jnp.linalg.det, ((3, 3),)),
    Rec("solve", lambda a, b: jnp.linalg.solve(a + 6 * np.eye(3), b), ((3, 3), (3, 2))),
    Rec("tridiagonal_solve", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d + 5, du, b),
        ((4,), (4,), (4,), (4, 2))),
]
FFT = [  # linear: the transposes of RFFT and IRFFT carry the Hermitian weights
    Rec("fft", lambda x: lax.real(lax.fft(lax.complex(x, x * x), "fft", (5,))) * 2
        + lax.imag(lax.fft(lax.complex(x, x), "fft", (5,))), ((3, 5),)),
    Rec("ifft_2d", lambda x: lax.imag(lax.fft(lax.complex(x, -x), "ifft", (3, 4))), ((3, 4),)),
    Rec("rfft_even", lambda x: lax.real(lax.fft(x, "rfft", (6,))) - lax.imag(
        lax.fft(x, "rfft", (6,))), ((2, 6),)),
    Rec("rfft_odd_2d", lambda x: lax.imag(lax.fft(x, "rfft", (3, 5))), ((3, 5),)),
    Rec("irfft_even", lambda x, y: lax.fft(lax.complex(x, y), "irfft", (6,)), ((2, 4), (2, 4))),
    Rec("irfft_odd_2d", lambda x: lax.fft(lax.complex(x, x * x), "irfft", (2, 5)), ((2, 3),)),
]
STRUCTURAL += INDEXED + SORTING + LINALG + FFT
RECORDS = UNARY + BINARY + STRUCTURAL


def _point(rec: Rec, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if rec in SIGNED:
        return [_signed(rng, s, rec.lo, rec.hi) for s in rec.shapes]
    return [rng.uniform(rec.lo, rec.hi, s) for s in rec.shapes]


@pytest.mark.parametrize("rec", UNARY + SIGNED + BINARY + STRUCTURAL, ids=lambda r: r.name)
def test_rule_eager_orders_1_and_2(rec, x64):
    check_grads(rec.fn, _point(rec), order=2)


@pytest.mark.parametrize("rec", UNARY + SIGNED + BINARY + STRUCTURAL, ids=lambda r: r.name)
def test_rule_under_jit(rec, x64):
    check_grads(rec.fn, _point(rec, seed=1), order=1, use_jit=True)


def test_max_min_split_ties_equally(x64):
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 0.0])
    gx, gy = ember.grad(lambda a, b: jnp.sum(lax.max(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    gx, gy = ember.grad(lambda a, b: jnp.sum(lax.min(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])


def test_reduce_max_averages_over_ties(x64):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 3.0]])
    g = ember.grad(lambda a: jnp.sum(lax.reduce_max(a, (1,))))(x)
    np.testing.assert_array_equal(g, [[0, 0.5, 0.5], [0, 0, 1]])
    g = ember.grad(lambda a: lax.reduce_min(a, (0, 1)))(x)
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 1, 0]])


ZERO_TANGENT = [
    ("sign", lax.sign), ("floor", lax.floor), ("ceil", lax.ceil), ("round", lax.round),
    ("stop_gradient", lax.stop_gradient),
    ("compare", lambda x: lax.convert_element_type(lax.gt(x, 0.0), np.float64)),
    ("argmax", lambda x: lax.convert_element_type(lax.argmax(x, 1, np.int32), np.float64)),
    ("is_finite", lambda x: lax.convert_element_type(lax.is_finite(x), np.float64)),
    ("float_to_int", lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.int32), np.float64)),
]


@pytest.mark.parametrize("name,fn", ZERO_TANGENT, ids=[n for n, _ in ZERO_TANGENT])
def test_non_differentiable_primitives_have_zero_tangents(name, fn, x64):
    x = np.array([[0.3, -1.7, 2.2], [1.4, 0.6, -0.2]])
    out, t = ember.jvp(fn, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.zeros(np.shape(out)))
    # d(c * sum(a)) = c where c is flat
    g = ember.grad(lambda a: jnp.sum(fn(a)) * jnp.sum(a))(x)
    np.testing.assert_allclose(g, np.full(x.shape, np.sum(np.asarray(fn(x)))))


def test_reduce_prod_with_zeros(x64):
    # d prod / dx_j = product of the others, computed without division: exact with zeros.
    g = ember.grad(lambda a: lax.reduce_prod(a, (0,)))(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0])
    g = ember.grad(lambda a: lax.reduce_prod(a, (0,)))(np.array([2.0, 0.0, 0.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    g = ember.jit(ember.grad(lambda a: jnp.sum(lax.reduce_prod(a, (1,)))))(
        np.array([[0.0, 4.0, 5.0], [1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(g, [[20.0, 0.0, 0.0], [6.0, 3.0, 2.0]])
    # cumprod likewise: d cumprod(x)_i / dx_j = prod_{k <= i, k != j} x_k
    g = ember.grad(lambda a: jnp.sum(lax.cumprod(a, 0)))(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0 + 6.0, 0.0])


def test_cummax_tangent_follows_the_selected_element(x64):
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    _, t = ember.jvp(lambda a: lax.cummax(a, 0), (x,), (np.arange(1.0, 6.0),))
    np.testing.assert_array_equal(t, [1.0, 2.0, 2.0, 4.0, 4.0])
    _, t = ember.jvp(lambda a: lax.cummin(a, 0, reverse=True), (x,), (np.arange(1.0, 6.0),))
    np.testing.assert_array_equal(t, [1.0, 3.0, 3.0, 5.0, 5.0])


def test_grad_through_indexing_under_jit(x64):
    x = np.random.default_rng(3).uniform(-2, 2, (5, 4))
    idx = np.array([3, 0, 3])
    g = ember.jit(ember.grad(lambda a: jnp.sum(a[jnp.asarray(idx)] ** 2)))(x)
    want = np.zeros_like(x)
    np.add.at(want, idx, 2 * x[idx])  # the duplicate row gets both contributions
    np.testing.assert_allclose(g, want)
    y = np.linspace(-1, 1, 4)
    gx, gy = ember.jit(ember.grad(lambda a, b: jnp.sum(jnp.sin(a.at[1].add(b))),
                                  argnums=(0, 1)))(x, y)
    c = np.cos(x)
    c[1] = np.cos(x[1] + y)
    np.testing.assert_allclose(gx, c)
    np.testing.assert_allclose(gy, c[1])


def test_scatter_set_duplicates_only_the_winner_gets_a_cotangent(x64):
    x = np.zeros(4)
    gx, gu = ember.grad(lambda a, u: jnp.sum(a.at[np.array([1, 1, 2])].set(u)
                                             * np.arange(1.0, 5.0)), argnums=(0, 1))(
        x, np.array([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0, 4.0])
    np.testing.assert_array_equal(gu, [0.0, 2.0, 3.0])


def test_sort_tangents_follow_their_elements(x64):
    x = np.array([3.0, 1.0, 2.0])
    out, t = ember.jvp(lambda a: lax.sort(a), (x,), (np.array([10.0, 20.0, 30.0]),))
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(t, [20.0, 30.0, 10.0])
    g = ember.jit(ember.grad(lambda a: jnp.sum(lax.top_k(a, 2)[0] * np.array([1.0, 5.0]))))(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 5.0])


def test_cumlogsumexp_with_minus_infinity(x64):
    # A -inf element weighs 0 (its own output is -inf): no NaN before or after it.
    g = ember.grad(lambda a: jnp.sum(lax.cumlogsumexp(a, 0)))(np.array([-np.inf, 0.0, 1.0]))
    np.testing.assert_allclose(g, [0.0, 1.0 + 1.0 / (1.0 + np.e), np.e / (1.0 + np.e)])


def test_pow_edges(x64):
    # x^0 = 1: zero derivative in x, even at x = 0; d/dy 0^y = 0 (log 0 read as 0).
    gx, gy = ember.grad(lambda a, b: lax.pow(a, b), argnums=(0, 1))(0.0, 0.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    gx, gy = ember.grad(lambda a, b: lax.pow(a, b), argnums=(0, 1))(0.0, 2.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    # an integer exponent: a derivative in x only
    g = ember.grad(lambda a: jnp.sum(lax.pow(a, np.int32(3))))(np.array([2.0, -1.0]))
    np.testing.assert_allclose(g, [12.0, 3.0])
    # integer exponents at x = 0: n 0^(n-1) (0 for n = 0 and n > 1, 1 for n = 1, inf
    # below), under jit too
    x = np.zeros(5)
    n = np.array([0, 1, 2, -1, -2], np.int32)
    for f in (ember.grad(lambda a: jnp.sum(lax.pow(a, n))),
              ember.jit(ember.grad(lambda a: jnp.sum(lax.pow(a, n))))):
        np.testing.assert_array_equal(f(x), [0.0, 1.0, 0.0, -np.inf, -np.inf])
    assert float(ember.grad(lambda a: lax.pow(a, 2))(-3.0)) == -6.0


def test_convert_between_float_types(x64):
    x = np.array([1.5, -2.0])
    out, t = ember.jvp(lambda a: lax.convert_element_type(a, np.float32), (x,),
                       (np.array([1.0, 2.0]),))
    assert out.dtype == np.float32 and t.dtype == np.float32
    np.testing.assert_array_equal(t, [1.0, 2.0])
    g = ember.grad(lambda a: jnp.sum(lax.convert_element_type(a, np.float32) ** 2))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * x)


def test_float32_gradients_keep_their_dtype():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    g = ember.grad(lambda a: jnp.sum(jnp.tanh(a) * a))(x)
    assert g.dtype == np.float32
    t = np.tanh(x)
    np.testing.assert_allclose(g, t + x * (1 - t * t), rtol=1e-6)


# Edge values of the unary rules written in JAX's op order: the gradient of f summed over
# the points, eagerly and under jit, against the derivative's formula in float64 NumPy
# (continued outside f's domain, as JAX's rules are: d log(x) = 1/x at x = -1 too).
_EDGES = np.array([0.0, -0.0, 0.5, -0.75, 1.0, -1.0, 3.0, np.inf, -np.inf, np.nan])
_DERIVATIVES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "cos": lambda x: -np.sin(x),
    "tan": lambda x: 1 + np.tan(x) ** 2,
    "log": lambda x: 1 / x,
    "log1p": lambda x: 1 / (1 + x),
    "cbrt": lambda x: np.cbrt(x) ** -2 / 3,
    "arctan": lambda x: 1 / (1 + x * x),
    "arcsinh": lambda x: 1 / np.sqrt(x * x + 1),
    "arctanh": lambda x: 1 / (1 + x) / (1 - x),
    "exp2": lambda x: np.exp2(x) * np.log(2),
    "log2": lambda x: 1 / np.log(2) / x,
    "log10": lambda x: 1 / np.log(10) / x,
    # sign(x): 0 at both zeros, NaN at NaN (JAX: 1 at the zeros, -1 at NaN)
    "abs": np.sign,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [*sorted(_DERIVATIVES), "tanh"])
def test_unary_derivatives_at_edge_values(name, dtype, x64):
    x = _EDGES.astype(dtype)
    with np.errstate(all="ignore"):
        if name == "tanh":  # 1 - tanh^2 of the rounded tanh (it cancels at large x)
            t = np.tanh(x).astype(np.float64)
            want = (1 + t) * (1 - t)
        else:
            want = _DERIVATIVES[name](_EDGES)
    f = ember.grad(lambda a: jnp.sum(getattr(jnp, name)(a)))
    rtol = 2e-6 if dtype == np.float32 else 1e-13
    for got in (f(x), ember.jit(f)(x)):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=0)


def test_abs_derivative_signs_and_complex_zero(x64):
    # d|x| = sign(x): 0 at both zeros (JAX's 1 would make i0'(0) = 1, see
    # tests/unit/test_lax_special_incomplete.py), NaN stays NaN; a complex zero has a zero
    # derivative
    g = ember.grad(lambda a: jnp.sum(jnp.abs(a)))(
        np.array([0.0, -0.0, -2.0, np.nan], np.float32))
    np.testing.assert_array_equal(g, [0.0, 0.0, -1.0, np.nan])
    z = np.array([0j, 3 - 4j, -1j], np.complex128)
    g = ember.grad(lambda a: jnp.sum(jnp.abs(a)))(z)
    np.testing.assert_allclose(g, [0, (3 + 4j) / 5, 1j], rtol=1e-15)


def test_inverse_trig_derivatives_keep_their_digits_near_one():
    # asin/acos/acosh keep 1 - x^2 as (1 - x)(1 + x) (x^2 - 1 as (x - 1)(x + 1)): JAX's
    # 1 - square(x) has relative error 2.5e-5 at x = 0.9999 in float32.
    for name, x, want in (
            ("arcsin", 0.9999, lambda v: 1 / np.sqrt((1 - v) * (1 + v))),
            ("arccos", 0.9999, lambda v: -1 / np.sqrt((1 - v) * (1 + v))),
            ("arccosh", 1.0001, lambda v: 1 / np.sqrt((v - 1) * (v + 1)))):
        x32 = np.float32(x)
        got = ember.grad(getattr(jnp, name))(x32)
        np.testing.assert_allclose(float(got), want(np.float64(x32)), rtol=1e-6)


def test_max_min_derivatives_with_ties_nan_and_signed_zeros(x64):
    x = np.array([1.0, 2.0, np.nan, 0.0, -0.0, 3.0], np.float32)
    y = np.array([1.0, np.nan, 1.0, -0.0, 0.0, 0.0], np.float32)
    for f in (ember.grad(lambda a, b: jnp.sum(jnp.maximum(a, b)), (0, 1)),
              ember.jit(ember.grad(lambda a, b: jnp.sum(jnp.minimum(a, b)), (0, 1)))):
        gx, gy = f(x, y)
        # a tie (0.0 == -0.0 too) splits 1/2 each; NaN's result equals neither operand
        np.testing.assert_array_equal(gx[[0, 1, 2, 3, 4]], [0.5, 0.0, 0.0, 0.5, 0.5])
        np.testing.assert_array_equal(gy[[0, 1, 2, 3, 4]], [0.5, 0.0, 0.0, 0.5, 0.5])
    gx, gy = ember.grad(lambda a, b: jnp.sum(jnp.maximum(a, b)), (0, 1))(x, y)
    assert gx[5] == 1.0 and gy[5] == 0.0
