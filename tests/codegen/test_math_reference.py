"""Functions NumPy's validation tables lack, against mpmath: erf, erfc, erf-inv, logistic,
atan2, pow (and sweeps of the table functions over wide domains: tan, sinh, cosh, cbrt,
exp2, log2, log10, log1p, asinh, acosh, atanh, atan, asin, acos), within 3 ulp (f32) and
2 ulp (f64) of the correctly rounded value.

Inputs are fixed (seeded) sweeps of each domain, log-spaced where magnitudes matter; the
reference is mpmath at 40 digits, rounded to the dtype (through float64 for f32: the double
rounding moves at most a half-way case by one f32 ulp, inside the budget)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from codegen_util import ulp_distance
from test_math_accuracy import compile_op

BUDGET = {"f32": 3, "f64": 2}
_rng = np.random.default_rng(20240611)


def _signed_logspace(lo: float, hi: float, n: int) -> np.ndarray:
    m = np.geomspace(lo, hi, n // 2)
    return np.concatenate([m, -m])


def _pow_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.exp(_rng.uniform(-12, 12, n))
    y = _rng.uniform(-60, 60, n)
    near1 = 1 + _rng.uniform(-0.3, 0.3, n // 4)  # |y log x| up to ~700 with |y| ~ 2000
    yn = _rng.uniform(-1, 1, n // 4) * 700 / np.abs(np.log(near1))
    xi = -np.exp(_rng.uniform(-5, 5, n // 4))  # negative bases with integer exponents
    yi = np.round(_rng.uniform(-40, 40, n // 4))
    return np.concatenate([x, near1, xi]), np.concatenate([y, yn, yi])


def _atan2_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    y = np.exp(_rng.uniform(-30, 30, n)) * _rng.choice([-1, 1], n)
    x = np.exp(_rng.uniform(-30, 30, n)) * _rng.choice([-1, 1], n)
    t = _rng.uniform(-np.pi, np.pi, n)  # angles near every octant boundary
    return np.concatenate([y, np.sin(t)]), np.concatenate([x, np.cos(t)])


def _pow(x, y):
    if x < 0:  # the inputs give negative bases integer exponents only
        return (-1) ** int(y) * mp.power(-x, y)
    return mp.power(x, y)


def _erfc(v):
    return mp.erfc(v) if abs(v) < 1e4 else mp.mpf(0 if v > 0 else 2)  # mpmath overflows


def _erf(v):
    return mp.erf(v) if abs(v) < 1e4 else mp.sign(v)


def _logistic(v):
    return 1 / (1 + mp.exp(-v))


def _erfinv(v):
    if abs(v) > 1:
        return mp.nan
    return mp.erfinv(v) if abs(v) < 1 else mp.sign(v) * mp.inf


UNARY = {
    # op: (mpmath function, inputs)
    "erf": (_erf, np.concatenate([np.linspace(-6.5, 6.5, 2000),
                                    _signed_logspace(1e-300, 6, 1000)])),
    "erfc": (_erfc, np.concatenate([np.linspace(-7, 27.5, 3000),
                                      _signed_logspace(1e-20, 1, 400)])),
    "erf-inv": (_erfinv, np.concatenate([np.linspace(-0.999, 0.999, 1500),
                                         1 - np.geomspace(1e-16, 0.5, 800),
                                         _signed_logspace(1e-300, 0.5, 400)])),
    "logistic": (_logistic, np.concatenate([np.linspace(-100, 40, 2000),
                                            -np.geomspace(1, 740, 500)])),
    "tan": (mp.tan, np.concatenate([np.linspace(-1e4, 1e4, 2000),
                                    _signed_logspace(1e-300, 2.0 ** 27, 800)])),
    "sinh": (mp.sinh, np.concatenate([np.linspace(-2, 2, 500),
                                      _signed_logspace(1e-300, 710, 1000)])),
    "cosh": (mp.cosh, _signed_logspace(1e-10, 710, 1000)),
    "cbrt": (lambda v: mp.sign(v) * mp.cbrt(abs(v)), _signed_logspace(1e-320, 1e308, 1000)),
    # functions NumPy's tables cover too (~700 rows each): wider sweeps of their domains
    "exp2": (lambda v: mp.power(2, v), np.concatenate([np.linspace(-1100, 1030, 1500),
                                                     _signed_logspace(1e-20, 1, 400)])),
    "log2": (lambda v: mp.log(v, 2), np.concatenate([np.geomspace(1e-320, 1e308, 1200),
                                                    np.linspace(0.5, 2, 600)])),
    "log10": (mp.log10, np.concatenate([np.geomspace(1e-320, 1e308, 1200),
                                        np.linspace(0.5, 2, 600)])),
    "log-plus-one": (mp.log1p, np.concatenate([_signed_logspace(1e-300, 0.999, 1000),
                                               np.geomspace(1, 1e308, 500)])),
    "asinh": (mp.asinh, np.concatenate([np.linspace(-3, 3, 600),
                                        _signed_logspace(1e-300, 1e308, 1200)])),
    "acosh": (mp.acosh, np.concatenate([1 + np.geomspace(1e-15, 1, 600),
                                        np.geomspace(1, 1e308, 1000)])),
    "atanh": (mp.atanh, np.concatenate([np.linspace(-0.999, 0.999, 800),
                                        _signed_logspace(1e-300, 0.5, 600),
                                        1 - np.geomspace(1e-16, 0.5, 400)])),
    "atan": (mp.atan, _signed_logspace(1e-300, 1e300, 1600)),
    "asin": (mp.asin, np.concatenate([np.linspace(-1, 1, 1500),
                                      _signed_logspace(1e-300, 1, 400)])),
    "acos": (mp.acos, np.concatenate([np.linspace(-1, 1, 1500),
                                      1 - np.geomspace(1e-16, 1, 400)])),
}
BINARY = {
    "power": (_pow, _pow_inputs(1600)),
    "atan2": (mp.atan2, _atan2_inputs(1600)),
}


def _reference(fn, dt, *args: np.ndarray) -> np.ndarray:
    mp.mp.dps = 40
    ref = np.frompyfunc(lambda *v: float(fn(*[mp.mpf(float(a)) for a in v])), len(args), 1)
    with np.errstate(all="ignore"):
        return ref(*args).astype(np.float64).astype(dt)


def _check(op: str, et: str, got: np.ndarray, want: np.ndarray, *args: np.ndarray) -> None:
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= BUDGET[et], (op, et, [a[w] for a in args], got[w], want[w], int(d.max()))


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_against_mpmath(op, et):
    fn, xs = UNARY[op]
    dt = np.float32 if et == "f32" else np.float64
    with np.errstate(over="ignore", under="ignore"):
        x = np.unique(xs.astype(dt))
    got = compile_op(op, et, len(x))(x)
    _check(op, et, got, _reference(fn, dt, x), x)


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_against_mpmath(op, et):
    fn, (a, b) = BINARY[op]
    dt = np.float32 if et == "f32" else np.float64
    with np.errstate(over="ignore", under="ignore"):
        a, b = a.astype(dt), b.astype(dt)
    if op == "power":  # f32 rounding of y can make a negative base's exponent fractional
        keep = (a > 0) | (b == np.round(b))
        a, b = a[keep], b[keep]
    got = compile_op(op, et, len(a), arity=2)(a, b)
    _check(op, et, got, _reference(fn, dt, a, b), a, b)


def _neighbours(v: float, dt, k: int) -> np.ndarray:
    """v and its k float neighbours on either side (in dtype dt)."""
    up, down = [dt(v)], [dt(v)]
    for _ in range(k):
        up.append(np.nextafter(up[-1], dt(np.inf)))
        down.append(np.nextafter(down[-1], dt(-np.inf)))
    return np.array(down[::-1] + up[1:], dt)


def test_erf_f32_range_edges():
    """The native f32 erf (f32/special.py) clamps |x| to 3.92 (erf rounds to 1 there); the
    straight-line body switches from x + x P(x^2) to 1 - e^(-x^2) R(x) at |x| = 1, the table
    body at every k/4 (test_erf_tables.py checks those edges): every float
    near those edges, both signs, within the budget against mpmath, the result monotone
    across them and exactly +-1 from 3.92 on (inf included)."""
    pos = np.concatenate([_neighbours(1.0, np.float32, 64), _neighbours(3.92, np.float32, 64),
                          np.linspace(0.9, 1.1, 801, dtype=np.float32),
                          np.linspace(3.7, 4.1, 801, dtype=np.float32),
                          np.float32([5.0, 1e10, np.inf])])
    x = np.unique(np.concatenate([pos, -pos]))
    got = compile_op("erf", "f32", len(x))(x)
    fin = np.isfinite(x)
    want = np.sign(x).astype(np.float32)
    want[fin] = _reference(_erf, np.float32, x[fin])
    _check("erf", "f32", got, want, x)
    assert np.all(np.diff(got) >= 0)
    assert np.all(got[x >= np.float32(3.92)] == 1) and np.all(got[x <= np.float32(-3.92)] == -1)


def test_erf_inv_f32_range_edges():
    """The native f32 erf-inv switches from its polynomial in w = -log(1 - x^2) to the one in
    sqrt(w) at w = 6.25 (x ~ 0.998068), and meets w ~ 16 at the last float below 1: every
    float near the switch and the top 4096 floats below 1, both signs, within the budget
    against mpmath and monotone."""
    edge = float(np.sqrt(-np.expm1(-6.25)))
    top = 1 - np.arange(1, 4097, dtype=np.float64) * 2.0 ** -24
    pos = np.concatenate([_neighbours(edge, np.float32, 256), top.astype(np.float32),
                          np.linspace(0.99, 0.999, 801, dtype=np.float32)])
    x = np.unique(np.concatenate([pos, -pos]))
    got = compile_op("erf-inv", "f32", len(x))(x)
    _check("erf-inv", "f32", got, _reference(_erfinv, np.float32, x), x)
    assert np.all(np.diff(got) > 0)


def test_erfc_f32_range_edges():
    """The native f32 erfc switches from (1 - x) - x P(x^2) to e^(-x^2) F(x) at |x| = 1
    (2 - erfc(-x) below -1), its result is built in units of the smallest subnormal from
    x = 9.17, goes subnormal from x ~ 9.19 and the argument is clamped to 10.1 (0 from
    there on): floats near each edge, both signs, within the budget
    against mpmath (subnormal results counted in their own ulp) and monotone."""
    pos = np.concatenate([_neighbours(1.0, np.float32, 64), _neighbours(10.1, np.float32, 64),
                          _neighbours(9.17, np.float32, 64),  # integer-built results from here
                          _neighbours(9.1945494, np.float32, 64),  # erfc = 2^-126
                          np.linspace(0.9, 1.1, 801, dtype=np.float32),
                          np.linspace(9.0, 10.2, 1201, dtype=np.float32),
                          np.float32([12.0, 1e10, np.inf])])
    x = np.unique(np.concatenate([pos, -pos]))
    got = compile_op("erfc", "f32", len(x))(x)
    fin = np.isfinite(x)
    want = np.where(x > 0, 0.0, 2.0).astype(np.float32)
    want[fin] = _reference(_erfc, np.float32, x[fin])
    _check("erfc", "f32", got, want, x)
    assert np.all(np.diff(got) <= 0)
    assert np.all(got[x >= np.float32(10.1)] == 0) and np.all(got[x <= np.float32(-10.1)] == 2)
