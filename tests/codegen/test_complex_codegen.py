"""Native complex code in the CPU backend (codegen/complex_ops.py, complex_math.py).

Input: complex64/complex128 arrays of every pairing of edge parts (zeros of both signs, infinities,
NaN, huge, subnormal, ordinary) and random odd-sized arrays. Output: assertions that the
compiled module (never the interpreter: `cpu.compile` raises on a refusal) gives the
evaluator's (NumPy's) values, bit for bit for the exact operations and within a few ulps for
the math; that jit agrees with eager mode and NumPy for size 0, rank 0 and odd sizes; that
complex chains fuse into one kernel and a Mandelbrot iteration is one kernel (carry fusion,
which the pass keeps to while bodies and the CPU's policy); and that what has no native code
(a complex sort, arcsin or arctanh) still runs on the interpreter with the right values.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends import cpu
from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate

inf, nan = np.inf, np.nan
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 100.0, inf, -inf, nan, 1e300, -1e300,
         1e-310, 0.7, 1e30]
ET = {np.complex64: "c64", np.complex128: "c128"}
EXACT_BINARY = ("add", "subtract", "multiply", "divide")
EXACT_UNARY = ("negate", "real", "imag")
# ulps of the larger of the expected part and the smallest normal, per op (NumPy's own
# loops are within an ulp or two of the true value)
MATH_ULPS = {"abs": 2, "sign": 3, "exponential": 4, "log": 4, "sqrt": 3, "sine": 4,
             "cosine": 4, "tan": 6, "sinh": 4, "cosh": 4, "tanh": 6, "exp2": 4, "log2": 4,
             "log10": 4, "rsqrt": 3}
# NumPy's expm1/log1p formulas cancel in a part whose value is small beside the other: ulps
# of the result's modulus there (NumPy's own error is of that size)
MODULUS_ULPS = {"exponential-minus-one": 4, "log-plus-one": 4}


def _grid(dtype) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)]).astype(
            dtype)


def _same_parts(got: np.ndarray, want: np.ndarray, ulps: int, label: str,
                modulus: bool = False) -> None:
    """Part by part: NaN where NaN, equal infinities, finite parts within `ulps` (0:
    equal bits, the sign of zero included) of the part (`modulus`: of |want|)."""
    got, want = np.asarray(got), np.asarray(want)
    scale = np.abs(want) if modulus else None
    assert got.dtype == want.dtype, label
    if want.dtype.kind != "c":
        got, want = got[..., None], want[..., None]
        gp, wp = [got], [want]
    else:
        gp, wp = [got.real, got.imag], [want.real, want.imag]
    for g, w in zip(gp, wp):
        both_nan = np.isnan(g) & np.isnan(w)
        if ulps == 0:
            ok = both_nan | ((g == w) & (np.signbit(g) == np.signbit(w)))
        else:
            tiny = np.finfo(w.dtype).tiny
            ref = np.abs(w) if scale is None else np.where(np.isfinite(scale), scale,
                                                            np.abs(w))
            tol = ulps * np.finfo(w.dtype).eps * np.maximum(ref, tiny)
            with np.errstate(invalid="ignore"):
                ok = both_nan | (g == w) | (np.abs(g - w) <= tol)
        bad = np.flatnonzero(~ok.reshape(-1))
        assert bad.size == 0, f"{label}: {g.reshape(-1)[bad[:5]]} vs {w.reshape(-1)[bad[:5]]}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_every_native_op_matches_the_evaluator_on_edge_values(dtype):
    """One module per dtype computing every op on the edge grid (and a shifted copy as the
    second operand): one compile, every output checked."""
    z = _grid(dtype)
    w = np.roll(z, 7)
    et = ET[dtype]
    part = "f32" if et == "c64" else "f64"
    b = Builder("complex_ops")
    x, y = b.parameter(Shape(et, z.shape)), b.parameter(Shape(et, z.shape))
    re, im = b.parameter(Shape(part, z.shape)), b.parameter(Shape(part, z.shape))
    names, outs = [], []
    for op in EXACT_BINARY:
        names.append(op)
        outs.append(b.binary(op, x, y))
    for op in (*EXACT_UNARY, *MATH_ULPS, *MODULUS_ULPS):
        names.append(op)
        outs.append(b.unary(op, x))
    for d in ("EQ", "NE"):
        names.append(f"compare {d}")
        outs.append(b.compare(x, y, d))
    names += ["complex", "select", "to c64/c128", "to real", "to pred", "from real"]
    outs += [b.binary("complex", re, im),
             b.select(b.compare(re, im, "LT"), x, y),
             b.convert(x, "c128" if et == "c64" else "c64"),
             b.convert(x, "s32"), b.convert(x, "pred"), b.convert(re, et)]
    m = b.build(b.tuple(outs))
    args = (z, w, z.real.copy(), z.imag.copy())
    got = cpu.compile(m)(*args)  # raises UnsupportedOnCpu on a refusal: all native here
    want = evaluate(m, *args)
    for name, g, wv in zip(names, got, want):
        ulps = MATH_ULPS.get(name, MODULUS_ULPS.get(name, 0))
        _same_parts(g, wv, ulps, f"{et} {name}", modulus=name in MODULUS_ULPS)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_math_on_random_values_near_and_far_from_the_unit_circle(dtype):
    """log, sqrt, abs and division near and far from |z| = 1; the exponential and trig
    family on |z| < 20 (their useful range), in every direction."""
    rng = np.random.default_rng(3)
    n = 1001
    r = np.concatenate([1 + rng.standard_normal(n // 2) * 1e-6,
                        np.exp(rng.uniform(-30, 30, n - n // 2))])
    z = (r * np.exp(1j * rng.uniform(-4, 4, n))).astype(dtype)
    small = (z / np.abs(z) * rng.uniform(0, 20, n)).astype(dtype)  # exp's range
    et = ET[dtype]
    b = Builder("complex_math")
    x, s = b.parameter(Shape(et, (n,))), b.parameter(Shape(et, (n,)))
    names = ["log", "sqrt", "abs"]
    outs = [b.unary(op, x) for op in names]
    outs.append(b.binary("divide", x, b.unary("sqrt", s)))
    names.append("divide")
    for op in ("exponential", "sine", "cosine", "tan", "sinh", "cosh", "tanh",
               "exponential-minus-one", "log-plus-one", "exp2", "log2", "log10", "rsqrt"):
        outs.append(b.unary(op, s))
        names.append(op)
    m = b.build(b.tuple(outs))
    got, want = cpu.compile(m)(z, small), evaluate(m, z, small)
    for name, g, w in zip(names, got, want):
        ulps = MATH_ULPS.get(name, MODULUS_ULPS.get(name, 4))
        _same_parts(g, w, ulps, f"{et} {name}", modulus=name in MODULUS_ULPS)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_power_follows_numpys_cases(dtype):
    """x^y on edge bases and exponents: y = 0, x = 0, real integer exponents (unrolled,
    binary powering, negative: one division), and exp(y log x) for the rest. NaN/inf
    where NumPy has them; finite values within a few ulps of NumPy's scaled by the
    condition |y log x| (no intermediate overflows here: where an integer power
    overflows, which part is inf and which NaN depends on the last bits)."""
    xs = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, inf, -inf, nan, 0.7]
    ys = [0.0, -0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 4.0, 7.0, -7.0, 0.5, -2.5, inf, nan,
          1e-3, 99.0, 100.0]
    pairs = list(itertools.product(itertools.product(xs, xs), itertools.product(ys, [0.0, 1.0])))
    x = np.array([complex(*p) for p, _ in pairs]).astype(dtype)
    y = np.array([complex(*q) for _, q in pairs]).astype(dtype)
    et = ET[dtype]
    b = Builder("power")
    m = b.build(b.binary("power", b.parameter(Shape(et, x.shape)),
                         b.parameter(Shape(et, x.shape))))
    got, want = cpu.compile(m)(x, y), evaluate(m, x, y)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
    fin = np.isfinite(want)
    with np.errstate(all="ignore"):
        cond = 1 + np.abs(y * np.log(x.astype(np.complex128)))
    cond = np.where(np.isfinite(cond), cond, 1.0)  # (an infinite y or zero x: exact cases)
    err = np.abs(got[fin] - want[fin])
    tol = 4 * np.finfo(got.real.dtype).eps * cond[fin] * np.abs(want[fin])
    assert np.all(err <= tol), (x[fin][err > tol][:5], y[fin][err > tol][:5])


def test_huge_components_do_not_overflow():
    """Where c^2 + d^2 (and a^2 + b^2) overflow or underflow, Smith's division and the
    scaled hypot stay finite and accurate (NumPy's Smith's itself overflows only when
    c + d (d/c) does, which these avoid)."""
    b = Builder("huge")
    x, y = b.parameter(Shape("c128", (4,))), b.parameter(Shape("c128", (4,)))
    m = b.build(b.tuple([b.binary("divide", x, y), b.unary("abs", x), b.unary("sqrt", x)]))
    z = np.array([1e300 + 1e300j, 3e307 - 4e307j, 1e-300 + 1e-300j, 1e308 + 1e308j])
    w = np.array([1e300 - 1e299j, 1e308 + 1e307j, 1e-300 + 2e-300j, 1e-300 + 1e-300j])
    q, a, s = cpu.compile(m)(z, w)
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_allclose(q, z / w, rtol=1e-15)
    np.testing.assert_allclose(a, np.abs(z), rtol=1e-15)
    np.testing.assert_allclose(s, np.sqrt(z), rtol=1e-15)
    assert np.isfinite(q[:3]).all() and np.isfinite(a).all()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_jit_agrees_with_eager_and_numpy(dtype, shape, x64):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    c = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    def f(z, c):
        w = z * z + c
        return (w ** c, z ** 3, w / (c + 2), jnp.abs(w), jnp.exp(z) - jnp.log(c),
                jnp.sqrt(w), jnp.conj(w), w.real, w.imag, w == c, w != w, jnp.sum(w), jnp.prod(c),
                lax.complex(z.real, c.imag), jnp.where(z.real > 0, w, c),
                w.astype(jnp.complex64), jnp.sign(z), jnp.sin(z), jnp.cosh(c), jnp.tanh(z),
                jnp.tan(c))

    jitted = ember.jit(f)
    got = jitted(z, c)
    eager = f(jnp.asarray(z), jnp.asarray(c))
    with np.errstate(all="ignore"):
        w = z * z + c
        want = (w ** c, z ** 3, w / (c + 2), np.abs(w), np.exp(z) - np.log(c), np.sqrt(w),
                np.conj(w), w.real, w.imag, w == c, w != w, np.sum(w), np.prod(c),
                z.real + 1j * c.imag, np.where(z.real > 0, w, c), w.astype(np.complex64),
                np.sign(z), np.sin(z), np.cosh(c), np.tanh(z), np.tan(c))
    rtol = 2e-5 if dtype == "complex64" else 1e-12
    for g, e, wv in zip(got, eager, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=rtol, atol=0)
        np.testing.assert_allclose(np.asarray(g), wv, rtol=rtol, atol=rtol)
        assert np.asarray(g).dtype == np.asarray(e).dtype
    assert jitted.lower(z, c).compile()._compiled.backend == "cpu"


def test_a_complex_chain_is_one_vectorized_kernel(x64):
    z = (np.arange(1001) * 0.01 + 1j).astype(np.complex128)
    c = np.full(1001, 0.25 - 0.5j)
    f = ember.jit(lambda z, c: (jnp.abs(jnp.exp(z) * z + c / z) <= 2).astype(jnp.int32))
    compiled = f.lower(z, c).compile()
    assert compiled._compiled.backend == "cpu"
    assert [k.kind for k in compiled.kernels()] == ["kLoop"]
    with np.errstate(all="ignore"):
        want = (np.abs(np.exp(z) * z + c / z) <= 2).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(compiled(z, c)), want)


def _mandelbrot(c, iters=50):
    def body(_, s):
        z, n = s
        z = z * z + c
        return z, n + (jnp.abs(z) <= 2).astype(jnp.int32)

    return lax.fori_loop(0, iters, body, (jnp.zeros_like(c), jnp.zeros(c.shape, jnp.int32)))[1]


def test_mandelbrot_loop_compiles_natively_and_matches_numpy(x64):
    x, y = np.linspace(-2, 1, 61), np.linspace(-1.5, 1.5, 41)
    c = x[None, :] + 1j * y[:, None]
    f = ember.jit(_mandelbrot)
    compiled = f.lower(c).compile()
    assert compiled._compiled.backend == "cpu"
    text = compiled.as_text()
    body = text[text.index("%scan_body"):].split("\n}")[0]
    # one kernel per iteration does the array work (z*z + c and the count, writing both
    # carries: fusion.py's carry fusion), beside the scalar kernel of the loop counter
    fusions = [line for line in body.splitlines() if " fusion(" in line]
    arrays = [f for f in fusions if "[41,61]" in f.split("fusion(")[0]]
    assert len(arrays) == 1 and "kind=kLoop" in arrays[0], body
    assert "(s32[41,61], c128[41,61])" in arrays[0] or "(c128[41,61], s32[41,61])" in arrays[0]
    assert len(fusions) <= 2, body
    z, n = np.zeros_like(c), np.zeros(c.shape, np.int32)
    with np.errstate(all="ignore"):
        for _ in range(50):
            z = z * z + c
            n += (np.abs(z) <= 2)
    np.testing.assert_array_equal(np.asarray(compiled(c)), n)


def test_ops_without_native_code_fall_back_per_opcode(x64):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    v = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    for f, want in ((lambda a, v: jnp.arcsin(a) + v, np.arcsin(a) + v),
                    (lambda a, v: jnp.arctanh(a) * v, np.arctanh(a) * v)):
        compiled = ember.jit(f).lower(a, v).compile()
        assert compiled._compiled.backend == "interpreter"
        np.testing.assert_allclose(np.asarray(compiled(a, v)), want, rtol=1e-5)
    b = Builder("sort")
    x = b.parameter(Shape("c64", (3,)))
    with pytest.raises(UnsupportedOnCpu, match="sort on complex values"):
        cpu.compile(b.build(b.sort(x, 0, b.comparator("c64"))))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_products_are_real_dots_and_match_numpy(dtype, x64):
    """dot/matmul/einsum on complex values compile as four real dots (BLAS), batched,
    against a real operand, with empty dimensions."""
    rng = np.random.default_rng(4)

    def c(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    a, b, x, y = c(5, 7), c(7, 3), c(2, 3, 4), c(2, 4, 5)
    r = rng.standard_normal((7, 3)).astype(dtype().real.dtype)
    e0, e1 = c(0, 3), c(3, 0)
    f = ember.jit(lambda a, b, x, y, r, e0, e1: (
        a @ b, jnp.matmul(x, y), jnp.einsum("ij,jk->ik", a, jnp.conj(b)), a @ r,
        jnp.vdot(a[0], a[1]), e0 @ b[:3], e1 @ e0, a[:, :3] @ e1))
    args = (a, b, x, y, r, e0, e1)
    compiled = f.lower(*args).compile()
    assert compiled._compiled.backend == "cpu"
    dots = [line for line in compiled.as_text().splitlines() if " dot(" in line]
    assert dots and not any(f"= {t}[" in line for line in dots for t in ("c64", "c128")), dots
    want = (a @ b, x @ y, a @ b.conj(), a @ r, np.vdot(a[0], a[1]), e0 @ b[:3], e1 @ e0,
            a[:, :3] @ e1)
    rtol = 1e-5 if dtype == np.complex64 else 1e-13
    for g, w in zip(compiled(*args), want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=rtol)


def test_complex_dot_needs_its_expansion_pass(monkeypatch):
    """With complex-dot-expansion disabled the CPU refuses the module (the interpreter runs
    it) instead of handing a complex dot to the real GEMM."""
    monkeypatch.setenv("EMBER_DISABLE_PASSES", "complex-dot-expansion")
    b = Builder("cdot")
    x, y = b.parameter(Shape("c64", (2, 3))), b.parameter(Shape("c64", (3, 2)))
    with pytest.raises(UnsupportedOnCpu, match="complex-dot-expansion"):
        cpu.compile(b.build(b.dot(x, y, [1], [0])), use_cache=False)


def test_complex_sums_compile_and_match_numpy(x64):
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((33, 17)) + 1j * rng.standard_normal((33, 17)))
    f = ember.jit(lambda z: (z.sum(axis=0), z.sum(axis=1), jnp.prod(z[:5, :5], axis=1),
                             (z * jnp.conj(z)).sum()))
    compiled = f.lower(z).compile()
    assert compiled._compiled.backend == "cpu"
    got = compiled(z)
    want = (z.sum(axis=0), z.sum(axis=1), np.prod(z[:5, :5], axis=1), (z * np.conj(z)).sum())
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_carry_fusion_is_the_policys_choice(x64):
    """Without carry fusion the iteration is two array kernels (the carry, then its reader);
    the values are the same either way."""
    from ember.hlo import parse_module
    from ember.passes.fusion import Fusion, FusionPolicy

    c = np.linspace(-2, 1, 9) + 0.5j
    text = ember.jit(_mandelbrot).lower(c).as_text()
    kinds = {}
    for carry in (False, True):
        m = parse_module(text)
        Fusion(FusionPolicy(carry_fusion=carry)).run(m)
        body = next(comp for comp in m.computations if comp.name.startswith("scan_body"))
        kinds[carry] = [i.shape.is_tuple for i in body.instructions
                        if i.opcode == "fusion" and i.shape.is_tuple or
                        (i.opcode == "fusion" and i.shape.rank == 1)]
    assert kinds[False] == [False, False], kinds
    assert kinds[True] == [True], kinds


def test_data_movement_and_control_flow_carry_complex_values(x64):
    """Slices, pads, concatenation, reversal, transposes, gathers, dynamic updates and a
    cond on complex128 values: the structural ops move (re, im) pairs intact."""
    rng = np.random.default_rng(5)
    z = rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))
    idx = np.array([4, 0, 2, 5])

    def f(z, idx, k):
        up = lax.dynamic_update_slice(z, jnp.conj(z[:2, :2]), (k, 1))
        branch = lax.cond(k > 1, lambda v: v * 1j, lambda v: -v, z[0])
        return (z[1:5:2, ::-1].T, jnp.pad(z, ((1, 0), (0, 2)), constant_values=1 - 2j),
                jnp.concatenate([z, z[:1] * 2], axis=0), z[idx], up, branch,
                lax.dynamic_slice(z, (k, k), (2, 3)))

    compiled = ember.jit(f).lower(z, idx, 3).compile()
    assert compiled._compiled.backend == "cpu"
    got = compiled(z, idx, 3)
    up = z.copy()
    up[3:5, 1:3] = np.conj(z[:2, :2])
    # (the dynamic slice's start 3 clamps to 2 in the columns: 2 + 3 = 5)
    want = (z[1:5:2, ::-1].T, np.pad(z, ((1, 0), (0, 2)), constant_values=1 - 2j),
            np.concatenate([z, z[:1] * 2], axis=0), z[idx], up, z[0] * 1j, z[3:5, 2:5])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
