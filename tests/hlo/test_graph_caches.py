"""The graph's kept answers (ember/hlo/ir.py) stay right as the graph changes.

`Computation.post_order` keeps its last order and `Module.computations` its last list while
nothing they depend on changed; every mutation helper tells them. Each test changes a
graph through one helper after the answer was kept and checks it against a walk made
from nothing (the kept answer dropped). Also: a clone prints and links like the
original, names register in any order, and a Shape's kept text, size and hash stay out
of its pickle.
"""

import pickle

import numpy as np

from ember.hlo import Builder, Instruction, Shape
from ember.hlo.ir import Computation, Module, note_callees_changed
from ember.hlo.printer import print_module

F = Shape("f32", (4,))


def _fresh_order(comp: Computation) -> list[Instruction]:
    kept, comp._order = comp._order, None
    try:
        return comp.post_order()
    finally:
        comp._order = kept


def _chain() -> tuple[Builder, Instruction, Instruction, Instruction]:
    b = Builder("f")
    x = b.parameter(F)
    y = b.parameter(F)
    s = b.sine(x)
    a = b.add(s, y)
    b.build_computation(b.cosine(a))
    return b, x, y, a


def _same(comp: Computation) -> None:
    got = comp.post_order()
    assert got == _fresh_order(comp)
    got.reverse()  # (a copy: the caller may change it)
    assert comp.post_order() == _fresh_order(comp)


def test_post_order_follows_each_mutation():
    b, x, y, a = _chain()
    comp = b.computation
    _same(comp)
    a.replace_operand(0, y)  # operands
    _same(comp)
    e = comp.add_instruction(Instruction("exponential", F, [x]))
    _same(comp)  # an unreachable instruction is ordered last
    comp.root = comp.add_instruction(Instruction("add", F, [e, comp.root]))  # the root
    _same(comp)
    e.replace_all_uses_with(x)
    _same(comp)
    assert comp.remove_dead()
    _same(comp)
    assert e not in comp.post_order()
    n = comp.add_instruction(Instruction("negate", F, [x]))
    _same(comp)
    comp.remove_instruction(n)
    _same(comp)
    m = comp.add_instruction(Instruction("multiply", F, [x, x]))
    _same(comp)
    m.drop_operands()
    _same(comp)
    m._add_operand(y)
    _same(comp)


def test_post_order_sees_a_new_side_effect_in_a_callee():
    # the caller's own instructions do not change: the effect appears inside its callee
    b, x, y, a = _chain()
    comp = b.computation
    body = Computation("body")
    p = body.add_instruction(Instruction("parameter", F, [], {"parameter_number": 0}))
    body.root = p
    call = comp.add_instruction(Instruction("call", F, [x], called_computations=[body]))
    before = comp.post_order()
    assert call in before and before.index(call) > before.index(comp.root)  # unreachable
    cc = body.add_instruction(Instruction(
        "custom-call", Shape.tuple_of([]), [p],
        {"custom_call_target": "f", "custom_call_has_side_effect": True}))
    assert cc in body.post_order()
    after = comp.post_order()
    assert after == _fresh_order(comp)
    assert after.index(call) < after.index(comp.root)  # an effect root now, walked first


def test_module_computations_follow_callee_changes():
    b = Builder("m")
    x = b.parameter(Shape("f32", (8,)))
    red = b.reduce(x, b.constant(np.float32(0)), (0,), Builder.scalar_computation("add", "f32"))
    m = b.build(red)
    first = m.computations
    assert first[-1] is m.entry and len(first) == 2
    first.pop()  # (a copy)
    assert len(m.computations) == 2
    other = m.add_computation(Builder.scalar_computation("multiply", "f32"))
    assert other in m.computations
    add = red.called_computations[0]
    red.called_computations[0] = other  # replaced in place, then told
    note_callees_changed()
    assert m.computations == [other, m.entry] and add not in m.computations
    m.remove_dead_computations()
    assert m.computations == [other, m.entry]
    # an instruction with a callee joining a computation
    m.entry.add_instruction(Instruction(
        "reduce", Shape("f32", ()), [x, red.operands[1]], {"dimensions": (0,)},
        [m.add_computation(Builder.scalar_computation("maximum", "f32"))]))
    assert len(m.computations) == 3


def test_clone_prints_and_links_like_the_original():
    b, x, y, a = _chain()
    m = b.build(b.computation.root)
    c = m.clone()
    assert print_module(c) == print_module(m)
    for old, new in zip(m.entry.post_order(), c.entry.post_order(), strict=True):
        assert [u.name for u in old.users] == [u.name for u in new.users]
        assert new.parent is c.entry and new is not old
    # the clone's names are registered: a new instruction gets a fresh one
    n = c.entry.add_instruction(Instruction("negate", F, [c.entry.parameters[0]], name=a.name))
    assert n.name != a.name
    assert Module("again", c.entry).entry is c.entry


def test_shape_kept_values_stay_out_of_pickles():
    s = Shape("f32", (2, 3), (1, 0))
    assert (str(s), s.size, s.is_tuple, hash(s)) == ("f32[2,3]{1,0}", 6, False,
                                                    hash(Shape("f32", [2, 3], [1, 0])))
    again = pickle.loads(pickle.dumps(s))
    assert again == s and set(vars(again)) == {"element_type", "dimensions", "layout",
                                               "tuple_shapes"}
    assert s.without_layout() == Shape("f32", (2, 3)) and Shape("f32", (2,)).without_layout()\
        .layout is None
