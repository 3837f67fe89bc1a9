"""Multi-output loop kernels on the CPU (fusion_merge.py, kernels.py `emit_loop_kernel`):
Black-Scholes is one kernel writing call and put, outputs of several dtypes and a
transposed read share one loop, a loop body's kernels merge, and every result equals the
unfused program's (each op a kernel of its own: bit for bit) and the HLO evaluator's."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same

import ember
import ember.lax as lax
import ember.numpy as jnp
from ember.backends import cpu
from ember.explain.analysis import analyze
from ember.explain.refusals import format_report
from ember.hlo.evaluator import evaluate


def black_scholes(s, k, t, r, v):
    sqrt_t = jnp.sqrt(t)
    d1 = (jnp.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    inv_sqrt2 = 1 / np.sqrt(2.0)

    def cdf(x):
        return 0.5 * (1.0 + lax.erf(x * inv_sqrt2))

    disc = k * jnp.exp(-r * t)
    call = s * cdf(d1) - disc * cdf(d2)
    put = disc * cdf(-d2) - s * cdf(-d1)
    return call, put


def black_scholes_np(s, k, t, r, v):
    from scipy.special import erf

    s, k, t = (a.astype(np.float64) for a in (s, k, t))
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)

    def cdf(x):
        return 0.5 * (1.0 + erf(x / np.sqrt(2.0)))

    disc = k * np.exp(-r * t)
    return s * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - s * cdf(-d1)


def _options(n: int, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.uniform(5, 150, n).astype(dtype)
    k = rng.uniform(5, 150, n).astype(dtype)
    t = rng.uniform(0.05, 3, n).astype(dtype)
    return s, k, t, dtype(0.03), dtype(0.25)


def _module(f, *args):
    return ember.jit(f).lower(*args)._lowered.module


def _equal_to_unfused(f, *args):
    """The CPU results of `f` with every pass (multi-output kernels) against the module
    run op by op (no passes: each op its own kernel): the same operations in the same
    order, so the same bits; returns the fused executable."""
    module = _module(f, *args)
    fused, plain = cpu.compile(module), cpu.compile(module, run_passes=False)
    got, want = fused(*args), plain(*args)
    for g, w in zip(got, want):
        assert_same(np.asarray(g), np.asarray(w))
    return fused, module


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 33, 1000, 100_003])
def test_black_scholes_is_one_kernel_with_two_outputs(dtype, n, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    args = _options(n, dtype, seed=n)
    exe, module = _equal_to_unfused(black_scholes, *args)
    assert len(exe.kernel_names) == 1, exe.kernel_names
    (kernel,) = [i for i in exe.module.entry.instructions if i.opcode == "fusion"]
    assert kernel.attrs["kind"] == "kLoop" and len(kernel.shape.tuple_shapes) == 2
    ops = [i.opcode for i in kernel.fused_computation.instructions]
    # each computed once; cdf(-d) shares cdf(d)'s erf (algsimp/odd.py)
    assert ops.count("erf") == 2 and ops.count("exponential") == 1
    call, put = exe(*args)
    want_call, want_put = black_scholes_np(*args)
    tol = dict(rtol=2e-4, atol=2e-4 * 150) if dtype == np.float32 else \
        dict(rtol=1e-10, atol=1e-10 * 150)
    np.testing.assert_allclose(call, want_call, **tol)
    np.testing.assert_allclose(put, want_put, **tol)
    if n <= 1000:  # the HLO evaluator: the unfused program's semantics in NumPy
        for g, w in zip((call, put), evaluate(module, *args)):
            np.testing.assert_allclose(g, w, **tol)


def test_black_scholes_through_jit_and_explain():
    args = _options(500, np.float32)
    compiled = ember.jit(black_scholes).lower(*args).compile()
    assert [k.kind for k in compiled.kernels()] == ["kLoop"]
    a = analyze(black_scholes, *args, compile=False)
    assert a.merges and all(m.kind in ("producer-consumer", "sibling") for m in a.merges)
    assert len(a.merges[-1].outputs) == 2
    report = format_report(a)
    assert "Multi-output fusions formed" in report
    assert "nothing crosses a kernel boundary" in report


def mixed(x, y):
    e = jnp.exp(x)
    return e + y.T, e > 1.5, (e * 3).astype(jnp.int32), jnp.sin(x) * e


@pytest.mark.parametrize("shape", [(1, 1), (7, 9), (33, 65), (300, 301)])
def test_outputs_of_several_dtypes_and_a_transposed_input(shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape[::-1]).astype(np.float32)
    exe, module = _equal_to_unfused(mixed, x, y)
    assert len(exe.kernel_names) == 1, exe.kernel_names
    got = exe(x, y)
    e = np.exp(x)
    np.testing.assert_allclose(got[0], e + y.T, rtol=1e-6, atol=1e-6)
    clear = np.abs(e - 1.5) > 1e-5  # (exp within an ulp or two of NumPy's)
    np.testing.assert_array_equal(got[1][clear], (e > 1.5)[clear])
    assert got[2].dtype == np.int32
    np.testing.assert_allclose(got[3], np.sin(x) * e, rtol=1e-6, atol=1e-6)


def decay(a, b):
    def body(_, carry):
        a, b = carry
        e = jnp.exp(-0.1 * a)
        return a * e, b * e + 1.0
    return lax.fori_loop(0, 5, body, (a, b))


def test_kernels_of_a_loop_body_merge(x64):
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 2, 257), rng.uniform(0, 2, 257)
    module = _module(decay, a, b)
    exe = cpu.compile(module)
    got = exe(a, b)
    want_a, want_b = a.copy(), b.copy()
    for _ in range(5):
        e = np.exp(-0.1 * want_a)
        want_a, want_b = want_a * e, want_b * e + 1.0
    np.testing.assert_allclose(got[0], want_a, rtol=1e-13)
    np.testing.assert_allclose(got[1], want_b, rtol=1e-13)
    for g, w in zip(got, cpu.compile(module, run_passes=False)(a, b)):
        assert_same(np.asarray(g), np.asarray(w))
    bodies = [c for c in exe.module.computations if not c.is_fusion_computation
              and c is not exe.module.entry]
    arrays = [i for c in bodies for i in c.instructions if i.opcode == "fusion"
              and i.shape.is_tuple and all(s.dimensions == (257,)
                                           for s in i.shape.tuple_shapes)]
    assert arrays, "the body's two carries should be one multi-output kernel"


def flat_and_transposed(x):
    return x * 2, x.T + 1


@pytest.mark.parametrize("shape", [(5, 5), (333, 333), (512, 512)])
def test_a_flat_root_beside_a_transposed_one_splits_across_threads(shape):
    # x * 2 alone would be one flat loop; x.T + 1 needs the nest: the kernel's threads
    # must split the loop it runs (a flat split of the nest wrote far out of bounds)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    compiled = ember.jit(flat_and_transposed).lower(x).compile()
    kernels = compiled.kernels()
    assert [k.kind for k in kernels] == ["kLoop"]
    if shape[0] >= 512:
        assert kernels[0].parallel
    a, b = compiled(x)
    np.testing.assert_array_equal(a, x * 2)
    np.testing.assert_array_equal(b, x.T + 1)
