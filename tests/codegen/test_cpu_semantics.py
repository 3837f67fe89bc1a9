"""Semantics the CPU backend, the interpreter and eager mode share, pinned three ways:
compiled code == the HLO evaluator == a reference written here from the rule itself.

- maximum/minimum are IEEE 754-2019's, as XLA computes them: NaN propagates (x's NaN if x
  is NaN, else y's), and -0.0 < +0.0 in either operand order; the same in reductions
  (row and column kernels) and in eager reduce_max/min. argmax/argmin pick the first
  extremum, -0.0 and +0.0 tying, and the first NaN.
- clamp(lo, x, hi) = min(max(x, lo), hi) with those rules.
- bitcast-convert between widths: a narrower type adds a minor dimension (little-endian
  pieces), a wider one packs it.
- integer power wraps; a negative exponent gives 0 except for bases 1 and -1; 0**0 = 1.
- a float sum starts from its +0.0 init: sum([-0.0]) = +0.0 (eager, interpreter, CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import lax
from ember.backends import cpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.lowering import lower_jaxpr

# f64 and 64-bit integers traced through ember.make_jaxpr need jax_enable_x64.
pytestmark = pytest.mark.usefixtures("x64")

FLOATS = ["f16", "f32", "f64"]
# A quiet NaN with the sign bit and a payload, next to NumPy's +NaN: which NaN comes out
# of an elementwise max/min is part of the contract.
_NEG_NAN = {"f16": np.array([0xFE01], np.uint16).view(np.float16)[0],
            "f32": np.array([0xFFC00002], np.uint32).view(np.float32)[0],
            "f64": np.array([0xFFF8000000000003], np.uint64).view(np.float64)[0]}


def _dtype(et: str) -> np.dtype:
    return Shape(et, ()).dtype


def _specials(et: str) -> np.ndarray:
    return np.array([-0.0, 0.0, np.nan, _NEG_NAN[et], 1.0, -1.0, np.inf, -np.inf],
                    _dtype(et))


def _ieee(a: float, b: float, pick_max: bool) -> float:
    """The rule, one pair at a time in Python."""
    if np.isnan(a):
        return a
    if np.isnan(b):
        return b
    if a == b == 0:
        neg = (np.signbit(a) and np.signbit(b)) if pick_max else (np.signbit(a)
                                                                   or np.signbit(b))
        return -0.0 if neg else 0.0
    return max(a, b) if pick_max else min(a, b)


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(np.asarray(x)).tobytes()


def _run_all(module, *args):
    """(CPU result, interpreter result) of an HLO module."""
    return cpu.compile(module)(*args), evaluate(module, *args)


def _cpu_interp_eager(f, *args):
    """f compiled for the CPU from its jaxpr, f on the interpreter, and f eagerly."""
    module = lower_jaxpr(ember.make_jaxpr(f)(*args)).module
    got, want = _run_all(module, *args)
    return np.asarray(got), np.asarray(want), np.asarray(f(*args))


# -- maximum / minimum ------------------------------------------------------------------------


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_elementwise_max_min_nan_and_signed_zeros(op, et):
    s = _specials(et)
    x, y = (a.reshape(-1).copy() for a in np.meshgrid(s, s, indexing="ij"))  # every pair
    b = Builder(f"{op}_{et}")
    px, py = b.parameter(Shape(et, x.shape)), b.parameter(Shape(et, y.shape))
    got, want = _run_all(b.build(b.binary(op, px, py)), x, y)
    ref = np.array([_ieee(p, q, op == "maximum") for p, q in zip(x, y)], _dtype(et))
    assert _bits(want) == _bits(ref), f"interpreter {op}: {want} vs {ref}"
    assert _bits(got) == _bits(ref), f"cpu {op}: {got} vs {ref}"


@pytest.mark.parametrize("et", FLOATS)
def test_max_min_zero_sign_in_fused_code_and_eager(et):
    dt = _dtype(et)
    x = np.array([-0.0, 0.0, -0.0, 0.0, 3.0] * 7, dt)
    y = np.array([0.0, -0.0, -0.0, 0.0, -3.0] * 7, dt)

    def f(a, c):  # fused with producers, scalar operands too
        return lax.max(a * 1, c), lax.min(a, c * 1), lax.max(a, dt.type(0.0)), \
            lax.min(dt.type(-0.0), c)

    module = lower_jaxpr(ember.make_jaxpr(f)(x, y)).module
    got, want = _run_all(module, x, y)
    eager = f(x, y)
    refs = [np.array([_ieee(p, q, True) for p, q in zip(x, y)], dt),
            np.array([_ieee(p, q, False) for p, q in zip(x, y)], dt),
            np.array([_ieee(p, 0.0, True) for p in x], dt),
            np.array([_ieee(-0.0, q, False) for q in y], dt)]
    for k, ref in enumerate(refs):
        assert _bits(got[k]) == _bits(ref), (k, got[k], ref)
        assert _bits(want[k]) == _bits(ref), (k, want[k], ref)
        assert _bits(eager[k]) == _bits(ref), (k, eager[k], ref)


def _reduce_module(et: str, dims: tuple[int, ...], axes: tuple[int, ...], op: str,
                   init: float):
    b = Builder(f"reduce_{op}")
    x = b.parameter(Shape(et, dims))
    comp = Builder.scalar_computation(op, et)
    return b.build(b.reduce(x, b.scalar(init, et), axes, comp))


def _zero_rows(dt: np.dtype, n: int, filler: float) -> np.ndarray:
    """Rows of signed zeros (all -0.0; all +0.0; one zero of the other sign in the middle,
    first or last), with `filler` (a value that loses) at every third place from n//2."""
    rows = []
    for bg, other_at in ((-0.0, None), (0.0, None), (-0.0, n // 2), (0.0, n // 2),
                         (-0.0, 0), (0.0, n - 1)):
        r = np.full(n, bg, dt)
        if other_at is not None:
            r[other_at] = -r[other_at]  # the other zero
        rows.append(r)
    x = np.stack(rows)
    tail = np.arange(n) >= n // 2
    x[:, tail & (np.arange(n) % 3 == 1)] = filler
    return x


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("n", [1, 7, 33, 130])
def test_reduce_max_min_signed_zeros(op, et, n):
    dt = _dtype(et)
    pick_max = op == "maximum"
    x = _zero_rows(dt, n, -2.0 if pick_max else 2.0)
    init = -np.inf if pick_max else np.inf
    ref = np.array([_fold(r, pick_max, init) for r in x], dt)
    for axes, inp in (((1,), x), ((0,), np.ascontiguousarray(x.T))):  # row, column kernels
        got, want = _run_all(_reduce_module(et, inp.shape, axes, op, init), inp)
        assert _bits(want) == _bits(ref), (axes, want, ref)
        assert _bits(got) == _bits(ref), (axes, got, ref)
    # eager reduce_max / reduce_min: the same code path as the interpreter's reduce
    eager = (lax.reduce_max if pick_max else lax.reduce_min)(x, (1,))
    assert _bits(eager) == _bits(ref), (eager, ref)


def _fold(row: np.ndarray, pick_max: bool, init: float) -> float:
    acc = init
    for v in row.tolist():
        acc = _ieee(acc, v, pick_max)
    return acc


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_reduce_max_min_nan_anywhere(op, et):
    dt = _dtype(et)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 37)).astype(dt)
    for r in range(0, 40, 3):
        x[r, (r * 7) % 37] = np.nan  # one NaN (of one payload) per marked row
    init = -np.inf if op == "maximum" else np.inf
    ref = np.array([_fold(r, op == "maximum", init) for r in x], dt)
    for axes, inp in (((1,), x), ((0,), np.ascontiguousarray(x.T))):
        got, want = _run_all(_reduce_module(et, inp.shape, axes, op, init), inp)
        assert _bits(want) == _bits(ref) and _bits(got) == _bits(ref), axes


