"""Compile effort: small elementwise modules take light LLVM loop passes (no interleaving,
unrolling or epilogue vectorization), still vectorized at the host's widest width and
still exact; large, looping or reducing modules keep the full ones; the process-wide
epilogue option is restored after a light run."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.jit.compile_effort import (
    FULL,
    LIGHT_MAX_ELEMENTS,
    light_pipeline,
    loop_options,
)
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.lowering import lower_jaxpr


def _fusion_example(n: int, dtype: str = "f32"):
    b = Builder("fusion_example")
    s = Shape(dtype, (n,))
    x, a, c = b.parameter(s), b.parameter(s), b.parameter(s)
    return b.build(b.add(b.multiply(a, b.sine(x)), c))


def _module(f, *args):
    return lower_jaxpr(ember.make_jaxpr(f)(*args), "f").module


def _fused(m):
    """`m` after the CPU pass pipeline: what the compiler decides on."""
    cpu.pipeline().run(m)
    return m


def _light_runs() -> int:
    return cpu.cache_stats()["light_runs"]


def test_the_decision_follows_the_work():
    assert light_pipeline(_fused(_fusion_example(1000)))
    assert light_pipeline(_fused(_fusion_example(LIGHT_MAX_ELEMENTS)))
    assert not light_pipeline(_fused(_fusion_example(LIGHT_MAX_ELEMENTS + 1)))
    assert loop_options(_fused(_fusion_example(1000))) == {
        "interleave": False, "unroll": False, "epilogue": False}
    assert loop_options(_fused(_fusion_example(10_000))) == FULL


def test_reductions_and_products_keep_the_full_passes():
    """Their summation order follows the loop shape: small ones keep the full passes, so
    their results do not change with the module's size class."""
    x = np.ones((4, 100), np.float32)
    assert not light_pipeline(_fused(_module(lambda v: jnp.sum(v * v, axis=1), x)))
    b = Builder("small_dot")
    p, q = b.parameter(Shape("s32", (8, 8))), b.parameter(Shape("s32", (8, 8)))
    assert not light_pipeline(b.build(b.dot(p, q, (1,), (0,))))


def test_a_loop_is_never_light():
    x = np.ones(16, np.float32)
    m = _module(lambda v: lax.fori_loop(0, 1000, lambda i, c: c * 0.5 + 1.0, v), x)
    assert any(i.opcode == "while" for c in m.computations for i in c.instructions)
    assert not light_pipeline(m)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("n", [1, 7, 33, 1000, 2047])
def test_light_kernels_are_vector_code_and_match_numpy(n, dtype):
    m = _fusion_example(n, dtype)
    dt = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng(n)
    args = [(rng.standard_normal(n) * 10).astype(dt) for _ in range(3)]
    args[0][: min(n, 4)] = [np.inf, -0.0, 1e30, np.nan][: min(n, 4)]  # edges, and the
    before = _light_runs()  # precise rerun of huge arguments
    exe = cpu.compile(m, use_cache=False)
    assert _light_runs() == before + 1
    got, want = exe(*args), evaluate(m, *args)
    scale = np.abs(args[1]) + np.abs(args[2])
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.all(np.abs(got - want)[finite] <= 4 * np.spacing(scale[finite]))
    if n >= 33:  # (shorter loops may be fully unrolled into scalar code)
        asm = exe.assembly()
        assert "zmm" in asm or "ymm" in asm


def test_large_modules_keep_the_full_pipeline_and_its_epilogue_option():
    """The light pipeline switches LLVM's epilogue vectorization off for its own run only:
    a large kernel compiled after a light one gets its vector epilogue back."""
    n = 100_003  # a remainder after the interleaved vector loop: an epilogue loop runs it
    before = _light_runs()
    full = cpu.compile(_fusion_example(n), use_cache=False)
    light = cpu.compile(_fusion_example(1001), use_cache=False)
    again = cpu.compile(_fusion_example(n), use_cache=False)
    assert _light_runs() == before + 1
    assert "vec.epilog" in full.llvm_ir and "vec.epilog" in again.llvm_ir
    assert "vec.epilog" not in light.llvm_ir
    x = np.linspace(-50, 50, n).astype(np.float32)
    np.testing.assert_array_equal(full(x, x, x), again(x, x, x))
