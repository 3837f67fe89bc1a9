"""Algebraic simplifier goldens for tuples and control flow: HLO text in -> algsimp + DCE ->
checks on the text out. Each rewrite has a positive case and a "no change" case (the
coverage check in test_algsimp.py counts these cases too), and every case is evaluated
before and after on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate
from ember.passes import AlgebraicSimplifier, DeadCodeElimination

BRANCHES = """\
%neg (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%a)
}

%ex (b: f32[4]) -> f32[4] {
  %b = f32[4] parameter(0)
  ROOT %e = f32[4] exponential(%b)
}

"""

LOOP = """\
%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%never (s.1: (s32[], f32[4])) -> pred[] {
  %s.1 = (s32[], f32[4]) parameter(0)
  ROOT %f = pred[] constant(false)
}

%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %x = f32[4] get-tuple-element(%t), index=1
  ROOT %r = (s32[], f32[4]) tuple(%j1, %x)
}

%body2 (t.1: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t.1 = (s32[], f32[4]) parameter(0)
  %j.1 = s32[] get-tuple-element(%t.1), index=0
  %one.1 = s32[] constant(1)
  %j2 = s32[] add(%j.1, %one.1)
  %x.1 = f32[4] get-tuple-element(%t.1), index=1
  %y = f32[4] sine(%x.1)
  ROOT %r.1 = (s32[], f32[4]) tuple(%j2, %y)
}

"""

P = "%p = f32[4] parameter(0)\n%q = f32[4] parameter(1)\n"
INIT = "%z = s32[] constant(0)\n%init = (s32[], f32[4]) tuple(%z, %p)\n"

# rewrite name, entry body, expected root after algsimp + DCE (None: no change expected)
CASES = [
    ("gte_of_tuple", P + "%t = (f32[4], f32[4]) tuple(%p, %q)\n"
     "%r = f32[4] get-tuple-element(%t), index=1", "parameter(q)"),
    ("gte_of_tuple", "%pt = (f32[4], f32[4]) parameter(0)\n"
     "%r = f32[4] get-tuple-element(%pt), index=1", None),
    ("gte_of_while_passthrough", P + INIT + "%w = (s32[], f32[4]) while(%init), "
     "condition=%cond, body=%body\n%r = f32[4] get-tuple-element(%w), index=1",
     "parameter(p)"),
    ("gte_of_while_passthrough", P + INIT + "%w = (s32[], f32[4]) while(%init), "
     "condition=%cond, body=%body2\n%r = f32[4] get-tuple-element(%w), index=1", None),
    ("tuple_of_gtes", P + INIT + "%w = (s32[], f32[4]) while(%init), condition=%cond, "
     "body=%body2\n%a = s32[] get-tuple-element(%w), index=0\n"
     "%b = f32[4] get-tuple-element(%w), index=1\n%r = (s32[], f32[4]) tuple(%a, %b)",
     "while(tuple)"),
    ("tuple_of_gtes", P + INIT + "%w = (s32[], f32[4]) while(%init), condition=%cond, "
     "body=%body2\n%a = s32[] get-tuple-element(%w), index=0\n"
     "%b = f32[4] get-tuple-element(%w), index=1\n%r = (f32[4], s32[]) tuple(%b, %a)", None),
    ("tuple_of_gtes", "%pt = (f32[4], f32[4]) parameter(0)\n"
     "%a = f32[4] get-tuple-element(%pt), index=0\n%b = f32[4] get-tuple-element(%pt), "
     "index=1\n%r = (f32[4], f32[4]) tuple(%a, %b)", None),
    ("conditional_constant_selector", P + "%k = s32[] constant(1)\n"
     "%r = f32[4] conditional(%k, %p, %q), branch_computations={%neg, %ex}",
     "exponential(q)"),
    ("conditional_constant_selector", P + "%k = s32[] constant(7)\n"
     "%r = f32[4] conditional(%k, %p, %q), branch_computations={%neg, %ex}",
     "exponential(q)"),
    ("conditional_constant_selector", P + "%k = pred[] constant(true)\n"
     "%r = f32[4] conditional(%k, %p, %q), true_computation=%neg, false_computation=%ex",
     "negate(p)"),
    ("conditional_constant_selector", P + "%k = s32[] parameter(2)\n"
     "%r = f32[4] conditional(%k, %p, %q), branch_computations={%neg, %ex}", None),
    ("while_false_condition", P + INIT + "%w = (s32[], f32[4]) while(%init), "
     "condition=%never, body=%body2\n%r = f32[4] get-tuple-element(%w), index=1",
     "parameter(p)"),
    ("while_false_condition", P + INIT + "%w = (s32[], f32[4]) while(%init), "
     "condition=%cond, body=%body2\n%r = f32[4] get-tuple-element(%w), index=1", None),
]


def module(body: str) -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    params = [ln for ln in lines if " parameter(" in ln]
    sig = ", ".join(ln.split(" = ")[0].lstrip("%") + ": " + ln.split(" = ")[1].split(" ")[0]
                    for ln in params)
    return ("HloModule t\n\n" + BRANCHES + LOOP + f"ENTRY %t ({sig}) -> f32[] {{\n"
            + "\n".join("  " + x for x in lines) + "\n}\n")


def render(inst) -> str:
    if inst.opcode == "parameter":
        return f"parameter({inst.name})"
    args = [o.name if o.opcode == "parameter" else o.opcode for o in inst.operands]
    return f"{inst.opcode}({', '.join(args)})"


def _args(m):
    rng = np.random.default_rng(0)
    out = []
    for p in m.entry.parameters:
        s = p.shape
        if s.is_tuple:
            out.append(tuple(rng.standard_normal(t.dimensions).astype(t.dtype)
                             for t in s.tuple_shapes))
        elif s.dtype.kind == "i":
            out.append(np.array(1, s.dtype))
        else:
            out.append(rng.standard_normal(s.dimensions).astype(s.dtype))
    return out


@pytest.mark.parametrize("name, body, expect", CASES,
                         ids=[f"{c[0]}-{'yes' if c[2] else 'no'}-{k}" for k, c in
                              enumerate(CASES)])
def test_rewrite(name, body, expect):
    m = parse_module(module(body))
    verify(m)
    args = _args(m)
    want = evaluate(m, *args)
    before = print_module(m)
    p = AlgebraicSimplifier()
    p.run(m)
    verify(m)
    if expect is None:
        assert name not in p.applied, p.applied
        return
    assert name in p.applied, p.applied
    DeadCodeElimination().run(m)
    verify(m)
    assert render(m.entry.root) == expect, print_module(m)
    assert print_module(m) != before
    got = evaluate(m, *args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        assert np.asarray(w).tobytes() == np.asarray(g).tobytes()


def test_inlined_branch_leaves_no_dead_computations():
    m = parse_module(module(P + "%k = s32[] constant(0)\n"
                            "%r = f32[4] conditional(%k, %p, %q), "
                            "branch_computations={%neg, %ex}"))
    AlgebraicSimplifier().run(m)
    DeadCodeElimination().run(m)
    assert [c.name for c in m.computations] == ["t"]
