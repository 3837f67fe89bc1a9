"""Kernels with the same body compile to one LLVM function (plan/kernel_key.py): an
unrolled loop's steps are generated and optimized once and called with each step's
buffers; kernels that differ in a shape, a layout, a constant, an opcode or in which of
their arguments are the same buffer keep functions of their own; values stay right
(serially, split among threads, from the disk cache) and the explain tool still shows
each kernel's code."""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_util import unrolled_numpy, unrolled_program

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.plan import kernel_key
from ember.explain.kernels import kernels as kernel_records
from ember.hlo.parser import parse_module


def _kernel_functions(exe) -> list[str]:
    """The kernel functions the unoptimized module defines (not the entry or its parts, the
    math helpers, the chunk workers or the precise copies)."""
    names = re.findall(r'^define [^@]*@"?([A-Za-z0-9_.]+)"?\(', exe.unoptimized_ir, re.M)
    return [n for n in names if n.startswith("ember_") and not n.startswith("ember_entry")
            and not n.endswith((".chunk", ".precise"))]


def _exe(f, *args):
    return ember.jit(f).lower(*args).compile()._compiled.executable


def test_unrolled_steps_share_functions_and_values_match():
    x = np.random.default_rng(0).random(1000).astype(np.float32)
    counts = {}
    for steps in (3, 9):
        exe = _exe(unrolled_program(steps), x)
        got_x, got_s = exe(x)
        want_x, want_s = unrolled_numpy(x, steps)
        np.testing.assert_allclose(got_x, want_x, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got_s, want_s, rtol=1e-4)
        funcs = _kernel_functions(exe)
        # every kernel is called, but only the distinct bodies are defined
        assert len(funcs) < len(exe.kernel_names)
        assert set(exe.shared_kernels) <= set(exe.kernel_names)
        assert len(exe.kernel_names) - len(exe.shared_kernels) == len(funcs)
        for name, first in exe.shared_kernels.items():
            assert first in exe.kernel_names and first not in exe.shared_kernels
            assert exe.kernel_names.index(first) < exe.kernel_names.index(name)
        counts[steps] = len(funcs)
    # the code does not grow with the steps: three times the steps, the same functions
    assert counts[9] == counts[3], counts


def test_sharing_off_defines_every_kernel(monkeypatch):
    x = np.random.default_rng(1).random(100).astype(np.float32)
    monkeypatch.setattr(kernel_key, "SHARED_KINDS", frozenset())
    m = ember.jit(unrolled_program(4)).lower(x).compiler_ir("hlo")
    exe = cpu.compile(m, use_cache=False)
    assert exe.shared_kernels == {}
    assert len(_kernel_functions(exe)) == len(exe.kernel_names)
    monkeypatch.undo()  # (kernels share again)
    shared = cpu.compile(m, use_cache=False)
    assert len(_kernel_functions(shared)) < len(shared.kernel_names)
    for a, b in zip(exe(x), shared(x)):
        np.testing.assert_array_equal(a, b)  # the same code, run from one function


# Four loop fusions of one computation: %a and %b share a body; %c reads one buffer for
# both parameters (another argument pattern); %d has another shape; %e another layout.
HLO = """HloModule shared
%body (p0: f32[6], p1: f32[6]) -> f32[6] {
  %p0 = f32[6] parameter(0)
  %p1 = f32[6] parameter(1)
  %s = f32[6] sine(%p0)
  ROOT %r = f32[6] multiply(%s, %p1)
}
%body2 (p0: f32[7], p1: f32[7]) -> f32[7] {
  %p0 = f32[7] parameter(0)
  %p1 = f32[7] parameter(1)
  %s = f32[7] sine(%p0)
  ROOT %r = f32[7] multiply(%s, %p1)
}
%body3 (p0: f32[2,3], p1: f32[2,3]) -> f32[2,3] {
  %p0 = f32[2,3]{0,1} parameter(0)
  %p1 = f32[2,3]{0,1} parameter(1)
  %s = f32[2,3]{0,1} sine(%p0)
  ROOT %r = f32[2,3]{0,1} multiply(%s, %p1)
}
%body4 (p0: f32[2,3], p1: f32[2,3]) -> f32[2,3] {
  %p0 = f32[2,3]{1,0} parameter(0)
  %p1 = f32[2,3]{1,0} parameter(1)
  %s = f32[2,3]{1,0} sine(%p0)
  ROOT %r = f32[2,3]{1,0} multiply(%s, %p1)
}
ENTRY %main (x: f32[6], y: f32[6], z: f32[7], w: f32[2,3]) -> OUT {
  %x = f32[6] parameter(0)
  %y = f32[6] parameter(1)
  %z = f32[7] parameter(2)
  %w = f32[2,3]{1,0} parameter(3)
  %a = f32[6] fusion(%x, %y), kind=kLoop, calls=%body
  %b = f32[6] fusion(%y, %a), kind=kLoop, calls=%body
  %c = f32[6] fusion(%b, %b), kind=kLoop, calls=%body
  %d = f32[7] fusion(%z, %z), kind=kLoop, calls=%body2
  %t = f32[2,3]{0,1} copy(%w)
  %e = f32[2,3]{0,1} fusion(%t, %t), kind=kLoop, calls=%body3
  %e2 = f32[2,3]{1,0} copy(%e)
  %f = f32[2,3]{1,0} fusion(%w, %w), kind=kLoop, calls=%body4
  ROOT %out = OUT tuple(%a, %b, %c, %d, %e2, %f)
}
""".replace("OUT", "(f32[6], f32[6], f32[6], f32[7], f32[2,3], f32[2,3])")


