"""What keeps LLVM's time on the code we emit small, and that it leaves results unchanged.

- The precise rerun of fast sin/cos/tan is an out-of-line copy of the kernel, `optnone`
  and `cold` (row kernels: optimized like the kernel); huge lanes get the C library's
  value, every other lane the fast path's bits, NaN inputs come out as themselves.
- Row kernels keep their loops rolled (loop metadata) and their vectorizer's interleaving;
  a rerun in one thread's rows leaves the result independent of the thread count.
- A first compile imports only the emitters and math modules its kernels use.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import llvmlite.ir as ir
import numpy as np
import pytest
from codegen_util import assert_same

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu import mathlib
from ember.backends.cpu.emit import kernels
from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.mathlib import trig
from ember.codegen.irtypes import I1, I64, PTR, VOID
from ember.codegen.loops import NO_UNROLL, VECTOR_NO_UNROLL, for_range
from ember.explain.kernels import split_llvm_functions

_UINT = {np.float32: np.uint32, np.float64: np.uint64}


def _exe(f, *args):
    return ember.jit(f).lower(*args).compile()._compiled.executable


def _define_line(text: str, name: str) -> str:
    return next(line for line in text.splitlines()
                if line.startswith("define") and f'@"{name}"' in line)


def _fusion(x, a, b):
    return a * jnp.sin(x) + b


def test_precise_path_is_an_unoptimized_cold_copy():
    x = np.linspace(-3, 3, 1000).astype(np.float32)
    exe = _exe(_fusion, x, x, x)
    line = _define_line(exe.unoptimized_ir, "ember_fusion.precise")
    assert "optnone" in line and "cold" in line and "noinline" in line
    funcs = split_llvm_functions(exe.llvm_ir)
    kernel, copy = funcs["ember_fusion"], funcs["ember_fusion.precise"]
    assert "@ember_fusion.precise.slot" in kernel  # the guarded call (lazy_precise.py)
    assert "@sin(" not in kernel and "@sin(" in copy  # the C library only out of line


def _huge_inputs(dt, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(x without huge lanes, the same with some, their positions); a NaN with a payload
    and the sign bit set sits in both."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 40).astype(dt)
    x[n // 2] = np.array(0xFFC01234 if dt == np.float32 else 0xFFF8000000001234,
                         _UINT[dt]).view(dt)
    y = x.copy()
    huge = sorted({0, n - 1, n // 3})
    y[huge] = np.array([1e30, -3e35, 3e9][:len(huge)], dt)  # beyond 2^16 (f32), 2^28
    return x, y, huge


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
@pytest.mark.parametrize("n", [7, 33, 1000])
def test_precise_copy_keeps_every_other_lane(dt, op, n, request):
    if dt == np.float64:
        request.getfixturevalue("x64")
    x, y, huge = _huge_inputs(dt, n, n)
    f = ember.jit(getattr(jnp, op))
    fast = np.asarray(f(x))
    got = np.asarray(f(y))
    rest = np.setdiff1d(np.arange(n), huge)
    u = _UINT[dt]
    assert np.array_equal(got[rest].view(u), fast[rest].view(u))  # NaN payloads included
    libm = getattr(math, op)
    want = np.array([libm(float(v)) for v in y[huge]]).astype(dt)  # rounded once
    assert np.array_equal(got[huge].view(u), want.view(u))
    if op != "tan":  # sin and cos hand a NaN argument back as it came
        assert fast.view(u)[n // 2] == x.view(u)[n // 2]


def _sin_softmax(x):
    s = jnp.sin(x)  # kept in scratch by the max phase, read by the sum phase
    e = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def test_row_kernel_rerun_does_not_depend_on_thread_count():
    """Threads rerun only their own rows; the sum of exp, in a loop the precise math does
    not touch, must add in the same order in the kernel and its precise copy (an
    unoptimized copy adds sequentially: ~80% of the rows moved by an ulp)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 1024)).astype(np.float32) * 3
    x[200, 5] = 1e30  # a huge sin argument in one thread's rows only
    exe = _exe(_sin_softmax, x)
    if not exe.parallel_kernels:
        pytest.skip("no thread pool on this host")
    assert exe.kernel_names == ["fusion"]
    line = _define_line(exe.unoptimized_ir, "ember_fusion.precise")
    assert "optnone" not in line and "cold" in line  # optimized like the kernel itself
    before = cpu.get_num_threads()
    try:
        outs = []
        for t in (1, 2, 3):
            cpu.set_num_threads(t)
            outs.append(np.asarray(ember.jit(_sin_softmax)(x)))
    finally:
        cpu.set_num_threads(before)
    for got in outs[1:]:
        assert_same(got, outs[0], what="threads")
    s = np.sin(x.astype(np.float64))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(outs[0], e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


def _softmax(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(4, 1000), (3, 7), (5, 33)])
def test_row_loops_stay_rolled(shape):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    exe = _exe(_softmax, x)
    assert exe.kernel_names == ["fusion"]
    text = exe.unoptimized_ir
    # two phases and the epilogue: vectorized as LLVM likes, the loops it makes rolled;
    # the loop over rows rolled
    assert text.count("!llvm.loop") == 4
    assert '!"llvm.loop.vectorize.followup_all"' in text
    assert '!"llvm.loop.unroll.disable"' in text
    if shape == (4, 1000):  # fully unrolled, the kernel was 3,661 lines of optimized IR
        assert len(split_llvm_functions(exe.llvm_ir)["ember_fusion"].splitlines()) < 1000
    got = np.asarray(ember.jit(_softmax)(x))
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=2e-6, atol=1e-9)


