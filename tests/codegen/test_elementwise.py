"""Every elementwise opcode, compiled, against the interpreter over shapes, dtypes and edge
values. Ops of one (dtype, shape) share one module, so each case is one compile."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same, edge_array

from ember.backends import cpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate

SHAPES = [(), (0,), (7,), (33,), (4, 5), (2, 3, 5)]

FLOAT_EXACT_UNARY = ["negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
                     "round-nearest-even", "sqrt", "rsqrt", "copy"]
FLOAT_EXACT_BINARY = ["add", "subtract", "multiply", "divide", "remainder"]
MINMAX = ["maximum", "minimum"]
# (opcode, ulp budget): our polynomials and the libm-backed functions. erfc: the reference
# (SciPy's erfc) is itself tens of ulp off in the tails where glibc's is not.
FLOAT_APPROX_UNARY = [("exponential", 2), ("exponential-minus-one", 3), ("log", 2),
                      ("log-plus-one", 4), ("sine", 2), ("cosine", 2), ("tanh", 4),
                      ("logistic", 3), ("tan", 3), ("cbrt", 2), ("erf", 3), ("erfc", 64),
                      ("asin", 2), ("acos", 2), ("atan", 2), ("sinh", 3), ("cosh", 3),
                      ("asinh", 3), ("acosh", 3), ("atanh", 3), ("exp2", 2), ("log2", 2),
                      ("log10", 2)]
FLOAT_APPROX_BINARY = [("power", 3), ("atan2", 2)]
INT_UNARY = ["negate", "abs", "sign", "not", "popcnt", "clz", "copy"]
INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
              "and", "or", "xor", "shift-left", "shift-right-logical",
              "shift-right-arithmetic", "power"]
PRED_UNARY = ["not", "copy"]
PRED_BINARY = ["and", "or", "xor"]
DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]


def _ops_for(et: str):
    if et == "pred":
        return [(o, 0) for o in PRED_UNARY], [(o, 0) for o in PRED_BINARY]
    if et.startswith("f"):
        un = [(o, 0) for o in FLOAT_EXACT_UNARY] + FLOAT_APPROX_UNARY
        bi = [(o, 0) for o in FLOAT_EXACT_BINARY + MINMAX] + FLOAT_APPROX_BINARY
        return un, bi
    return [(o, 0) for o in INT_UNARY], [(o, 0) for o in INT_BINARY]


def _build(et: str, dims: tuple[int, ...]):
    b = Builder(f"ew_{et}_{len(dims)}")
    s = Shape(et, dims)
    x, y, p = b.parameter(s), b.parameter(s), b.parameter(Shape("pred", dims))
    un, bi = _ops_for(et)
    outs, names = [], []
    for op, u in un:
        outs.append(b.unary(op, x))
        names.append((op, u))
    for op, u in bi:
        outs.append(b.binary(op, x, y))
        names.append((op, u))
    for d in DIRECTIONS:
        outs.append(b.compare(x, y, d))
        names.append((f"compare-{d}", 0))
    outs.append(b.select(p, x, y))
    names.append(("select", 0))
    if et != "pred":
        outs.append(b.clamp(y, x, y))
        names.append(("clamp", 0))
    if et.startswith("f"):
        outs.append(b.unary("is-finite", x))
        names.append(("is-finite", 0))
    return b.build(b.tuple(outs)), names


@pytest.mark.parametrize("et", ["pred", "s8", "s32", "u32", "s64", "u8", "f16", "f32", "f64"])
@pytest.mark.parametrize("dims", SHAPES, ids=str)
def test_elementwise_ops(et, dims):
    if et in ("u8", "s64", "f16", "pred") and dims not in [(), (33,)]:
        pytest.skip("a narrower sweep for the less common types")
    module, names = _build(et, dims)
    dt = Shape(et, ()).dtype
    x = edge_array(dt, dims, seed=1)
    y = edge_array(dt, dims, seed=2)
    if et.startswith("f") and x.size:
        y.reshape(-1)[: min(3, y.size)] = 0  # division and remainder by zero
    if et[0] in "su" and x.size > 3:
        y.reshape(-1)[:4] = np.array([0, 0, 1, 3]).astype(dt)  # x/0, x%0
        if et[0] == "s":
            x.reshape(-1)[4 % x.size] = np.iinfo(dt).min
            y.reshape(-1)[4 % y.size] = -1  # INT_MIN / -1
    p = edge_array(np.bool_, dims, seed=3)
    exe = cpu.compile(module)
    got = exe(x, y, p)
    want = evaluate(module, x, y, p)
    for (name, ulps), g, w in zip(names, got, want):
        assert_same(g, w, ulps=ulps, what=f"{name} {et}{list(dims)}")


@pytest.mark.parametrize("et", ["s8", "s32", "u32", "s64"])
def test_shift_counts_out_of_range(et):
    dt = Shape(et, ()).dtype
    bits = 8 * dt.itemsize
    b = Builder("shifts")
    s = Shape(et, (8,))
    x, y = b.parameter(s), b.parameter(s)
    m = b.build(b.tuple([b.binary(op, x, y) for op in
                         ("shift-left", "shift-right-logical", "shift-right-arithmetic")]))
    xs = np.array([1, -1, 5, -8, 3, 7, -100, 42]).astype(dt)
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, 3, 5]
    if et[0] == "s":
        counts[6] = -1
    ys = np.array(counts).astype(dt)
    assert_same(cpu.compile(m)(xs, ys), evaluate(m, xs, ys))
