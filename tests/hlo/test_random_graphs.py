"""Hypothesis: random elementwise expression graphs survive print/parse and the pipeline."""

import numpy as np
from hlo_corpus import bit_equal
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.hlo import Builder, Shape, parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate
from ember.passes import hardware_independent_pipeline

UNARY = ["negate", "abs", "sine", "exponential", "tanh", "floor", "sqrt", "log"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power"]
CONSTS = [0.0, -0.0, 1.0, 2.0, 0.5, np.nan, np.inf]

step = st.tuples(st.sampled_from(["u", "b", "c", "s"]), st.integers(0, 1000),
                 st.integers(0, 1000), st.integers(0, 1000))


def build(steps, dtype):
    b = Builder("rand")
    shape = Shape(dtype, (5,))
    vals = [b.parameter(shape), b.parameter(shape)]
    for kind, i, j, k in steps:
        x, y = vals[i % len(vals)], vals[j % len(vals)]
        if kind == "u":
            vals.append(b.unary(UNARY[k % len(UNARY)], x))
        elif kind == "b":
            vals.append(b.binary(BINARY[k % len(BINARY)], x, y))
        elif kind == "c":
            c = b.scalar(CONSTS[k % len(CONSTS)], dtype)
            vals.append(b.binary(BINARY[k % len(BINARY)], x, b.broadcast(c, (5,))))
        else:
            vals.append(b.select(b.compare(x, y, "LT"), x, y))
    return b.build(b.tuple(vals[-3:]))


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=1, max_size=12), st.sampled_from(["f32", "f64"]),
       st.integers(0, 2**31))
def test_random_graph_round_trip_and_pipeline(steps, dtype, seed):
    m = build(steps, dtype)
    text = print_module(m)
    m2 = parse_module(text)
    assert print_module(m2) == text
    rng = np.random.default_rng(seed)
    dt = np.dtype("float32" if dtype == "f32" else "float64")
    args = [(rng.standard_normal(5) * 4).astype(dt) for _ in range(2)]
    args[0][0] = -0.0
    want = evaluate(m, *args)
    assert bit_equal(evaluate(m2, *args), want)
    hardware_independent_pipeline().run(m2)
    verify(m2)
    assert bit_equal(evaluate(m2, *args), want)
