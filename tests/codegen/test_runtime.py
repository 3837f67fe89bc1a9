"""Runtime, cache, supported-opcode coverage and error handling of the CPU backend."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ember.backends import cpu
from ember.backends.cpu import llvm_target
from ember.backends.cpu.elemental import ElementGenerator
from ember.backends.cpu.scalar_ops import _TABLE
from ember.hlo import Builder, Shape
from ember.hlo.opcodes import OPCODES


def _module(name: str = "m", c: float = 1.0):
    b = Builder(name)
    x = b.parameter(Shape("f32", (5,)))
    return b.build(b.add(x, b.broadcast(b.scalar(c, "f32"), (5,), ())))


def test_same_module_compiles_once():
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


def test_every_opcode_is_compiled_or_listed_unsupported():
    gen_handlers = {name[1:].replace("_", "-") for name in dir(ElementGenerator)
                    if name.startswith("_") and not name.startswith("__")}
    from ember.backends.cpu.mathlib import MATH_OPCODES

    kernel_level = {"reduce", "dot", "fusion", "tuple", "get-tuple-element", "parameter",
                    "constant", "call", "compare", "select", "clamp", "convert",
                    "bitcast-convert", "reduce-precision", "copy", "power"}
    covered = set(_TABLE) | set(MATH_OPCODES) | gen_handlers | kernel_level
    missing = sorted(op for op in OPCODES if op not in covered
                     and op not in cpu.UNSUPPORTED_OPCODES)
    assert missing == []
    # the "Control flow" issue must empty this list
    assert cpu.UNSUPPORTED_OPCODES == {"sort", "gather", "scatter", "while", "conditional",
                                       "custom-call"}


def test_unsupported_opcode_raises_for_the_dispatcher():
    b = Builder("sorting")
    x = b.parameter(Shape("f32", (5,)))
    m = b.build(b.sort(x, 0, Builder.comparator("f32")))
    with pytest.raises(cpu.UnsupportedOnCpu) as info:
        cpu.compile(m)
    assert info.value.opcodes == ("sort",)


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
