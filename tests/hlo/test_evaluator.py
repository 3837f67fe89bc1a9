"""The evaluator against NumPy for every opcode, XLA's integer edge cases, gather/scatter."""

import numpy as np
import pytest
import scipy.special

from ember.backends.interpreter import compile as interp_compile
from ember.hlo import Builder, Shape
from ember.hlo.evaluator.core import evaluate, missing_opcodes

REFERENCE = {
    "exponential": np.exp, "exponential-minus-one": np.expm1, "log": np.log,
    "log-plus-one": np.log1p, "sine": np.sin, "cosine": np.cos, "tan": np.tan,
    "tanh": np.tanh, "sqrt": np.sqrt, "cbrt": np.cbrt, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "exp2": np.exp2, "log2": np.log2,
    "log10": np.log10, "negate": np.negative, "abs": np.abs, "floor": np.floor,
    "ceil": np.ceil, "round-nearest-even": np.rint, "rsqrt": lambda x: 1 / np.sqrt(x),
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "erf": scipy.special.erf,
    "erfc": scipy.special.erfc, "erf-inv": scipy.special.erfinv,
}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "divide": np.divide, "remainder": np.fmod, "power": np.power,
          "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2}


def run1(opcode, *xs, **kw):
    b = Builder("t")
    ps = [b.parameter(Shape.from_numpy(x)) for x in xs]
    return evaluate(b.build(b.op(opcode, ps, **kw)), *xs)


def test_every_opcode_has_an_evaluator_rule():
    assert missing_opcodes() == []


