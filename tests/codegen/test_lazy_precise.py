"""Kernels' precise copies (sin/cos/tan beyond the fast range) compile on first use.

A jitted executable's main module holds the kernel and a guarded call through
`@<kernel>.precise.slot`, not the copy (backends/cpu/lazy_precise.py): a first call on
ordinary arguments compiles one module and never the copy; the first huge argument
compiles the full module once and gives the C library's values for the huge lanes and the
fast path's bits for the others, from memory or from the disk cache, on one thread or
many. Inspection (`llvm_ir`, `assembly()`) shows the full module, copy included.
(No timing here: benchmarks/run.py --first-call-only measures the milliseconds.)
"""

from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.emit import lazy_precise
from ember.backends.cpu.jit import llvm_target
from ember.explain.kernels import split_llvm_functions

_UINT = {np.float32: np.uint32, np.float64: np.uint64}


def _exe(f, *args):
    return ember.jit(f).lower(*args).compile()._compiled.executable


def _with_huge(x: np.ndarray, where: list[int]) -> np.ndarray:
    y = x.copy()
    y[where] = np.array([1e30, -3e35, 3e9, 7e20][:len(where)], x.dtype)
    return y


PROGRAM = """
import json, math, sys, numpy as np, ember, ember.numpy as jnp
from ember.backends.cpu.runtime import fastcall
from ember.backends.cpu.jit import llvm_target
llvm_target.target()
fastcall.trampoline(build=True)  # (cached calls build it once: not counted below)

def runs():
    return sum(llvm_target.STATS[k] for k in ("optimize_runs", "codegen_runs"))

x = np.linspace(-3, 3, {n}).astype(np.float32)
f = ember.jit(lambda x, a, b: a * jnp.{op}(x) + b)
r0 = runs()
fast = np.asarray(f(x, x, x))
r1 = runs()
first = dict(llvm_target.PRECISE_STATS)
emitter_loaded = "ember.backends.cpu.emit.lazy_precise" in sys.modules
y = x.copy()
y[[0, {n} // 2, {n} - 1]] = np.array([1e30, -3e35, 3e9], np.float32)
got = np.asarray(f(y, x, x))
r2 = runs()
again = np.asarray(f(y, x, x))
r3 = runs()
print(json.dumps({{"first_runs": r1 - r0, "huge_runs": r2 - r1, "again_runs": r3 - r2,
                  "resolved_first": first["resolved"],
                  "resolved": llvm_target.PRECISE_STATS["resolved"],
                  "failed": llvm_target.PRECISE_STATS["failed"],
                  "emitter_loaded": emitter_loaded,
                  "fast": fast.tobytes().hex(), "got": got.tobytes().hex(),
                  "again": again.tobytes().hex()}}))
"""


