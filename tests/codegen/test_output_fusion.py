"""kOutput fusion: a dot and its elementwise epilogue (bias add, activation) as one kernel
that runs the epilogue on each block of the product; the pass's refusals and their
reasons; epilogue correctness on both routes (BLAS and loops), with dtype changes, the
precise-rerun path of fast sin, several work units and several thread counts."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same

from ember.backends import cpu
from ember.backends.cpu.dot import plan as dot_plan
from ember.backends.cpu.jit import llvm_target
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.passes.fusion import Fusion


def gelu_np(h):
    return 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * (h * h * h))))


@pytest.fixture
def cpu_backend(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


def _jit_cpu(f, *args):
    import ember

    c = ember.jit(f).lower(*args).compile()
    assert c._compiled.backend == "cpu"
    return c, c._compiled.executable


@pytest.mark.parametrize("shape", [(129, 65, 257), (3, 5, 7), (512, 64, 96)])
def test_gelu_dense_is_one_koutput_kernel(cpu_backend, shape):
    import ember.numpy as jnp

    m, k, n = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)

    def f(x, w, b):
        h = x @ w + b
        return 0.5 * h * (1.0 + jnp.tanh(0.7978845608 * (h + 0.044715 * (h * h * h))))

    comp, exe = _jit_cpu(f, x, w, b)
    text = comp.as_text()
    assert "kind=kOutput" in text
    assert exe.kernel_names == ["fusion"]
    ir_text = exe.unoptimized_ir
    library = "ember_blas_sgemm" in ir_text or "ember_gemm_sgemm_packed" in ir_text
    assert library == (m * n * k >= dot_plan.BLAS_MIN_MACS)
    got = np.asarray(comp(x, w, b))
    want = gelu_np(x.astype(np.float64) @ w + b)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_batched_relu_with_row_bias_f64(cpu_backend, x64, matmul_backend):
    import ember.numpy as jnp

    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 40, 50))
    w = rng.standard_normal((3, 50, 33))
    b = rng.standard_normal((40, 1))

    comp, exe = _jit_cpu(lambda x, w, b: jnp.maximum(jnp.einsum("bij,bjk->bik", x, w) + b,
                                                     0.0), x, w, b)
    assert "kind=kOutput" in comp.as_text()
    routine = "ember_gemm_dgemm_packed" if matmul_backend == "ember" else "ember_blas_dgemm"
    assert routine in exe.unoptimized_ir
    want = np.maximum(np.einsum("bij,bjk->bik", x, w) + b, 0.0)
    np.testing.assert_allclose(np.asarray(comp(x, w, b)), want, rtol=1e-12, atol=1e-12)


def _dense_module(et, m, k, n, epilogue, out_et=None):
    b = Builder("dense")
    x, w = b.parameter(Shape(et, (m, k))), b.parameter(Shape(et, (k, n)))
    bias = b.parameter(Shape(et, (n,)))
    d = b.dot(x, w, (1,), (0,))
    h = b.add(d, b.broadcast(bias, (m, n), (1,)))
    return b.build(epilogue(b, h)), (m, k, n)


def _args(et, m, k, n, seed=0, integer=False):
    rng = np.random.default_rng(seed)
    dt = Shape(et, ()).dtype
    if integer:
        return [rng.integers(-3, 4, s).astype(dt) for s in [(m, k), (k, n), (n,)]]
    return [rng.standard_normal(s).astype(dt) for s in [(m, k), (k, n), (n,)]]


@pytest.mark.parametrize("case", ["pred", "f16", "s8_to_f32", "s32"])
def test_epilogue_changing_the_element_size(case, matmul_backend):
    """The dot goes to a work buffer when the result's element size differs."""
    if case == "pred":
        m, _ = _dense_module("f32", 70, 60, 50, lambda b, h: b.compare(
            h, b.broadcast(b.scalar(0.0, "f32"), (70, 50), ()), "GT"))
        args = _args("f32", 70, 60, 50, integer=True)
    elif case == "f16":
        m, _ = _dense_module("f32", 70, 60, 50, lambda b, h: b.convert(b.tanh(h), "f16"))
        args = _args("f32", 70, 60, 50, integer=True)
    elif case == "s8_to_f32":
        m, _ = _dense_module("s8", 20, 30, 40, lambda b, h: b.convert(h, "f32"))
        args = _args("s8", 20, 30, 40, integer=True)
    else:
        m, _ = _dense_module("s32", 20, 30, 40, lambda b, h: b.multiply(h, h))
        args = _args("s32", 20, 30, 40, integer=True)
    exe = cpu.compile(m)
    assert exe.kernel_names == ["fusion"] and "kind=kOutput" in exe.as_text()
    p = dot_plan.plan(exe.module.entry.root)
    assert p.dot_temp == (case in ("pred", "f16", "s8_to_f32"))
    assert p.route == ("blas" if case in ("pred", "f16") else "loops")
    assert p.own == (matmul_backend == "ember" and p.route == "blas")
    # integer-valued inputs: every product is exact, so the result must be bit-exact
    assert_same(exe(*args), evaluate(m, *args), ulps=1 if case == "f16" else 0)