@pytest.mark.parametrize("et", FLOATS)
def test_argmax_argmin_ties_and_nan(et):
    dt = _dtype(et)
    cases = [([-0.0, 0.0], 0, 0), ([0.0, -0.0], 0, 0), ([1.0, np.nan, np.nan], 1, 1),
             ([np.nan, 1.0, np.nan], 0, 0), ([-1.0, 2.0, 2.0, -1.0], 1, 0),
             ([-np.inf, -np.inf], 0, 0), ([5.0, -0.0, 0.0, -0.0], 0, 1)]
    for vals, want_max, want_min in cases:
        x = np.array(vals, dt)
        for f, want in ((lambda v: lax.argmax(v, 0, np.int32), want_max),
                        (lambda v: lax.argmin(v, 0, np.int32), want_min)):
            got, interp, eager = _cpu_interp_eager(f, x)
            assert int(got) == int(interp) == int(eager) == want, (vals, got, interp, eager)


# -- clamp ------------------------------------------------------------------------------------


@pytest.mark.parametrize("et", FLOATS)
def test_clamp_nan_and_signed_zeros(et):
    dt = _dtype(et)
    s = _specials(et)[[0, 1, 2, 4, 5]]  # -0, +0, NaN, 1, -1
    lo, x, hi = (a.reshape(-1).copy() for a in np.meshgrid(s, s, s, indexing="ij"))
    b = Builder(f"clamp_{et}")
    sh = Shape(et, x.shape)
    p = [b.parameter(sh) for _ in range(3)]
    got, want = _run_all(b.build(b.clamp(p[0], p[1], p[2])), lo, x, hi)
    ref = np.array([_ieee(_ieee(v, lo_, True), hi_, False)
                    for lo_, v, hi_ in zip(lo, x, hi)], dt)
    assert _bits(want) == _bits(ref)
    assert _bits(got) == _bits(ref)
    # scalar bounds (lax.clamp's usual form), through the jaxpr, and eagerly
    xs = np.array([-0.0, 0.0, np.nan, 2.0, -2.0, 0.5] * 6, dt)
    f = lambda v: lax.clamp(dt.type(0.0), v, dt.type(1.0))  # noqa: E731
    got, interp, eager = _cpu_interp_eager(f, xs)
    ref = np.array([_ieee(_ieee(v, 0.0, True), 1.0, False) for v in xs], dt)
    assert _bits(got) == _bits(ref) and _bits(interp) == _bits(ref) and _bits(eager) == _bits(ref)


