"""HLO while and conditional: printer goldens in XLA's syntax, print -> parse -> print,
shape inference and verifier errors, evaluator semantics, and the lowering of the
control-flow primitives (cond, while, scan) to them."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo import Builder, Shape, parse_module, print_module, verify
from ember.hlo.evaluator.core import EvaluationError, evaluate, while_iteration_limit
from ember.hlo.ir import Instruction
from ember.hlo.shape_inference import ShapeError
from ember.hlo.verifier import VerificationError

F4 = Shape("f32", (4,))
S32 = Shape("s32", ())
STATE = Shape.tuple_of([S32, F4])


def _counted_loop(n: int = 3) -> tuple:
    cb = Builder("cond")
    s = cb.parameter(STATE, "s")
    cond = cb.build_computation(cb.compare(cb.get_tuple_element(s, 0), cb.scalar(n, "s32"),
                                           "LT"))
    bb = Builder("body")
    t = bb.parameter(STATE, "t")
    i1 = bb.add(bb.get_tuple_element(t, 0), bb.scalar(1, "s32"))
    x2 = bb.multiply(bb.get_tuple_element(t, 1), bb.get_tuple_element(t, 1))
    body = bb.build_computation(bb.tuple([i1, x2]))
    return cond, body


def _branch(name: str, opcode: str) -> object:
    b = Builder(name)
    p = b.parameter(F4, "p")
    return b.build_computation(b.unary(opcode, p))


GOLDEN = """\
HloModule cf

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %get-tuple-element.0 = s32[] get-tuple-element(%s), index=0
  %constant.1 = s32[] constant(3)
  ROOT %compare.2 = pred[] compare(%get-tuple-element.0, %constant.1), direction=LT
}

%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %get-tuple-element.3 = s32[] get-tuple-element(%t), index=0
  %constant.4 = s32[] constant(1)
  %add.2 = s32[] add(%get-tuple-element.3, %constant.4)
  %get-tuple-element.5 = f32[4] get-tuple-element(%t), index=1
  %get-tuple-element.4 = f32[4] get-tuple-element(%t), index=1
  %multiply.5 = f32[4] multiply(%get-tuple-element.5, %get-tuple-element.4)
  ROOT %tuple.6 = (s32[], f32[4]) tuple(%add.2, %multiply.5)
}

%neg (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  ROOT %negate.0 = f32[4] negate(%p)
}

%exp (p.7: f32[4]) -> f32[4] {
  %p.7 = f32[4] parameter(0)
  ROOT %exponential.0 = f32[4] exponential(%p.7)
}

