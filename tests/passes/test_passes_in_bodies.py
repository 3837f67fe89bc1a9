"""Every cleanup pass works inside loop bodies, loop conditions and conditional branches,
not only in the entry computation; the module evaluates the same after each pass."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate
from ember.passes import (
    AlgebraicSimplifier,
    CommonSubexpressionElimination,
    ConstantFolding,
    DeadCodeElimination,
    hardware_independent_pipeline,
)

TEXT = """\
HloModule bodies

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %five = s32[] constant(5)
  %two = s32[] constant(2)
  %limit = s32[] add(%five, %two)
  ROOT %lt = pred[] compare(%i, %limit), direction=LT
}

%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %x = f32[4] get-tuple-element(%t), index=1
  %s1 = f32[4] sine(%x)
  %s2 = f32[4] sine(%x)
  %dead = f32[4] cosine(%x)
  %c = f32[] constant(1)
  %cb = f32[4] broadcast(%c), dimensions={}
  %m = f32[4] multiply(%s1, %cb)
  %y = f32[4] add(%m, %s2)
  ROOT %r = (s32[], f32[4]) tuple(%j1, %y)
}

%branch_0 (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %e1 = f32[4] exponential(%a)
  %e2 = f32[4] exponential(%a)
  ROOT %d = f32[4] subtract(%e1, %e2)
}

%branch_1 (b: f32[4]) -> f32[4] {
  %b = f32[4] parameter(0)
  %unused = f32[4] negate(%b)
  ROOT %n = f32[4] abs(%b)
}

ENTRY %bodies (p: f32[4], k: s32[]) -> f32[4] {
  %p = f32[4] parameter(0)
  %k = s32[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %p)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  %x = f32[4] get-tuple-element(%w), index=1
  ROOT %c = f32[4] conditional(%k, %x, %x), branch_computations={%branch_0, %branch_1}
}
"""

ARGS = [(np.linspace(-1, 1, 4, dtype=np.float32), np.int32(k)) for k in (0, 1)]


def _apply(pass_):
    m = parse_module(TEXT)
    want = [evaluate(m, *a) for a in ARGS]
    assert pass_.run(m)
    verify(m)
    for a, w in zip(ARGS, want):
        assert np.asarray(evaluate(m, *a)).tobytes() == np.asarray(w).tobytes()
    return m


def _opcodes(m, name):
    return [i.opcode for i in m.computation(name).instructions]


def test_constant_folding_in_the_condition():
    m = _apply(ConstantFolding())
    assert "add" not in _opcodes(m, "cond")
    assert "s32[] constant(7)" in print_module(m)


def test_cse_in_body_and_branch():
    m = _apply(CommonSubexpressionElimination())
    assert _opcodes(m, "body").count("sine") == 1
    assert _opcodes(m, "branch_0").count("exponential") == 1


def test_dce_in_body_and_branch():
    m = _apply(DeadCodeElimination())
    assert "cosine" not in _opcodes(m, "body")
    assert "negate" not in _opcodes(m, "branch_1")


def test_algsimp_in_body():
    m = _apply(AlgebraicSimplifier())
    assert "multiply" not in _opcodes(m, "body")       # A * 1 => A inside the loop


@pytest.mark.parametrize("k", [0, 1])
def test_whole_pipeline(k):
    m = parse_module(TEXT)
    a = ARGS[k]
    want = evaluate(m, *a)
    hardware_independent_pipeline().run(m)
    verify(m)
    assert np.asarray(evaluate(m, *a)).tobytes() == np.asarray(want).tobytes()
    body = _opcodes(m, "body")
    assert body.count("sine") == 1 and "cosine" not in body and "multiply" not in body
