"""Op table for ember.lax's elementwise primitives.

One record per lax function: its accepted dtypes, a NumPy reference and an error budget.
Each record runs over SHAPES (binary ops over BINARY_SHAPES, broadcasting pairs included)
and its dtypes, with NaN, +-inf, -0.0, subnormals, INT_MIN/INT_MAX and 0 mixed into the
inputs, eagerly and under ember.jit (eager == jit bit for bit, no retrace on a second call).

References: float math is computed in float64 and rounded to the input dtype, compared in
ulps (0 for the correctly rounded operations +, -, *, /, sqrt, fmod, whose float64 result
rounds to the correctly rounded float32 one). Integer references are written with Python
integers from XLA's definitions (wrapping two's-complement arithmetic, x/0 = -1, x%0 = x,
shift counts outside [0, bits) give 0 or the sign fill), independent of the NumPy rules
under test.

Each test (one op, one dtype) adds its shapes to a `LaxBatch` (tests/ops/batched_checks.py):
the same assertions per shape as `assert_eager_jit_numpy`, all shapes compiled as one
program (the op's kernels are tiny; the per-program compile was most of the time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special
from batched_checks import LaxBatch
from op_tables import (
    ALL,
    ALL_FLOATS,
    ALL_INTS,
    BINARY_SHAPES,
    BOOL,
    SHAPES,
    assert_eager_jit_numpy,
    ieee_maximum,
    ieee_minimum,
    sample,
    seeded_rng,
    use_dtype,
)

from ember import lax


# -- references -------------------------------------------------------------------------------
def in_f64(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """fn evaluated on float64 copies of the arguments (the caller rounds the result)."""
    def ref(*xs: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(*(np.asarray(x, np.float64) for x in xs))
    return ref


def _bits(dt: np.dtype) -> int:
    return 8 * dt.itemsize


def wrap(v: int, dt: np.dtype) -> int:
    """v modulo 2**bits, as a value of dt (two's complement for signed dtypes)."""
    n = _bits(dt)
    v &= (1 << n) - 1
    return v - (1 << n) if dt.kind == "i" and v >= 1 << (n - 1) else v


def as_signed(v: int, dt: np.dtype) -> int:
    n = _bits(dt)
    v &= (1 << n) - 1
    return v - (1 << n) if v >= 1 << (n - 1) else v


def py_ref(f: Callable[..., int], out_dtype: Any = None) -> Callable[..., np.ndarray]:
    """An elementwise reference from a function of Python ints (and the dtype)."""
    def ref(*arrs: np.ndarray) -> np.ndarray:
        dt = arrs[0].dtype
        bs = np.broadcast_arrays(*arrs)
        vals = [f(*v, dt) for v in zip(*(b.ravel().tolist() for b in bs))]
        return np.array(vals, dtype=out_dtype or dt).reshape(bs[0].shape)
    return ref


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _div(a: int, b: int, dt: np.dtype) -> int:
    return wrap(-1, dt) if b == 0 else wrap(_trunc_div(a, b), dt)


def _rem(a: int, b: int, dt: np.dtype) -> int:
    return a if b == 0 else wrap(a - b * _trunc_div(a, b), dt)


def _shift(kind: str) -> Callable[[int, int, np.dtype], int]:
    def f(a: int, c: int, dt: np.dtype) -> int:
        n = _bits(dt)
        if c < 0 or c >= n:
            return wrap(-1, dt) if kind == "sra" and as_signed(a, dt) < 0 else 0
        if kind == "sl":
            return wrap(a << c, dt)
        if kind == "srl":
            return wrap((a & ((1 << n) - 1)) >> c, dt)
        return wrap(as_signed(a, dt) >> c, dt)
    return f


INT_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray]]] = {
    "add": (lax.add, py_ref(lambda a, b, dt: wrap(a + b, dt))),
    "sub": (lax.sub, py_ref(lambda a, b, dt: wrap(a - b, dt))),
    "mul": (lax.mul, py_ref(lambda a, b, dt: wrap(a * b, dt))),
    "div": (lax.div, py_ref(_div)),
    "rem": (lax.rem, py_ref(_rem)),
    "max": (lax.max, py_ref(lambda a, b, dt: max(a, b))),
    "min": (lax.min, py_ref(lambda a, b, dt: min(a, b))),
    "and": (lax.bitwise_and, np.bitwise_and),
    "or": (lax.bitwise_or, np.bitwise_or),
    "xor": (lax.bitwise_xor, np.bitwise_xor),
    "shift_left": (lax.shift_left, py_ref(_shift("sl"))),
    "shift_right_logical": (lax.shift_right_logical, py_ref(_shift("srl"))),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, py_ref(_shift("sra"))),
}
BOOL_BINARY = ["max", "min", "and", "or", "xor"]
SHIFTS = {"shift_left", "shift_right_logical", "shift_right_arithmetic"}