@pytest.mark.parametrize("opcode", sorted(REFERENCE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_float_vs_numpy(opcode, dtype):
    x = np.array([-2.5, -0.75, -0.0, 0.0, 0.3, 0.5, 0.99, 1.5, 7.0, np.inf, np.nan], dtype)
    with np.errstate(all="ignore"):
        want = np.asarray(REFERENCE[opcode](x)).astype(dtype)
    got = run1(opcode, x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("opcode", sorted(BINARY))
def test_binary_float_vs_numpy(opcode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(33).astype(np.float32)
    y = rng.standard_normal(33).astype(np.float32)
    with np.errstate(all="ignore"):
        want = BINARY[opcode](x, y)
    if opcode in ("atan2", "power"):  # Ember's own vector math, not NumPy's: within an ulp
        np.testing.assert_allclose(run1(opcode, x, y), want, rtol=2e-6)
        return
    np.testing.assert_array_equal(run1(opcode, x, y), want)


def test_special_float_semantics():
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.3, np.nan], np.float32)
    np.testing.assert_array_equal(run1("round-nearest-afz", x),
                                  [1, -1, 2, 3, -3, 0, -0.0, np.nan])
    assert np.signbit(run1("round-nearest-afz", x)[6])
    s = run1("sign", np.array([np.nan, -0.0, 0.0, -3, 2], np.float32))
    np.testing.assert_array_equal(s, [np.nan, 0, 0, -1, 1])
    assert np.signbit(s[1]) and not np.signbit(s[2])
    m = run1("maximum", np.array([np.nan, 1], np.float32), np.array([1, np.nan], np.float32))
    assert np.isnan(m).all()
    f = np.array([np.nan, 1e10, -1e10, 3.7, -3.7, np.inf], np.float32)
    b = Builder("c")
    p = b.parameter(Shape("f32", (6,)))
    m = b.build(b.tuple([b.convert(p, "s32"), b.convert(p, "u8"), b.convert(p, "pred")]))
    s32, u8, pred = evaluate(m, f)
    np.testing.assert_array_equal(s32, [0, 2**31 - 1, -2**31, 3, -3, 2**31 - 1])
    np.testing.assert_array_equal(u8, [0, 255, 0, 3, 0, 255])
    np.testing.assert_array_equal(pred, [True] * 6)


INT_EDGE = [
    # opcode, x, y, expected (s32)
    ("divide", [7, -7, 7, -7, -2**31, 5], [2, 2, -2, -2, -1, 0], [3, -3, -3, 3, -2**31, -1]),
    ("remainder", [7, -7, 7, -7, -2**31, 5], [2, 2, -2, -2, -1, 0], [1, -1, 1, -1, 0, 5]),
    ("shift-left", [1, 1, 1, 3, 1, 1], [3, 32, -1, 30, 31, 0], [8, 0, 0, -2**30, -2**31, 1]),
    ("shift-right-logical", [-1, -1, 8, 8, -8, 1], [28, 32, 1, -1, 0, 0], [15, 0, 4, 0, -8, 1]),
    ("shift-right-arithmetic", [-8, -8, 8, 8, -1, 5], [1, 40, 40, -3, 31, 1],
     [-4, -1, 0, 0, -1, 2]),
    ("power", [2, 1, -1, -1, 3, 0], [3, -5, -3, -2, -1, -1], [8, 1, -1, 1, 0, 0]),
    ("add", [2**31 - 1, -2**31, 0, 0, 0, 0], [1, -1, 0, 0, 0, 0], [-2**31, 2**31 - 1, 0, 0, 0, 0]),
    ("multiply", [2**30, 65536, 0, 0, 0, 0], [4, 65536, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]),
]


@pytest.mark.parametrize("opcode, x, y, want", INT_EDGE, ids=[r[0] for r in INT_EDGE])
def test_integer_edges(opcode, x, y, want):
    got = run1(opcode, np.array(x, np.int32), np.array(y, np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.array(want, np.int64).astype(np.int32))


def test_unsigned_and_bit_ops():
    u = np.array([7, 5, 200], np.uint8)
    np.testing.assert_array_equal(run1("divide", u, np.array([0, 2, 3], np.uint8)), [255, 2, 66])
    np.testing.assert_array_equal(run1("remainder", u, np.array([0, 2, 3], np.uint8)), [7, 1, 2])
    np.testing.assert_array_equal(run1("popcnt", np.array([-1, 3, 0], np.int32)), [32, 2, 0])
    np.testing.assert_array_equal(run1("clz", np.array([0, 1, -1, 2**20], np.int32)),
                                  [32, 31, 0, 11])
    np.testing.assert_array_equal(run1("not", np.array([True, False])), [False, True])
    np.testing.assert_array_equal(run1("not", np.array([0, 5], np.int8)), [-1, -6])


def test_shape_ops_vs_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = Builder("s")
    p = b.parameter(Shape("f32", (2, 3, 4)))
    outs = [b.transpose(p, (2, 0, 1)), b.reverse(p, (1,)), b.slice(p, (0, 1, 0), (2, 3, 4),
            (1, 1, 3)), b.broadcast(b.reshape(p, (6, 4)), (5, 6, 4), (1, 2)),
            b.pad(p, b.scalar(9, "f32"), [(1, -1, 0), (0, 0, 1), (0, 0, 0)]),
            b.iota(Shape("s32", (2, 3)), 0)]
    t, r, s, bc, pd, io = evaluate(b.build(b.tuple(outs)), x)
    np.testing.assert_array_equal(t, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(r, x[:, ::-1])
    np.testing.assert_array_equal(s, x[:, 1:3, ::3])
    np.testing.assert_array_equal(bc, np.broadcast_to(x.reshape(6, 4), (5, 6, 4)))
    want = np.full((2, 5, 4), 9, np.float32)
    want[1:, ::2] = x[:1]
    np.testing.assert_array_equal(pd, want)
    np.testing.assert_array_equal(io, [[0, 0, 0], [1, 1, 1]])


def test_dot_general_and_integer_wrap():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4))
    c = rng.standard_normal((2, 4, 5))
    b = Builder("d")
    pa, pc = b.parameter(Shape("f64", (2, 3, 4))), b.parameter(Shape("f64", (2, 4, 5)))
    got = evaluate(b.build(b.dot(pa, pc, (2,), (1,), (0,), (0,))), a, c)
    np.testing.assert_allclose(got, np.einsum("bij,bjk->bik", a, c))
    b = Builder("i")
    p = b.parameter(Shape("s32", (1, 2)))
    q = b.parameter(Shape("s32", (2, 1)))
    got = evaluate(b.build(b.dot(p, q, (1,), (0,))), np.array([[2**30, 2**30]], np.int32),
                   np.array([[2], [2]], np.int32))
    assert got.dtype == np.int32 and got[0, 0] == 0


def test_gather_rows_and_2d_windows_vs_numpy():
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    idx = np.array([[0, 1], [4, 5], [2, 2]], np.int32)
    b = Builder("g")
    px, pi = b.parameter(Shape("f32", (5, 6))), b.parameter(Shape("s32", (3, 2)))
    g = b.gather(px, pi, offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1),
                 index_vector_dim=1, slice_sizes=(2, 2))
    got = evaluate(b.build(g), x, idx)
    want = []
    for r, c in idx:  # starts clamp so the 2x2 window stays inside
        r, c = min(max(r, 0), 3), min(max(c, 0), 4)
        want.append(x[r:r + 2, c:c + 2])
    np.testing.assert_array_equal(got, np.stack(want))
    b = Builder("rows")
    px, pi = b.parameter(Shape("f32", (5, 6))), b.parameter(Shape("s32", (4,)))
    g = b.gather(px, pi, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                 index_vector_dim=1, slice_sizes=(1, 6))
    ids = np.array([3, 0, 3, 4], np.int32)
    np.testing.assert_array_equal(evaluate(b.build(g), x, ids), x[ids])


def test_scatter_add_and_generic_vs_numpy():
    x = np.zeros((5, 3), np.float32)
    idx = np.array([1, 3, 1, 9], np.int32)  # 9 is out of bounds: skipped
    upd = np.arange(12, dtype=np.float32).reshape(4, 3)
    want = x.copy()
    np.add.at(want, idx[:3], upd[:3])
    for comp in (Builder.scalar_computation("add", "f32"), None):
        if comp is None:  # same sum, but through the generic (non-fast-path) route
            cb = Builder("add_then_noop")
            a, c = cb.parameter(Shape("f32", ())), cb.parameter(Shape("f32", ()))
            comp = cb.build_computation(cb.multiply(cb.add(a, c), cb.scalar(1, "f32")))
        b = Builder("s")
        px, pi, pu = (b.parameter(Shape.from_numpy(v)) for v in (x, idx, upd))
        s = b.scatter(px, pi, pu, comp, update_window_dims=(1,), inserted_window_dims=(0,),
                      scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
        np.testing.assert_array_equal(evaluate(b.build(s), x, idx, upd), want)


def test_generic_sort_and_reduce():
    b = Builder("s")
    p = b.parameter(Shape("s32", (2, 5)))
    desc = b.sort(p, 1, Builder.comparator("s32", "GT"))
    m = b.build(desc)
    x = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.int32)
    np.testing.assert_array_equal(evaluate(m, x), -np.sort(-x, axis=1))


def test_compile_entry_point():
    b = Builder("c")
    p = b.parameter(Shape("f32", (3,)))
    exe = interp_compile(b.build(b.multiply(p, b.broadcast(b.scalar(1, "f32"), (3,)))))
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(exe(x), x)
    assert "multiply" not in exe.as_text()