def test_fast_sine_rerun_recomputes_the_block(matmul_backend):
    """sin of huge products flags lanes beyond the fast reduction range: the unit runs again
    (BLAS call included: the epilogue overwrote the product in place) precisely."""
    m, (mm, k, n) = _dense_module("f32", 64, 32, 64, lambda b, h: b.sine(b.multiply(
        h, b.broadcast(b.scalar(1e25, "f32"), (64, 64), ()))))
    args = _args("f32", mm, k, n, integer=True)  # exact products: same h as the interpreter
    exe = cpu.compile(m)
    routine = "ember_gemm_sgemm_packed" if matmul_backend == "ember" else "ember_blas_sgemm"
    assert exe.unoptimized_ir.count(f"call void @\"{routine}\"") == 2  # fast + rerun
    assert_same(exe(*args), evaluate(m, *args), ulps=1)


def test_several_units_and_thread_counts(matmul_backend):
    m, (mm, k, n) = _dense_module("f32", 700, 300, 500, lambda b, h: b.tanh(h))
    args = _args("f32", mm, k, n, seed=3)
    saved = dot_plan.cpu_hint
    dot_plan.cpu_hint = lambda: 4
    try:
        exe = cpu.compile(m, use_cache=False)
    finally:
        dot_plan.cpu_hint = saved
    p = dot_plan.plan(exe.module.entry.root, cpus=4)
    assert p.units > 1
    assert exe.parallel_kernels == (["fusion"] if llvm_target.target().gomp else [])
    threads = cpu.get_num_threads()
    try:
        results = []
        for t in (1, 2, 3):
            cpu.set_num_threads(t)
            results.append(exe(*args))
    finally:
        cpu.set_num_threads(threads)
    for r in results[1:]:
        assert np.array_equal(r, results[0])
    x, w, bias = (a.astype(np.float64) for a in args)
    np.testing.assert_allclose(results[0], np.tanh(x @ w + bias), rtol=1e-4, atol=1e-4)


# -- the pass: what joins, what is refused and why --------------------------------------------


def _fuse(module):
    Fusion().run(module)
    return module


def _reasons(module):
    return [(d.producer, d.reason) for d in module.fusion_decisions]


def test_dot_with_an_outside_user_is_not_fused():
    b = Builder("outside")
    x, w = b.parameter(Shape("f32", (40, 50))), b.parameter(Shape("f32", (50, 60)))
    d = b.dot(x, w, (1,), (0,))
    m = _fuse(b.build(b.tuple([d, b.tanh(d)])))
    assert "kOutput" not in str([c.name for c in m.computations])
    assert not any(i.opcode == "fusion" and i.attrs["kind"] == "kOutput"
                   for i in m.entry.instructions)
    assert any(p == d.name and "not computed twice" in r for p, r in _reasons(m))


@pytest.mark.parametrize("consumer", ["transpose", "reduce", "broadcast"])
def test_non_elementwise_epilogues_are_refused(consumer):
    b = Builder("nonelementwise")
    x, w = b.parameter(Shape("f32", (40, 50))), b.parameter(Shape("f32", (50, 60)))
    d = b.dot(x, w, (1,), (0,))
    if consumer == "transpose":
        r = b.add(b.transpose(d, (1, 0)), b.parameter(Shape("f32", (60, 40))))
    elif consumer == "reduce":
        r = b.reduce(b.exponential(d), b.scalar(0.0, "f32"), (1,),
                     Builder.scalar_computation("add", "f32"))
    else:
        r = b.multiply(b.broadcast(d, (3, 40, 60), (1, 2)), b.parameter(Shape("f32",
                                                                          (3, 40, 60))))
    module = b.build(r)
    xv = np.random.default_rng(0).standard_normal((40, 50)).astype(np.float32)
    wv = np.random.default_rng(1).standard_normal((50, 60)).astype(np.float32)
    extra = [np.random.default_rng(2).standard_normal(p.shape.dimensions).astype(np.float32)
             for p in module.entry.parameters[2:]]
    want = evaluate(module, xv, wv, *extra)
    m = _fuse(module.clone())
    assert not any(i.attrs.get("kind") == "kOutput" for i in m.entry.instructions)
    assert any("other indices" in r for _, r in _reasons(m))
    exe = cpu.compile(module)
    np.testing.assert_allclose(exe(xv, wv, *extra), want, rtol=1e-4, atol=1e-3)


def test_dot_operands_stay_in_memory_and_one_dot_per_fusion():
    b = Builder("operands")
    x = b.parameter(Shape("f32", (40, 50)))
    w, v = b.parameter(Shape("f32", (50, 60))), b.parameter(Shape("f32", (50, 60)))
    e = b.exponential(x)
    # the later dot (x @ v) joins first; exp(x) @ w is refused, and so never reaches exp
    r = b.add(b.dot(x, v, (1,), (0,)), b.dot(e, w, (1,), (0,)))
    module = b.build(b.tanh(r))
    m = _fuse(module.clone())
    reasons = [r for _, r in _reasons(m)]
    assert any("holds one dot" in r for r in reasons)
    b1 = Builder("operand")
    x1, w1 = b1.parameter(Shape("f32", (40, 50))), b1.parameter(Shape("f32", (50, 60)))
    e1 = b1.exponential(x1)
    m1 = _fuse(b1.build(b1.tanh(b1.dot(e1, w1, (1,), (0,)))))
    assert (e1.name, "operand of a dot stays in memory (BLAS reads it)") in _reasons(m1)
    assert e1 in m1.entry.instructions  # computed by a kernel of its own
    kinds = [i.attrs.get("kind") for i in m.entry.instructions if i.opcode == "fusion"]
    assert kinds.count("kOutput") == 1
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(40, 50), (50, 60), (50, 60)]]
    exe = cpu.compile(module)
    np.testing.assert_allclose(exe(*args), evaluate(module, *args), rtol=1e-4, atol=1e-4)
