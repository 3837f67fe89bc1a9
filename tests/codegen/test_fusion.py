"""The fusion pass and its effect on kernels: counts, kinds, refusals, vector code, and
random elementwise graphs compiled against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.backends import cpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.passes.fusion import Fusion, should_fuse


def close(m, *args):
    """Compile and compare with a relative tolerance (composed ops amplify last-place
    differences of the transcendentals through cancellation); returns the executable."""
    exe = cpu.compile(m)
    got, want = exe(*args), evaluate(m, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
    return exe


def _fusion_example(n: int):
    b = Builder("fusion_example")
    s = Shape("f32", (n,))
    x, a, c = b.parameter(s), b.parameter(s), b.parameter(s)
    return b.build(b.add(b.multiply(a, b.sine(x)), c))


def test_fusion_example_is_one_vectorized_kernel():
    n = 1_000_000
    m = _fusion_example(n)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(n).astype(np.float32) * 10 for _ in range(3)]
    exe = cpu.compile(m)
    # a*sin(x) + b cancels: compare with an absolute bound of a few ulp of |a| + |b|
    scale = np.abs(args[1]) + np.abs(args[2])
    err = np.abs(exe(*args) - evaluate(m, *args))
    assert np.all(err <= 4 * np.spacing(scale))
    assert exe.kernel_names == ["fusion"]
    text = exe.as_text()
    assert "fusion(%Arg_0, %Arg_1, %Arg_2), kind=kLoop, calls=%fused_computation" in text
    assert "ember.sin.f32" in exe.math_functions
    asm = exe.assembly()
    assert "zmm" in asm or "ymm" in asm


def test_huge_sine_arguments_take_the_precise_path():
    m = _fusion_example(40)
    x = np.linspace(-3, 3, 40).astype(np.float32)
    x[[3, 9, 30]] = [1e30, -3e5, 65536.5]
    one = np.ones(40, np.float32)
    zero = np.zeros(40, np.float32)
    got = cpu.compile(m)(x, one, zero)
    assert_same(got, evaluate(m, x, one, zero), ulps=1)


def test_expensive_producer_with_two_users_is_not_duplicated():
    b = Builder("two_users")
    s = Shape("f32", (100,))
    x = b.parameter(s)
    e = b.exponential(x)
    m = b.build(b.tuple([b.add(e, x), b.multiply(e, e), b.negate(e)]))
    exe = close(m, np.linspace(-2, 2, 100).astype(np.float32))
    reasons = [d for d in exe.module.fusion_decisions if "not duplicated" in d.reason]
    assert reasons and reasons[0].producer.startswith("exponential")
    assert "expensive exponential" in str(reasons[0])
    # the exp is computed once, in its own kernel
    assert exe.as_text().count("exponential(") == 1


def test_cheap_producer_is_duplicated():
    b = Builder("cheap")
    s = Shape("f32", (10,))
    x, y = b.parameter(s), b.parameter(s)
    t = b.add(x, y)
    m = b.build(b.tuple([b.multiply(t, x), b.sine(t)]))
    args = [np.arange(10, dtype=np.float32), np.ones(10, np.float32)]
    # the pass alone copies the add into both groups
    alone = m.clone()
    Fusion().run(alone)
    fusions = [i for i in alone.entry.instructions if i.opcode == "fusion"]
    assert len(fusions) == 2
    assert sum(i.opcode == "add" for f in fusions
               for i in f.fused_computation.instructions) == 2
    # the CPU backend's multi-output fusion then merges the two copies' groups: one kernel,
    # the add computed once
    exe = close(m, *args)
    assert len(exe.kernel_names) == 1 and exe.as_text().count(" add(") == 1


def test_softmax_pattern_producer_is_not_duplicated():
    # over the major axis, so row fusion (test_row_fusion.py) does not take it whole
    b = Builder("softmax")
    x = b.parameter(Shape("f32", (8, 16)))
    y = b.multiply(x, b.broadcast(b.scalar(2.0, "f32"), (8, 16), ()))
    mx = b.reduce(y, b.scalar(-np.inf, "f32"), (0,), Builder.scalar_computation("maximum",
                                                                                "f32"))
    z = b.exponential(b.subtract(y, b.broadcast(mx, (8, 16), (1,))))
    m = b.build(z)
    exe = close(m, np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32))
    assert any("x - max(x)" in d.reason for d in exe.module.fusion_decisions)
    assert exe.as_text().count(" multiply(") == 1


@pytest.mark.parametrize("et", ["f32", "s32", "pred"])
def test_an_integer_producer_feeding_a_reduction_is_duplicated(et):
    """The x - max(x) rule guards float values; an integer or predicate value has the
    same bits in every copy, so it is copied into the sum and the other reader rather
    than written to memory by a kernel of its own (Levinson-Durbin's gather indices)."""
    b = Builder("exact")
    s = Shape("s32", (8, 16))
    x, y = b.parameter(s), b.parameter(Shape("f32", (8, 16)))
    t = (b.compare(x, b.broadcast(b.scalar(3, "s32"), (8, 16), ()), "GT") if et == "pred"
         else b.convert(x, et) if et == "f32" else b.multiply(x, x))

    def read(k: int):  # t's k-th reader (each its own instruction)
        if et == "pred":
            return b.select(t, y, b.negate(y) if k else y)
        return t if et == "f32" else b.convert(t, "f32")

    add = Builder.scalar_computation("add", "f32")
    m = b.build(b.tuple([b.reduce(b.multiply(read(0), y), b.scalar(0.0, "f32"), (0,), add),
                         b.add(read(1), y)]))
    alone = m.clone()
    Fusion().run(alone)
    refused = [d for d in alone.fusion_decisions if "x - max(x)" in d.reason]
    fusions = [i for i in alone.entry.instructions if i.opcode == "fusion"]
    op = {"pred": "compare", "s32": "multiply", "f32": "convert"}[et]
    copies = sum(i.opcode == op and i.shape.element_type == et  # (fused, or a lone kernel)
                 for c in [alone.entry, *(f.fused_computation for f in fusions)]
                 for i in c.instructions)
    assert (copies, bool(refused)) == ((1, True) if et == "f32" else (2, False)), alone
    rng = np.random.default_rng(4)
    args = (rng.integers(-50, 50, (8, 16)).astype(np.int32),
            rng.standard_normal((8, 16)).astype(np.float32))
    exe = cpu.compile(m)
    assert_same(exe(*args), evaluate(m, *args))


@pytest.mark.parametrize("fill", ["constant", "iota"])
def test_constant_fill_is_duplicated_into_every_consumer(fill):
    # (the broadcast feeds two reductions: a computed value would stay in memory, the
    # x - max(x) rule; a fill has no arithmetic, so every copy has the same bits)
    b = Builder("fill")
    s = Shape("f32", (8, 16))
    x, y = b.parameter(s), b.parameter(s)
    one = (b.broadcast(b.scalar(1.0, "f32"), (8, 16), ()) if fill == "constant"
           else b.iota(s, 1))
    add = Builder.scalar_computation("add", "f32")
    r1 = b.reduce(b.subtract(one, x), b.scalar(0.0, "f32"), (0,), add)
    r2 = b.reduce(b.add(one, y), b.scalar(0.0, "f32"), (0,), add)
    m = b.build(b.tuple([r1, r2]))
    rng = np.random.default_rng(2)
    exe = close(m, *(rng.standard_normal((8, 16)).astype(np.float32) for _ in range(2)))
    # (the iota's sums share it as an input: sibling fusion makes them one kernel)
    assert len(exe.kernel_names) == (2 if fill == "constant" else 1), exe.kernel_names
    entry = exe.as_text()[exe.as_text().index("ENTRY"):]
    assert "fusion()" not in entry


def test_expensive_producer_not_fused_below_broadcast():
    b = Builder("bcast")
    x = b.parameter(Shape("f32", (16,)))
    m = b.build(b.broadcast(b.exponential(x), (64, 16), (1,)))
    exe = close(m, np.linspace(0, 1, 16).astype(np.float32))
    assert len(exe.kernel_names) == 2
    assert any("broadcast" in d.reason for d in exe.module.fusion_decisions)


def test_should_fuse_direct():
    b = Builder("d")
    x = b.parameter(Shape("f32", (4,)))
    e = b.sine(x)
    u1, u2 = b.negate(e), b.abs_(e)
    b.build(b.tuple([u1, u2]))
    d = should_fuse(u1, e, {u1})
    assert not d.ok and "expensive sine" in d.reason
    assert should_fuse(u1, e, {u1, u2}).ok
    assert not should_fuse(u1, x, {u1}).ok  # parameters are not fusible


def test_fusion_pass_no_change_on_lone_ops():
    b = Builder("lone")
    x = b.parameter(Shape("f32", (4,)))
    m = b.build(b.negate(x))
    assert Fusion().run(m) is False


UNARY = ["negate", "abs", "sine", "cosine", "exponential", "tanh", "floor", "logistic",
         "log-plus-one", "exponential-minus-one"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
step = st.tuples(st.sampled_from(["u", "b", "c", "s", "t"]), st.integers(0, 1000),
                 st.integers(0, 1000), st.integers(0, 1000))


def _random_graph(steps, et):
    b = Builder("rand")
    shape = Shape(et, (3, 11))
    vals = [b.parameter(shape), b.parameter(shape)]
    for kind, i, j, k in steps:
        x, y = vals[i % len(vals)], vals[j % len(vals)]
        if kind == "u":
            vals.append(b.unary(UNARY[k % len(UNARY)], x))
        elif kind == "b":
            vals.append(b.binary(BINARY[k % len(BINARY)], x, y))
        elif kind == "c":
            c = b.broadcast(b.scalar([0.5, -2.0, 3.0][k % 3], et), (3, 11), ())
            vals.append(b.binary(BINARY[k % len(BINARY)], x, c))
        elif kind == "t":
            vals.append(b.reverse(x, (1,)))
        else:
            vals.append(b.select(b.compare(x, y, "LT"), x, y))
    return b.build(b.tuple(vals[-2:]))


@settings(max_examples=15, deadline=None)
@given(st.lists(step, min_size=1, max_size=10), st.sampled_from(["f32", "f64"]),
       st.integers(0, 2**31))
def test_random_elementwise_graphs(steps, et, seed):
    m = _random_graph(steps, et)
    rng = np.random.default_rng(seed)
    dt = Shape(et, ()).dtype
    args = [(rng.standard_normal((3, 11)) * 3).astype(dt) for _ in range(2)]
    got = cpu.compile(m)(*args)
    want = evaluate(m, *args)
    # composed ops amplify last-place differences: compare with a relative tolerance
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4 if et == "f32" else 1e-10, atol=1e-6)
