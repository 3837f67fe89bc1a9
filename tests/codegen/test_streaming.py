"""Streaming (non-temporal) stores of large outputs (ember/backends/cpu/emit/streaming.py): every
element lands once, with the body's bits, whatever the range and the pointer's alignment;
large loop and row kernels use them, small ones do not."""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu.emit import streaming
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.runtime import threads
from ember.codegen.elemental import Buf
from ember.hlo.shape import Shape

pytestmark = pytest.mark.skipif(not streaming.enabled(Shape("f32", (1 << 28,))),
                                reason="streaming stores are emitted on x86-64 only")


def _fill_function(et: str):
    """void fill(ptr out, i64 begin, i64 end): out[i] = i * 0.5 + 1 by for_streaming."""
    m = ir.Module("t")
    ptr = ir.PointerType()
    fty = {"f32": ir.FloatType(), "f64": ir.DoubleType()}[et]
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [ptr, ir.IntType(64), ir.IntType(64)]),
                     name="fill")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def body(i, put):
        put(b.fadd(b.fmul(b.sitofp(i, fty), ir.Constant(fty, 0.5)), ir.Constant(fty, 1.0)))

    streaming.for_streaming(b, Buf(fn.args[0], Shape(et, (1,))), fn.args[1], fn.args[2], body)
    b.ret_void()
    mod = llvm_target.parse_and_verify(str(m))
    llvm_target.optimize(mod)
    asm = llvm_target.target().machine.emit_assembly(mod)
    engine, addr = llvm_target.load_object(llvm_target.emit_object(mod), "fill")
    call = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(addr)
    return engine, call, asm


@pytest.mark.parametrize("et,dtype", [("f32", np.float32), ("f64", np.float64)])
def test_every_element_of_any_range_at_any_alignment(et, dtype):
    engine, fill, asm = _fill_function(et)
    assert "vmovntp" in asm  # the tiles really stream
    size = np.dtype(dtype).itemsize
    raw = np.zeros(20_000 * size + 256, np.uint8)
    for shift in (0, size, 3 * size, 2 if size == 4 else 4):  # 2 or 4 bytes: element-misaligned
        for begin, end in [(0, 5000), (1, 4999), (7, 7), (13, 12), (5, 300), (3, 19_000)]:
            raw[:] = 0
            base = raw.ctypes.data + (-raw.ctypes.data) % 64 + shift
            fill(base, begin, end)
            off = base - raw.ctypes.data
            got = np.frombuffer(raw[off:off + 20_000 * size].tobytes(), dtype)
            want = np.zeros(20_000, dtype)
            idx = np.arange(begin, max(begin, end))
            want[idx] = idx.astype(dtype) * dtype(0.5) + dtype(1)
            np.testing.assert_array_equal(got, want, err_msg=f"shift {shift} [{begin}, {end})")
    del engine


def test_tile_fill_loop_stays_rolled():
    """The loop filling a tile is vectorized but not unrolled whole: its stores to the stack
    tile are one interleaved group (4 vectors here), not the tile's 16 vectors, so a
    math-heavy body keeps a few vectors' temporaries live, not 16 (the table erf spilled
    66 times per tile when it was unrolled)."""
    import re

    engine, _, asm = _fill_function("f32")
    body = asm[asm.index("fill:"):]
    tile_stores = re.findall(r"vmov\w+\s+%[xyz]mm\d+, -?\d*\(%rsp", body)
    assert body.count("vmovntp") == streaming.TILE_BYTES // streaming.LINE
    assert 0 < len(tile_stores) <= 8, len(tile_stores)
    del engine


