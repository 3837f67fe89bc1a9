"""The cyclic collector does not run while jit traces and compiles (ember/gc_pause.py), runs
again afterwards, and stays off for a caller that had turned it off."""

from __future__ import annotations

import gc

import numpy as np

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.gc_pause import paused_gc


def _program(steps, seen=None):
    def f(x):
        if seen is not None:
            seen.append(("trace", gc.isenabled()))
        for _ in range(steps):
            x = jnp.sin(x) + jnp.cos(x[::-1])
        return x
    return f


def _recording(fn, stage, seen):
    def wrapper(*args, **kwargs):
        seen.append((stage, gc.isenabled()))
        return fn(*args, **kwargs)
    return wrapper


def test_collector_paused_while_tracing_lowering_and_compiling(monkeypatch):
    from ember import compiler
    from ember.backends.cpu.jit import llvm_target

    seen = []
    monkeypatch.setattr(compiler, "lower_jaxpr", _recording(compiler.lower_jaxpr, "lower", seen))
    monkeypatch.setattr(llvm_target, "optimize", _recording(llvm_target.optimize, "llvm", seen))
    x = np.linspace(0, 1, 64, dtype=np.float32)
    cpu.clear_cache()  # (so LLVM runs)
    assert gc.isenabled()
    got = ember.jit(_program(5, seen))(x)
    assert gc.isenabled()
    assert {stage for stage, _ in seen} == {"trace", "lower", "llvm"}
    assert not any(enabled for _, enabled in seen), seen
    np.testing.assert_allclose(np.asarray(got), np.asarray(_program(5)(x)), rtol=1e-5)


def test_a_disabled_collector_stays_disabled():
    x = np.linspace(0, 1, 16, dtype=np.float32)
    gc.disable()
    try:
        ember.jit(_program(3))(x)
        with paused_gc():
            with paused_gc():
                pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_pause_is_reentrant_and_resumes_after_an_error():
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause resumes nothing
    assert gc.isenabled()
    try:
        with paused_gc():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
