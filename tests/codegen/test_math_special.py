"""Special values of every vectorized math function, f32 and f64, against the interpreter
(NumPy/SciPy, the reference semantics): +-0, +-inf, NaN, subnormals, the largest finite
values, overflow and underflow thresholds, huge sin/cos/tan arguments; and the whole
special-value grid of atan2 and pow (C99 Annex F cases, power(x, 2) == x * x).

NaN-ness, infinities and zeros (with their signs) must match exactly; finite nonzero
results within the sweep budget (3 ulp f32, 2 ulp f64: the reference itself may be off by
an ulp). erf, erfc and erf-inv are checked against mpmath instead: SciPy's erfc(27.2)
flushes a subnormal result to 0, its erfc(1.0) is 3 ulp off, and erfinv(-0.0) is +0.0 there
(Ember keeps the sign: erf-inv is odd)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import ulp_distance
from test_math_accuracy import compile_op
from test_math_reference import BUDGET, UNARY, _reference

from ember.backends.cpu.mathlib import VECTORIZED
from ember.hlo.evaluator.elementwise import NUMPY_ELEMENTWISE as _REF_OPS

_COMMON = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 10.0,
           -10.0, 1e30, -1e30, 1e-30, 1e-7, -1e-7, 0.999999, -0.999999, 1.000001]
_F64 = [5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
        2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308,
        709.782712893384, 709.7827128933841, -745.1332191019411, -745.1332191019412,
        -708.3964185322641, 710.4758600739439, 710.475860073944, -710.4758600739439,
        1e300, 1e22, 2.0 ** 70, 123456789.0, 2.0 ** 28 + 3, 27.2, 26.6, 5.9, -5.9, 1e-320]
_F32 = [1e-45, -1e-45, 1.1754944e-38, -1.1754944e-38, 1.1754942e-38, 3.4028235e38,
        -3.4028235e38, 88.72283, 88.72284, -103.97207, -103.972084, -87.33655, 89.41598,
        89.41599, -89.41598, 1e22, 2.0 ** 70, 123456789.0, 65536.5, 10.0, 9.2, 3.9, -3.9]


def _inputs(et: str) -> np.ndarray:
    dt = np.float32 if et == "f32" else np.float64
    with np.errstate(over="ignore"):
        return np.array(_COMMON + (_F32 if et == "f32" else _F64)).astype(dt)


def _compare(op: str, et: str, got: np.ndarray, want: np.ndarray, *args: np.ndarray) -> None:
    def cls(v):  # 0 nan, 1 +-inf, 2 +-0, 3 finite (with the sign)
        kind = np.where(np.isnan(v), 0, np.where(np.isinf(v), 1, np.where(v == 0, 2, 3)))
        return kind * 2 + np.where(np.isnan(v), 0, np.signbit(v))

    bad = cls(got) != cls(want)
    finite = np.isfinite(want) & (want != 0)
    bad |= finite & (ulp_distance(got, want) > BUDGET[et])
    idx = np.nonzero(bad)[0]
    assert idx.size == 0, (op, et, [(tuple(a[i] for a in args), got[i], want[i])
                                    for i in idx[:6]])


def _unary_ops() -> list[str]:
    return sorted(op for op in VECTORIZED if op not in ("atan2", "power"))


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", _unary_ops())
def test_unary_special_values(op, et):
    x = _inputs(et)
    got = compile_op(op, et, len(x))(x)
    if op in ("erf", "erfc", "erf-inv"):
        fin = np.isfinite(x)
        want = np.full_like(x, np.nan)
        want[fin] = _reference(UNARY[op][0], x.dtype, x[fin])
        inf = {"erf": (1.0, -1.0), "erfc": (0.0, 2.0), "erf-inv": (np.nan, np.nan)}[op]
        want[x == np.inf], want[x == -np.inf] = inf
        if op != "erfc":
            want = np.where(x == 0, x, want)
    else:
        want = _REF_OPS[op](x)
    _compare(op, et, got, want, x)


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", ["atan2", "power"])
def test_binary_special_grid(op, et):
    v = _inputs(et)
    v = v[: len(_COMMON)]  # the common specials, both orders, every pair
    a, b = (g.reshape(-1) for g in np.meshgrid(v, v))
    got = compile_op(op, et, len(a), arity=2)(a, b)
    want = _REF_OPS[op](a, b)
    _compare(op, et, got, want, a, b)


@pytest.mark.parametrize("et", ["f32", "f64"])
def test_power_of_two_is_exact_square(et):
    dt = np.float32 if et == "f32" else np.float64
    x = np.random.default_rng(3).standard_normal(257).astype(dt) * dt(1e3)
    got = compile_op("power", et, len(x), arity=2)(x, np.full_like(x, 2))
    assert np.array_equal(got, x * x)


@pytest.mark.parametrize("op", ["tan", "atan2", "erf-inv", "power", "cbrt", "erfc", "acosh"])
def test_new_math_is_vector_code_without_libm(op):
    exe = compile_op(op, "f32", 4096, arity=2 if op in ("atan2", "power") else 1)
    name = VECTORIZED[op]
    assert f"ember.{name}.f32" in exe.math_functions
    asm = exe.assembly()
    assert "zmm" in asm or "ymm" in asm
    if op != "tan":  # tan's precise rerun copy calls the C library for |x| >= 2^28 only
        assert exe.libm_calls == []