INT_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], str]] = {
    # name: (lax function, reference, dtype kinds it accepts)
    "neg": (lax.neg, py_ref(lambda a, dt: wrap(-a, dt)), "iu"),
    "abs": (lax.abs, py_ref(lambda a, dt: wrap(abs(a), dt)), "i"),
    "sign": (lax.sign, py_ref(lambda a, dt: (a > 0) - (a < 0)), "iu"),
    "not": (lax.bitwise_not, py_ref(lambda a, dt: wrap(~a, dt)), "iu"),
    "population_count": (lax.population_count,
                         py_ref(lambda a, dt: bin(a & ((1 << _bits(dt)) - 1)).count("1")),
                         "iu"),
    "clz": (lax.clz, py_ref(lambda a, dt: _bits(dt) - (a & ((1 << _bits(dt)) - 1))
                            .bit_length()), "iu"),
    "square": (lax.square, py_ref(lambda a, dt: wrap(a * a, dt)), "iu"),
    "integer_pow3": (lambda x: lax.integer_pow(x, 3), py_ref(lambda a, dt: wrap(a ** 3, dt)),
                     "iu"),
    "integer_pow0": (lambda x: lax.integer_pow(x, 0), py_ref(lambda a, dt: 1), "iu"),
}


def _sign_ref(x: np.ndarray) -> np.ndarray:
    # sign(+-0) = +-0 and sign(NaN) = NaN, as XLA.
    return np.where(np.isnan(x), x, np.copysign((x != 0).astype(x.dtype), x))