def test_only_math_heavy_bodies_keep_the_fill_loop_rolled():
    """A body with a transcendental keeps the rolled fill loop (above); a cheap one, such
    as a layernorm's epilogue, lets LLVM unroll it (20% faster at 4096x1024 f32)."""
    from ember.hlo.parser import parse_module

    m = parse_module("""HloModule t
ENTRY %main (x: f32[8], y: f32[8]) -> f32[8] {
  %x = f32[8] parameter(0)
  %y = f32[8] parameter(1)
  %d = f32[8] divide(%x, %y)
  %s = f32[8] sqrt(%d)
  %e = f32[8] exponential(%x)
  ROOT %r = f32[8] add(%s, %e)
}
""")
    by = {i.name: i for i in m.entry.instructions}
    assert not streaming.math_heavy(by["s"])  # divide and sqrt: cheap enough to unroll
    assert streaming.math_heavy(by["e"]) and streaming.math_heavy(by["r"])


def _fill_loop_hinted(f, *args) -> bool:
    """Whether a streamed fill loop of f's kernel carries a loop hint (VECTOR_NO_UNROLL)."""
    import re

    from ember.backends import cpu
    from ember.lowering import lower_jaxpr

    ir_text = cpu.compile(lower_jaxpr(ember.make_jaxpr(f)(*args)).module).unoptimized_ir
    branches = re.findall(r'br i1 [^\n]*label %"[\w.]*nt\.fill\.loop"[^\n]*', ir_text)
    assert branches, "no streamed fill loop"
    return any("!llvm.loop" in line for line in branches)


def test_layernorm_epilogue_fill_loop_unrolls_and_sine_stays_rolled():
    x = np.zeros((2048, 1024), np.float32)  # 8 MB out: streamed
    g = np.ones(1024, np.float32)

    def layernorm(x, g):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        return (x - mu) / jnp.sqrt(jnp.var(x, axis=-1, keepdims=True) + 1e-5) * g

    assert not _fill_loop_hinted(layernorm, x, g)
    assert _fill_loop_hinted(lambda v: jnp.sin(v) * 2.0, x)


def _native(f, *args) -> str:
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("EMBER_DUMP_TO")
        os.environ["EMBER_DUMP_TO"] = d
        try:
            f(*args)
        finally:
            if old is None:
                del os.environ["EMBER_DUMP_TO"]
            else:
                os.environ["EMBER_DUMP_TO"] = old
        names = [n for n in os.listdir(d) if n.endswith(".asm.s")]
        return "".join(open(os.path.join(d, n)).read() for n in names)


def test_large_outputs_stream_and_small_ones_do_not():
    big = np.linspace(-3, 3, 3_000_001, dtype=np.float32)  # 12 MB out: streamed
    small = big[:1000]
    f = ember.jit(lambda x: x * 2.5 + jnp.sin(x))
    assert "vmovntps" in _native(f, big)
    assert "vmovntps" not in _native(ember.jit(lambda x: x * 2.5 + jnp.sin(x)), small)


@pytest.mark.parametrize("n", [3_000_001, 2_097_152 + 17])
def test_streamed_loop_kernel_matches_numpy_on_any_thread_count(n):
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    before = threads.get_num_threads()
    try:
        outs = []
        for t in (1, 3):
            threads.set_num_threads(t)
            outs.append(np.asarray(ember.jit(lambda v: v * 2.5 - 1.25)(x)))
    finally:
        threads.set_num_threads(before)
    np.testing.assert_array_equal(outs[0], x * np.float32(2.5) - np.float32(1.25))
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("cols", [1024, 1000, 333])
def test_streamed_row_kernel_matches_numpy(cols):
    rows = (9 << 20) // (4 * cols) + 3  # just over NT_MIN_BYTES of output
    x = np.random.default_rng(4).standard_normal((rows, cols)).astype(np.float32)

    def softmax(v, np_):
        e = np_.exp(v - np_.max(v, axis=-1, keepdims=True))
        return e / np_.sum(e, axis=-1, keepdims=True)

    f = ember.jit(lambda v: softmax(v, jnp))
    assert "vmovntps" in _native(f, x)
    got = np.asarray(f(x))
    want = softmax(x.astype(np.float64), np)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-9)