def _two_loops(hints) -> str:
    m = ir.Module("loops")
    f = ir.Function(m, ir.FunctionType(VOID, [PTR]), name="k")
    b = ir.IRBuilder(f.append_basic_block("entry"))
    fty = ir.FloatType()
    for v in (1.0, 2.0):
        for_range(b, 1000, lambda i, v=v: b.store(
            ir.Constant(fty, v), b.gep(f.args[0], [i], source_etype=fty)), hints=hints)
    b.ret_void()
    return str(m)


@pytest.mark.parametrize("hints", [NO_UNROLL, VECTOR_NO_UNROLL])
def test_loop_hints_are_distinct_loop_ids_llvm_reads(hints):
    text = _two_loops(hints)
    ids = [line for line in text.splitlines() if "distinct !{" in line]
    assert len(ids) == 2 and ids[0] != ids[1]
    for line in ids:  # a loop ID names itself first
        name = line.split(" = ")[0]
        assert line.split("{")[1].strip().startswith(name + ",")
    def vector_stores(text: str) -> int:
        mod = llvm_target.parse_and_verify(text)
        llvm_target.optimize(mod)
        out = str(mod)
        return out.count("store <"), out

    hinted, out = vector_stores(text)
    assert "llvm.loop.unroll.disable" in out
    # rolled: a few stores per loop (its interleave count, an epilogue), where the plain
    # loops unroll into 1000 / (vector width x interleave count) copies
    plain, _ = vector_stores(_two_loops(()))
    assert hinted <= 20 and hinted < plain


def test_precise_copy_falls_back_inline_for_kernel_local_values():
    """A body reading a value computed in the kernel cannot move to another function."""
    m = ir.Module("fallback")
    f = ir.Function(m, ir.FunctionType(VOID, [PTR, I64]), name="k")
    b = ir.IRBuilder(f.append_basic_block("entry"))
    local = b.add(f.args[1], ir.Constant(I64, 1))  # kernel-local

    def body(gen) -> None:
        b.store(local, f.args[0])
        gen.flags.append(ir.Constant(I1, 1))
        gen.flush()

    kernels.with_precise_rerun(b, body, lambda precise: LoopElements(b, {}, precise))
    b.ret_void()
    text = str(m)
    assert ".precise" not in text
    assert text.count("store i64") == 2  # fast and precise, both inline
    llvm_target.parse_and_verify(text)


def test_pio2_pieces_table_matches_its_derivation():
    for bits in (32, 64):
        assert trig.PIO2_PIECES[bits] == trig.derive_pio2_pieces(bits)


def test_every_math_function_resolves():
    for spec in [v[1] for v in mathlib._FNS.values()] + list(mathlib._F32.values()) + [
            s for v in mathlib._REDUCED.values() for s in v[1:]]:
        assert callable(mathlib._resolve(spec)), spec


_FIRST_COMPILE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import ember, ember.numpy as jnp
    x = np.ones(1000, np.float32)
    ember.jit(lambda x, a, b: a * jnp.sin(x) + b)(x, x, x)
    names = sys.argv[1:]
    print(json.dumps({n: n in sys.modules for n in names}))
""")

_UNUSED = ["ember.backends.cpu.dot.emit", "ember.backends.cpu.dot.blas",
           "ember.backends.cpu.emit.sort", "ember.backends.cpu.emit.scatter",
           "ember.backends.cpu.emit.update_slice", "ember.backends.cpu.emit.callbacks",
           "ember.backends.cpu.mathlib.atrig", "ember.backends.cpu.mathlib.special",
           "ember.backends.cpu.mathlib.exp_log", "ember.backends.cpu.mathlib.lean_hyper"]


def test_first_compile_imports_only_what_its_kernels_use():
    env = {**os.environ, "EMBER_CACHE_DIR": "off"}
    r = subprocess.run([sys.executable, "-c", _FIRST_COMPILE, "ember.backends.cpu.emit.emitter",
                        "ember.backends.cpu.mathlib.trig", *_UNUSED], env=env,
                       capture_output=True, text=True, timeout=300, check=True)
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert loaded.pop("ember.backends.cpu.emit.emitter") and loaded.pop(
        "ember.backends.cpu.mathlib.trig")  # the compile did run
    assert not any(loaded.values()), [n for n, v in loaded.items() if v]
