"""Accuracy of the vectorized math (exp, expm1, log, log1p, sin, cos, tanh, logistic) in
f32 and f64 against NumPy over sweeps and special values, in ulps."""

from __future__ import annotations

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
