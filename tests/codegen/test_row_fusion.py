"""Row fusion (softmax, layernorm as users write them) and sibling multi-output fusion:
kernel counts, the exp computed once, refusals, and results against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.lowering import lower_jaxpr


def softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def layernorm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.var(x, axis=-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def _module(f, *args):
    return lower_jaxpr(ember.make_jaxpr(f)(*args)).module


def _compare(m, *args, rtol=2e-6, atol=1e-6):
    exe = cpu.compile(m)
    got, want = exe(*args), evaluate(m, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return exe


def _rand(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(np.float32)


def test_softmax_is_one_kernel_with_exp_computed_once():
    x = _rand(4096, 1024)
    x[0, :3] = [80.0, -80.0, 0.0]  # large spread: exp(x - max) must not overflow
    exe = _compare(_module(softmax, x), x)
    assert exe.kernel_names == ["fusion"]
    assert "kind=kInput" in exe.as_text()
    # one exp call site in the kernel (kept in a row scratch, not recomputed per phase)
    assert exe.unoptimized_ir.count('call float @"ember.exp.f32"(') == 1
    assert "alloca float, i64 1024" in exe.unoptimized_ir


def test_layernorm_is_one_kernel():
    x, g, b = _rand(4096, 1024), _rand(1024, seed=1), _rand(1024, seed=2)
    exe = _compare(_module(layernorm, x, g, b), x, g, b, rtol=1e-4, atol=1e-5)
    assert exe.kernel_names == ["fusion"]


@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 17), (1, 5), (3, 2)], ids=str)
def test_row_fusion_odd_shapes(shape):
    x = _rand(*shape, seed=3)
    exe = _compare(_module(softmax, x), x)
    assert len(exe.kernel_names) == 1
    g = _rand(shape[-1], seed=4)
    _compare(_module(layernorm, x, g, g), x, g, g, rtol=1e-4, atol=1e-5)


def test_intermediate_used_outside_is_not_duplicated():
    def f(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True), e

    x = _rand(16, 64)
    exe = _compare(_module(f, x), x)
    reasons = [str(d) for d in exe.module.fusion_decisions]
    assert any("used outside the row fusion" in r for r in reasons), reasons
    assert exe.as_text().count("exponential(") == 1


def test_row_too_large_for_cache_is_refused():
    x = _rand(2, 1 << 17)  # a 512 KB row
    exe = _compare(_module(softmax, x), x)
    assert len(exe.kernel_names) > 1
    assert any("does not fit" in str(d) for d in exe.module.fusion_decisions)


def _siblings(shape, axes, ops):
    b = Builder("siblings")
    x = b.parameter(Shape("f32", shape))
    outs = []
    for op, square in ops:
        v = b.multiply(x, x) if square else x
        init = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf}[op]
        outs.append(b.reduce(v, b.scalar(init, "f32"), axes,
                             Builder.scalar_computation(op, "f32")))
    return b.build(b.tuple(outs))


@pytest.mark.parametrize("shape,axes", [((1000,), (0,)), ((64, 33), (1,)), ((64, 33), (0,))],
                         ids=str)
def test_sibling_reductions_share_one_pass(shape, axes):
    x = _rand(*shape, seed=5)
    exe = _compare(_siblings(shape, axes, [("add", False), ("add", True)]), x, rtol=1e-5)
    assert len(exe.kernel_names) == 1
    exe = _compare(_siblings(shape, axes, [("maximum", False), ("minimum", False)]), x)
    assert len(exe.kernel_names) == 1
    assert "get-tuple-element" in exe.as_text()


def test_dependent_reductions_are_not_siblings():
    b = Builder("dependent")
    x = b.parameter(Shape("f32", (100,)))
    add = Builder.scalar_computation("add", "f32")
    s = b.reduce(x, b.scalar(0.0, "f32"), (0,), add)
    d = b.subtract(x, b.broadcast(s, (100,), ()))
    s2 = b.reduce(b.multiply(d, d), b.scalar(0.0, "f32"), (0,), add)
    m = b.build(b.tuple([s, s2]))
    x0 = _rand(100, seed=6)
    _compare(m, x0, rtol=1e-5)


# -- one value per row: dependent reductions whose result is a row value ------------------

def logsumexp(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    return jnp.log(jnp.sum(jnp.exp(x - m), axis=-1)) + m[..., 0]


def cross_entropy(x, y):
    m = jnp.max(x, axis=-1, keepdims=True)
    s = x - m
    return -jnp.sum(y * (s - jnp.log(jnp.sum(jnp.exp(s), axis=-1, keepdims=True))), axis=-1)


def row_var(x):
    return jnp.var(x, axis=-1)


PER_ROW = {"logsumexp": (logsumexp, 1), "cross_entropy": (cross_entropy, 2),
           "var": (row_var, 1), "std keepdims": (lambda x: jnp.std(x, axis=-1, keepdims=True), 1)}


@pytest.mark.parametrize("shape", [(4096, 1024), (7, 33), (2, 3, 17), (1, 2)], ids=str)
@pytest.mark.parametrize("name", list(PER_ROW))
def test_per_row_results_of_dependent_reductions_are_one_row_kernel(name, shape):
    """A variance, logsumexp or cross-entropy over the last axis: one kernel that reads
    each row once (no full-shape temporary of the squared deviations or exp), storing one
    value per row."""
    f, arity = PER_ROW[name]
    args = [_rand(*shape, seed=7)]
    if arity == 2:  # labels: probabilities (terms of one sign, as in a real loss)
        args.append(np.random.default_rng(8).random(shape).astype(np.float32))
    exe = _compare(_module(f, *args), *args, rtol=1e-5, atol=1e-5)
    assert exe.kernel_names == ["fusion"], exe.as_text()
    entry = exe.as_text().split("ENTRY")[1]
    assert "kind=kInput" in entry
    assert f"f32[{','.join(map(str, shape))}]" not in entry.split("ROOT")[1].split("fusion(")[0]
    assert "row.loop" in exe.unoptimized_ir  # the row kernel, not a plain reduction


def test_per_row_rows_split_across_threads_give_the_same_bits():
    x = _rand(4096, 1024, seed=11)
    f = ember.jit(row_var)
    before = cpu.get_num_threads()
    try:
        outs = []
        for t in (1, 2, 3):
            cpu.set_num_threads(t)
            outs.append(np.asarray(f(x)))
    finally:
        cpu.set_num_threads(before)
    assert all(np.array_equal(o, outs[0]) for o in outs[1:])


def test_independent_reductions_of_a_row_stay_plain_reductions():
    """One reduction, or several that need none of the others, is one pass already: no row
    kernel for those (sibling fusion or a single reduce)."""
    x = _rand(64, 33, seed=12)
    exe = _compare(_module(lambda v: jnp.sum(v * v, axis=-1), x), x, rtol=1e-5)
    assert "row.loop" not in exe.unoptimized_ir
    exe = _compare(_module(lambda v: jnp.max(v, axis=-1) - jnp.min(v, axis=-1), x), x)
    assert "row.loop" not in exe.unoptimized_ir


def _random_per_row_program(rng: np.random.Generator):
    """f(x, y) -> one value per row: a first reduction of x, broadcast back and mixed with
    x and y by random elementwise ops, reduced again, then a random row-value tail."""
    first = rng.choice(["max", "min", "sum", "mean"])
    second = rng.choice(["max", "min", "sum", "mean"])
    mix = rng.choice(["sub", "mul", "sub_sq", "exp_sub", "abs_sub", "y_mul"])
    tail = rng.choice(["none", "log_abs", "add_first", "sqrt_abs", "div_first"])
    keep = bool(rng.integers(2))

    def red(v, how, keepdims=False):
        return getattr(jnp, how)(v, axis=-1, keepdims=keepdims)

    def f(x, y):
        r = red(x, first, keepdims=True)
        d = {"sub": lambda: x - r, "mul": lambda: x * r, "sub_sq": lambda: (x - r) ** 2,
             "exp_sub": lambda: jnp.exp(x - r) if first == "max" else jnp.tanh(x - r),
             "abs_sub": lambda: jnp.abs(x - r), "y_mul": lambda: y * (x - r)}[mix]()
        s = red(d, second, keepdims=keep)
        r1 = r if keep else r[..., 0]
        return {"none": lambda: s, "log_abs": lambda: jnp.log(jnp.abs(s) + 1),
                "add_first": lambda: s + r1, "sqrt_abs": lambda: jnp.sqrt(jnp.abs(s)),
                "div_first": lambda: s / (jnp.abs(r1) + 1)}[tail]()

    return f, f"{first}/{mix}/{second}/{tail}/keep={keep}"


@pytest.mark.parametrize("seed", range(12))
def test_random_per_row_programs_match_the_interpreter(seed):
    rng = np.random.default_rng(100 + seed)
    shape = [(33, 17), (4, 5, 64), (2, 1000), (9, 2)][seed % 4]
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    y = rng.random(shape).astype(np.float32)
    f, what = _random_per_row_program(rng)
    exe = _compare(_module(f, x, y), x, y, rtol=2e-5, atol=2e-5)
    assert len(exe.kernel_names) == 1, (what, exe.as_text())


def test_only_what_row_fusion_builds_runs_as_a_per_row_kernel():
    """A reduce-rooted fusion whose inner reduction is over another axis (not something
    row_fusion.py builds: a hand-written module) is not taken for a row kernel."""
    from ember.backends.cpu.emit import rows
    from ember.hlo import parse_module

    m = parse_module("""
HloModule hand

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%fused (p: f32[6,5]) -> f32[6] {
  %p = f32[6,5] parameter(0)
  %zero = f32[] constant(0)
  %cols = f32[5] reduce(%p, %zero), dimensions={0}, to_apply=%add
  %bc = f32[6,5] broadcast(%cols), dimensions={1}
  %d = f32[6,5] subtract(%p, %bc)
  %sq = f32[6,5] multiply(%d, %d)
  ROOT %r = f32[6] reduce(%sq, %zero), dimensions={1}, to_apply=%add
}

ENTRY %main (x: f32[6,5]) -> f32[6] {
  %x = f32[6,5] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
}
""")
    fused = m.entry.root.fused_computation
    assert not rows.is_row_fusion(fused)
    x = _rand(5, 7, seed=13)
    var = cpu.compile(_module(row_var, x)).module.entry.root
    assert var.opcode == "fusion" and rows.is_row_fusion(var.fused_computation)