def test_only_identical_bodies_share():
    rng = np.random.default_rng(2)
    x, y = rng.random(6, np.float32), rng.random(6, np.float32)
    z, w = rng.random(7, np.float32), rng.random((2, 3), np.float32)
    exe = cpu.compile(parse_module(HLO), run_passes=False, use_cache=False)
    assert exe.shared_kernels == {"b": "a"}, exe.shared_kernels
    a = np.sin(x) * y
    b = np.sin(y) * a
    want = (a, b, np.sin(b) * b, np.sin(z) * z, np.sin(w) * w, np.sin(w) * w)
    for got, ref in zip(exe(x, y, z, w), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)


@pytest.mark.parametrize("c1,c2,shared", [(2.0, 2.0, True), (2.0, 3.0, False)])
def test_constants_are_part_of_the_body(c1, c2, shared):
    def f(x, y):
        return jnp.exp(x) * c1 + 1.0, jnp.exp(y) * c2 + 1.0

    x = np.linspace(-1, 1, 33, dtype=np.float32)
    y = x[::-1].copy()
    exe = _exe(f, x, y)
    assert bool(exe.shared_kernels) == shared, exe.shared_kernels
    got = exe(x, y)
    np.testing.assert_allclose(got[0], np.exp(x) * c1 + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(y) * c2 + 1, rtol=1e-6)


def test_other_opcodes_and_dtypes_do_not_share():
    def f(x, y, i):
        return jnp.sin(x) * 3.0, jnp.cos(y) * 3.0, jnp.sin(i.astype(jnp.float32)) * 3.0

    x = np.linspace(0, 1, 20, dtype=np.float32)
    i = np.arange(20, dtype=np.int32)
    exe = _exe(f, x, x + 1, i)
    assert exe.shared_kernels == {}
    got = exe(x, x + 1, i)
    np.testing.assert_allclose(got[0], np.sin(x) * 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.cos(x + 1) * 3, rtol=1e-6)
    np.testing.assert_allclose(got[2], np.sin(i.astype(np.float32)) * 3, rtol=1e-6)


def test_shared_reductions_and_rows():
    # each step: a row softmax (row kernel) and a column sum (reduce kernel)
    def f(x):
        outs = []
        for _ in range(3):
            x = ember.nn.softmax(x, axis=1) + 0.5
            outs.append(jnp.sum(x, axis=0))
        return x, outs

    x = np.random.default_rng(3).random((5, 37)).astype(np.float32)
    exe = _exe(f, x)
    assert len(exe.shared_kernels) >= 2, exe.shared_kernels
    got_x, *got_s = exe(x)
    want = x
    for k in range(3):
        e = np.exp(want - want.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True) + np.float32(0.5)
        np.testing.assert_allclose(got_s[k], want.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(got_x, want, rtol=1e-5)


def test_shared_split_kernels_under_threads():
    # large enough to be split among threads: the shared chunk worker runs every step
    x = np.random.default_rng(4).random(300_000).astype(np.float32)
    exe = _exe(unrolled_program(3), x)
    got_x, got_s = exe(x)
    want_x, want_s = unrolled_numpy(x, 3)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_s, want_s, rtol=1e-4)
    assert exe.shared_kernels
    assert set(exe.shared_kernels) & set(exe.parallel_kernels)
    for name, first in exe.shared_kernels.items():
        assert (name in exe.parallel_kernels) == (first in exe.parallel_kernels)


def test_explain_shows_a_shared_kernels_code():
    x = np.random.default_rng(5).random(64).astype(np.float32)
    exe = _exe(unrolled_program(3), x)
    records = {r.name: r for r in kernel_records(exe)}
    for name, first in exe.shared_kernels.items():
        assert records[name].llvm_ir and records[name].llvm_ir == records[first].llvm_ir


def test_disk_cache_keeps_the_sharing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(6).random(50).astype(np.float32)
    m = ember.jit(unrolled_program(4)).lower(x).compiler_ir("hlo")
    first = cpu.compile(m)
    cpu.clear_cache()
    again = cpu.compile(m)
    assert again.from_disk and again.shared_kernels == first.shared_kernels != {}
    for a, b in zip(first(x), again(x)):
        np.testing.assert_array_equal(a, b)
