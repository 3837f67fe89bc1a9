"""Every backend implements the interface of ember/backends/__init__.py, and the compile
driver falls back to the interpreter on `Unsupported`."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import backends
from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module

MODULE = """HloModule axpy
ENTRY %main (x: f32[7], y: f32[7]) -> f32[7] {
  %x = f32[7] parameter(0)
  %y = f32[7] parameter(1)
  %two = f32[] constant(2)
  %b = f32[7] broadcast(%two), dimensions={}
  %m = f32[7] multiply(%b, %x)
  %s = f32[7] sine(%m)
  ROOT %r = f32[7] add(%s, %y)
}
"""


def _needs(name: str) -> None:
    """Skip (with the reason) a backend whose optional runtime or chip is not here."""
    if name.startswith("xla") or name == "tpu":
        pytest.importorskip("jaxlib", reason=f"the {name} backend needs jaxlib: "
                            "pip install 'ember[xla]'")
    if name == "tpu" and not _has_tpu():
        pytest.skip("the tpu backend needs a TPU; jaxlib found none here "
                    "(tests/backends/test_tpu.py checks what runs without one)")


def _has_tpu() -> bool:
    if importlib.util.find_spec("jaxlib") is None:
        return False
    tpu = backends.get("tpu")
    try:
        tpu._platform()
    except tpu.NoTpu:
        return False
    return True


@pytest.mark.parametrize("name", backends.NAMES)
def test_backend_implements_the_interface(name):
    _needs(name)
    backend = backends.get(name)
    assert backend.NAME == name
    for attr in ("pipeline", "optimize", "compile", "to_device", "to_host"):
        assert callable(getattr(backend, attr)), attr
    module = parse_module(MODULE)
    before = module.clone()
    optimized = backend.optimize(module, unsafe_math=False)
    assert module.entry.root.opcode == before.entry.root.opcode  # not modified
    exe = backend.compile(module, unsafe_math=False, use_cache=False, donated=())
    x = np.linspace(-1, 1, 7).astype(np.float32)
    y = np.arange(7, dtype=np.float32)
    got = backend.to_host(exe(backend.to_device(x), backend.to_device(y)))
    np.testing.assert_allclose(got, evaluate(before, x, y), rtol=1e-6)
    assert exe.module is not None
    kernels = exe.kernels()
    assert isinstance(kernels, list)
    assert optimized.entry.root.shape.dimensions == before.entry.root.shape.dimensions


def test_cpu_reports_its_kernels():
    exe = backends.get("cpu").compile(parse_module(MODULE), use_cache=False)
    (kernel,) = exe.kernels()
    assert kernel.kind == "kLoop" and "define" in kernel.llvm_ir
    assert kernel.cost["transcendentals"] == 7


def test_unknown_backend_is_named():
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        backends.get("gpu")


def test_an_unsupported_module_runs_on_the_interpreter(monkeypatch):
    """A custom call the CPU backend has no kernel for: cpu.compile raises Unsupported, and
    the driver runs the program on the interpreter, with the same values."""
    from ember.hlo.evaluator.custom_calls import CUSTOM_CALLS, register_custom_call

    cpu = backends.get("cpu")
    module = parse_module(MODULE.replace(
        "ROOT %r = f32[7] add(%s, %y)",
        '%a = f32[7] add(%s, %y)\n  ROOT %r = f32[7] custom-call(%a), '
        'custom_call_target="test.halve"'))
    with pytest.raises(backends.Unsupported):
        cpu.compile(module)
    monkeypatch.setitem(CUSTOM_CALLS, "test.halve", None)
    register_custom_call("test.halve", lambda x, shape, backend_config=None: x / 2)
    exe = backends.get("interpreter").compile(module)
    x = np.ones(7, np.float32)
    np.testing.assert_allclose(exe(x, x), (np.sin(2 * x) + x) / 2, rtol=1e-6)


def test_jit_runs_on_the_chosen_backend(monkeypatch):
    x = np.linspace(0, 1, 9).astype(np.float32)
    for name in backends.NAMES:
        if name.startswith("xla") and importlib.util.find_spec("jaxlib") is None:
            continue  # (test_backend_implements_the_interface reports the skip)
        if name == "tpu" and not _has_tpu():
            continue  # (likewise)
        monkeypatch.setenv("EMBER_BACKEND", name)
        compiled = ember.jit(lambda v: jnp.sin(v) * 2 + 1).lower(x).compile()
        assert compiled._compiled.backend == name
        np.testing.assert_allclose(np.asarray(compiled(x)), np.sin(x) * 2 + 1, rtol=1e-6)


def test_jit_backend_chooses_the_backend_per_function(monkeypatch):
    """jit(backend=name) compiles that function on the named Ember backend whatever
    EMBER_BACKEND says, and the same function jitted without it keeps the default; calls
    through the cache, the fast path and `lower().compile()` all honour it."""
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    x = np.linspace(0, 1, 9).astype(np.float32)

    def f(v):
        return jnp.sin(v) * 2 + 1

    on_interp = ember.jit(f, backend="interpreter")
    on_cpu = ember.jit(f)
    assert on_interp.lower(x).compile()._compiled.backend == "interpreter"
    assert on_interp.lower(x).compile().memory_analysis() is None  # (no buffer plan there)
    assert on_cpu.lower(x).compile()._compiled.backend == "cpu"
    for _ in range(3):  # first call, cached call, fast path
        np.testing.assert_allclose(np.asarray(on_interp(x)), np.sin(x) * 2 + 1, rtol=1e-6)
    assert on_interp.trace_count == 1
    # the decorator form keeps the keyword
    deco = ember.jit(backend="interpreter")(f)
    assert deco.lower(x).compile()._compiled.backend == "interpreter"
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    assert ember.jit(f, backend="cpu").lower(x).compile()._compiled.backend == "cpu"