def _run(cache: str, n: int = 1000, op: str = "sin") -> dict:
    env = dict(os.environ, EMBER_CACHE_DIR=cache, EMBER_ENABLE_CHECKS="0")
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(n=n, op=op)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _check_values(res: dict, n: int, op: str) -> None:
    x = np.linspace(-3, 3, n).astype(np.float32)
    fast = np.frombuffer(bytes.fromhex(res["fast"]), np.float32)
    got = np.frombuffer(bytes.fromhex(res["got"]), np.float32)
    huge = [0, n // 2, n - 1]
    rest = np.setdiff1d(np.arange(n), huge)
    # the lanes next to the huge ones keep the fast path's bits (a + b uses x, not y)
    assert np.array_equal(got[rest].view(np.uint32), fast[rest].view(np.uint32))
    y = _with_huge(x, huge)
    libm = getattr(math, op)
    want = (np.array([libm(float(v)) for v in y[huge]]).astype(np.float32) * x[huge]
            + x[huge])
    assert np.array_equal(got[huge], want)
    assert res["again"] == res["got"]


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
@pytest.mark.parametrize("n", [7, 1000])
def test_copy_compiles_on_first_huge_argument_only(op, n):
    res = _run("off", n, op)
    assert res["first_runs"] == 2  # one optimize + one codegen: the main module only
    assert res["resolved_first"] == 0
    assert res["huge_runs"] == 2 and res["resolved"] == 1  # the full module, once
    assert res["again_runs"] == 0 and res["failed"] == 0
    _check_values(res, n, op)


def test_copy_compiles_on_first_use_after_a_disk_hit(tmp_path):
    cold = _run(str(tmp_path))  # compiles, stores; its huge call builds the copy
    warm = _run(str(tmp_path))  # loads the object; the copy is built from the HLO
    assert warm["first_runs"] == 0 and warm["resolved_first"] == 0
    assert cold["emitter_loaded"] and not warm["emitter_loaded"]  # a hit only links
    assert warm["huge_runs"] == 2 and warm["resolved"] == 1
    assert warm["got"] == cold["got"] and warm["fast"] == cold["fast"]
    _check_values(warm, 1000, "sin")


def test_main_module_has_a_slot_not_the_copy():
    x = np.linspace(-3, 3, 100).astype(np.float32)
    from ember.backends.cpu import compiler

    exe = _exe(lambda v: jnp.sin(v) * 2, x)
    out = compiler._emit_and_load(exe.module, (), "lazy")
    text = out[-1]
    assert '@"ember_fusion.precise.slot" = global ptr null' in text
    assert 'define internal void @"ember_fusion.precise"' not in text
    assert "optnone" not in text and "@\"sin\"(" not in text.split("define internal")[0]
    # inspection shows the full module: the kernel, its stub and the copy beside it
    funcs = split_llvm_functions(exe.llvm_ir)
    assert "@ember_fusion.precise.slot" in funcs["ember_fusion"]
    assert "@sin(" in funcs["ember_fusion.precise"]
    assert "ember_fusion.precise" in exe.assembly()


def test_without_lazy_mode_the_copy_stays_in_the_module():
    """The emitter's default (eager kernels, profiling) keeps the in-module copy."""
    x = np.linspace(-3, 3, 100).astype(np.float32)
    from ember.backends.cpu import compiler

    exe = _exe(lambda v: jnp.cos(v) + 1, x)
    text = compiler._emit_and_load(exe.module, (), None)[-1]
    assert 'define internal void @"ember_fusion.precise"' in text
    assert ".slot" not in text and lazy_precise.SYMBOL not in text


def test_parallel_chunks_resolve_once_and_match_one_thread():
    """Chunks of a split kernel on several threads may all reach the null slot at once."""
    n = 1 << 20
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    y = _with_huge(x, [0, n // 3, n // 2, n - 1])
    f = ember.jit(lambda v: jnp.sin(v) * 3 + 1)  # a fresh function: a fresh executable
    if not _exe(lambda v: jnp.sin(v) * 3 + 1, y).parallel_kernels:
        pytest.skip("no thread pool on this host")
    before = cpu.get_num_threads()
    try:
        outs = []
        for t in (1, 2, 4):
            cpu.set_num_threads(t)
            outs.append(np.asarray(f(y)))
    finally:
        cpu.set_num_threads(before)
    for got in outs[1:]:
        assert np.array_equal(got.view(np.uint32), outs[0].view(np.uint32))
    want = np.sin(y.astype(np.float64)).astype(np.float32) * 3 + 1
    np.testing.assert_allclose(outs[0], want, rtol=2e-6, atol=2e-6)


def test_registry_forgets_dropped_executables():
    x = np.linspace(-3, 3, 50).astype(np.float32)
    exe = _exe(lambda v: jnp.sin(v) - 3, x)
    precise = exe._precise
    slots = list(precise.slots.values())
    assert all(llvm_target._PRECISE[a]() is precise for a in slots)
    del exe, precise
    cpu.clear_cache()  # (the compile cache held the executable)
    gc.collect()
    for a in slots:
        ref = llvm_target._PRECISE.get(a)
        assert ref is None or ref() is None


def test_unknown_slot_is_ignored():
    before = dict(lazy_precise.STATS)
    llvm_target.resolve_precise(0)  # nothing registered there: returns, the stub skips the call
    assert lazy_precise.STATS == before


def test_copies_that_fail_to_compile_make_calls_raise(monkeypatch):
    """A failed build (it never should: the same IR compiled once) must not hand out the
    fast path's results for arguments beyond its range: the call raises, on every path."""
    from ember.backends.cpu import compiler

    real = compiler._emit_and_load

    def failing(m, donated, precise):
        if precise == "full":
            raise llvm_target.CpuCompileError("injected failure")
        return real(m, donated, precise)

    monkeypatch.setattr(compiler, "_emit_and_load", failing)
    x = np.linspace(-3, 3, 64).astype(np.float32)
    f = ember.jit(lambda v: jnp.sin(v) * 5 - 2)  # an expression no other test compiles
    for _ in range(3):  # no argument beyond the fast range: no copy needed (fast path)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 5 - 2, atol=1e-5)
    before = lazy_precise.STATS["failed"]
    with pytest.raises(cpu.CpuCompileError, match="injected failure"):
        f(_with_huge(x, [5]))
    assert lazy_precise.STATS["failed"] == before + 1
    with pytest.raises(cpu.CpuCompileError, match="precise copies"):
        f(x)  # the executable stays unusable, on the jit's fast path too
    exe = _exe(lambda v: jnp.sin(v) * 5 - 2, x)
    with pytest.raises(cpu.CpuCompileError):
        exe(x)  # and called directly
    cpu.clear_cache()
