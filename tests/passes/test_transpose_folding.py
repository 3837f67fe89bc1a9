"""Transpose folding goldens: HLO text in -> TransposeFolding -> checks on the text out, and
the same values from the interpreter before and after; "no change" cases included."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator import evaluate
from ember.passes.transpose_folding import TransposeFolding


def module(params: str, body: str, out: str) -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    return f"HloModule t\n\nENTRY %t ({params}) -> {out} {{\n" + "\n".join(
        "  " + x for x in lines) + "\n}\n"


CASES = [
    # x.T @ y
    ("x: f32[5,3], y: f32[5,4]", "f32[3,4]",
     "%x = f32[5,3] parameter(0)\n%y = f32[5,4] parameter(1)\n"
     "%t = f32[3,5] transpose(%x), dimensions={1,0}\n"
     "%d = f32[3,4] dot(%t, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
    # x @ y.T
    ("x: f32[3,5], y: f32[4,5]", "f32[3,4]",
     "%x = f32[3,5] parameter(0)\n%y = f32[4,5] parameter(1)\n"
     "%t = f32[5,4] transpose(%y), dimensions={1,0}\n"
     "%d = f32[3,4] dot(%x, %t), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
    # batch and contracting dims move freely: [k, b, m] -> [b, m, k]
    ("x: f32[5,2,3], y: f32[2,5,4]", "f32[2,3,4]",
     "%x = f32[5,2,3] parameter(0)\n%y = f32[2,5,4] parameter(1)\n"
     "%t = f32[2,3,5] transpose(%x), dimensions={1,2,0}\n"
     "%d = f32[2,3,4] dot(%t, %y), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
     "rhs_batch_dims={0}, rhs_contracting_dims={1}",
     "dot(%x, %y), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={0}, "
     "rhs_contracting_dims={1}"),
]

NO_CHANGE = [
    # the free dims [a, b] would come out as [b, a]
    ("x: f32[2,3,5], y: f32[5,4]", "f32[3,2,4]",
     "%x = f32[2,3,5] parameter(0)\n%y = f32[5,4] parameter(1)\n"
     "%t = f32[3,2,5] transpose(%x), dimensions={1,0,2}\n"
     "%d = f32[3,2,4] dot(%t, %y), lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
    # no transpose at all
    ("x: f32[3,5], y: f32[5,4]", "f32[3,4]",
     "%x = f32[3,5] parameter(0)\n%y = f32[5,4] parameter(1)\n"
     "%d = f32[3,4] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
]


def _values(m):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(p.shape.dimensions).astype(np.float32)
            for p in m.entry.parameters]


@pytest.mark.parametrize("params,out,body,expected", CASES)
def test_folds(params, out, body, expected):
    m = parse_module(module(params, body, out))
    args = _values(m)
    before = evaluate(m, *args)
    assert TransposeFolding().run(m)
    verify(m)
    text = print_module(m)
    assert expected in text
    assert "transpose" not in text
    np.testing.assert_allclose(evaluate(m, *args), before, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("params,out,body", NO_CHANGE)
def test_no_change(params, out, body):
    m = parse_module(module(params, body, out))
    text = print_module(m)
    assert not TransposeFolding().run(m)
    assert print_module(m) == text


def test_transpose_with_another_user_stays_for_it():
    body = ("%x = f32[5,3] parameter(0)\n%y = f32[5,3] parameter(1)\n"
            "%t = f32[3,5] transpose(%x), dimensions={1,0}\n"
            "%d = f32[3,3] dot(%t, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
            "%s = f32[3,5] negate(%t)\n%r = (f32[3,3], f32[3,5]) tuple(%d, %s)")
    m = parse_module(module("x: f32[5,3], y: f32[5,3]", body, "(f32[3,3], f32[3,5])"))
    args = _values(m)
    before = evaluate(m, *args)
    assert TransposeFolding().run(m)
    text = print_module(m)
    assert "dot(%x, %y), lhs_contracting_dims={0}" in text
    assert "transpose(%x), dimensions={1,0}" in text and "negate(" in text
    for g, w in zip(evaluate(m, *args), before):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
