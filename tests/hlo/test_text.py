"""Printer goldens, print -> parse -> print identity, bit-identical evaluation."""

import numpy as np
import pytest
from hlo_corpus import bit_equal, corpus

from ember.hlo import Builder, HloParseError, Shape, canonical_text, parse_module, print_module
from ember.hlo.evaluator.core import evaluate

GOLDEN = """\
HloModule f

%add_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.0 = f32[] add(%x, %y)
}

ENTRY %f (Arg_0: f32[8,3]) -> (f32[3], f32[3,8]) {
  %Arg_0 = f32[8,3] parameter(0)
  %constant.0 = f32[] constant(0)
  %reduce.1 = f32[3] reduce(%Arg_0, %constant.0), dimensions={0}, to_apply=%add_f32
  %transpose.2 = f32[3,8] transpose(%Arg_0), dimensions={1,0}
  ROOT %tuple.3 = (f32[3], f32[3,8]) tuple(%reduce.1, %transpose.2)
}
"""


def test_printer_golden():
    b = Builder("f")
    x = b.parameter(Shape("f32", (8, 3)))
    r = b.reduce(x, b.scalar(0, "f32"), [0], Builder.scalar_computation("add", "f32"))
    m = b.build(b.tuple([r, b.transpose(x, (1, 0))]))
    assert print_module(m) == GOLDEN
    assert print_module(parse_module(GOLDEN)) == GOLDEN


PARAMS_FIRST = """\
HloModule order

ENTRY %order (Arg_0: f32[2], Arg_1: f32[2]) -> f32[2] {
  %Arg_0 = f32[2] parameter(0)
  %Arg_1 = f32[2] parameter(1)
  %constant.0 = f32[] constant(1)
  %broadcast.1 = f32[2] broadcast(%constant.0), dimensions={}
  %add.2 = f32[2] add(%broadcast.1, %Arg_1)
  ROOT %subtract.3 = f32[2] subtract(%add.2, %Arg_0)
}
"""


def test_parameters_print_first_in_number_order():
    b = Builder("order")
    x, y = b.parameter(Shape("f32", (2,))), b.parameter(Shape("f32", (2,)))
    one = b.broadcast(b.scalar(1, "f32"), (2,))
    m = b.build(b.subtract(b.add(one, y), x))  # post order alone would print y before x
    assert [i.name for i in m.entry.post_order()][:2] == ["constant.0", "broadcast.1"]
    assert print_module(m) == PARAMS_FIRST
    assert print_module(parse_module(PARAMS_FIRST)) == PARAMS_FIRST
    canon = canonical_text(m)
    assert canon.index("%p0 = ") < canon.index("%p1 = ") < canon.index("constant")


def test_attribute_formats():
    b = Builder("g")
    x = b.parameter(Shape("f32", (4, 4)))
    lines = [
        b.slice(x, (1, 0), (4, 4), (1, 2)),
        b.pad(x, b.scalar(0, "f32"), [(0, 1, 0), (2, 2, 0)]),
        b.pad(x, b.scalar(0, "f32"), [(0, 1, 1), (2, 2, 0)]),
        b.compare(x, x, "LT"),
        b.dot(x, x, (1,), (0,)),
        b.concatenate([x, x], 1),
    ]
    m = b.build(b.tuple(lines))
    t = print_module(m)
    for s in ("slice={[1:4:1], [0:4:2]}", "padding=0_1x2_2\n", "padding=0_1_1x2_2_0",
              "direction=LT", "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
              "dimensions={1}"):
        assert s in t
    assert "batch_dims" not in t


def test_constants_text():
    b = Builder("c")
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 0.1, 3.4028235e38], np.float32)
    c = b.constant(vals)
    m = b.build(c)
    t = print_module(m)
    assert "{nan, inf, -inf, -0, 1e-45, 0.1, 3.4028235e+38}" in t
    assert "{...}" not in print_module(m, mode="display")  # 7 elements: shown in full
    b = Builder("big")
    m = b.build(b.constant(np.arange(9, dtype=np.float32)))
    assert "{...}" in print_module(m, mode="display")
    with pytest.raises(HloParseError):
        parse_module(print_module(m, mode="display"))


def test_float_constants_round_trip_bits():
    rng = np.random.default_rng(1)
    for dt, ut in ((np.float32, np.uint32), (np.float64, np.uint64), (np.float16, np.uint16)):
        bits = rng.integers(0, np.iinfo(ut).max, 200, dtype=ut, endpoint=True)
        vals = bits.view(dt)
        b = Builder("r")
        m = b.build(b.constant(vals))
        m2 = parse_module(print_module(m))
        assert m2.entry.root.value.tobytes() == vals.tobytes()


def test_metadata_verbose_mode():
    b = Builder("m")
    b.set_metadata(op_name="jit(f)/sin", source_file="x.py", source_line=3)
    x = b.parameter(Shape("f32", (3,)))
    m = b.build(b.sine(x))
    t = print_module(m, metadata=True)
    assert 'metadata={op_name="jit(f)/sin" source_file="x.py" source_line=3}' in t
    assert "metadata" not in print_module(m)
    assert print_module(parse_module(t), metadata=True) == t


def test_layout_printed_only_when_set():
    b = Builder("l")
    x = b.parameter(Shape("f32", (2, 3), (1, 0)))
    m = b.build(b.negate(x))
    t = print_module(m)
    assert "f32[2,3]{1,0} parameter(0)" in t
    assert "f32[2,3] negate" in t
    assert print_module(parse_module(t)) == t


def test_canonical_text_is_a_structural_key():
    def make(name, pname):
        b = Builder(name)
        x = b.parameter(Shape("f32", (3,)), name=pname)
        return b.build(b.add(b.sine(x), b.broadcast(b.constant(np.float32(1)), (3,))))

    a, c = make("f", "a"), make("g", "zz")
    assert canonical_text(a) == canonical_text(c)
    assert print_module(a) != print_module(c)
    assert print_module(parse_module(canonical_text(a)), mode="canonical") == canonical_text(a)


@pytest.mark.parametrize("entry", corpus(), ids=lambda e: e[0])
def test_corpus_round_trip(entry):
    name, m, make_inputs = entry
    text = print_module(m, metadata=True)
    m2 = parse_module(text)
    assert print_module(m2, metadata=True) == text
    rng = np.random.default_rng(0)
    for _ in range(2):
        args = make_inputs(rng)
        assert bit_equal(evaluate(m, *args), evaluate(m2, *args))
    c = m.clone()
    assert print_module(c) == print_module(m)