# -- bitcast-convert across widths -----------------------------------------------------------


def _np_bitcast(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """NumPy's view, little-endian: narrowing adds a minor dim, widening packs it."""
    if dt.itemsize < x.dtype.itemsize:
        return x.reshape(x.shape + (1,)).view(dt)
    if dt.itemsize > x.dtype.itemsize:
        return x.view(dt).reshape(x.shape[:-1])
    return x.view(dt)


@pytest.mark.parametrize("src,dst,dims", [
    ("f64", "u32", (3,)), ("f64", "u32", ()), ("f64", "s8", (2, 3)), ("f32", "u16", (7,)),
    ("f32", "s8", (33,)), ("u32", "f64", (5, 2)), ("u8", "f32", (4,)), ("u8", "f32", (3, 4)),
    ("s16", "s64", (3, 4)), ("f16", "u8", (5,)), ("u8", "f16", (6, 2)), ("u64", "f16", (2,)),
    ("f32", "s32", (33,)), ("s8", "pred", (9,)), ("pred", "u8", (9,)), ("f32", "f32", (2,)),
], ids=str)
def test_bitcast_convert_widths(src, dst, dims):
    sd, dd = _dtype(src), _dtype(dst)
    rng = np.random.default_rng(7)
    n = int(np.prod(dims, dtype=np.int64))
    if sd == np.bool_:
        x = (rng.random(dims) < 0.5)
    else:
        x = rng.integers(0, 256, n * sd.itemsize, dtype=np.uint8).view(sd).reshape(dims)
    b = Builder("bitcast")
    got, want = _run_all(b.build(b.bitcast_convert(b.parameter(Shape(src, dims)), dst)), x)
    ref = (x.reshape(-1).view(np.uint8) != 0).reshape(dims) if dd == np.bool_ \
        else _np_bitcast(x, dd)
    assert np.asarray(got).shape == ref.shape == np.asarray(want).shape
    assert _bits(got) == _bits(ref) and _bits(want) == _bits(ref), (got, want, ref)


def test_bitcast_convert_fused_with_producers_and_consumers():
    """A width-changing bitcast inside a loop fusion: (x + 1) as u32 pairs, times 3."""
    x = np.linspace(-3, 3, 15).reshape(3, 5)
    b = Builder("fused_bitcast")
    px = b.parameter(Shape("f64", (3, 5)))
    one = b.broadcast(b.scalar(1.0, "f64"), (3, 5))
    halves = b.bitcast_convert(b.add(px, one), "u32")
    three = b.broadcast(b.scalar(3, "u32"), (3, 5, 2))
    packed = b.bitcast_convert(b.multiply(halves, three), "f64")
    got, want = _run_all(b.build(b.tuple([halves, packed])), x)
    h = _np_bitcast(x + 1.0, np.dtype(np.uint32))
    ref = (h, _np_bitcast((h * np.uint32(3)).astype(np.uint32), np.dtype(np.float64)))
    for g, w, r in zip(got, want, ref):
        assert _bits(g) == _bits(r) and _bits(w) == _bits(r)


def test_lax_bitcast_convert_type_jit_and_eager():
    x = np.array([1.5, -0.0, np.inf, 2.0 ** -1074], np.float64)
    got, interp, eager = _cpu_interp_eager(lambda v: lax.bitcast_convert_type(v, np.uint32), x)
    ref = x.reshape(4, 1).view(np.uint32)
    assert _bits(got) == _bits(ref) and _bits(interp) == _bits(ref) and _bits(eager) == _bits(ref)
    back, interp, eager = _cpu_interp_eager(
        lambda v: lax.bitcast_convert_type(v, np.float64), ref)
    assert _bits(back) == _bits(x) and _bits(interp) == _bits(x) and _bits(eager) == _bits(x)


# -- integer power -----------------------------------------------------------------------------


def _ref_int_pow(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    """x**y modulo 2**bits with Python integers; negative y: 1 / x**|y| truncated."""
    bits = 8 * dt.itemsize
    out = []
    for a, e in zip(x.tolist(), y.tolist()):
        if e < 0:
            v = 1 if a == 1 else ((-1 if e % 2 else 1) if a == -1 else 0)
        else:
            v = pow(int(a), int(e), 1 << bits)
        v &= (1 << bits) - 1
        if dt.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dt)


@pytest.mark.parametrize("et", ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"])
def test_integer_power_edges(et):
    dt = _dtype(et)
    info = np.iinfo(dt)
    bits = 8 * dt.itemsize
    pairs = [(0, 0), (0, 1), (0, 5), (5, 0), (1, info.max), (2, bits - 1), (2, bits),
             (2, bits + 1), (3, 40), (3, info.max), (7, 127), (info.max, 2), (info.max, 3),
             (info.min, 2), (info.min, 1), (5, 31), (1, 0)]
    if dt.kind == "i":
        pairs += [(1, -5), (-1, -3), (-1, -4), (-1, info.min), (2, -1), (0, -1), (-2, -1),
                  (info.min, -1), (-3, 5), (-3, 4), (-1, info.max), (info.min, 3)]
    x = np.array([p[0] for p in pairs], dt)
    y = np.array([p[1] for p in pairs], dt)
    b = Builder(f"ipow_{et}")
    sh = Shape(et, x.shape)
    got, want = _run_all(b.build(b.binary("power", b.parameter(sh), b.parameter(sh))), x, y)
    ref = _ref_int_pow(x, y, dt)
    assert np.array_equal(want, ref), (x, y, want, ref)
    assert np.array_equal(got, ref), (x, y, got, ref)


# -- float sums start from +0.0 ------------------------------------------------------------------


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("n", [0, 1, 3, 40])
def test_sum_of_negative_zeros_is_positive_zero(et, n):
    dt = _dtype(et)
    x = np.full((n,), -0.0, dt)
    f = lambda v: lax.reduce_sum(v, (0,))  # noqa: E731
    got, interp, eager = _cpu_interp_eager(f, x)
    for name, r in (("cpu", got), ("interpreter", interp), ("eager", eager)):
        assert r == 0 and not np.signbit(r), f"{name}: sum({n} x -0.0) = {r!r}"
    x2 = np.full((2, n), -0.0, dt)  # column and row kernels
    for axes in ((0,), (1,)):
        got, want = _run_all(_reduce_module(et, x2.shape, axes, "add", 0.0), x2)
        assert not np.signbit(got).any() and not np.signbit(want).any(), axes


def test_sum_keeps_values_and_negative_results():
    """The +0.0 init changes only the sign of an all-negative-zero sum."""
    x = np.array([-0.0, -1.5, 0.25], np.float32)
    got, interp, eager = _cpu_interp_eager(lambda v: lax.reduce_sum(v, (0,)), x)
    assert got == interp == eager == np.float32(-1.25)
    assert np.signbit(lax.reduce_prod(np.array([-0.0], np.float32), (0,)))  # 1 * -0.0


# -- running extrema and scatter combiners ------------------------------------------------------


@pytest.mark.parametrize("et", ["f16", "f32", "f64"])
def test_cummax_cummin_signed_zeros(et):
    dt = _dtype(et)
    x = np.array([0.0, -0.0, -0.0, 0.0, -1.0, -0.0, np.nan, 0.0], dt)
    y = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, 0.0, -0.0, -2.0], dt)
    for f, pick_max in ((lambda v: lax.cummax(v, axis=0), True),
                        (lambda v: lax.cummin(v, axis=0), False)):
        for v in (x, y):
            got, interp, eager = _cpu_interp_eager(f, v)
            acc, ref = v[0], []
            for k, e in enumerate(v.tolist()):
                acc = e if k == 0 else _ieee(acc, e, pick_max)
                ref.append(acc)
            ref = np.array(ref, dt)
            for name, r in (("cpu", got), ("interpreter", interp), ("eager", eager)):
                assert _bits(r) == _bits(ref), (name, v, r, ref)


