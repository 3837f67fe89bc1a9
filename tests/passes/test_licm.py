"""Loop-invariant code motion and loop-state DCE goldens: HLO text in -> pass -> checks on
the text out, plus "no change" cases; every case evaluates the same before and after.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate
from ember.passes import (
    DeadCodeElimination,
    LoopInvariantCodeMotion,
    hardware_independent_pipeline,
)


def loop_module(body_lines: str, state: str = "(s32[], f32[4], f32[4])",
                init: str = "%init = (s32[], f32[4], f32[4]) tuple(%zero, %a, %b)",
                out: str = "ROOT %out = f32[4] get-tuple-element(%loop), index=1") -> str:
    """A counted loop (10 iterations of element 0) around `body_lines`, which read the
    state elements %x (1) and %w (2) and must define %root."""
    return f"""HloModule loop

%cond (s: {state}) -> pred[] {{
  %s = {state} parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}}

%body (t: {state}) -> {state} {{
  %t = {state} parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %x = f32[4] get-tuple-element(%t), index=1
  %w = f32[4] get-tuple-element(%t), index=2
{body_lines}
}}

ENTRY %loop (a: f32[4], b: f32[4]) -> f32[4] {{
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %zero = s32[] constant(0)
  {init}
  %loop = {state} while(%init), condition=%cond, body=%body
  {out}
}}
"""


def _run(text: str, passes) -> tuple:
    m = parse_module(text)
    verify(m)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(4).astype(np.float32) for _ in m.entry.parameters]
    want = evaluate(m, *args)
    changed = False
    for p in passes:
        changed |= p.run(m)
        verify(m)
    got = evaluate(m, *args)
    assert np.asarray(want).tobytes() == np.asarray(got).tobytes()
    return m, changed


def _opcodes(comp) -> list[str]:
    return [i.opcode for i in comp.post_order()]


HOIST = """\
  %e = f32[4] exponential(%w)
  %m = f32[4] multiply(%x, %e)
  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w)"""


def test_hoists_invariant_work_before_the_loop():
    m, changed = _run(loop_module(HOIST), [LoopInvariantCodeMotion()])
    assert changed
    text = print_module(m)
    assert "%exponential" in text.split("ENTRY")[1]       # computed before the loop
    assert "exponential" not in _opcodes(m.computation("body"))
    assert "tuple(%zero, %a, %b, %exponential.1)" in text
    # the body reads the hoisted value as a new state element that it passes through
    body = m.computation("body")
    mul = body.root.operands[1]
    assert mul.opcode == "multiply" and mul.operands[1].attrs["index"] == 3
    assert body.root.operands[3] is mul.operands[1]


def test_hoist_then_dce_drops_the_no_longer_read_element():
    m, _ = _run(loop_module(HOIST), [LoopInvariantCodeMotion(), DeadCodeElimination()])
    body = m.computation("body")
    assert len(m.entry.root.operand.shape.tuple_shapes) == 3   # w itself is gone
    assert _opcodes(body).count("multiply") == 1
    assert "exponential" in _opcodes(m.entry)


@pytest.mark.parametrize("lines", [
    # everything depends on the carried x
    "  %s2 = f32[4] sine(%x)\n  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %s2, %w)",
    # invariant, but only a broadcast of a constant: not worth a loop-carried buffer
    "  %c = f32[] constant(2)\n  %bc = f32[4] broadcast(%c), dimensions={}\n"
    "  %m = f32[4] multiply(%x, %bc)\n  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w)",
    # w changes every iteration, so exp(w) is not invariant
    "  %e = f32[4] exponential(%w)\n  %m = f32[4] multiply(%x, %e)\n"
    "  %w2 = f32[4] add(%w, %x)\n  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w2)",
], ids=["variant", "cheap-broadcast", "element-not-invariant"])
def test_no_change(lines):
    text = loop_module(lines)
    m, changed = _run(text, [LoopInvariantCodeMotion()])
    assert not changed
    assert print_module(m) == print_module(parse_module(text))


def test_invariant_chain_through_data_movement_is_hoisted_whole():
    lines = ("  %e = f32[4] exponential(%w)\n  %r = f32[2,2] reshape(%e)\n"
             "  %rt = f32[2,2] transpose(%r), dimensions={1,0}\n  %f = f32[4] reshape(%rt)\n"
             "  %m = f32[4] multiply(%x, %f)\n"
             "  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w)")
    m, changed = _run(loop_module(lines), [LoopInvariantCodeMotion(), DeadCodeElimination()])
    assert changed
    assert _opcodes(m.computation("body")).count("transpose") == 0
    assert {"exponential", "transpose"} <= set(_opcodes(m.entry))


def test_sinks_passed_through_constants_into_the_loop():
    init = ("%c = f32[] constant(1.5)\n  %cb = f32[4] broadcast(%c), dimensions={}\n"
            "  %init = (s32[], f32[4], f32[4]) tuple(%zero, %a, %cb)")
    lines = ("  %m = f32[4] multiply(%x, %w)\n"
             "  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w)")
    m, changed = _run(loop_module(lines, init=init),
                      [LoopInvariantCodeMotion(), DeadCodeElimination()])
    assert changed
    body = m.computation("body")
    assert "broadcast" in _opcodes(body)                        # the constant is inside
    assert len(m.entry.root.operand.shape.tuple_shapes) == 2    # and no longer carried


def test_shared_body_is_cloned_before_changing():
    text = loop_module(HOIST, out=(
        "%loop2 = (s32[], f32[4], f32[4]) while(%loop), condition=%cond, body=%body\n"
        "  ROOT %out = f32[4] get-tuple-element(%loop2), index=1"))
    m, changed = _run(text, [LoopInvariantCodeMotion()])
    assert changed
    loops = [i for i in m.entry.instructions if i.opcode == "while"]
    assert len(loops) == 2
    bodies = {w.while_body for w in loops}
    assert len(bodies) == 2          # each loop has its own body now


def test_nested_loops_hoist_out_of_both():
    @ember.jit
    def f(x, w):
        def outer(i, c):
            return lax.fori_loop(0, 3, lambda j, d: d * jnp.exp(w) + 1.0, c)
        return lax.fori_loop(0, 4, outer, x)

    x, w = np.ones(4, np.float32), np.full(4, 0.1, np.float32)
    text = f.lower(x, w).compile().as_text()
    entry = text.split("ENTRY")[1]
    assert "exponential(" in entry
    assert text.count("exponential(") == 1
    want = x.astype(np.float64)
    for _ in range(12):
        want = want * np.exp(np.float32(0.1)) + 1.0
    np.testing.assert_allclose(np.asarray(f(x, w)), want, rtol=1e-5)


def test_dce_drops_loop_elements_nothing_needs():
    # element 2 accumulates but is never read after the loop or by the condition
    lines = ("  %m = f32[4] sine(%x)\n  %acc = f32[4] add(%w, %m)\n"
             "  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %acc)")
    m, changed = _run(loop_module(lines), [DeadCodeElimination()])
    assert changed
    assert len(m.entry.root.operand.shape.tuple_shapes) == 2
    assert "add" in _opcodes(m.computation("body"))            # the counter's add
    assert _opcodes(m.computation("body")).count("add") == 1


def test_dce_keeps_everything_when_the_whole_state_is_used():
    lines = ("  %m = f32[4] sine(%x)\n  %acc = f32[4] add(%w, %m)\n"
             "  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %acc)")
    text = loop_module(lines, out="ROOT %out = (s32[], f32[4], f32[4]) copy(%loop)")
    m = parse_module(text)
    before = print_module(m)
    assert not DeadCodeElimination().run(m)
    assert print_module(m) == before


def test_dce_keeps_elements_the_condition_reads():
    # the condition reads element 0 (the counter), which only feeds itself
    lines = ("  %m = f32[4] sine(%x)\n"
             "  ROOT %root = (s32[], f32[4], f32[4]) tuple(%j1, %m, %w)")
    m, _ = _run(loop_module(lines), [DeadCodeElimination()])
    state = m.entry.root.operand.shape.tuple_shapes
    assert [str(s) for s in state] == ["s32[]", "f32[4]"]


def test_pipeline_on_a_scan_hoists_and_drops_unused_outputs():
    def f(x, w, xs):
        c, _ = lax.scan(lambda c, a: (c * jnp.exp(w) + a, c.sum()), x, xs)
        return c

    args = (np.ones(3, np.float32), np.full(3, 0.5, np.float32),
            np.arange(12, dtype=np.float32).reshape(4, 3))
    low = ember.jit(f).lower(*args)
    m = low._lowered.module.clone()
    hardware_independent_pipeline().run(m)
    verify(m)
    text = print_module(m)
    assert "exponential(" in text.split("ENTRY")[1]
    assert "dynamic-update-slice" not in text            # the unused stacked sums are gone
    want = np.ones(3)
    for row in args[2]:
        want = want * np.exp(np.float32(0.5)) + row
    np.testing.assert_allclose(np.asarray(ember.jit(f)(*args)), want, rtol=1e-6)
