"""call-inlining (passes/call_inlining.py), the CPU pipeline's first pass: text in, text
out, the "no change" case, and the CPU backend's answer when it is disabled."""

from __future__ import annotations

import numpy as np
import pytest

from ember.backends import Unsupported, cpu
from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module
from ember.hlo.printer import print_module
from ember.passes.call_inlining import CallInlining

NESTED_CALLS = """HloModule calls
%twice (a: f32[5]) -> f32[5] {
  %a = f32[5] parameter(0)
  ROOT %t = f32[5] add(%a, %a)
}
%outer (b: f32[5], c: f32[5]) -> f32[5] {
  %b = f32[5] parameter(0)
  %c = f32[5] parameter(1)
  %inner = f32[5] call(%b), to_apply=%twice
  ROOT %m = f32[5] multiply(%inner, %c)
}
ENTRY %main (x: f32[5], y: f32[5]) -> f32[5] {
  %x = f32[5] parameter(0)
  %y = f32[5] parameter(1)
  %call = f32[5] call(%x, %y), to_apply=%outer
  ROOT %r = f32[5] sine(%call)
}
"""


def _args():
    return np.linspace(-1, 1, 5).astype(np.float32), np.arange(5, dtype=np.float32)


def test_nested_calls_are_inlined_and_compute_the_same():
    module = parse_module(NESTED_CALLS)
    assert CallInlining().run(module)
    text = print_module(module)
    assert " call(" not in text and "%twice" not in text and "%outer" not in text
    assert "%t." in text and "%m." in text  # the callee's names, made unique
    np.testing.assert_array_equal(evaluate(module, *_args()),
                                  evaluate(parse_module(NESTED_CALLS), *_args()))


def test_no_call_no_change():
    module = parse_module(NESTED_CALLS)
    CallInlining().run(module)
    before = print_module(module)
    assert not CallInlining().run(module)
    assert print_module(module) == before


def test_the_cpu_backend_needs_it(monkeypatch):
    x, y = _args()
    exe = cpu.compile(parse_module(NESTED_CALLS), use_cache=False)
    np.testing.assert_allclose(exe(x, y), np.sin((x + x) * y), rtol=1e-6)
    monkeypatch.setenv("EMBER_DISABLE_PASSES", "call-inlining")
    with pytest.raises(Unsupported, match="call-inlining"):
        cpu.compile(parse_module(NESTED_CALLS), use_cache=False)