@pytest.mark.parametrize("mode", ["max", "min"])
def test_scatter_max_min_signed_zeros(mode):
    """Repeated targets fold every update in with IEEE max/min (and the old value)."""
    import ember.numpy as jnp

    idx = np.array([0, 0, 1, 1, 2, 3, 3])
    upd = np.array([-0.0, 0.0, 0.0, -0.0, -0.0, -0.0, -0.0], np.float32)
    base = np.array([-0.0, -0.0, 0.0, 0.0, -0.0], np.float32)
    pick_max = mode == "max"

    def f(b, u):
        return getattr(jnp.asarray(b).at[idx], mode)(u)

    ref = base.copy()
    for i, u in zip(idx.tolist(), upd.tolist()):
        ref[i] = _ieee(float(ref[i]), u, pick_max)
    got, interp, eager = _cpu_interp_eager(f, base, upd)
    for name, r in (("cpu", got), ("interpreter", interp), ("eager", eager)):
        assert _bits(r) == _bits(ref), (name, r, ref)


# -- executables shared between functions ------------------------------------------------------


def test_shared_executable_keeps_each_functions_names(monkeypatch):
    """Two functions of one structure share compiled code (the cache ignores names), but
    each one's optimized HLO carries its own names."""
    import ember.numpy as jnp

    monkeypatch.setenv("EMBER_BACKEND", "cpu")

    def first(x, a):
        return a * jnp.sin(x) + 1.0

    def second(x, a):
        return a * jnp.sin(x) + 1.0

    args = [np.ones(40, np.float32)] * 2
    c1 = ember.jit(first).lower(*args).compile()
    c2 = ember.jit(second).lower(*args).compile()
    assert c1.as_text().startswith("HloModule jit_first")
    assert c2.as_text().startswith("HloModule jit_second")
    assert "ENTRY %jit_second" in c2.as_text()
    np.testing.assert_array_equal(np.asarray(c2(*args)), np.asarray(c1(*args)))
