"""The native f32 math bodies (f32/trig.py, f32/powers.py, lean_log, lean_hyper, parts) and the
shared polynomial evaluator.

- sweeps of the whole float32 line (every 4099th bit pattern, both signs: ~2 million
  inputs, subnormals, huge values and the overflow thresholds included) against the
  function in double precision (NumPy/SciPy on the widened input, rounded to f32: within
  half an f32 ulp plus a hair), within the tolerance NumPy's validation table gives that
  function (2-4 ulp; the measured worst case is 1 against this reference);
- atan2 and pow over random pairs, 3 ulp (test_math_reference's f32 budget); pow where
  t = y log2|x| nears the overflow and subnormal thresholds, 1 ulp;
- f16 through the f32 bodies, 1 f16 ulp;
- the f32 bodies compute in f32 (no double in their IR; pow excepted);
- `Fp.poly` (Estrin's scheme inside long polynomials) against exact rational evaluation.
"""

from __future__ import annotations

from fractions import Fraction

import llvmlite.ir as ir
import numpy as np
import pytest
from codegen_util import ulp_distance
from test_math_accuracy import compile_op

from ember.backends.cpu import mathlib
from ember.backends.cpu.mathlib.fp import Fp

sp = pytest.importorskip("scipy.special")

# op: (double-precision reference, NumPy's validation-table tolerance for f32)
NATIVE = {
    "exp2": (np.exp2, 2), "log2": (np.log2, 3), "log10": (np.log10, 4),
    "log-plus-one": (np.log1p, 2), "tan": (np.tan, 4), "atan": (np.arctan, 3),
    "asin": (np.arcsin, 4), "acos": (np.arccos, 3), "sinh": (np.sinh, 2),
    "cosh": (np.cosh, 3), "asinh": (np.arcsinh, 2), "acosh": (np.arccosh, 2),
    "atanh": (np.arctanh, 2), "cbrt": (np.cbrt, 2), "tanh": (np.tanh, 2),
}


def _f32_line(stride: int) -> np.ndarray:
    bits = np.arange(0, 0x7F800001, stride, dtype=np.uint32)
    x = np.concatenate([bits, bits | np.uint32(0x80000000)]).view(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0,
                         88.72283, 89.41599, -103.97208, 128.0, -150.0, 65535.9, 4096.0],
                        dtype=np.float32)
    return np.concatenate([x, specials])


@pytest.mark.parametrize("op", sorted(NATIVE))
def test_f32_line_sweep(op):
    ref, tol = NATIVE[op]
    x = _f32_line(4099)
    got = compile_op(op, "f32", len(x))(x)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= tol, (op, x[w], got[w], want[w], int(d.max()))


def _pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(-80, 80, (2, n))) * rng.choice([-1.0, 1.0], (2, n))
    return mag[0].astype(np.float32), mag[1].astype(np.float32)


def test_f32_atan2_pairs():
    y, x = _pairs(200_000, 1)
    got = compile_op("atan2", "f32", len(y), arity=2)(y, x)
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    assert ulp_distance(got, want).max() <= 3


