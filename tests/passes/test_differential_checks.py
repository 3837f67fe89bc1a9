"""EMBER_ENABLE_CHECKS=1 evaluates the module before the pipeline and after every pass."""

import numpy as np
import pytest

from ember.hlo import Builder, Computation, Instruction, Module, Shape
from ember.hlo.evaluator import differential
from ember.hlo.evaluator.core import evaluate
from ember.hlo.evaluator.differential import DifferentialError, Reference
from ember.passes import (
    CommonSubexpressionElimination,
    DeadCodeElimination,
    Fix,
    HloPass,
    PassPipeline,
    hardware_independent_pipeline,
)


@pytest.fixture(autouse=True)
def _checks(monkeypatch):
    monkeypatch.setenv("EMBER_ENABLE_CHECKS", "1")


class Rewrite(HloPass):
    """Replaces the first instruction with opcode `old` by `make(computation, inst)`."""

    def __init__(self, name: str, old: str, make, report: bool = True) -> None:
        self.name, self.old, self.make, self.report = name, old, make, report

    def run(self, module: Module) -> bool:
        comp = module.entry
        for inst in comp.post_order():
            if inst.opcode == self.old:
                comp.replace_instruction(inst, self.make(comp, inst))
                return self.report
        return False


def _new(comp: Computation, opcode: str, operands, shape=None, attrs=None) -> Instruction:
    ops = list(operands)
    return comp.add_instruction(Instruction(opcode, shape or ops[0].shape, ops, attrs))


def _add_to_sub(comp, inst):
    return _new(comp, "subtract", inst.operands)


def _module(n: int = 16) -> Module:
    b = Builder("m")
    x, y = b.parameter(Shape("f32", (n,))), b.parameter(Shape("f32", (n,)))
    total = b.reduce(x, b.scalar(0, "f32"), [0], Builder.scalar_computation("add", "f32"))
    q = b.divide(x, b.broadcast(b.scalar(3.0, "f32"), (n,)))
    return b.build(b.tuple([b.add(x, y), b.broadcast(total, (n,)), q]))


def test_a_broken_pass_is_caught_and_named():
    p = PassPipeline("p", [DeadCodeElimination(), Rewrite("add-to-sub", "add", _add_to_sub)])
    with pytest.raises(DifferentialError, match="pass add-to-sub changed the values of "
                                                "module m: output 0: at index"):
        p.run(_module())


def test_a_pass_that_changes_values_but_reports_no_change_is_caught():
    p = PassPipeline("p", [Rewrite("quiet", "add", _add_to_sub, report=False)])
    with pytest.raises(DifferentialError, match="pass quiet"):
        p.run(_module())


def test_one_ulp_outside_reductions_is_caught():
    def div_to_mul(comp, inst):  # x / 3 => x * (1/3): not exact
        recip = _new(comp, "constant", (), Shape("f32", ()),
                     {"value": np.array(np.float32(1) / np.float32(3))})
        bc = _new(comp, "broadcast", [recip], inst.shape, {"dimensions": ()})
        return _new(comp, "multiply", [inst.operands[0], bc])

    with pytest.raises(DifferentialError, match="pass div-to-mul.*output 2"):
        PassPipeline("p", [Rewrite("div-to-mul", "divide", div_to_mul)]).run(_module())


def test_reordered_float_sum_is_within_tolerance():
    def reverse_input(comp, inst):  # sums the same values in another order
        rev = _new(comp, "reverse", [inst.operands[0]], attrs={"dimensions": (0,)})
        return _reduce_like(comp, inst, rev)

    m = _module(1000)
    ref = Reference.capture(m)
    assert PassPipeline("p", [Rewrite("reorder", "reduce", reverse_input)]).run(m)
    assert any(i.opcode == "reverse" for i in m.entry.instructions)
    after = evaluate(m, *ref.args)[1]
    assert after.tobytes() != ref.outputs[1].tobytes()  # the sum really changed its bits

    # ... but a reordering that changes the sum beyond rounding is caught
    def drop_one(comp, inst):
        sl = _new(comp, "slice", [inst.operands[0]], Shape("f32", (999,)),
                  {"slice": ((1, 1000, 1),)})
        return _reduce_like(comp, inst, sl)

    with pytest.raises(DifferentialError, match="beyond the reordering tolerance"):
        PassPipeline("p", [Rewrite("drop-one", "reduce", drop_one)]).run(_module(1000))


