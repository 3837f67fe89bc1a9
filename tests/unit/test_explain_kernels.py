"""Per-kernel views of a compiled function: `Compiled.llvm_ir()`, `.asm()`, `.kernels()`
(ember/explain/kernels.py): IR and assembly split by kernel, source lines, cost."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.explain.kernels import split_asm_functions, split_llvm_functions

LINE = {}


def fusion_example(x, a, b):
    return a * jnp.sin(x) + b


def exp_two_users(x):
    y = jnp.exp(x)
    return jnp.sum(y * y), y * 2.0


LINE["fusion"] = fusion_example.__code__.co_firstlineno + 1
LINE["exp"] = exp_two_users.__code__.co_firstlineno + 1
LINE["return"] = exp_two_users.__code__.co_firstlineno + 2
N = 1000


@pytest.fixture(params=["cpu", "interpreter"])
def backend(request, monkeypatch):
    """Both backends: under the interpreter the CPU backend builds the native code on
    demand, so it can still be looked at."""
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    return request.param


def compiled(f, *args):
    return ember.jit(f).lower(*args).compile()


def ones(*shape):
    return np.ones(shape, np.float32)


def test_llvm_ir_of_the_program_and_of_one_kernel(backend):
    c = compiled(fusion_example, ones(N), ones(N), ones(N))
    whole = c.llvm_ir()
    assert "define void @ember_entry(" in whole and "define void @ember_fusion(" in whole
    one = c.llvm_ir(kernel="fusion")
    assert one.startswith("define void @ember_fusion(") and "@ember_entry(" not in one
    # (with its precise copy, `.precise`: each function as the whole module prints it)
    assert all(f in whole for f in split_llvm_functions(one).values())
    with pytest.raises(KeyError, match="the kernels are \\['fusion'\\]"):
        c.llvm_ir(kernel="nope")


def test_asm_of_one_kernel(backend):
    c = compiled(fusion_example, ones(N), ones(N), ones(N))
    one = c.asm(kernel="fusion")
    assert "ember_fusion:" in one and "ember_entry:" not in one
    assert one in c.asm()


def test_kernels_in_run_order_with_cost_and_source_lines(backend):
    ks = compiled(exp_two_users, ones(N)).kernels()
    # y = exp(x) and y * 2: one multi-output loop kernel (fusion_merge.py); then the sum
    assert [k.kind for k in ks] == ["kLoop", "kInput"]
    exp, red = ks
    # hand counts (XLA's conventions): the loop kernel reads N floats and writes 2N (y and
    # y * 2), one transcendental and one multiply each; sum(y*y) reads N floats and writes
    # one, N multiplies + N-1 adds
    assert (exp.cost["bytes accessed"], exp.cost["transcendentals"], exp.cost["flops"]) == (
        12 * N, N, N)
    assert (red.cost["bytes accessed"], red.cost["flops"]) == (4 * N + 4, 2 * N - 1)
    assert [(s.file, s.line, s.ops[:1]) for s in exp.source_lines] == [
        (__file__, LINE["exp"], ("exp",)), (__file__, LINE["return"], ("reduce_sum",))]
    assert [(s.line, s.ops) for s in red.source_lines] == [(LINE["return"],
                                                            ("mul", "reduce_sum"))]
    assert str(exp.source_lines[0]).endswith("y = jnp.exp(x)")
    assert "reduce(" in red.hlo and red.hlo.startswith("%fused_computation")
    assert exp.hlo.startswith("%fused_computation") and " exponential(%param_0" in exp.hlo
    assert all(k.llvm_ir.startswith(f"define void @ember_{k.name}(") for k in ks)


def test_split_llvm_functions():
    text = """; ModuleID = 'x'
define void @ember_a(ptr %0) #0 {
entry:
  ret void
}

declare float @sinf(float)

define void @"ember_b.1"(ptr %0) {
entry:
  ret void
}
"""
    funcs = split_llvm_functions(text)
    assert list(funcs) == ["ember_a", "ember_b.1"]
    assert funcs["ember_a"].splitlines()[0] == "define void @ember_a(ptr %0) #0 {"
    assert funcs["ember_b.1"].endswith("}")


def test_split_asm_functions():
    text = "\n".join([
        "\t.text", ".LCPI0_0:", "\t.long 1", "\t.type\tember_a,@function", "ember_a:",
        "\tret", ".Lfunc_end0:", "\t.size\tember_a, .Lfunc_end0-ember_a",
        "\t.type\tember_b,@function", "ember_b:", "\tret", ".Lfunc_end1:",
        "\t.size\tember_b, .Lfunc_end1-ember_b", "\t.section\t.note"])
    funcs = split_asm_functions(text)
    assert list(funcs) == ["ember_a", "ember_b"]
    assert ".LCPI0_0:" in funcs["ember_a"] and "ember_b:" not in funcs["ember_a"]
    assert funcs["ember_b"].startswith("\t.type\tember_b")


def test_source_lines_are_this_programs_even_from_the_compile_cache(backend):
    def first(x):
        return jnp.cos(x) * 3.0

    def second(x):
        return jnp.cos(x) * 3.0  # the same HLO: the CPU backend's cache serves `first`'s code

    a = compiled(first, ones(17)).kernels()
    b = compiled(second, ones(17)).kernels()
    assert [s.line for s in a[0].source_lines] == [first.__code__.co_firstlineno + 1]
    assert [s.line for s in b[0].source_lines] == [second.__code__.co_firstlineno + 1]
    assert b[0].llvm_ir == a[0].llvm_ir