def test_f32_pow_pairs():
    rng = np.random.default_rng(2)
    n = 200_000
    x = np.exp(rng.uniform(-20, 20, n)).astype(np.float32)
    y = rng.uniform(-30, 30, n).astype(np.float32)
    xi = -np.exp(rng.uniform(-4, 4, n // 4)).astype(np.float32)  # negative bases
    yi = np.round(rng.uniform(-25, 25, n // 4)).astype(np.float32)
    x, y = np.concatenate([x, xi]), np.concatenate([y, yi])
    _assert_pow_within(x, y, ulps=3)


def _assert_pow_within(x: np.ndarray, y: np.ndarray, ulps: int) -> None:
    """Compiled f32 pow against the double result rounded to f32."""
    got = compile_op("power", "f32", len(x), arity=2)(x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= ulps, (x[w], y[w], got[w], want[w])


def test_f32_pow_extreme_exponents():
    """pow f32 (computed in f64 lanes) where its error analysis is tight: t = y log2|x| up
    to the overflow and subnormal thresholds (|t| ~ 128..150, also for x near 1 with huge
    y and for subnormal x), against the double result rounded to f32: within 1 ulp (the
    analysis gives 0.5 ulp + ~0.1), and integer powers of powers of two exact."""
    rng = np.random.default_rng(5)
    n = 100_000
    x = np.exp(rng.uniform(-103, 88, n))
    t = rng.uniform(-152, 130, n)  # log2 of the result
    near1 = 1 + rng.uniform(-2e-3, 2e-3, n)
    sub = np.exp(rng.uniform(-103.2, -87.4, n // 4))  # subnormal f32 bases
    xs = np.concatenate([x, near1, sub]).astype(np.float32)
    ts = np.concatenate([t, rng.uniform(-152, 130, n), rng.uniform(-152, 130, n // 4)])
    with np.errstate(all="ignore"):
        ys = (ts / np.log2(xs.astype(np.float64))).astype(np.float32)
    keep = np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    _assert_pow_within(xs, ys, ulps=1)
    e = rng.integers(-40, 40, 4000)
    k = rng.integers(-6, 7, 4000)
    x2 = np.ldexp(1.0, e).astype(np.float32) * rng.choice([-1, 1], 4000).astype(np.float32)
    y2 = k.astype(np.float32)
    got = compile_op("power", "f32", len(x2), arity=2)(x2, y2)
    with np.errstate(all="ignore"):
        assert np.array_equal(got, np.power(x2.astype(np.float64), k).astype(np.float32))


@pytest.mark.parametrize("op", sorted(set(NATIVE) - {"log-plus-one"}) + ["log-plus-one"])
def test_f16_through_f32_bodies(op):
    x = np.linspace(-60, 60, 4001).astype(np.float16)
    x = np.concatenate([x, np.array([0, -0.0, np.inf, -np.inf, np.nan, 6e-8, 65504],
                                    dtype=np.float16)])
    got = compile_op(op, "f16", len(x))(x)
    with np.errstate(all="ignore"):
        want = NATIVE[op][0](x.astype(np.float64)).astype(np.float16)
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= 1, (op, x[w], got[w], want[w])


# pow computes in f64 lanes on purpose (f32_powers: fewer operations than f32 pairs)
WIDE_F32 = {"power"}


@pytest.mark.parametrize("op", sorted(set(mathlib.VECTORIZED) - WIDE_F32))
def test_f32_bodies_do_not_widen(op):
    """Every f32 body except pow's is f32 arithmetic: 16 lanes per
    AVX-512 register, not 8."""
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 2), name="f")
    b = ir.IRBuilder(fn.append_basic_block())
    nargs = 2 if op in ("atan2", "power") else 1
    v, _ = mathlib.emit_math(b, op, list(fn.args)[:nargs], False)
    b.ret(v)
    assert "double" not in str(mod), op


@pytest.mark.parametrize("n", [3, 5, 6, 9, 14])
@pytest.mark.parametrize("et", ["f32", "f64"])
def test_poly_matches_exact_evaluation(n, et):
    """Fp.poly (Horner, or Estrin inside long polynomials) within a few ulp of the exact
    rational value of the polynomial at arguments of either sign."""
    from ember.backends import cpu  # noqa: F401  (initializes LLVM for the JIT below)
    from ember.backends.cpu.jit.llvm_target import target

    ty = ir.FloatType() if et == "f32" else ir.DoubleType()
    dt = np.float32 if et == "f32" else np.float64
    coeffs = [float(dt(1.0 / (k + 1) * (-1) ** k)) for k in range(n)]
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name="p")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(Fp(b, ty).poly(fn.args[0], coeffs))
    import ctypes

    import llvmlite.binding as llvm

    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), target().new_machine())
    engine.finalize_object()
    cty = ctypes.c_float if et == "f32" else ctypes.c_double
    f = ctypes.CFUNCTYPE(cty, cty)(engine.get_function_address("p"))
    xs = np.linspace(-0.5, 0.5, 101).astype(dt)
    got = np.array([f(float(v)) for v in xs], dtype=dt)
    want = np.array([float(sum(Fraction(c) * Fraction(float(v)) ** k
                               for k, c in enumerate(coeffs))) for v in xs]).astype(dt)
    assert ulp_distance(got, want).max() <= 2