def _round_afz_ref(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)  # x - t is exact, so the halfway test is exact
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _logistic_ref(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _erfc_ref(x: np.ndarray) -> np.ndarray:
    """mpmath's erfc: SciPy's is ~100 ulp off for x in [9, 12] (f64 results near 1e-40)."""
    import mpmath

    def one(v: float) -> float:  # mpmath overflows on huge arguments: erfc is 0 or 2 there
        if np.isnan(v) or abs(v) > 1e4:
            return v if np.isnan(v) else (0.0 if v > 0 else 2.0)
        return float(mpmath.erfc(mpmath.mpf(v)))

    return np.array([one(float(v)) for v in np.ravel(x)], np.float64).reshape(np.shape(x))


def _erf_inv_ref(x: np.ndarray) -> np.ndarray:
    """SciPy's erfinv with erf_inv(-0.0) = -0.0 (JAX's and Ember's; SciPy gives +0.0)."""
    return np.where(x == 0, x, scipy.special.erfinv(x))


# name: (lax function, float64 reference, ulp budget, sample range)
FLOAT_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], int,
                             tuple[float, float]]] = {
    "neg": (lax.neg, np.negative, 0, (-10, 10)),
    "abs": (lax.abs, np.abs, 0, (-10, 10)),
    "sign": (lax.sign, _sign_ref, 0, (-10, 10)),
    "floor": (lax.floor, np.floor, 0, (-10, 10)),
    "ceil": (lax.ceil, np.ceil, 0, (-10, 10)),
    "round_afz": (lax.round, _round_afz_ref, 0, (-10, 10)),
    "round_even": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint, 0,
                   (-10, 10)),
    "is_finite": (lax.is_finite, np.isfinite, 0, (-10, 10)),
    "exp": (lax.exp, np.exp, 4, (-100, 100)),
    "exp2": (lax.exp2, np.exp2, 4, (-140, 130)),
    "log": (lax.log, np.log, 4, (0, 100)),
    "log1p": (lax.log1p, np.log1p, 4, (-1, 100)),
    "expm1": (lax.expm1, np.expm1, 4, (-10, 90)),
    "sqrt": (lax.sqrt, np.sqrt, 0, (0, 1e6)),
    "rsqrt": (lax.rsqrt, lambda x: 1.0 / np.sqrt(x), 2, (0, 1e6)),
    "cbrt": (lax.cbrt, np.cbrt, 2, (-1e6, 1e6)),
    "sin": (lax.sin, np.sin, 4, (-20, 20)),
    "cos": (lax.cos, np.cos, 4, (-20, 20)),
    "tan": (lax.tan, np.tan, 4, (-20, 20)),
    "asin": (lax.asin, np.arcsin, 4, (-1.1, 1.1)),
    "acos": (lax.acos, np.arccos, 4, (-1.1, 1.1)),
    "atan": (lax.atan, np.arctan, 4, (-100, 100)),
    "sinh": (lax.sinh, np.sinh, 4, (-90, 90)),
    "cosh": (lax.cosh, np.cosh, 4, (-90, 90)),
    "tanh": (lax.tanh, np.tanh, 4, (-10, 10)),
    "asinh": (lax.asinh, np.arcsinh, 4, (-1e4, 1e4)),
    "acosh": (lax.acosh, np.arccosh, 4, (0.9, 1e4)),
    "atanh": (lax.atanh, np.arctanh, 4, (-1.1, 1.1)),
    "logistic": (lax.logistic, _logistic_ref, 4, (-110, 110)),
    "erf": (lax.erf, scipy.special.erf, 4, (-5, 5)),
    "erfc": (lax.erfc, _erfc_ref, 4, (-5, 12)),
    "erf_inv": (lax.erf_inv, _erf_inv_ref, 8, (-1.05, 1.05)),
    "square": (lax.square, np.square, 0, (-1e20, 1e20)),
    "integer_pow3": (lambda x: lax.integer_pow(x, 3), lambda x: x ** 3, 2, (-1e12, 1e12)),
    "integer_pow_m2": (lambda x: lax.integer_pow(x, -2), lambda x: 1.0 / (x * x), 3,
                       (-1e3, 1e3)),
    "stop_gradient": (lax.stop_gradient, lambda x: x, 0, (-10, 10)),
}

# name: (lax function, float64 reference, ulp budget, x range, y range)
FLOAT_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], int,
                              tuple[float, float], tuple[float, float]]] = {
    "add": (lax.add, np.add, 0, (-1e3, 1e3), (-1e3, 1e3)),
    "sub": (lax.sub, np.subtract, 0, (-1e3, 1e3), (-1e3, 1e3)),
    "mul": (lax.mul, np.multiply, 0, (-1e20, 1e20), (-1e20, 1e20)),
    "div": (lax.div, np.divide, 0, (-1e3, 1e3), (-1e3, 1e3)),
    "rem": (lax.rem, np.fmod, 0, (-1e3, 1e3), (-10, 10)),
    "max": (lax.max, ieee_maximum, 0, (-10, 10), (-10, 10)),
    "min": (lax.min, ieee_minimum, 0, (-10, 10), (-10, 10)),
    "atan2": (lax.atan2, np.arctan2, 4, (-10, 10), (-10, 10)),
    "pow": (lax.pow, np.power, 4, (0, 10), (-20, 20)),
}

COMPARISONS: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray]]] = {
    "eq": (lax.eq, np.equal), "ne": (lax.ne, np.not_equal), "lt": (lax.lt, np.less),
    "le": (lax.le, np.less_equal), "gt": (lax.gt, np.greater), "ge": (lax.ge, np.greater_equal),
}


_rng = seeded_rng


