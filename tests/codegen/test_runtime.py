"""Runtime, cache and error handling of the CPU backend (which opcodes it compiles:
tests/unit/test_coverage.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ember.backends import cpu
from ember.backends.cpu.jit import llvm_target
from ember.hlo import Builder, Shape


def _module(name: str = "m", c: float = 1.0):
    b = Builder(name)
    x = b.parameter(Shape("f32", (5,)))
    return b.build(b.add(x, b.broadcast(b.scalar(c, "f32"), (5,), ())))


def test_same_module_compiles_once(monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")  # another test may have stored these
    cpu.clear_cache()
    before = cpu.cache_stats()["compiles"]
    e1 = cpu.compile(_module("a"))
    e2 = cpu.compile(_module("b"))  # another name, same canonical text
    e3 = cpu.compile(_module("a", c=2.0))  # another constant: another entry
    assert e1 is e2 and e3 is not e1
    assert cpu.cache_stats()["compiles"] == before + 2
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(e3(x), x + 2)


def test_cache_is_bounded(monkeypatch):
    from ember.backends.cpu import compiler

    monkeypatch.setattr(compiler, "CACHE_SIZE", 3)
    cpu.clear_cache()
    for k in range(5):
        cpu.compile(_module(c=float(k)))
    assert len(compiler._CACHE) == 3
    assert compiler.STATS["evictions"] >= 2


def test_unsupported_opcode_raises_for_the_dispatcher():
    b = Builder("unknown_target")
    x = b.parameter(Shape("f32", (5,)))
    m = b.build(b.custom_call("no_such_target", [x], Shape("f32", (5,))))
    with pytest.raises(cpu.UnsupportedOnCpu) as info:
        cpu.compile(m)
    assert info.value.opcodes == ("custom-call no_such_target",)


def test_invalid_llvm_ir_is_an_exception_not_a_crash():
    with pytest.raises(cpu.CpuCompileError):
        llvm_target.parse_and_verify("define void @f() { ret i32 0 }")


def test_bad_arguments_raise():
    exe = cpu.compile(_module())
    with pytest.raises(TypeError):
        exe(np.zeros(5, np.float64))
    with pytest.raises(TypeError):
        exe(np.zeros(4, np.float32))
    with pytest.raises(TypeError):
        exe()


def test_results_of_earlier_calls_are_not_overwritten():
    exe = cpu.compile(_module())
    r1 = exe(np.zeros(5, np.float32))
    r2 = exe(np.ones(5, np.float32))
    assert r1.tolist() == [1.0] * 5 and r2.tolist() == [2.0] * 5


def test_import_ember_does_not_import_llvmlite():
    code = ("import sys, ember, ember.backends.cpu; "
            "print('llvmlite' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- the cached-call path: FastRunner and the native trampoline (fastcall.py) -----------------

def _compiled_for(fun, *args):
    """The CompiledModule of `jit(fun)` at `args`, compiled for the CPU backend."""
    import os

    import ember

    prev = os.environ.get("EMBER_BACKEND")
    os.environ["EMBER_BACKEND"] = "cpu"
    try:
        compiled = ember.jit(fun).lower(*args).compile()._compiled
    finally:
        if prev is None:
            del os.environ["EMBER_BACKEND"]
        else:
            os.environ["EMBER_BACKEND"] = prev
    assert compiled.backend == "cpu"
    return compiled


def _runtime_cases():
    import ember.numpy as jnp

    x = (np.arange(4 * 33, dtype=np.float32).reshape(4, 33) - 60) / 7
    c = np.linspace(0, 1, 1000).astype(np.float32)
    return {
        "fused": (lambda x: jnp.exp(x - x.max(axis=1, keepdims=True)), (x,), True),
        "param as output": (lambda x: (x, x + 1), (x,), False),
        "identity": (lambda x: x, (x,), False),
        "three outputs": (lambda x: (x.sum(), x * 2, x), (x,), False),
        "scratch": (lambda x: (x @ x.T).sum() + x.mean(), (x,), False),
        "hidden constant": (lambda v: v * c, (np.ones(1000, np.float32),), True),
        "odd ints": (lambda a, b: (a * b) ^ 7, (np.arange(7, dtype=np.int32),
                                                 np.arange(7, dtype=np.int32) + 3), True),
    }


@pytest.mark.parametrize("case", list(_runtime_cases()))
def test_fast_runner_matches_the_table_call(case):
    from ember.backends.cpu.runtime import fastcall

    fun, args, direct = _runtime_cases()[case]
    compiled = _compiled_for(fun, *args)
    runner = compiled.fast_runner()
    assert fastcall.layout_ok() and runner is not None and runner.direct == direct
    want = compiled(list(args))
    for _ in range(2):
        got = runner(list(args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.tobytes() == np.ascontiguousarray(w).tobytes()
            assert not g.flags.writeable  # read-only when handed back
            assert not any(np.shares_memory(g, a) for a in args)
    again = runner(list(args))
    assert not any(np.shares_memory(a, b) for a, b in zip(got, again) if a.size)


def test_one_trampoline_per_process():
    from ember.backends.cpu.runtime import fastcall

    assert fastcall.trampoline() is fastcall.trampoline() is not None


def test_trampoline_is_a_builtin_that_releases_the_gil_around_the_entry():
    """A CPython builtin (no ctypes argument conversion), which gives the GIL up while the
    entry runs: long kernels must not hold it, and pool threads may call back into
    Python (lazy precise copies, callbacks), which would deadlock against a held GIL."""
    import types

    from ember.backends.cpu.runtime import fastcall

    assert isinstance(fastcall.trampoline(), types.BuiltinFunctionType)
    body = fastcall._ir().split("define ptr @ember_fastcall")[1]
    save = body.index("call ptr @PyEval_SaveThread()")
    entry = body.index("call void %callee(ptr %table)")
    restore = body.index("call void @PyEval_RestoreThread(")
    flags = body.index("store i32 %flags.ro")
    assert save < entry < restore < flags  # outputs made read-only with the GIL held
    with pytest.raises(TypeError):
        fastcall.trampoline()()  # METH_O: exactly one argument, checked by CPython


def test_a_jitted_call_is_exactly_one_foreign_call(monkeypatch):
    import ember
    from ember.backends.cpu.runtime import fastcall

    real = fastcall.trampoline()
    calls = []

    def counting(arg):
        calls.append(arg)
        return real(arg)

    monkeypatch.setattr(fastcall, "trampoline", lambda build=True: counting)
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    f = ember.jit(lambda x: x * 2 + 1)
    y = np.arange(5, dtype=np.float32)
    for _ in range(6):  # the first call traces, the second installs the fast path
        y = f(y)
    assert len(calls) == 6
    np.testing.assert_array_equal(np.asarray(y), np.full(5, 63.0) + np.arange(5) * 64)


TRAMPOLINE_PROGRAM = """
import json, numpy as np, ember
from ember.backends.cpu.runtime import fastcall
from ember.backends.cpu.jit import llvm_target
f = ember.jit(lambda x: x + 1)
y = f(np.zeros(3, np.float32))
first = dict(fastcall.STATS)  # a first call makes no trampoline
for _ in range(2):
    y = f(y)
print(json.dumps({**fastcall.STATS, "codegen_runs": llvm_target.STATS["codegen_runs"],
                  "y": np.asarray(y).tolist(), "first": first}))
"""


def test_trampoline_comes_from_the_disk_cache_in_a_warm_process(tmp_path):
    import json
    import os

    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_BACKEND="cpu")

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", TRAMPOLINE_PROGRAM], env=env,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    cold = run()
    assert cold["first"] == {"trampolines_compiled": 0, "trampolines_loaded": 0}
    assert cold["trampolines_compiled"] == 1 and cold["y"] == [3.0] * 3
    warm = run()
    assert warm["trampolines_loaded"] == 1 and warm["trampolines_compiled"] == 0
    assert warm["codegen_runs"] == 0 and warm["y"] == [3.0] * 3