ENTRY %cf (Arg_0: f32[4], Arg_1: s32[]) -> (s32[], f32[4], f32[4], f32[4]) {
  %Arg_0 = f32[4] parameter(0)
  %Arg_1 = s32[] parameter(1)
  %constant.0 = s32[] constant(0)
  %tuple.1 = (s32[], f32[4]) tuple(%constant.0, %Arg_0)
  %while.2 = (s32[], f32[4]) while(%tuple.1), condition=%cond, body=%body
  %get-tuple-element.7 = s32[] get-tuple-element(%while.2), index=0
  %get-tuple-element.8 = f32[4] get-tuple-element(%while.2), index=1
  %conditional.3 = f32[4] conditional(%Arg_1, %Arg_0, %Arg_0), branch_computations={%neg, %exp}
  %constant.9 = s32[] constant(0)
  %compare.5 = pred[] compare(%Arg_1, %constant.9), direction=GT
  %conditional.6 = f32[4] conditional(%compare.5, %Arg_0, %Arg_0), true_computation=%neg, false_computation=%exp
  ROOT %tuple.9 = (s32[], f32[4], f32[4], f32[4]) tuple(%get-tuple-element.7, %get-tuple-element.8, %conditional.3, %conditional.6)
}
"""  # noqa: E501


def _module():
    cond, body = _counted_loop()
    neg, exp = _branch("neg", "negate"), _branch("exp", "exponential")
    b = Builder("cf")
    x = b.parameter(F4)
    k = b.parameter(S32)
    w = b.while_loop(cond, body, b.tuple([b.scalar(0, "s32"), x]))
    sel = b.conditional(k, [neg, exp], [x, x])
    pred = b.conditional(b.compare(k, b.scalar(0, "s32"), "GT"), [neg, exp], [x, x])
    return b.build(b.tuple([b.get_tuple_element(w, 0), b.get_tuple_element(w, 1), sel, pred]))


def test_printer_golden_and_round_trip():
    m = _module()
    verify(m)
    assert print_module(m) == GOLDEN
    again = parse_module(GOLDEN)
    verify(again)
    assert print_module(again) == GOLDEN
    x = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    for k in (-1, 0, 1, 5):
        a, b = evaluate(m, x, np.int32(k)), evaluate(again, x, np.int32(k))
        for u, v in zip(a, b):
            assert np.asarray(u).tobytes() == np.asarray(v).tobytes()


def test_evaluator_semantics():
    m = _module()
    x = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    for k in (-1, 0, 1, 2, 7):
        i, sq, sel, pred = evaluate(m, x, np.int32(k))
        assert int(i) == 3
        np.testing.assert_array_equal(sq, x ** 8)
        # s32 selector: in range picks that branch, out of range runs the last one
        np.testing.assert_allclose(sel, -x if k == 0 else np.exp(x), rtol=1e-6)
        # pred selector: true runs branch 0
        np.testing.assert_allclose(pred, -x if k > 0 else np.exp(x), rtol=1e-6)


def test_while_iteration_limit():
    cond, body = _counted_loop(50)
    b = Builder("w")
    x = b.parameter(F4)
    m = b.build(b.while_loop(cond, body, b.tuple([b.scalar(0, "s32"), x])))
    with while_iteration_limit(10), pytest.raises(EvaluationError, match="ran past 10"):
        evaluate(m, np.ones(4, np.float32))
    assert int(evaluate(m, np.ones(4, np.float32))[0]) == 50


def test_shape_inference_errors():
    cond, body = _counted_loop()
    b = Builder("bad")
    x = b.parameter(F4)
    with pytest.raises(ShapeError, match="takes"):
        b.while_loop(cond, body, b.tuple([x, x]))       # state does not fit the body
    with pytest.raises(ShapeError, match="condition must return pred"):
        b.while_loop(body, body, b.tuple([b.scalar(0, "s32"), x]))
    neg = _branch("neg", "negate")
    k = b.parameter(S32)
    with pytest.raises(ShapeError, match="selector must be pred"):
        b.conditional(x, [neg, neg], [x, x])
    with pytest.raises(ShapeError, match="one operand per branch"):
        b.conditional(k, [neg, neg], [x])
    with pytest.raises(ShapeError, match="exactly 2 branches"):
        b.conditional(b.compare(k, k, "EQ"), [neg, neg, neg], [x, x, x])
    other = Builder("to_s32")
    p = other.parameter(F4, "p")
    to_s32 = other.build_computation(other.convert(p, "s32"))
    with pytest.raises(ShapeError, match="one shape"):
        b.conditional(k, [neg, to_s32], [x, x])


def test_verifier_catches_a_body_of_the_wrong_type():
    m = _module()
    w = next(i for i in m.entry.instructions if i.opcode == "while")
    body = w.while_body
    body.root = body.add_instruction(Instruction("tuple", Shape.tuple_of([F4, F4]), [
        body.root.operands[1], body.root.operands[1]]))
    with pytest.raises(VerificationError, match="while"):
        verify(m)


def test_parser_requires_both_pred_branches():
    bad = GOLDEN.replace(", false_computation=%exp", "")
    with pytest.raises(ValueError, match="false_computation"):
        parse_module(bad)


# -- lowering of the primitives ---------------------------------------------------------------

def _lowered_text(f, *args) -> str:
    return ember.jit(f).lower(*args).as_text()


def test_cond_lowers_to_conditional_with_a_tuple_operand():
    text = _lowered_text(lambda p, x, y: lax.cond(p, lambda a, b: a + b, lambda a, b: a - b,
                                                  x, y), True, np.ones(4, np.float32),
                         np.ones(4, np.float32))
    assert "%tuple" in text and "conditional(%convert" in text
    assert "branch_computations={%branch_0, %branch_1}" in text
    assert "%branch_0 (arg_tuple: (f32[4], f32[4])) -> f32[4]" in text


def test_while_lowers_with_consts_in_the_state():
    def f(x, y):
        return lax.while_loop(lambda c: c[0] < y, lambda c: (c[0] + 1.0, c[1] * y), (0.0, x))
    text = _lowered_text(f, np.ones(4, np.float32), np.float32(3))
    # state: cond const y, body const y, then the carry (counter, x)
    assert "(f32[], f32[], f32[], f32[4]) while(" in text
    assert "condition=%while_cond, body=%while_body" in text


def test_scan_lowers_to_a_while_with_dynamic_slices():
    def f(x, xs):
        return lax.scan(lambda c, a: (c + a, c * a), x, xs)
    text = _lowered_text(f, np.ones(4, np.float32), np.ones((5, 4), np.float32))
    assert "dynamic-slice(" in text and "dynamic-update-slice(" in text
    assert "(s32[], f32[4], f32[5,4], f32[5,4]) while(" in text
    assert "s32[] constant(5)" in text


@pytest.mark.parametrize("length, unroll", [(7, 1), (7, 3), (7, 7), (7, 10), (6, 3), (0, 2)])
def test_scan_unroll_loop_structure(length, unroll):
    def f(x, xs):
        return lax.scan(lambda c, a: (c * 0.5 + a, c), x, xs, unroll=unroll)
    x, xs = np.ones(2, np.float32), np.arange(length * 2, dtype=np.float32).reshape(length, 2)
    text = _lowered_text(f, x, xs)
    loops = text.count(" while(")
    if length == 0:
        assert loops == 0
    else:
        copies = min(unroll, length)
        assert loops == (1 if length % copies == 0 else 2)
    c, ys = ember.jit(f)(x, xs)
    want_c, want_ys = x.copy(), []
    for row in xs:
        want_ys.append(want_c.copy())
        want_c = want_c * np.float32(0.5) + row
    np.testing.assert_array_equal(np.asarray(c), want_c)
    np.testing.assert_array_equal(np.asarray(ys), np.array(want_ys, np.float32).reshape(
        length, 2))


def test_control_flow_survives_the_pipeline_and_round_trips():
    @ember.jit
    def f(p, x):
        y = lax.cond(p, jnp.sin, jnp.cos, x)
        return lax.fori_loop(0, 4, lambda i, c: c * 1.5 + jnp.float32(i), y)

    compiled = f.lower(True, np.ones(4, np.float32)).compile()
    text = compiled.as_text()
    assert print_module(parse_module(text)) == text
    assert "conditional(" in text and " while(" in text


def test_cpu_backend_compiles_control_flow_natively(monkeypatch):
    from ember.backends import cpu

    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    f = ember.jit(lambda p, x: lax.cond(p, lambda v: lax.fori_loop(0, 3, lambda i, c: c * 2.0,
                                                                   v), jnp.negative, x))
    x = np.ones(3, np.float32)
    compiled = f.lower(True, x).compile()._compiled
    assert compiled.backend == "cpu"  # native loops and branches: cpu/emit/loops_native.py
    cpu.check_supported(compiled.lowered.module)
    np.testing.assert_array_equal(np.asarray(f(True, x)), x * 8)
    np.testing.assert_array_equal(np.asarray(f(False, x)), -x)