def _reduce_like(comp, inst, operand):
    new = Instruction("reduce", inst.shape, [operand, inst.operands[1]], dict(inst.attrs),
                      inst.called_computations)
    return comp.add_instruction(new)


def test_reference_captured_once_for_nested_pipelines(monkeypatch):
    calls = []
    capture = Reference.capture

    def counting(module, seed=differential.SEED):
        calls.append(module.name)
        return capture(module, seed)

    monkeypatch.setattr(Reference, "capture", staticmethod(counting))
    inner = PassPipeline("inner", [CommonSubexpressionElimination(), DeadCodeElimination()])
    PassPipeline("outer", [Fix(inner), DeadCodeElimination()]).run(_module())
    assert calls == ["m"]
    hardware_independent_pipeline().run(_module())
    assert calls == ["m", "m"]


def test_skips_expensive_modules(monkeypatch):
    monkeypatch.setattr(differential, "MAX_PARAMETER_ELEMENTS", 20)
    assert Reference.capture(_module(16)) is None  # 32 parameter elements
    PassPipeline("p", [Rewrite("add-to-sub", "add", _add_to_sub)]).run(_module())
    monkeypatch.setattr(differential, "MAX_PARAMETER_ELEMENTS", 10**6)
    monkeypatch.setattr(differential, "MAX_VALUE_ELEMENTS", 50)
    assert Reference.capture(_module(16)) is None


def test_skips_modules_it_cannot_evaluate():
    b = Builder("cc")
    x = b.parameter(Shape("f32", (3,)))
    m = b.build(b.add(b.custom_call("no.such.target", [x], Shape("f32", (3,))), x))
    assert Reference.capture(m) is None
    PassPipeline("p", [Rewrite("add-to-sub", "add", _add_to_sub)]).run(m)


def test_endless_while_on_random_inputs_is_skipped_not_hung(monkeypatch):
    monkeypatch.setattr(differential, "MAX_WHILE_ITERATIONS", 50)
    cb = Builder("cond")
    p = cb.parameter(Shape("f32", ()))
    cond = cb.build_computation(cb.compare(p, cb.scalar(100.0, "f32"), "LT"))
    bb = Builder("body")
    q = bb.parameter(Shape("f32", ()))
    body = bb.build_computation(bb.multiply(q, bb.scalar(2.0, "f32")))
    b = Builder("loop")
    x = b.parameter(Shape("f32", ()))
    m = b.build(b.while_loop(cond, body, b.negate(b.abs_(x))))  # never reaches 100
    assert Reference.capture(m) is None


def test_random_values_cover_types_and_tuples():
    rng = np.random.default_rng(0)
    st = Shape.tuple_of([Shape("pred", (50,)), Shape("u8", (50,)), Shape("s64", (50,)),
                         Shape("f16", (50,))])
    b_, u8, s64, f16 = differential.random_value(rng, st)
    assert b_.dtype == np.bool_ and 0 < b_.sum() < 50
    assert u8.dtype == np.uint8 and u8.max() <= 10
    assert s64.dtype == np.int64 and -5 <= s64.min() < 0 < s64.max() <= 5
    assert f16.dtype == np.float16 and f16.min() < 0 < f16.max()


def test_inexact_leaves():
    assert differential.inexact_leaves(_module()) == [False, True, False]


def test_fixed_values_fill_the_last_parameters():
    """ember/compiler.py passes a jitted function's hidden constants: used as they are."""
    m = _module(4)
    const = np.arange(4, dtype=np.float32)
    ref = Reference.capture(m, fixed=[const])
    assert ref.args[1] is const and ref.args[0].shape == (4,)
    np.testing.assert_array_equal(ref.outputs[0], ref.args[0] + const)
    with pytest.raises(ValueError):
        Reference.capture(m, fixed=[const] * 3)


def test_the_compile_path_checks_with_the_same_checker():
    from ember.compiler import check_same_values

    before = _module()
    after = before.clone()
    Rewrite("x", "add", _add_to_sub).run(after)
    check_same_values(before, before.clone(), [])
    with pytest.raises(DifferentialError, match="the optimization passes changed the values"):
        check_same_values(before, after, [])