# -- tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(FLOAT_UNARY))
def test_float_unary(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    use_dtype(request, dtype)
    fn, ref, ulps, (lo, hi) = FLOAT_UNARY[name]
    rng = _rng(name, dtype)
    batch = LaxBatch()
    for shape in SHAPES:
        x = sample(shape, dtype, rng, lo, hi)
        batch.add(fn, in_f64(ref), x, ulps=ulps, what=name)
    batch.run()


@pytest.mark.parametrize("dtype", ALL_INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(INT_UNARY))
def test_int_unary(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    fn, ref, kinds = INT_UNARY[name]
    if dtype.kind not in kinds:
        pytest.skip(f"lax.{name} does not take {dtype.name} (checked in test_lax_errors)")
    use_dtype(request, dtype)
    rng = _rng(name, dtype)
    batch = LaxBatch()
    for shape in SHAPES:
        batch.add(fn, ref, sample(shape, dtype, rng), what=name)
    batch.run()


def test_bool_not() -> None:
    x = np.array([True, False, True])
    assert_eager_jit_numpy(lax.bitwise_not, np.logical_not, x)


@pytest.mark.parametrize("dtype", BOOL + ALL_INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(INT_BINARY))
def test_int_binary(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    if dtype.kind == "b" and name not in BOOL_BINARY:
        pytest.skip(f"lax.{name} does not take bool (checked in test_lax_errors)")
    use_dtype(request, dtype)
    fn, ref = INT_BINARY[name]
    rng = _rng(name, dtype)
    batch = LaxBatch()
    for sx, sy in BINARY_SHAPES:
        x = sample(sx, dtype, rng)
        if name in SHIFTS:  # counts around the width: in range, negative, and too large
            bits = 8 * dtype.itemsize
            lo = -2 if dtype.kind == "i" else 0
            y = sample(sy, dtype, rng, lo, bits + 2, edges=np.array([0, bits - 1, bits]))
        else:
            y = sample(sy, dtype, rng)
        batch.add(fn, ref, x, y, what=name)
    batch.run()


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(FLOAT_BINARY))
def test_float_binary(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    use_dtype(request, dtype)
    fn, ref, ulps, xr, yr = FLOAT_BINARY[name]
    rng = _rng(name, dtype)
    batch = LaxBatch()
    for sx, sy in BINARY_SHAPES:
        x, y = sample(sx, dtype, rng, *xr), sample(sy, dtype, rng, *yr)
        batch.add(fn, in_f64(ref), x, y, ulps=ulps, what=name)
    batch.run()


@pytest.mark.parametrize("ydtype", [np.dtype(np.int32), np.dtype(np.uint8)], ids=str)
def test_pow_integer_exponent(ydtype: np.dtype) -> None:
    # lax.pow(float, int): the exponent is converted to the base's dtype.
    rng = _rng("pow_int", ydtype)
    lo = -12 if ydtype.kind == "i" else 0
    batch = LaxBatch()
    for sx, sy in BINARY_SHAPES:
        x = sample(sx, np.float32, rng, -4, 4)
        y = sample(sy, ydtype, rng, lo, 12, edges=np.array([0, 1, 2]))
        batch.add(lax.pow, in_f64(np.power), x, y, ulps=4, what="pow")
    batch.run()


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(COMPARISONS))
def test_comparison(name: str, dtype: np.dtype, request: pytest.FixtureRequest) -> None:
    use_dtype(request, dtype)
    fn, ref = COMPARISONS[name]
    rng = _rng(name, dtype)
    batch = LaxBatch()
    for sx, sy in BINARY_SHAPES:
        x = sample(sx, dtype, rng, -3, 3)
        # y shares some of x's values, so equal pairs (and NaN == NaN) occur
        y = sample(sy, dtype, rng, -3, 3)
        if x.shape == y.shape and x.size:
            y = np.where(rng.integers(0, 2, x.shape).astype(bool), x, y)
        assert fn(x, y).dtype == np.bool_  # jit's dtype: eager == jit by batch.run()
        batch.add(fn, ref, x, y, what=name)
    batch.run()
