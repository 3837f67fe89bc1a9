"""Float normalization goldens: HLO text in -> FloatNormalization -> checks on the text out,
and the same values from the interpreter before and after; "no change" cases included."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator import evaluate
from ember.passes.float_normalization import FloatNormalization


def module(params: str, body: str, out: str, combiner: str = "add", et: str = "f16") -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    comb = (f"%comb (a: {et}[], b: {et}[]) -> {et}[] {{\n  %a = {et}[] parameter(0)\n"
            f"  %b = {et}[] parameter(1)\n  ROOT %c = {et}[] {combiner}(%a, %b)\n}}\n\n")
    return f"HloModule t\n\n{comb}ENTRY %t ({params}) -> {out} {{\n" + "\n".join(
        "  " + x for x in lines) + "\n}\n"


def run(text: str) -> tuple[bool, str]:
    m = parse_module(text)
    changed = FloatNormalization().run(m)
    verify(m)
    return changed, print_module(m)


def test_f16_sum_reduce_is_widened():
    text = module("x: f16[1000,3]", "%x = f16[1000,3] parameter(0)\n%z = f16[] constant(0)\n"
                  "%r = f16[3] reduce(%x, %z), dimensions={0}, to_apply=%comb", "f16[3]")
    changed, out = run(text)
    assert changed
    assert "f32[1000,3] convert(%x)" in out
    assert "f32[] constant(0)" in out
    assert "f32[3] reduce(" in out and "to_apply=%add.f32" in out
    assert "ROOT %convert" in out and "f16[3] convert(%reduce" in out
    assert "f32[] add(%Arg_0, %Arg_1)" in out
    assert "%comb" not in out and "f16[] constant" not in out  # (dead: removed)
    x = np.full((1000, 3), 0.1, np.float16)
    before, after = evaluate(parse_module(text), x), evaluate(parse_module(out), x)
    np.testing.assert_array_equal(before, after)
    assert after.dtype == np.float16 and np.all(after == 100.0)


def test_bf16_product_reduce_is_widened():
    text = module("x: bf16[64]", "%x = bf16[64] parameter(0)\n%o = bf16[] constant(1)\n"
                  "%r = bf16[] reduce(%x, %o), dimensions={0}, to_apply=%comb", "bf16[]",
                  combiner="multiply", et="bf16")
    changed, out = run(text)
    assert changed
    assert "f32[64] convert(%x)" in out and "f32[] reduce(" in out
    assert "to_apply=%multiply.f32" in out and "ROOT %convert" in out


def test_f16_dot_is_widened():
    text = module("x: f16[4,1000], y: f16[1000,3]",
                  "%x = f16[4,1000] parameter(0)\n%y = f16[1000,3] parameter(1)\n"
                  "%d = f16[4,3] dot(%x, %y), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}", "f16[4,3]")
    changed, out = run(text)
    assert changed
    assert "f32[4,1000] convert(%x)" in out and "f32[1000,3] convert(%y)" in out
    assert "f32[4,3] dot(%convert" in out and "lhs_contracting_dims={1}" in out
    assert "ROOT %convert" in out and "f16[4,3] convert(%dot" in out
    x, y = np.full((4, 1000), 0.1, np.float16), np.ones((1000, 3), np.float16)
    np.testing.assert_array_equal(evaluate(parse_module(out), x, y), 100.0)


def test_f16_dot_to_f32_widens_its_operands():
    text = module("x: f16[4,5], y: f16[5,3]",
                  "%x = f16[4,5] parameter(0)\n%y = f16[5,3] parameter(1)\n"
                  "%d = f32[4,3] dot(%x, %y), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}", "f32[4,3]")
    changed, out = run(text)
    assert changed
    assert "ROOT %d = f32[4,3] dot(%convert" in out


def test_one_convert_per_operand():
    text = module("x: f16[8,8]",
                  "%x = f16[8,8] parameter(0)\n%z = f16[] constant(0)\n"
                  "%r = f16[8] reduce(%x, %z), dimensions={1}, to_apply=%comb\n"
                  "%d = f16[8,8] dot(%x, %x), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}\n"
                  "%t = (f16[8], f16[8,8]) tuple(%r, %d)", "(f16[8], f16[8,8])")
    _, out = run(text)
    assert out.count("convert(%x)") == 1


NO_CHANGE = [
    # float32 sums and dots accumulate in float32 already
    module("x: f32[1000]", "%x = f32[1000] parameter(0)\n%z = f32[] constant(0)\n"
           "%r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%comb", "f32[]", et="f32"),
    module("x: f32[4,5], y: f32[5,3]",
           "%x = f32[4,5] parameter(0)\n%y = f32[5,3] parameter(1)\n"
           "%d = f32[4,3] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
           "f32[4,3]", et="f32"),
    # max/min are exact in float16
    module("x: f16[100]", "%x = f16[100] parameter(0)\n%z = f16[] constant(-inf)\n"
           "%r = f16[] reduce(%x, %z), dimensions={0}, to_apply=%comb", "f16[]",
           combiner="maximum"),
    # integer sums keep their wrapping type
    module("x: s16[100]", "%x = s16[100] parameter(0)\n%z = s16[] constant(0)\n"
           "%r = s16[] reduce(%x, %z), dimensions={0}, to_apply=%comb", "s16[]", et="s16"),
]


@pytest.mark.parametrize("text", NO_CHANGE)
def test_no_change(text):
    changed, out = run(text)
    assert not changed
    assert out == print_module(parse_module(text))


def test_cpu_pipeline_runs_it_before_fusion():
    from ember.backends.cpu.compiler import pipeline

    names = [p.name for p in pipeline().passes]
    assert names.index("float-normalization") < names.index("fusion")
