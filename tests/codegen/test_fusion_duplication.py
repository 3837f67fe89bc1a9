"""Fusion bounds code duplication (FusionPolicy.duplication_limit, XLA's rule): stencil
steps chained through `jnp.roll` generate code linear in the number of steps (not 8^steps),
each refusal is reported with its reason, and the values match NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import unrolled_program

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.plan import kernel_key
from ember.explain.analysis import analyze
from ember.explain.refusals import crossing_edges
from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module
from ember.lowering import lower_jaxpr
from ember.passes.fusion import Fusion, FusionPolicy


def jacobi(steps):
    def f(p):
        for _ in range(steps):
            p = 0.25 * (jnp.roll(p, 1, 0) + jnp.roll(p, -1, 0) + jnp.roll(p, 1, 1)
                        + jnp.roll(p, -1, 1))
        return p
    return f


def jacobi_np(p, steps):
    for _ in range(steps):
        p = np.float32(0.25) * (np.roll(p, 1, 0) + np.roll(p, -1, 0) + np.roll(p, 1, 1)
                                + np.roll(p, -1, 1))
    return p


def _ir_size(exe) -> int:
    """Instructions in the kernels' unoptimized LLVM IR (what fusion duplication inflates)."""
    return sum(1 for line in exe.unoptimized_ir.splitlines()
               if line.startswith("  ") and " = " in line)


def test_roll_jacobi_code_grows_linearly_and_values_match(monkeypatch):
    # every kernel emitted on its own: steps with one body would otherwise share one LLVM
    # function (kernel_key.py), hiding how much code fusion generates per step
    monkeypatch.setattr(kernel_key, "SHARED_KINDS", frozenset())
    x = np.random.default_rng(0).standard_normal((17, 19)).astype(np.float32)
    sizes = {}
    for steps in (2, 4, 6, 8):
        m = lower_jaxpr(ember.make_jaxpr(jacobi(steps))(x)).module
        exe = cpu.compile(m, use_cache=False)
        np.testing.assert_allclose(exe(x), jacobi_np(x, steps), rtol=1e-5, atol=1e-6)
        assert len(exe.kernel_names) <= steps
        sizes[steps] = _ir_size(exe)
    # linear: every two steps add the same amount of code (unbounded fusion emits the first
    # step 8^(steps-1) times: 512x more code at 4 steps than at 1)
    d = [sizes[k + 2] - sizes[k] for k in (2, 4, 6)]
    assert max(d) <= 1.2 * min(d), sizes
    assert sizes[8] <= 5 * sizes[2], sizes


def test_roll_jacobi_under_jit_at_256():
    x = np.random.default_rng(1).random((256, 256)).astype(np.float32)
    got = ember.jit(jacobi(8))(x)
    np.testing.assert_allclose(np.asarray(got), jacobi_np(x, 8), rtol=1e-5, atol=1e-6)


def test_refusal_is_reported_by_explain():
    x = np.ones((9, 10), np.float32)
    m = lower_jaxpr(ember.make_jaxpr(jacobi(3))(x)).module
    # the emission limit alone (by default the recomputation limit cuts each step first:
    # a step read at 8 indices repeats ~140 operations per element; test_fusion_reuse.py)
    Fusion(FusionPolicy(recompute_limit=float("inf"))).run(m)
    reasons = [d.reason for d in m.fusion_decisions]
    assert any("would be emitted 64 times" in r and "limit of 15" in r for r in reasons), \
        reasons
    edges = crossing_edges(analyze(jacobi(3), x))
    assert edges and all("reused operand elements" in e.reason for e in edges), edges


def test_unrolled_sin_cos_values_and_linear_kernels():
    x = np.random.default_rng(2).random(1000).astype(np.float32)
    steps = 12  # (the map is chaotic: more f32 steps amplify rounding past any tolerance)
    m = lower_jaxpr(ember.make_jaxpr(unrolled_program(steps))(x)).module
    exe = cpu.compile(m)
    got_x, got_s = exe(x)
    want_x, want_s = x, np.float32(0)
    for _ in range(steps):
        want_x = np.sin(want_x) + np.cos(want_x[::-1])
        want_s += want_x.sum()
    np.testing.assert_allclose(got_x, want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_s, want_s, rtol=1e-4)
    assert len(exe.kernel_names) <= 2 * steps + 1


# %y is read by the two slices of %sum (two indices) and, elementwise, by %sq twice
# (one index, one emission): 3 emissions
SHIFTED = """HloModule shifted
ENTRY %main (x: f32[10]) -> f32[9] {
  %x = f32[10] parameter(0)
  %two = f32[] constant(2)
  %b = f32[10] broadcast(%two), dimensions={}
  %y = f32[10] multiply(%x, %b)
  %sq = f32[10] multiply(%y, %y)
  %lo = f32[9] slice(%sq), slice={[0:9]}
  %hi = f32[9] slice(%sq), slice={[1:10]}
  %lo2 = f32[9] slice(%y), slice={[0:9]}
  %s = f32[9] add(%lo, %hi)
  ROOT %sum = f32[9] add(%s, %lo2)
}
"""


@pytest.mark.parametrize("limit,kernels", [(15, 1), (3, 1), (2, 2), (1, 2)])
def test_duplication_limit_counts_distinct_indices(limit, kernels):
    m = parse_module(SHIFTED)
    x = np.arange(10, dtype=np.float32)
    want = evaluate(m, x)
    Fusion(FusionPolicy(duplication_limit=limit)).run(m)
    fusions = [i for i in m.entry.instructions if i.opcode == "fusion"]
    assert len(fusions) == kernels
    assert np.array_equal(evaluate(m, x), want)
    refused = {d.producer for d in m.fusion_decisions if "would be emitted" in d.reason}
    # %sq is read at two indices (2 emissions), %y at three (the diamond through %sq
    # shares its index); once %sq is a kernel of its own, %y is read once by each kernel
    assert refused == {1: {"sq"}, 2: {"y"}, 3: set(), 15: set()}[limit]


def test_duplication_limit_must_be_positive():
    with pytest.raises(ValueError, match="duplication_limit must be at least 1"):
        FusionPolicy(duplication_limit=0)


def test_fusion_pass_walks_the_graph_a_fixed_number_of_times(monkeypatch):
    """The pass is linear in the program: graph-wide walks (post orders, the module's
    computation list, row fusion's walk down to a reduce) do not repeat per fused group."""
    from ember.hlo.ir import Computation, Module
    from ember.passes import row_fusion

    calls = {"post_order": 0, "computations": 0, "row_walk": 0}
    post_order, computations = Computation.post_order, Module.computations.fget
    walk = row_fusion._reduced_row_shape

    def counting(key, fn):
        def wrapped(*args):
            # (walks of a new fused computation cost its own size: not counted)
            if not getattr(args[0], "is_fusion_computation", False):
                calls[key] += 1
            return fn(*args)
        return wrapped

    monkeypatch.setattr(Computation, "post_order", counting("post_order", post_order))
    monkeypatch.setattr(Module, "computations", property(counting("computations",
                                                                  computations)))
    monkeypatch.setattr(row_fusion, "_reduced_row_shape", counting("row_walk", walk))
    x = np.ones(100, np.float32)
    seen = []
    for steps in (10, 40):
        m = lower_jaxpr(ember.make_jaxpr(unrolled_program(steps))(x)).module
        for k in calls:
            calls[k] = 0
        Fusion().run(m)
        groups = sum(1 for i in m.entry.instructions if i.opcode == "fusion")
        assert groups >= 2 * steps
        seen.append(dict(calls))
    assert seen[0] == seen[1], seen
