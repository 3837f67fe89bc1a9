"""DCE, CSE, constant folding goldens; pipeline infrastructure; differential checks."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hlo"))
from hlo_corpus import bit_equal, corpus  # noqa: E402

from ember.hlo import Builder, Shape, parse_module, print_module, verify  # noqa: E402
from ember.hlo.evaluator.core import evaluate  # noqa: E402
from ember.passes import (  # noqa: E402
    CommonSubexpressionElimination,
    ConstantFolding,
    DeadCodeElimination,
    Fix,
    HloPass,
    PassPipeline,
    hardware_independent_pipeline,
)


def entry(body: str) -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    return "HloModule t\n\nENTRY %t () -> f32[] {\n" + "\n".join("  " + x for x in lines) + "\n}\n"


def test_dce_removes_dead_and_keeps_live():
    m = parse_module(entry("%p = f32[4] parameter(0)\n%d = f32[4] sine(%p)\n"
                           "%r = f32[4] negate(%p)"))
    assert DeadCodeElimination().run(m)
    assert "sine" not in print_module(m)
    assert not DeadCodeElimination().run(m)


def test_cse_merges_ops_and_constants():
    m = parse_module(entry(
        "%p = f32[4] parameter(0)\n%c1 = f32[] constant(1)\n%c2 = f32[] constant(1)\n"
        "%z1 = f32[] constant(0)\n%z2 = f32[] constant(-0)\n"
        "%a = f32[4] sine(%p)\n%b = f32[4] sine(%p)\n%s = f32[4] add(%a, %b)\n"
        "%t = (f32[], f32[], f32[], f32[], f32[4]) tuple(%c1, %c2, %z1, %z2, %s)"))
    assert CommonSubexpressionElimination().run(m)
    DeadCodeElimination().run(m)
    verify(m)
    t = print_module(m)
    assert t.count("sine") == 1 and t.count("constant(1)") == 1
    assert "constant(0)" in t and "constant(-0)" in t  # +0 and -0 stay apart
    m = parse_module(entry("%p = f32[4] parameter(0)\n%a = f32[4] sine(%p)\n"
                           "%r = f32[4] cosine(%p)"))
    assert not CommonSubexpressionElimination().run(m)


def test_constant_folding_to_one_constant_and_big_broadcast_stays():
    b = Builder("fold")
    sin = b.sine(b.scalar(0.5, "f32"))
    two = b.multiply(sin, b.scalar(2, "f32"))
    total = b.reduce(b.iota(Shape("f32", (4,)), 0), b.scalar(0, "f32"), [0],
                     Builder.scalar_computation("add", "f32"))
    big = b.broadcast(b.scalar(3, "f32"), (4096, 4096))
    m = b.build(b.tuple([b.add(two, total), big]))
    want = evaluate(m)[0]
    hardware_independent_pipeline().run(m)
    verify(m)
    ops = [i.opcode for i in m.entry.post_order()]
    assert ops.count("constant") == 2 and "broadcast" in ops and "sine" not in ops
    assert "iota" not in ops and "reduce" not in ops
    folded = m.entry.root.operands[0]
    assert folded.opcode == "constant" and folded.value.tobytes() == want.tobytes()


def test_constant_folding_no_change_and_big_iota():
    m = parse_module(entry("%p = f32[4] parameter(0)\n%r = f32[4] sine(%p)"))
    assert not ConstantFolding().run(m)
    m = parse_module(entry("%r = s32[5000] iota(), iota_dimension=0"))
    assert not ConstantFolding().run(m)
    m = parse_module(entry("%r = s32[50] iota(), iota_dimension=0"))
    assert ConstantFolding().run(m) and m.entry.root.opcode == "constant"


def test_constant_folding_through_broadcast_scalars():
    # A staged fix-up of a constant index array (x[:, [0, -2]] under jit): the compare and
    # add meet the constant and broadcast scalars, so all three fold into one constant
    m = parse_module(entry(
        "%c = s32[3] constant({0, -2, 1})\n%z = s32[] constant(0)\n"
        "%zb = s32[3] broadcast(%z), dimensions={}\n"
        "%neg = pred[3] compare(%c, %zb), direction=LT\n%n = s32[] constant(4)\n"
        "%nb = s32[3] broadcast(%n), dimensions={}\n%w = s32[3] add(%c, %nb)\n"
        "%r = s32[3] select(%neg, %w, %c)"))
    assert ConstantFolding().run(m)
    verify(m)
    assert m.entry.root.opcode == "constant"
    np.testing.assert_array_equal(m.entry.root.value, [0, 2, 1])
    # no change: only broadcast scalars (folding would grow them), or a parameter operand
    m = parse_module(entry(
        "%a = f32[] constant(2)\n%ab = f32[64] broadcast(%a), dimensions={}\n"
        "%b = f32[] constant(3)\n%bb = f32[64] broadcast(%b), dimensions={}\n"
        "%r = f32[64] multiply(%ab, %bb)"))
    assert not ConstantFolding().run(m)
    m = parse_module(entry(
        "%p = f32[3] parameter(0)\n%a = f32[] constant(2)\n"
        "%ab = f32[3] broadcast(%a), dimensions={}\n%r = f32[3] multiply(%p, %ab)"))
    assert not ConstantFolding().run(m)


def _mul_one_add_zero():
    b = Builder("f")
    x = b.parameter(Shape("f32", (3,)))
    y = b.multiply(x, b.broadcast(b.scalar(1.0, "f32"), (3,)))
    return b.build(b.add(y, b.broadcast(b.scalar(0.0, "f32"), (3,))))


def test_mul_one_add_zero_safe_vs_unsafe():
    m = _mul_one_add_zero()
    hardware_independent_pipeline().run(m)
    assert m.entry.root.opcode == "add"  # -0.0 + 0.0 = +0.0: the add must stay
    assert "multiply" not in print_module(m)
    x = np.array([-0.0, 1, np.nan], np.float32)
    assert np.signbit(evaluate(_mul_one_add_zero(), x)[0]) == np.signbit(evaluate(m, x)[0])
    m = _mul_one_add_zero()
    hardware_independent_pipeline(unsafe_math=True).run(m)
    assert m.entry.root.opcode == "parameter"


@pytest.mark.parametrize("entry_", corpus(), ids=lambda e: e[0])
def test_pipeline_preserves_values(entry_, monkeypatch):
    monkeypatch.setenv("EMBER_ENABLE_CHECKS", "1")
    name, m, make_inputs = entry_
    opt = m.clone()
    hardware_independent_pipeline().run(opt)
    rng = np.random.default_rng(3)
    for _ in range(3):
        args = make_inputs(rng)
        assert bit_equal(evaluate(m, *args), evaluate(opt, *args)), name


class _Counter(HloPass):
    name = "counter"

    def __init__(self, changes: int) -> None:
        self.calls = 0
        self.changes = changes

    def run(self, module):
        self.calls += 1
        return self.calls <= self.changes


def test_fix_iterates_to_fixpoint_with_cap():
    m = _mul_one_add_zero()
    c = _Counter(3)
    assert Fix(c).run(m) and c.calls == 4
    c = _Counter(100)
    Fix(c, max_iterations=5).run(m)
    assert c.calls == 5


def test_dump_to_writes_one_file_per_pass_run(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_DUMP_TO", str(tmp_path))
    m = _mul_one_add_zero()
    m.name = "dumped"
    p = PassPipeline("pipe", [ConstantFolding(), CommonSubexpressionElimination(),
                              DeadCodeElimination()])
    p.run(m)
    files = sorted(f.name for f in tmp_path.iterdir())
    assert files == ["0000.dumped.pipe.constant-folding.hlo.txt",
                     "0001.dumped.pipe.cse.hlo.txt", "0002.dumped.pipe.dce.hlo.txt"]
    assert (tmp_path / files[-1]).read_text().startswith("HloModule dumped")
    assert set(p.timings) == {"constant-folding", "cse", "dce"}


def test_disable_passes(monkeypatch):
    monkeypatch.setenv("EMBER_DISABLE_PASSES", "algsimp")
    m = _mul_one_add_zero()
    hardware_independent_pipeline().run(m)
    assert "multiply" in print_module(m)
    monkeypatch.setenv("EMBER_DISABLE_PASSES", "cse,dce")
    m = _mul_one_add_zero()
    hardware_independent_pipeline().run(m)
    assert "multiply" not in print_module(m)


def test_checks_catch_a_broken_pass(monkeypatch):
    class Breaker(HloPass):
        name = "breaker"

        def run(self, module):
            module.entry.root.shape = Shape("f32", (7,))
            return True

    monkeypatch.setenv("EMBER_ENABLE_CHECKS", "1")
    with pytest.raises(ValueError, match="after pass breaker"):
        PassPipeline("p", [Breaker()]).run(_mul_one_add_zero())
