"""Elementwise jnp functions against NumPy over shapes and dtypes, eager and jit, plus the
ufunc methods (outer, reduce, accumulate) and JAX-specific edge semantics.

The per-function tests (test_unary_*, test_binary*) collect their cases in a `NumpyBatch`
(tests/ops/batched_checks.py): the same checks per case, one compiled program per test."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import NumpyBatch
from test_numpy_support import (
    BCAST_PAIRS,
    DTYPES,
    INT_DTYPES,
    NUM_DTYPES,
    SHAPES,
    assert_close,
    check,
    rand,
)

import ember
import ember.numpy as jnp

SPECIALS = np.array([0.0, -0.0, 1.5, -2.5, 0.5, np.inf, -np.inf, np.nan, 3.0, -7.25],
                    np.float32)

UNARY_FLOAT = ["sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "exp",
               "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "deg2rad",
               "rad2deg", "sinc", "fabs", "rint"]
UNARY_SAME = ["negative", "positive", "absolute", "sign", "floor", "ceil", "trunc", "square",
              "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "round",
              "conjugate", "real"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor"]
BINARY_FLOAT = ["true_divide", "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign",
                "heaviside", "float_power", "nextafter", "fmax", "fmin"]


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8])
def test_unary_float(name, dtype):
    batch = NumpyBatch()
    jf, nf = getattr(jnp, name), getattr(np, name)
    for shape in SHAPES[:4]:
        x = rand(shape, dtype, low=0 if name.startswith(("log", "sqrt")) else None)
        got = batch.check(jf, lambda a: nf(a.astype(np.float32)), x, rtol=2e-6, atol=1e-6)
        assert got.dtype == np.float32
    batch.check(jf, nf, SPECIALS, rtol=2e-6, atol=1e-6)
    batch.run()


@pytest.mark.parametrize("name", UNARY_SAME)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_same_dtype(name, dtype):
    batch = NumpyBatch()
    if name in ("negative", "square", "positive", "sign") and dtype == np.bool_:
        pytest.skip("NumPy has no bool loop for these")
    jf, nf = getattr(jnp, name), getattr(np, name)
    for shape in SHAPES:
        x = rand(shape, dtype)
        got = batch.check(jf, nf, x)
        if name not in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
            assert got.dtype == np.dtype(dtype)
    if dtype == np.float32:
        batch.check(jf, nf, SPECIALS)
    batch.run()


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary(name, dtype):
    batch = NumpyBatch()
    if name == "subtract" and dtype == np.bool_:
        pytest.skip("subtract of bools is an error in NumPy and JAX")
    jf, nf = getattr(jnp, name), getattr(np, name)
    for sx, sy in [((7,), (7,)), ((33,), (33,)), ((), ())] + BCAST_PAIRS:
        batch.check(jf, nf, rand(sx, dtype, 1), rand(sy, dtype, 2))
    if dtype == np.float32:
        batch.check(jf, nf, SPECIALS, SPECIALS[::-1].copy())
    batch.run()


@pytest.mark.parametrize("name", BINARY_FLOAT)
def test_binary_float(name):
    batch = NumpyBatch()
    jf, nf = getattr(jnp, name), getattr(np, name)
    for sx, sy in [((7,), (7,)), ((), ())] + BCAST_PAIRS:
        x, y = rand(sx, np.float32, 1), rand(sy, np.float32, 2)
        if name == "float_power":
            x = np.abs(x)
        batch.check(jf, nf, x, y, rtol=2e-6, atol=1e-6)
    if name == "heaviside":
        # JAX 0.10.2's heaviside passes a NaN x through (as NumPy does), h0 only at x == 0.
        got = jnp.heaviside(np.array([np.nan, 0.0], np.float32), np.float32(0.5))
        np.testing.assert_array_equal(got, [np.nan, 0.5])
        finite = SPECIALS[~np.isnan(SPECIALS)]
        batch.check(jf, nf, finite, finite[::-1].copy())
    elif name != "float_power":
        batch.check(jf, nf, SPECIALS, SPECIALS[::-1].copy(), rtol=2e-6, atol=1e-6)
    batch.check(jf, lambda a, b: nf(a.astype(np.float32), b.astype(np.float32)),
                rand((5,), np.int8, 3, low=1), rand((5,), np.uint8, 4, low=1), rtol=2e-6,
                atol=1e-6)
    batch.run()


@pytest.mark.parametrize("dtype", NUM_DTYPES)
def test_division_family(dtype):
    x = rand((33,), dtype, 5)
    y = rand((33,), dtype, 6)
    y = np.where(y == 0, np.ones_like(y), y)
    for name in ("floor_divide", "remainder", "mod", "fmod"):
        check(getattr(jnp, name), getattr(np, name), x, y, check_dtype=dtype)
    check(jnp.divmod, np.divmod, x, y)
    check(jnp.true_divide, np.true_divide, x, y, rtol=2e-6)
    check(lambda a, b: jnp.asarray(a) // b, lambda a, b: a // b, x, y)
    check(lambda a, b: a % jnp.asarray(b), lambda a, b: a % b, x, y)


def test_division_edge_semantics():
    x = np.array([7, -7, 5, 0], np.int32)
    zero = np.zeros(4, np.int32)
    # jnp.remainder / fmod with an integer zero divisor give 0 (as NumPy, unlike lax.rem).
    np.testing.assert_array_equal(jnp.remainder(x, zero), [0, 0, 0, 0])
    np.testing.assert_array_equal(jnp.fmod(x, zero), [0, 0, 0, 0])
    f = np.array([1.0, -1.0, 0.0, 7.5], np.float32)
    fz = np.zeros(4, np.float32)
    with np.errstate(all="ignore"):
        assert_close(jnp.floor_divide(f, fz), np.floor_divide(f, fz))
    check(jnp.floor_divide, np.floor_divide, SPECIALS, np.float32(-1.5))
    check(jnp.remainder, np.remainder, SPECIALS, np.float32(2.0))


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.bool_])
def test_bitwise(dtype):
    x, y = rand((33,), dtype, 1), rand((33,), dtype, 2)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        check(getattr(jnp, name), getattr(np, name), x, y)
    check(jnp.bitwise_not, np.invert, x)
    check(jnp.invert, np.invert, x)
    if dtype != np.bool_:
        s = rand((33,), dtype, 3, low=0, high=np.dtype(dtype).itemsize * 8 - 1)
        check(jnp.left_shift, np.left_shift, x, s)
        check(jnp.right_shift, np.right_shift, x, s)
        check(lambda a, b: jnp.asarray(a) << b, lambda a, b: a << b, x, s)
    with pytest.raises(TypeError):
        jnp.bitwise_and(np.ones(2, np.float32), 1)


@pytest.mark.parametrize("dtype", NUM_DTYPES)
def test_power(dtype):
    x = rand((7,), dtype, 1, low=0 if np.dtype(dtype).kind == "u" else -4, high=4)
    y = rand((7,), dtype, 2, low=0, high=4)
    check(jnp.power, np.power, x, y, rtol=2e-6)
    check(lambda a: jnp.asarray(a) ** 3, lambda a: a ** 3, x, rtol=2e-6)
    check(lambda a: jnp.power(a, 2), lambda a: np.power(a, 2), x, check_dtype=dtype)
    text = str(ember.make_jaxpr(lambda a: a ** 3)(np.ones(3, np.float32)))
    assert "integer_pow[y=3]" in text


def test_clip():
    x = rand((33,), np.float32)
    check(lambda a: jnp.clip(a, -1, 2), lambda a: np.clip(a, -1, 2), x)
    check(lambda a: jnp.clip(a, min=0), lambda a: np.clip(a, 0, None), x)
    check(lambda a: jnp.clip(a, max=0.5), lambda a: np.clip(a, None, 0.5), x)
    check(lambda a: jnp.clip(a, a_min=-1, a_max=1), lambda a: np.clip(a, -1, 1), x)
    check(lambda a: jnp.clip(a, -1.5, 1.5), lambda a: np.clip(a, -1.5, 1.5), SPECIALS)
    lo, hi = rand((3, 1), np.float32, 2, high=0), rand((1, 4), np.float32, 3, low=0)
    check(jnp.clip, np.clip, rand((3, 4), np.float32), lo, hi)
    i = rand((7,), np.uint8)
    check(lambda a: jnp.clip(a, 3, 20), lambda a: np.clip(a, 3, 20), i, check_dtype=np.uint8)
    closed = ember.make_jaxpr(lambda a: jnp.clip(a, 0, 1))(np.zeros(3, np.float32))
    # one jit[name=clip] equation, as JAX stages it, holding max then min
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == "jit" and eqn.params["name"] == "clip"
    assert [e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns
            if e.primitive.name != "convert_element_type"] == ["max", "min"]


@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round(decimals):
    x = rand((33,), np.float32, low=-200, high=200)
    check(lambda a: jnp.round(a, decimals), lambda a: np.round(a, decimals), x, rtol=1e-6)
    check(lambda a: jnp.around(a, decimals), lambda a: np.around(a, decimals), x, rtol=1e-6)
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)
    check(jnp.round, np.round, halves)
    i = rand((7,), np.int32)
    if decimals >= 0:
        check(lambda a: jnp.round(a, decimals), lambda a: a, i, check_dtype=np.int32)


def test_nan_to_num_isclose():
    check(jnp.nan_to_num, np.nan_to_num, SPECIALS)
    check(lambda a: jnp.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0),
          lambda a: np.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0), SPECIALS)
    check(jnp.nan_to_num, np.nan_to_num, rand((5,), np.int8))
    a = SPECIALS
    b = (SPECIALS * (1 + 1e-7)).astype(np.float32)
    for eq in (False, True):
        check(lambda u, v: jnp.isclose(u, v, equal_nan=eq),
              lambda u, v: np.isclose(u, v, equal_nan=eq), a, b)
        assert bool(jnp.allclose(a, a, equal_nan=eq)) == np.allclose(a, a, equal_nan=eq)
    check(jnp.isclose, np.isclose, rand((4, 1), np.float32), rand((5,), np.float32))
    assert bool(jnp.array_equal(a, a)) is False and bool(jnp.array_equal(a, a, equal_nan=True))
    assert not bool(jnp.array_equal(np.ones(3), np.ones(4)))
    assert bool(jnp.array_equiv(np.ones((2, 3)), np.ones(3)))
    assert not bool(jnp.array_equiv(np.ones((2, 3)), np.ones(2)))


def test_real_imag_conj_modf_ldexp():
    x = rand((7,), np.float32)
    check(jnp.real, np.real, x)
    check(jnp.imag, np.imag, x)
    check(jnp.conj, np.conj, x)
    check(jnp.modf, np.modf, SPECIALS[np.isfinite(SPECIALS)])
    check(jnp.ldexp, lambda a, e: np.ldexp(a, e), x, rand((7,), np.int32, low=-5, high=5))


def test_ufunc_objects():
    assert isinstance(jnp.add, jnp.ufunc) and jnp.add.nin == 2 and jnp.add.nout == 1
    assert jnp.add.identity == 0 and jnp.multiply.identity == 1
    a, b = rand((3,), np.int32, 1), rand((2, 2), np.float32, 2)
    for name in ("add", "subtract", "multiply", "maximum", "equal", "logical_and",
                 "bitwise_xor", "power"):
        if name in ("bitwise_xor",):
            check(getattr(jnp, name).outer, getattr(np, name).outer, a, a)
        elif name != "power":
            check(getattr(jnp, name).outer, getattr(np, name).outer, a, b)
    m = rand((3, 4, 5), np.float32)
    for name in ("add", "multiply", "maximum", "minimum", "subtract", "logical_and",
                 "logical_or"):
        jf, nf = getattr(jnp, name), getattr(np, name)
        for axis in (0, 1, -1, None):
            if name == "subtract" and axis is None:
                with pytest.raises(ValueError):
                    jf.reduce(m, axis=None)
                continue
            check(lambda x: jf.reduce(x, axis=axis), lambda x: nf.reduce(x, axis=axis), m,
                  rtol=1e-5)
        check(lambda x: jf.reduce(x, axis=1, keepdims=True),
              lambda x: nf.reduce(x, axis=1, keepdims=True), m, rtol=1e-5)
    # Float running sums may differ between eager and jit in summation order (DESIGN), so
    # the bit-for-bit check uses integers and floats are compared with a tolerance.
    mi = rand((3, 4, 5), np.int32)
    check(lambda x: jnp.add.accumulate(x, axis=1), lambda x: np.add.accumulate(x, axis=1), mi)
    assert_close(ember.jit(lambda x: jnp.add.accumulate(x, axis=1))(m),
                 np.add.accumulate(m, axis=1), rtol=1e-5)
    check(lambda x: jnp.subtract.accumulate(x), lambda x: np.subtract.accumulate(x), m)


def test_operators_with_numpy_and_python_scalars():
    x = jnp.arange(4.0)
    for v in (np.float32(2), np.ones(4, np.float32), 2, 2.5):
        for out in (v * x, x * v, v - x, x - v, v / x, v ** x, v > x, v == x):
            assert isinstance(out, ember.Array), type(out)
    np.testing.assert_array_equal(np.ones(4) - x, 1 - np.arange(4.0))
    assert (np.float32(2) * x).dtype == np.float32
    assert (np.int8(2) * jnp.ones(2, jnp.int8)).dtype == np.int8

    def traced(a):
        return np.float32(2) * a + np.ones(4, np.float32), a < np.float32(1)

    out = ember.jit(traced)(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(out[0], 2 * np.arange(4) + 1)


def test_logaddexp_values_and_derivatives_at_the_infinities():
    # Values: NumPy's, eagerly and under jit, with infinities and NaN. Derivatives: the
    # weights e^x / (e^x + e^y) (2^x / (2^x + 2^y)), their limits at the infinities, and
    # 1 for logaddexp(a, a) everywhere (the custom JVP; JAX's gives e at (1, inf), 2 at
    # (inf, inf))
    inf = np.inf
    x = np.array([1.0, 1.0, inf, -inf, 1.0, 50.0, np.nan, inf, -3.0], np.float32)
    y = np.array([-inf, inf, inf, -inf, 2.0, -50.0, 1.0, -inf, 0.5], np.float32)
    for jf, nf, base in ((jnp.logaddexp, np.logaddexp, np.e), (jnp.logaddexp2, np.logaddexp2,
                                                                 2.0)):
        for fn in (jf, ember.jit(jf)):
            np.testing.assert_allclose(np.asarray(fn(x, y)), nf(x, y), rtol=1e-6)
        gx, gy = ember.vmap(ember.grad(jf, argnums=(0, 1)))(x, y)
        with np.errstate(all="ignore"):
            d = (x.astype(np.float64) - y) * np.log(base)
            want_x = np.where(np.isnan(d) & ~np.isnan(x) & ~np.isnan(y), 0.5,
                              1 / (1 + np.exp(-d)))
        np.testing.assert_allclose(np.asarray(gx), want_x, rtol=1e-5, atol=1e-30)
        np.testing.assert_allclose(np.asarray(gy), np.where(np.isnan(want_x), np.nan,
                                                            1 - want_x), rtol=1e-5,
                                   atol=1e-30)
        diag = ember.vmap(ember.grad(lambda a, f=jf: f(a, a)))(x)
        np.testing.assert_allclose(np.asarray(diag), np.where(np.isnan(x), np.nan, 1.0))
