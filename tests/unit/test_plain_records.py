"""Records written by hand for import time behave as the dataclasses they replaced.

Slot and Schedule (backends/cpu/schedule.py), LogicalBuffer, Chain and BufferAssignment
(buffer_assignment.py), Decision and FusionDecision (passes/fusion.py) and Rewrite
(passes/algsimp/rewrite.py) were dataclasses; building one costs about half a millisecond
of import on every first compile (issue 4). Each is checked against a dataclass declared
here with the same fields: equality, hash (frozen ones) or unhashability (mutable ones),
repr, defaults, and frozen-ness.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from ember.backends.cpu.plan.buffer_assignment import BufferAssignment, Chain, LogicalBuffer
from ember.backends.cpu.plan.schedule import Schedule, Slot
from ember.hlo.shape import Shape
from ember.passes.algsimp import ALL_REWRITES, Rewrite
from ember.passes.fusion import Decision, FusionDecision


def _twin(cls, spec: list[tuple[str, object]], frozen: bool):
    """A dataclass named like `cls` with fields `spec` ((name, default or MISSING))."""
    fields = []
    for name, default in spec:
        if default is dataclasses.MISSING:
            fields.append((name, object))
        elif isinstance(default, (list, dict, set)):
            fields.append((name, object, field(default_factory=type(default))))
        else:
            fields.append((name, object, field(default=default)))
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=frozen)


M = dataclasses.MISSING
SHAPE = Shape("f32", (3, 7))
CASES = [
    (Slot, [("kind", M), ("index", M), ("shape", M)], True, ("temp", 64, SHAPE)),
    (LogicalBuffer, [("name", M), ("size", M), ("start", M), ("end", M), ("reusable", ()),
                     ("label", "")], True, ("b0", 256, 1, 3, ("a",), "%add")),
    (LogicalBuffer, [("name", M), ("size", M), ("start", M), ("end", M), ("reusable", ()),
                     ("label", "")], True, ("b1", 8, 0, 0)),
    (Decision, [("ok", M), ("reason", "")], True, (False, "expensive exp")),
    (Decision, [("ok", M), ("reason", "")], True, (True,)),
    (FusionDecision, [("producer", M), ("consumer", M), ("reason", M)], True,
     ("exp.1", "add.2", "why")),
    (Rewrite, [("fn", M), ("opcodes", M), ("unsafe", M)], True, (len, ("add",), False)),
    (Chain, [("members", []), ("offset", 0)], False, ()),
    (Chain, [("members", []), ("offset", 0)], False, ([LogicalBuffer("b", 4, 0, 1)], 128)),
    (BufferAssignment, [("offsets", M), ("chains", M), ("total_bytes", M)], False,
     ({"b": 0}, [], 64)),
]


@pytest.mark.parametrize("cls,spec,frozen,args", CASES)
def test_record_behaves_as_its_dataclass(cls, spec, frozen, args):
    twin = _twin(cls, spec, frozen)
    a, b, ref = cls(*args), cls(*args), twin(*args)
    assert repr(a) == repr(ref)
    for name, _ in spec:
        assert getattr(a, name) == getattr(ref, name)
    assert a == b and not (a != b) and a is not b
    assert a != ref  # another class: never equal, as a dataclass compares classes
    assert (a == 3) is False
    if frozen:
        assert hash(a) == hash(b) == hash(ref)
        with pytest.raises(FrozenInstanceError):
            setattr(a, spec[0][0], None)
        with pytest.raises(FrozenInstanceError):
            delattr(a, spec[0][0])
    else:
        with pytest.raises(TypeError):
            hash(a)
        setattr(a, spec[-1][0], 5)
        assert a != b
    c = copy.copy(a)  # profiling.py copies schedules: copies must still work
    assert c == a and type(c) is cls


def test_slot_differs_by_each_field_and_keys_dicts():
    s = Slot("temp", 0, SHAPE)
    assert s != Slot("out", 0, SHAPE) and s != Slot("temp", 64, SHAPE)
    assert s != Slot("temp", 0, Shape("f32", (21,)))
    assert {s: 1}[Slot("temp", 0, SHAPE)] == 1
    assert s.buffer == ("temp", 0)
    assert type(s)("param", 1, SHAPE).kind == "param"


def test_schedule_defaults_are_fresh_and_it_compares_by_fields():
    a, b = Schedule(), Schedule()
    assert a == b and a.kernels is not b.kernels and a.control is not b.control
    assert (a.scratch_bytes, a.assignment) == (0, None)
    with pytest.raises(TypeError):
        hash(a)
    a.temp_labels.append("x")
    assert a != b and b.temp_labels == []
    assert repr(Schedule()).startswith("Schedule(kernels=[], buffers={}, params=[]")
    shallow = copy.copy(a)
    assert shallow == a and shallow.temp_labels is a.temp_labels


def test_registered_rewrites_keep_name_and_doc():
    assert ALL_REWRITES and all(isinstance(r, Rewrite) for r in ALL_REWRITES)
    r = next(r for r in ALL_REWRITES if r.name == "gte_of_tuple")
    assert r.doc and r.opcodes == ("get-tuple-element",) and not r.unsafe
    assert str(FusionDecision("a", "b", "why")) == "%a -> %b: why"


@dataclass(frozen=True)
class _Other:
    kind: str


def test_records_are_not_dataclasses_any_more():
    # (so nothing may rely on dataclasses.fields / replace on them)
    for cls in (Slot, Schedule, LogicalBuffer, Chain, BufferAssignment, Decision,
                FusionDecision, Rewrite):
        assert not dataclasses.is_dataclass(cls)
    assert dataclasses.is_dataclass(_Other)
